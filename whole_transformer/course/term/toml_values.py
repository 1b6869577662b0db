"""One value of course.toml read (a date, a number, a time after the due date), or an error that says what to fix.

Every reader of a section (``settings.py``, ``late_policy.py``, ``service_policy.py``) raises ``SettingsError``
through these, so that each message names the file, the section and key, and what to write instead.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

FILE = "course.toml"
_SHIFT = re.compile(r"^\+\s*(\d+(?:\.\d+)?)\s*([dhm])$")
_UNIT = {"d": "days", "h": "hours", "m": "minutes"}


class SettingsError(ValueError):
    """course.toml says something the course cannot use; the message names the file, the key and the fix."""


def where(path: Path | str | None, key: str) -> str:
    """The file and the key a message is about: ``course.toml, [late] penalty``."""
    return f"{path or FILE}, {key}"


def shift(text: str) -> timedelta | None:
    """A time counted from a date, ``"+2d"``, ``"+36h"``, ``"+30m"``; None if ``text`` is not one."""
    m = _SHIFT.match(text.strip())
    return timedelta(**{_UNIT[m.group(2)]: float(m.group(1))}) if m else None


def read_date(text, path, key, zone: ZoneInfo, base: datetime | None = None) -> datetime:
    """A date in ``zone`` (an aware datetime), or ``base`` shifted by ``"+2d"``-style text."""
    if not isinstance(text, (str, datetime)):
        raise SettingsError(f'{where(path, key)}: expected a date such as "2026-10-16 23:59", got {text!r}')
    if isinstance(text, datetime):
        value = text
    else:
        after = shift(text)
        if after is not None:
            if base is None:
                raise SettingsError(
                    f"{where(path, key)}: {text!r} is counted from the due date, but "
                    "[assignment] has no due date; set due there or give a date here"
                )
            return base + after
        try:
            value = datetime.fromisoformat(text.strip())
        except ValueError:
            raise SettingsError(
                f"{where(path, key)}: cannot read {text!r} as a date; write it as "
                '"2026-10-16 23:59" (local time in [assignment] timezone) or "+2d" / '
                '"+36h" after the due date'
            ) from None
    return value.replace(tzinfo=zone) if value.tzinfo is None else value.astimezone(zone)


def read_number(value, path, key, low=0.0, high=None) -> float:
    """A number between ``low`` and ``high`` (no upper bound if None), as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SettingsError(f"{where(path, key)}: expected a number, got {value!r}")
    if value < low or (high is not None and value > high):
        rng = f"between {low:g} and {high:g}" if high is not None else f"{low:g} or more"
        raise SettingsError(f"{where(path, key)}: {value!r} is out of range; use a number {rng}")
    return float(value)
