"""The service's policy for the course's scheduling loop (``core/scheduler.py``): which attempt is graded
next, and how each ends.

At every pass, the attempts of the exchange without a record, oldest first, one at a time per student
(a student's later attempts wait for the one being graded): a malformed one is reported at once; the
others are decided under course.toml's policy (``policy.decide``) and refused, or left to the
instructor if ``make autograde`` graded these very files already, or claimed (``autograder/claims.py``)
and graded. A grading whose worker died is tried again, up to ``RETRIES`` times in all; a grader that
fails makes the attempt failed. Either way only that attempt is touched. Each ending (``attempt.py``)
is followed by the attempt's record, written last, and a line in the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

from ..autograder.claims import Claims
from ..autograder.locate import Job
from ..autograder.pack import Pack
from ..autograder.record import StudentResult
from ..core.scheduler import Scheduler
from ..sandbox import zygote
from .attempt import Attempts, make_job, record
from .policy import Decision, decide
from .status import Status
from .watch import FAILED, Submission, scan

RETRIES = 3


@dataclass(frozen=True)
class Grading:
    """An attempt handed to the graders, with the policy's decision on it."""

    sub: Submission
    decision: Decision


Loop = Scheduler[Grading, Job, Pack, StudentResult]


@dataclass
class OnSubmission:
    """The service's attempts, as the scheduling loop's policy (see the module doc)."""

    attempts: Attempts
    claims: Claims
    status: Status
    tries: dict[str, int] = field(default_factory=dict)  # attempt → gradings or endings that failed
    pending: bool = False  # whether the last pass found attempts without a record

    @property
    def pack(self) -> Pack:
        return self.attempts.assignment.pack

    def ready(self, loop: Loop) -> Iterator[tuple[Grading, Job]]:
        """The attempts to grade now, each claimed; the others of this pass ended, or left for a later pass."""
        store = self.attempts.store
        busy = {g.sub.student for g in loop.busy()}
        names = {g.sub.name for g in loop.busy()}
        pending = [s for s in scan(self.attempts.exchange) if s.name not in names and not store.done(s.name)]
        for sub in pending:
            if sub.problem:
                self.finish(sub, partial(self.attempts.malformed, sub))
            elif sub.student not in busy and loop.room():
                grading = self._claimed(sub)
                if grading is not None:
                    yield grading
            busy.add(sub.student)  # a student's later attempts wait for this one
        names = {g.sub.name for g in loop.busy()}
        self.status.queue = sum(1 for s in pending if s.name not in names and not store.done(s.name))
        self.pending = bool(pending)

    def _claimed(self, sub: Submission) -> tuple[Grading, Job] | None:
        """The attempt claimed, with its job; None when it ends here or waits for ``make autograde``."""
        earlier = self.attempts.graded_by_instructor(sub)
        if earlier is not None:
            self.finish(sub, lambda: earlier)
            return None
        d = decide(self.attempts.settings, sub.student, sub.handed_in, self.attempts.store.history(sub.student))
        if not d.grade:
            self.finish(sub, lambda: self.attempts.refuse(sub, d))
            return None
        if not self.claims.claim(sub.student):
            return None  # make autograde is grading this student now: next pass
        try:
            job = make_job(sub, self.attempts.assignment.template, self.attempts.work / "stage")
        except Exception as e:  # noqa: BLE001 - only this attempt fails
            self.not_started(Grading(sub, d), e)
            return None
        return Grading(sub, d), job

    def not_started(self, grading: Grading, error: Exception) -> None:
        sub = grading.sub
        self.claims.release(sub.student)
        why = f"{type(error).__name__}: {error}"
        self.finish(sub, lambda: self.attempts.failed(sub, why))

    def started(self, loop: Loop, grading: Grading) -> None:
        sub = grading.sub
        self.show_running(loop)
        self.status.log(f"grading {sub.student}: attempt handed in {sub.when:%Y-%m-%d %H:%M:%S} UTC ({sub.name})")
        if sub.handin and sub.handin.finding:
            self.status.log(f"INTEGRITY {sub.student}: {sub.handin.finding}")

    def show_running(self, loop: Loop) -> None:
        """The status page's list of the attempts being graded."""
        self.status.running = sorted(f"{g.sub.student} ({g.sub.name.split('+')[2]})" for g in loop.busy())

    def failed(self, grading: Grading, job: Job, error: BaseException, infrastructure: bool) -> None:
        """A dead worker or a stopped grading is tried again (``RETRIES`` in all); a grader's failure, or the
        last try, ends the attempt as failed."""
        if not isinstance(error, Exception):
            raise error  # SystemExit and the like end the service, as they always have
        sub = grading.sub
        self.claims.release(sub.student)
        why = f"{type(error).__name__}: {error}"
        self.tries[sub.name] = self.tries.get(sub.name, 0) + 1
        if infrastructure and self.tries[sub.name] < RETRIES:
            self.status.log(f"{sub.student}: grading stopped ({why}); tried again shortly")
        else:
            self.finish(sub, lambda: self.attempts.failed(sub, why))

    def graded(self, grading: Grading, job: Job, result: StudentResult) -> None:
        sub = grading.sub
        for line in (ln for ln in result.log.splitlines() if zygote.FALLBACK in ln):
            self.status.log(f"{sub.student}: WARNING: {line.strip()}")
        try:
            self.finish(sub, lambda: self.attempts.graded(sub, grading.decision, job, result))
        finally:
            self.claims.release(sub.student)

    def finish(self, sub: Submission, end: Callable[[], dict]) -> None:
        """Run one attempt's ending; write its record (last) and report it. An error leaves the attempt
        without a record (tried again next pass, at most ``RETRIES`` times, then recorded as failed)."""
        try:
            rec = end()
        except Exception as e:  # noqa: BLE001 - only this attempt is touched
            self.tries[sub.name] = self.tries.get(sub.name, 0) + 1
            self.status.log(f"{sub.student or sub.name}: finishing the attempt failed ({type(e).__name__}: {e})")
            if self.tries[sub.name] < RETRIES:
                return
            rec = record(sub, FAILED, f"finishing it failed: {type(e).__name__}: {e}")
        self.attempts.store.write(rec)
        self.status.done(rec)
        what = {
            "graded": f"graded {rec.get('score', 0):g} / {rec.get('max_score', 0):g}"
            + (" (counts)" if rec.get("counts") else " (does not count)")
            + (" late" if rec.get("late") else "")
            + f", {rec.get('feedback')} feedback released"
            + (f"; to look at: {rec['reason']}" if rec.get("reason") else "")
            + (f"; {rec['findings']} finding(s)" if rec.get("findings") else "")
        }
        self.status.log(
            f"{rec['status'].upper()} {sub.student or '?'} {sub.name}: "
            + what.get(rec["status"], rec.get("reason", ""))
        )
