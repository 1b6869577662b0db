"""course.toml's ``[service]``: how the grading service grades on submission (``ServicePolicy``).

``read_service`` checks the section: whether the service is on, how many graded attempts a student has
and how far apart, which attempt counts, and how much feedback a student sees before and after the due
date. The service (``service/decision.py``) applies it to each attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from .toml_values import SettingsError, shift, where

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


def _choice(sv: dict, key: str, path, options: tuple[str, ...], default: str) -> str:
    value = sv.get(key, default)
    if value not in options:
        raise SettingsError(
            f"{where(path, f'[service] {key}')}: {value!r} is not one of "
            f"{', '.join(map(repr, options))}; pick one of them"
        )
    return value


def _flag(sv: dict, key: str, path, default: bool) -> bool:
    value = sv.get(key, default)
    if not isinstance(value, bool):
        raise SettingsError(f"{where(path, f'[service] {key}')}: expected true or false, got {value!r}")
    return value


def read_service(sv: dict, path) -> ServicePolicy:
    """[service]: see ``ServicePolicy`` and the comment at the top of course.toml."""
    if not isinstance(sv, dict):
        raise SettingsError(f"{where(path, 'service')}: expected a table [service] with its keys, got {sv!r}")
    extra = sorted(set(sv) - set(_SERVICE_KEYS))
    if extra:
        raise SettingsError(
            f"{where(path, '[service]')}: unknown key(s) {', '.join(extra)}; the keys are {', '.join(_SERVICE_KEYS)}"
        )
    attempts = sv.get("attempts", 0)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
        raise SettingsError(
            f"{where(path, '[service] attempts')}: expected a whole number of graded attempts "
            f"per student (0 for no limit), got {attempts!r}"
        )
    cooldown = sv.get("cooldown", "0m")
    gap = shift("+" + cooldown.strip()) if isinstance(cooldown, str) else None
    if gap is None:
        raise SettingsError(
            f"{where(path, '[service] cooldown')}: cannot read {cooldown!r} as a time; write "
            'it as "30m", "2h" or "1d" ("0m" for none)'
        )
    return ServicePolicy(
        _flag(sv, "enabled", path, False),
        attempts,
        gap,
        _choice(sv, "counts", path, ("last", "best"), "last"),
        _flag(sv, "grade_after_due", path, True),
        _choice(sv, "feedback_before_due", path, FEEDBACK_KINDS, "pass_fail"),
        _choice(sv, "feedback_after_due", path, FEEDBACK_KINDS, "full"),
    )
