"""Times as nbgrader writes them and as an instructor reads them.

``parse_time`` reads nbgrader's format (``2026-12-02 07:19:48.123456 UTC``), ``read_timestamp`` a hand-in's
``timestamp.txt`` in it, and ``span`` says a duration the way an instructor says it (``1 d 12 h``).
Who uses which time, and how far it is trusted: ``handin_time.py``; against the due date: ``late.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path


def span(d: timedelta) -> str:
    """A duration the way an instructor says it: '1 d 12 h', '3 h 5 min', '40 min'."""
    minutes = int(d.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} d"] if days else []
    if hours:
        parts.append(f"{hours} h")
    if mins and not days:
        parts.append(f"{mins} min")
    return " ".join(parts) or f"{int(d.total_seconds())} s"


def parse_time(text: str) -> datetime | None:
    """A time as nbgrader writes it (``2026-12-02 07:19:48.123456 UTC``), aware (UTC); None if unreadable."""
    from nbgrader.utils import parse_utc  # lazy: nbgrader takes seconds to import; the settings and roster need none

    try:
        value = parse_utc(text.strip()[:100])
    except Exception:  # noqa: BLE001 - nbgrader raises several kinds
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def read_timestamp(folder: Path) -> datetime | None:
    """The hand-in time in ``folder/timestamp.txt`` (nbgrader's format, UTC), or None."""
    path = folder / "timestamp.txt"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    when = parse_time(text)
    if when is None:
        raise ValueError(
            f"{path}: cannot read the hand-in time {text[:60]!r}; nbgrader writes it as "
            "'2026-10-16 23:59:00.000000 UTC' (fix or delete the file)"
        )
    return when
