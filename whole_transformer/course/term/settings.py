"""``course.toml``: the term's settings as data, read by nbgrader_config.py and the course's commands.

``load(course) -> Settings``. The file sits at the top of the course folder, under version control
beside nbgrader_config.py; its sections are documented in the comment at its top. A course without
the file has no due date, no late policy, no extensions and the source notebooks' points.

    >>> s = parse('[assignment]\\ndue = "2026-10-16 23:59"\\ntimezone = "Europe/Berlin"\\n'
    ...           '[late]\\npolicy = "per_day"\\npenalty = 10\\ncap = 50\\n[extensions]\\nada = "+2d"')
    >>> s.due.isoformat(), s.due_for("ada").isoformat()
    ('2026-10-16T23:59:00+02:00', '2026-10-18T23:59:00+02:00')
    >>> s.late.percent(timedelta(days=1, hours=12))   # two started days late, 10 % each
    20.0
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

FILE = "course.toml"
POLICIES = ("none", "per_day", "per_hour")
# partial_credit: read by reports; service: grading on submission (service/)
_SECTIONS = {"assignment", "late", "extensions", "points", "partial_credit", "service"}
_SHIFT = re.compile(r"^\+\s*(\d+(?:\.\d+)?)\s*([dhm])$")
_UNIT = {"d": "days", "h": "hours", "m": "minutes"}


class SettingsError(ValueError):
    """course.toml says something the course cannot use; the message names the file, the key and the fix."""


@dataclass(frozen=True)
class LatePolicy:
    policy: str = "none"  # none, per_day or per_hour
    penalty: float = 0.0  # percent of the score taken for each started day (hour) late
    grace_minutes: float = 0.0  # a hand-in this late or less is on time
    cap: float | None = None  # at most this many percent are taken (None: up to 100)

    def percent(self, late: timedelta) -> float:
        """The percent of the score taken for a hand-in ``late`` after its due date (0 when on time)."""
        if self.policy == "none" or late <= timedelta(minutes=self.grace_minutes):
            return 0.0
        unit = timedelta(days=1) if self.policy == "per_day" else timedelta(hours=1)
        started = -(-late // unit)  # started days (hours), counted from the due date itself
        return min(started * self.penalty, 100.0 if self.cap is None else self.cap)

    def describe(self) -> str:
        if self.policy == "none":
            return "no late penalty"
        unit = "day" if self.policy == "per_day" else "hour"
        parts = [f"{self.penalty:g} % per started {unit} late"]
        if self.grace_minutes:
            parts.append(f"{self.grace_minutes:g} minutes' grace")
        if self.cap is not None:
            parts.append(f"at most {self.cap:g} %")
        return ", ".join(parts)


FEEDBACK_KINDS = ("pass_fail", "full")
_SERVICE_KEYS = (
    "enabled",
    "attempts",
    "cooldown",
    "counts",
    "grade_after_due",
    "feedback_before_due",
    "feedback_after_due",
)


@dataclass(frozen=True)
class ServicePolicy:
    """[service]: grading on submission (``python -m whole_transformer.course serve``)."""

    enabled: bool = False
    attempts: int = 0  # graded attempts per student (0: no limit)
    cooldown: timedelta = timedelta(0)  # at least this long between two graded attempts of a student
    counts: str = "last"  # the attempt that counts: "last" or "best"
    grade_after_due: bool = True  # after the due date, still graded on submission (marked late)
    feedback_before_due: str = "pass_fail"  # before the due date: "pass_fail" per test, or "full"
    feedback_after_due: str = "full"


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


def _where(path: Path | None, key: str) -> str:
    return f"{path or FILE}, {key}"


def _date(text, path, key, zone: ZoneInfo, base: datetime | None = None) -> datetime:
    if not isinstance(text, (str, datetime)):
        raise SettingsError(f'{_where(path, key)}: expected a date such as "2026-10-16 23:59", got {text!r}')
    if isinstance(text, datetime):
        value = text
    else:
        m = _SHIFT.match(text.strip())
        if m:
            if base is None:
                raise SettingsError(
                    f"{_where(path, key)}: {text!r} is counted from the due date, but "
                    "[assignment] has no due date; set due there or give a date here"
                )
            return base + timedelta(**{_UNIT[m.group(2)]: float(m.group(1))})
        try:
            value = datetime.fromisoformat(text.strip())
        except ValueError:
            raise SettingsError(
                f"{_where(path, key)}: cannot read {text!r} as a date; write it as "
                '"2026-10-16 23:59" (local time in [assignment] timezone) or "+2d" / '
                '"+36h" after the due date'
            ) from None
    return value.replace(tzinfo=zone) if value.tzinfo is None else value.astimezone(zone)


def _number(value, path, key, low=0.0, high=None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SettingsError(f"{_where(path, key)}: expected a number, got {value!r}")
    if value < low or (high is not None and value > high):
        rng = f"between {low:g} and {high:g}" if high is not None else f"{low:g} or more"
        raise SettingsError(f"{_where(path, key)}: {value!r} is out of range; use a number {rng}")
    return float(value)


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
            f"{_where(path, '[assignment]')}: unknown key(s) {', '.join(extra)}; the keys are due and timezone"
        )
    tz = a.get("timezone", "UTC")
    try:
        zone = ZoneInfo(str(tz))
    except (ZoneInfoNotFoundError, ValueError):
        raise SettingsError(
            f"{_where(path, '[assignment] timezone')}: unknown time zone {tz!r}; use an IANA "
            'name such as "Europe/Berlin", "America/New_York" or "UTC"'
        ) from None
    due = _date(a["due"], path, "[assignment] due", zone) if "due" in a else None
    notes = _due_notes(a, path)

    lt = data.get("late", {})
    extra = sorted(set(lt) - {"policy", "penalty", "grace_minutes", "cap"})
    if extra:
        raise SettingsError(
            f"{_where(path, '[late]')}: unknown key(s) {', '.join(extra)}; "
            "the keys are policy, penalty, grace_minutes and cap"
        )
    policy = lt.get("policy", "none")
    if policy not in POLICIES:
        raise SettingsError(
            f"{_where(path, '[late] policy')}: {policy!r} is not a policy; use one of {', '.join(POLICIES)}"
        )
    if policy != "none" and "penalty" not in lt:
        raise SettingsError(
            f"{_where(path, '[late] penalty')}: policy {policy!r} needs a penalty (percent per "
            "started day or hour late), e.g. penalty = 10"
        )
    if policy != "none" and due is None:
        raise SettingsError(f"{_where(path, '[late] policy')}: a late policy needs a due date: set due in [assignment]")
    late = LatePolicy(
        policy,
        _number(lt.get("penalty", 0), path, "[late] penalty", 0, 100),
        _number(lt.get("grace_minutes", 0), path, "[late] grace_minutes"),
        _number(lt["cap"], path, "[late] cap", 0, 100) if "cap" in lt else None,
    )
    ext = {str(s): _date(v, path, f"[extensions] {s}", zone, due) for s, v in data.get("extensions", {}).items()}
    points = {str(g): _number(v, path, f"[points] {g}") for g, v in data.get("points", {}).items()}
    service = _service(data.get("service", {}), path)
    return Settings(path, due, str(tz), late, ext, points, data, service=service, notes=notes)


def _due_notes(a: dict, path) -> tuple[str, ...]:
    """What [assignment] leaves to a default that may not be meant: a due date without a time, or without a zone."""
    due = a.get("due")
    if not isinstance(due, str) or _SHIFT.match(due.strip()):
        return ()
    notes, path = [], Path(path).name if path else None  # a note names the file as course.toml, not the full path
    if re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", due):
        notes.append(
            f"{_where(path, '[assignment] due')}: {due!r} has no time, so it is taken as 00:00, the very start of "
            f'that day; write "{due.strip()} 23:59" if the end of the day is meant'
        )
    if "timezone" not in a and not re.search(r"(Z|[+-]\d{2}:?\d{2})\s*$", due):
        notes.append(
            f"{_where(path, '[assignment] timezone')}: not set, so the due date is taken as UTC; set it, e.g. "
            'timezone = "Europe/Berlin"'
        )
    return tuple(notes)


def _choice(sv: dict, key: str, path, options: tuple[str, ...], default: str) -> str:
    value = sv.get(key, default)
    if value not in options:
        raise SettingsError(
            f"{_where(path, f'[service] {key}')}: {value!r} is not one of "
            f"{', '.join(map(repr, options))}; pick one of them"
        )
    return value


def _flag(sv: dict, key: str, path, default: bool) -> bool:
    value = sv.get(key, default)
    if not isinstance(value, bool):
        raise SettingsError(f"{_where(path, f'[service] {key}')}: expected true or false, got {value!r}")
    return value


def _service(sv: dict, path) -> ServicePolicy:
    """[service]: see ``ServicePolicy`` and the comment at the top of course.toml."""
    if not isinstance(sv, dict):
        raise SettingsError(f"{_where(path, 'service')}: expected a table [service] with its keys, got {sv!r}")
    extra = sorted(set(sv) - set(_SERVICE_KEYS))
    if extra:
        raise SettingsError(
            f"{_where(path, '[service]')}: unknown key(s) {', '.join(extra)}; the keys are {', '.join(_SERVICE_KEYS)}"
        )
    attempts = sv.get("attempts", 0)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
        raise SettingsError(
            f"{_where(path, '[service] attempts')}: expected a whole number of graded attempts "
            f"per student (0 for no limit), got {attempts!r}"
        )
    cooldown = sv.get("cooldown", "0m")
    m = _SHIFT.match("+" + cooldown.strip()) if isinstance(cooldown, str) else None
    if m is None:
        raise SettingsError(
            f"{_where(path, '[service] cooldown')}: cannot read {cooldown!r} as a time; write "
            'it as "30m", "2h" or "1d" ("0m" for none)'
        )
    return ServicePolicy(
        _flag(sv, "enabled", path, False),
        attempts,
        timedelta(**{_UNIT[m.group(2)]: float(m.group(1))}),
        _choice(sv, "counts", path, ("last", "best"), "last"),
        _flag(sv, "grade_after_due", path, True),
        _choice(sv, "feedback_before_due", path, FEEDBACK_KINDS, "pass_fail"),
        _choice(sv, "feedback_after_due", path, FEEDBACK_KINDS, "full"),
    )


def load(course) -> Settings:
    """The settings of a course (anything with a ``root``, or a folder): its course.toml, or none."""
    root = Path(course) if isinstance(course, (str, Path)) else Path(course.root)  # a Path has .root too: "/"
    path = root / FILE
    if not path.is_file():
        return Settings(None)
    return parse(path.read_text(encoding="utf-8"), path)
