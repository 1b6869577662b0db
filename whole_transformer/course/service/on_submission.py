"""The service's queue for the course's scheduling loop (``core/scheduler.py``): which attempt is graded
next, and how each ends.

At every pass, the attempts of the exchange without a record, oldest first, one at a time per student
(a student's later attempts wait for the one being graded): a malformed one is reported at once; the
others are decided under course.toml's [service] policy (``decision.decide``) and refused, or left to the
instructor if ``make autograde`` graded these very files already, or claimed (``autograder/claims.py``)
and graded. A grading whose worker died is tried again, up to ``RETRIES`` times in all; a grader that
fails makes the attempt failed. Either way only that attempt is touched. Each ending (``attempt.py``)
is followed by the attempt's record, written last, and a line in the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

from ..autograder.assignment import Assignment
from ..autograder.claims import Claims
from ..autograder.submission import Submission
from ..core.results import FAILED, Result
from ..core.scheduler import Scheduler
from ..sandbox import zygote
from .attempt import Attempts, ended
from .decision import Decision, decide
from .status import ServiceState
from .watch import Attempt, AttemptRecord, inbound_attempts

RETRIES = 3


@dataclass(frozen=True)
class Grading:
    """An attempt handed to the graders, with the policy's decision on it."""

    attempt: Attempt
    decision: Decision


Loop = Scheduler[Grading, Submission, Assignment, Result]


@dataclass
class OnSubmission:
    """The service's attempts, as the scheduling loop's queue (see the module doc)."""

    attempts: Attempts
    claims: Claims
    status: ServiceState
    tries: dict[str, int] = field(default_factory=dict)  # attempt → gradings or endings that failed
    pending: bool = False  # whether the last pass found attempts without a record

    @property
    def assignment(self) -> Assignment:
        return self.attempts.current.assignment

    def ready(self, loop: Loop) -> Iterator[tuple[Grading, Submission]]:
        """The attempts to grade now, each claimed; the others of this pass ended, or left for a later pass."""
        store = self.attempts.store
        busy = {g.attempt.student for g in loop.busy()}
        names = {g.attempt.name for g in loop.busy()}
        pending = [
            a for a in inbound_attempts(self.attempts.exchange) if a.name not in names and not store.done(a.name)
        ]
        for attempt in pending:
            if attempt.problem:
                self.finish(attempt, partial(self.attempts.malformed, attempt))
            elif attempt.student not in busy and loop.room():
                grading = self._claimed(attempt)
                if grading is not None:
                    yield grading
            busy.add(attempt.student)  # a student's later attempts wait for this one
        names = {g.attempt.name for g in loop.busy()}
        self.status.queue = sum(1 for a in pending if a.name not in names and not store.done(a.name))
        self.pending = bool(pending)

    def _claimed(self, attempt: Attempt) -> tuple[Grading, Submission] | None:
        """The attempt claimed, with its files as a submission (read once); None when it ends here or waits for
        ``make autograde``."""
        try:
            submission, unreadable = Submission.from_exchange(attempt.student, attempt.folder, attempt.handin), None
        except Exception as e:  # noqa: BLE001 - files that cannot be read: only this attempt fails, once claimed
            submission, unreadable = None, e
        earlier = self.attempts.graded_by_instructor(attempt, submission)
        if earlier is not None:
            self.finish(attempt, lambda: earlier)
            return None
        store = self.attempts.store
        d = decide(self.attempts.settings, attempt.student, attempt.handed_in, store.history(attempt.student))
        if not d.grade:
            self.finish(attempt, lambda: self.attempts.refuse(attempt, d))
            return None
        if not self.claims.claim(attempt.student):
            return None  # make autograde is grading this student now: next pass
        if submission is None:
            self.not_started(Grading(attempt, d), unreadable or RuntimeError("its files could not be read"))
            return None
        return Grading(attempt, d), submission

    def not_started(self, grading: Grading, error: Exception) -> None:
        attempt = grading.attempt
        self.claims.unclaim(attempt.student)
        why = f"{type(error).__name__}: {error}"
        self.finish(attempt, lambda: self.attempts.failed(attempt, why))

    def started(self, loop: Loop, grading: Grading) -> None:
        sub = grading.attempt
        self.show_running(loop)
        self.status.log(f"grading {sub.student}: attempt handed in {sub.when:%Y-%m-%d %H:%M:%S} UTC ({sub.name})")
        if sub.handin and sub.handin.finding:
            self.status.log(f"INTEGRITY {sub.student}: {sub.handin.finding}")

    def show_running(self, loop: Loop) -> None:
        """The status page's list of the attempts being graded."""
        self.status.running = sorted(f"{g.attempt.student} ({g.attempt.name.split('+')[2]})" for g in loop.busy())

    def failed(self, grading: Grading, submission: Submission, error: BaseException, infrastructure: bool) -> None:
        """A dead worker or a stopped grading is tried again (``RETRIES`` in all); a grader's failure, or the
        last try, ends the attempt as failed."""
        if not isinstance(error, Exception):
            raise error  # SystemExit and the like end the service, as they always have
        sub = grading.attempt
        self.claims.unclaim(sub.student)
        why = f"{type(error).__name__}: {error}"
        self.tries[sub.name] = self.tries.get(sub.name, 0) + 1
        if infrastructure and self.tries[sub.name] < RETRIES:
            self.status.log(f"{sub.student}: grading stopped ({why}); tried again shortly")
        else:
            self.finish(sub, lambda: self.attempts.failed(sub, why))

    def graded(self, grading: Grading, submission: Submission, result: Result) -> None:
        sub = grading.attempt
        for line in (ln for ln in result.log.splitlines() if zygote.FALLBACK in ln):
            self.status.log(f"{sub.student}: WARNING: {line.strip()}")
        try:
            self.finish(sub, lambda: self.attempts.graded(sub, grading.decision, submission, result))
        finally:
            self.claims.unclaim(sub.student)

    def finish(self, sub: Attempt, end: Callable[[], AttemptRecord]) -> None:
        """Run one attempt's ending; write its record (last) and report it. An error leaves the attempt
        without a record (tried again next pass, at most ``RETRIES`` times, then recorded as failed)."""
        try:
            rec = end()
        except Exception as e:  # noqa: BLE001 - only this attempt is touched
            self.tries[sub.name] = self.tries.get(sub.name, 0) + 1
            self.status.log(f"{sub.student or sub.name}: finishing the attempt failed ({type(e).__name__}: {e})")
            if self.tries[sub.name] < RETRIES:
                return
            rec = ended(sub, FAILED, f"finishing it failed: {type(e).__name__}: {e}")
        self.attempts.store.write(rec)
        self.status.done(rec)
        what = {
            "graded": f"graded {rec.score or 0:g} / {rec.max_score or 0:g}"
            + (" (counts)" if rec.counts else " (does not count)")
            + (" late" if rec.late else "")
            + f", {rec.feedback} feedback released"
            + (f"; to look at: {rec.reason}" if rec.reason else "")
            + (f"; {rec.findings} finding(s)" if rec.findings else "")
        }
        self.status.log(f"{rec.status.upper()} {sub.student or '?'} {sub.name}: " + what.get(rec.status, rec.reason))
