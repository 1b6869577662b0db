"""What course.toml's [service] policy makes of one attempt: graded or not, late or not, and which counts.

``decide`` looks at the student's attempts done so far (``watch.Store.history``) and says whether a
new attempt is graded; a refused one gets a line of feedback that says why, and when the next
attempt counts. ``counting`` picks the attempt that counts (the last, or the best), and
``feedback_kind`` what the feedback shows (pass/fail per test before the due date, the full
feedback after it, as the policy says).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..core.results import GRADED
from .watch import AttemptRecord


@dataclass(frozen=True)
class Decision:
    grade: bool
    number: int  # the graded attempt this is (1-based), or would have been
    late: bool
    why: str = ""  # for a refused attempt: the feedback line that says why and what next


def when_text(when: datetime, zone) -> str:
    return f"{when.astimezone(zone):%Y-%m-%d %H:%M} {zone.key}"


def decide(settings, student: str, when: datetime, history: list[AttemptRecord]) -> Decision:
    """Whether an attempt handed in at ``when`` is graded under the policy (``settings``: term Settings)."""
    policy, zone = settings.service, settings.zone
    graded = [r for r in history if r.status == GRADED]
    number = len(graded) + 1
    due = settings.due_for(student)
    late = due is not None and when > due
    if late and not policy.grade_after_due:
        return Decision(
            False,
            number,
            True,
            f"This attempt was handed in after the due date ({when_text(due, zone)}), so it is not graded "
            "on submission; your instructor decides what happens to late work." + _standing(graded, zone),
        )
    if policy.attempts and len(graded) >= policy.attempts:
        return Decision(
            False,
            number,
            late,
            f"This attempt is over the limit of {policy.attempts} graded attempt(s): it is not graded, "
            "and no later attempt will be." + _standing(graded, zone),
        )
    if policy.cooldown and graded:
        last = graded[-1].when
        after = last + policy.cooldown if last else when
        if when < after:
            left = f" ({policy.attempts - len(graded)} of {policy.attempts} left)" if policy.attempts else ""
            return Decision(
                False,
                number,
                late,
                f"This attempt came sooner than {_span(policy.cooldown)} after your last graded one, so "
                f"it is not graded. The next attempt counts from {when_text(after, zone)}{left}."
                + _standing(graded, zone),
            )
    return Decision(True, number, late)


def _standing(graded: list[AttemptRecord], zone) -> str:
    kept = [(r, r.when) for r in graded if r.counts and r.when]  # a graded attempt always has its time
    if not kept:
        return ""
    r, when = kept[-1]
    return f" The attempt that counts stays your attempt {r.number}, handed in {when_text(when, zone)}."


def _span(delta) -> str:
    minutes = delta.total_seconds() / 60
    if minutes >= 1440 and minutes % 1440 == 0:
        return f"{minutes / 1440:g} day(s)"
    if minutes >= 60 and minutes % 60 == 0:
        return f"{minutes / 60:g} hour(s)"
    return f"{minutes:g} minute(s)"


def counts(policy, score: float, history: list[AttemptRecord]) -> bool:
    """Whether a newly graded attempt with ``score`` becomes the one that counts: always under "last";
    under "best" when it scores at least as much as every earlier graded attempt."""
    if policy.counts == "last":
        return True
    return all(score >= (r.score or 0.0) for r in history if r.status == GRADED)


def feedback_kind(settings, student: str, when: datetime) -> str:
    """ "pass_fail" or "full": what the feedback of an attempt handed in at ``when`` shows."""
    due = settings.due_for(student)
    before = due is None or when <= due
    return settings.service.feedback_before_due if before else settings.service.feedback_after_due


def describe(policy) -> str:
    parts = [f"{policy.attempts} graded attempt(s) each" if policy.attempts else "no limit of attempts"]
    if policy.cooldown:
        parts.append(f"at least {_span(policy.cooldown)} apart")
    parts.append(f"the {policy.counts} counts")
    parts.append("late attempts graded (marked late)" if policy.grade_after_due else "late attempts not graded")
    parts.append(f"feedback {policy.feedback_before_due} before the due date, {policy.feedback_after_due} after")
    return ", ".join(parts)
