"""course.toml's ``[late]``: the late policy, and the percent of a score it takes for a hand-in so late.

``read_late`` checks the section against the due date; ``LatePolicy.percent`` is the rule itself (and
``unknown_length`` its first step, for a hand-in an LMS flags as late without a time), and
``LatePolicy.describe`` says it in words (``make term``, the feedback). Who is late by how much: ``late.py``.

    >>> LatePolicy("per_day", penalty=10.0, cap=50.0).percent(timedelta(days=1, hours=12))  # two started days
    20.0
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from .toml_values import SettingsError, read_number, where

POLICIES = ("none", "per_day", "per_hour")


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

    def unknown_length(self) -> float:
        """The percent taken for a hand-in the LMS flags as late without saying how late (a download without
        times): the first step of the policy, one started day (hour) late, as if just past the grace period."""
        if self.policy == "none":
            return 0.0
        return min(self.penalty, 100.0 if self.cap is None else self.cap)

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


def read_late(lt: dict, path: Path | None, due: datetime | None) -> LatePolicy:
    """[late] as read from the file; a policy other than none needs a penalty and a due date."""
    extra = sorted(set(lt) - {"policy", "penalty", "grace_minutes", "cap"})
    if extra:
        raise SettingsError(
            f"{where(path, '[late]')}: unknown key(s) {', '.join(extra)}; "
            "the keys are policy, penalty, grace_minutes and cap"
        )
    policy = lt.get("policy", "none")
    if policy not in POLICIES:
        raise SettingsError(
            f"{where(path, '[late] policy')}: {policy!r} is not a policy; use one of {', '.join(POLICIES)}"
        )
    if policy != "none" and "penalty" not in lt:
        raise SettingsError(
            f"{where(path, '[late] penalty')}: policy {policy!r} needs a penalty (percent per "
            "started day or hour late), e.g. penalty = 10"
        )
    if policy != "none" and due is None:
        raise SettingsError(f"{where(path, '[late] policy')}: a late policy needs a due date: set due in [assignment]")
    return LatePolicy(
        policy,
        read_number(lt.get("penalty", 0), path, "[late] penalty", 0, 100),
        read_number(lt.get("grace_minutes", 0), path, "[late] grace_minutes"),
        read_number(lt["cap"], path, "[late] cap", 0, 100) if "cap" in lt else None,
    )
