"""``course.toml``: the term's settings as data, read by nbgrader_config.py and the course's commands.

``load(course) -> Settings``: the due date and its time zone, each student's extension and the points
of graded cells, read here; ``[late]`` read by ``late_policy.py``, ``[service]`` by ``service_policy.py``;
``[partial_credit]`` kept as read for ``answers/diagnose.py``. The file sits at the top of the course
folder, under version control beside nbgrader_config.py; its sections are documented in the comment at
its top. A course without the file has no due date, no late policy, no extensions and the source
notebooks' points.

    >>> s = parse('[assignment]\\ndue = "2026-10-16 23:59"\\ntimezone = "Europe/Berlin"\\n'
    ...           '[late]\\npolicy = "per_day"\\npenalty = 10\\ncap = 50\\n[extensions]\\nada = "+2d"')
    >>> s.due.isoformat(), s.due_for("ada").isoformat()
    ('2026-10-16T23:59:00+02:00', '2026-10-18T23:59:00+02:00')
    >>> s.late.describe()
    '10 % per started day late, at most 50 %'
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .late_policy import LatePolicy, read_late
from .service_policy import ServicePolicy, read_service
from .toml_values import FILE, SettingsError, read_date, read_number, shift, where

# partial_credit: read by answers/diagnose.py; service: grading on submission (service/); lti: lti/settings.py
_SECTIONS = {"assignment", "late", "extensions", "points", "partial_credit", "service", "lti"}


@dataclass(frozen=True)
class Settings:
    path: Path | None  # the file read (None: there is none)
    due: datetime | None = None  # aware, in the course's time zone
    timezone: str = "UTC"
    late: LatePolicy = field(default_factory=LatePolicy)
    extensions: dict[str, datetime] = field(default_factory=dict)  # student id → their own due date
    points: dict[str, float] = field(default_factory=dict)  # grade_id of a graded cell → its points
    raw: dict = field(default_factory=dict)  # the whole file as read (other sections, e.g. partial_credit)
    service: ServicePolicy = field(default_factory=ServicePolicy)
    notes: tuple[str, ...] = ()  # what was read but may not be what was meant (a due date without a time)

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def due_for(self, student: str) -> datetime | None:
        """The student's due date: their extension if they have one, else the assignment's."""
        return self.extensions.get(student, self.due)

    def grading_part(self) -> dict:
        """What decides a grade cell by cell (part of "already graded"); dates only re-total."""
        return {"points": dict(sorted(self.points.items()))}


def parse(text: str, path: Path | None = None) -> Settings:
    """Settings from the text of a course.toml (``path`` only names it in messages)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SettingsError(f"{path or FILE} is not valid TOML: {e}") from None
    unknown = sorted(set(data) - _SECTIONS)
    if unknown:
        raise SettingsError(
            f"{path or FILE}: unknown section(s) {', '.join(unknown)}; the sections are "
            f"{', '.join(sorted(_SECTIONS))} (see the comment at the top of the file)"
        )
    a = data.get("assignment", {})
    extra = sorted(set(a) - {"due", "timezone"})
    if extra:
        raise SettingsError(
            f"{where(path, '[assignment]')}: unknown key(s) {', '.join(extra)}; the keys are due and timezone"
        )
    tz = a.get("timezone", "UTC")
    try:
        zone = ZoneInfo(str(tz))
    except (ZoneInfoNotFoundError, ValueError):
        raise SettingsError(
            f"{where(path, '[assignment] timezone')}: unknown time zone {tz!r}; use an IANA "
            'name such as "Europe/Berlin", "America/New_York" or "UTC"'
        ) from None
    due = read_date(a["due"], path, "[assignment] due", zone) if "due" in a else None
    notes = _due_notes(a, path)

    late = read_late(data.get("late", {}), path, due)
    ext = {str(s): read_date(v, path, f"[extensions] {s}", zone, due) for s, v in data.get("extensions", {}).items()}
    points = {str(g): read_number(v, path, f"[points] {g}") for g, v in data.get("points", {}).items()}
    service = read_service(data.get("service", {}), path)
    return Settings(path, due, str(tz), late, ext, points, data, service=service, notes=notes)


def _due_notes(a: dict, path) -> tuple[str, ...]:
    """What [assignment] leaves to a default that may not be meant: a due date without a time, or without a zone."""
    due = a.get("due")
    if not isinstance(due, str) or shift(due) is not None:
        return ()
    notes, path = [], Path(path).name if path else None  # a note names the file as course.toml, not the full path
    if re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", due):
        notes.append(
            f"{where(path, '[assignment] due')}: {due!r} has no time, so it is taken as 00:00, the very start of "
            f'that day; write "{due.strip()} 23:59" if the end of the day is meant'
        )
    if "timezone" not in a and not re.search(r"(Z|[+-]\d{2}:?\d{2})\s*$", due):
        notes.append(
            f"{where(path, '[assignment] timezone')}: not set, so the due date is taken as UTC; set it, e.g. "
            'timezone = "Europe/Berlin"'
        )
    return tuple(notes)


def load(course) -> Settings:
    """The settings of a course (anything with a ``root``, or a folder): its course.toml, or none."""
    root = Path(course) if isinstance(course, (str, Path)) else Path(course.root)  # a Path has .root too: "/"
    path = root / FILE
    if not path.is_file():
        return Settings(None)
    return parse(path.read_text(encoding="utf-8"), path)
