"""How the service ends one attempt once it is decided: refused, malformed, failed, or graded.

A graded attempt that counts (``decision.counts``) goes into the course as ``make autograde`` would
have put it: its files become ``submitted/<student>/whole-transformer/`` (as nbgrader collect
writes them, with the time the service decided recorded for each), and its result is merged
(``autograder/store.py``: gradebook, ``autograde/``, ``result.json``), so that ``make autograde`` finds the
student graded and leaves them. Then its feedback is released, and last the attempt's record is written
(``watch.Store``, by ``on_submission.py``): an attempt is done exactly when its record exists. ``Attempts``
holds what the endings need of the service (the course, the exchange, the store, course.toml as last read, and
the assignment as last prepared); each ending returns the attempt's record (``watch.AttemptRecord``).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..autograder.assignment import Assignment
from ..autograder.store import load_result, merge
from ..autograder.submission import Submission
from ..core.results import FAILED, GRADED, MISSING, Result, Status
from ..layout import Course
from ..lti.after_grading import after_attempt
from ..term.handin_merge import entry, record_files
from ..term.handin_time import entry_fields
from ..term.settings import Settings
from . import attempt_feedback as fb
from .decision import Decision, counts, feedback_kind, when_text
from .watch import Attempt, AttemptRecord, Store


@dataclass(frozen=True)
class Prepared:
    """The assignment as the service grades it now: prepared at its start, again when source/ changes."""

    assignment: Assignment
    secrets: dict[str, str]  # what a student must not see (``reports.feedback.secrets``)
    built_from: str  # the digest of source/ it was prepared from (``gradebook.source_digest``)


def ended(attempt: Attempt, status: Status, reason: str = "", **more) -> AttemptRecord:
    """The record of an attempt's ending (``more``: what the policy decided and what came of it)."""
    h = attempt.handin
    return AttemptRecord(
        attempt.name,
        attempt.student,
        attempt.when,  # the time used (watch.py: the claim against the evidence)
        status,
        reason,
        datetime.now(UTC),
        h.claimed if h and h.claimed else None,
        h.finding if h and h.finding else None,
        **more,
    )


def install(course: Course, submission: Submission, attempt: Attempt | None = None) -> None:
    """The attempt's files become submitted/<student>/ (replaced whole, by renames); with ``attempt``, the time the
    service decided for it is recorded for each file (the record of when, ``term/handin_merge.py``), so that every
    later command (make grades, make term, the feedback) uses the very time of the service's record."""
    student = submission.student
    dest = course.submitted / student
    new, old = course.submitted / f".service-{student}.new", course.submitted / f".service-{student}.old"
    for d in (new, old):
        shutil.rmtree(d, ignore_errors=True)
    for rel, data in submission.files.items():
        (new / rel).parent.mkdir(parents=True, exist_ok=True)
        (new / rel).write_bytes(data)
    if dest.exists():
        os.replace(dest, old)
    os.replace(new, dest)
    shutil.rmtree(old, ignore_errors=True)
    if attempt is not None and attempt.handin is not None:
        origin = f"the exchange: {attempt.name} (the grading service)"
        rec = entry(attempt.handin.used, origin, "exchange", **entry_fields(attempt.handin))
        names = [rel.split("/", 1)[1] for rel in submission.files if "/" in rel and rel.split("/", 1)[1] not in _STAMPS]
        record_files(course, student, dict.fromkeys(names, rec), whole=True)


_STAMPS = ("timestamp.txt", "submission_secret.txt")  # what describes an attempt, not a file handed in


@dataclass
class Attempts:
    """The endings of the service's attempts, with what they need of it (see the module doc)."""

    course: Course
    exchange: Path
    store: Store
    work: Path  # the service's work folder
    log: Callable[[str], None]
    settings: Settings  # course.toml as last read (the service reads it again at every pass)
    prepared: Prepared | None = None  # set once the service is on

    @property
    def current(self) -> Prepared:
        """The assignment as last prepared, which the service prepares before anything is graded."""
        assert self.prepared is not None, "the service grades only once the assignment is prepared"
        return self.prepared

    def graded_by_instructor(self, attempt: Attempt, submission: Submission | None) -> AttemptRecord | None:
        """The record of an attempt ``make autograde`` already graded, exactly these files (handed in while the
        service was off, then collected): grading it again would replace the feedback the instructor released.
        ``submission``: the attempt's files (None: they cannot be read, and the grading path reports them)."""
        if submission is None or self.store.was_merging(attempt.name):  # the service's own merge: not theirs
            return None
        graded = load_result(self.course, attempt.student)
        if graded is None or graded.submission != submission.digest:
            return None
        return ended(
            attempt,
            Status.COLLECTED,
            "collected and graded by the instructor (make autograde) before it was seen here; "
            "left to them: not graded again, not one of the attempts on submission",
        )

    def refuse(self, attempt: Attempt, decision: Decision) -> AttemptRecord:
        """Not graded under the policy: the student's feedback says why and when the next attempt counts."""
        lines = [f"Handed in {when_text(attempt.handed_in, self.settings.zone)}.", decision.why]
        pages = {nid: fb.page(f"{nid}: not graded", lines) for nid in fb.notebook_ids(attempt)}
        fb.deliver(self.exchange, attempt, pages)
        return ended(attempt, Status.REFUSED, decision.why, number=decision.number, late=decision.late)

    def malformed(self, attempt: Attempt) -> AttemptRecord:
        """Cannot be graded at all (see ``watch.read_attempt``): reported, and said to the student if possible."""
        if attempt.secret and attempt.folder.is_dir():
            why = (
                f"This attempt could not be graded: {attempt.problem}. It does not count; "
                "your instructor has been told."
            )
            pages = {nid: fb.page(f"{nid}: not graded", [why]) for nid in fb.notebook_ids(attempt)}
            fb.deliver(self.exchange, attempt, pages)
        return ended(attempt, Status.MALFORMED, attempt.problem)

    def failed(self, attempt: Attempt, why: str) -> AttemptRecord:
        """The grader itself failed on this attempt: it does not count; said to the student and reported."""
        line = f"This attempt could not be graded ({why}). It does not count; your instructor has been told."
        pages = {nid: fb.page(f"{nid}: not graded", [line]) for nid in fb.notebook_ids(attempt)}
        fb.deliver(self.exchange, attempt, pages)
        return ended(attempt, FAILED, why)

    def _header(self, attempt: Attempt, decision: Decision, score, total, counting: bool, kind: str) -> list[str]:
        policy, zone = self.settings.service, self.settings.zone
        of = f" of {policy.attempts}" if policy.attempts else ""
        lines = [
            f"Graded attempt {decision.number}{of}, handed in {when_text(attempt.handed_in, zone)}"
            + (" (after the due date: marked late)." if decision.late else ".")
        ]
        if kind == "full":
            lines.append(f"Score of this attempt: {score:g} / {total:g}.")
        if policy.counts == "last":
            lines.append("Your last graded attempt counts: this one, until you hand in another.")
        else:
            lines.append(
                "Your best graded attempt counts: "
                + ("this one, so far." if counting else "an earlier one, which scored more.")
            )
        return lines

    def graded(self, attempt: Attempt, decision: Decision, submission: Submission, result: Result) -> AttemptRecord:
        """A graded attempt: into the course if it counts, its feedback released, its record returned."""
        t0 = time.monotonic()
        assignment = self.current.assignment
        handed = [r for r in result.notebooks.values() if r.status != MISSING]
        if not any(r.status == GRADED for r in handed):
            reasons = "; ".join(sorted({r.reason for r in handed})) or "no notebook of the assignment was handed in"
            pages = fb.pass_fail_pages(
                result, assignment.grade_cells, [f"This attempt could not be graded and does not count: {reasons}"]
            )
            fb.deliver(self.exchange, attempt, fb.pages_by_id(attempt, result, pages, [reasons]))
            return ended(attempt, FAILED, reasons, seconds=round(result.seconds, 1))
        score, total = result.score(), assignment.max_score
        counting = counts(self.settings.service, score, self.store.history(attempt.student))
        if counting:
            self.store.merging(attempt.name)
            install(self.course, submission, attempt)
            merge(self.course, result, assignment, submission.handed_in_at)
            after_attempt(self.course, attempt.student, self.log)  # the score to the LMS: lti/after_grading.py
        kind = feedback_kind(self.settings, attempt.student, attempt.handed_in)
        header = self._header(attempt, decision, score, total, counting, kind)
        pages = fb.pass_fail_pages(result, assignment.grade_cells, header)
        if kind == "full":
            own = fb.own_text(submission.files)
            secrets = self.current.secrets
            pages.update(fb.full_pages(self.course, result, assignment, self.work, secrets, own, header, self.log))
        released = fb.deliver(self.exchange, attempt, fb.pages_by_id(attempt, result, pages, header))
        bad = [f"{n}: {r.reason}" for n, r in result.notebooks.items() if r.reason and r.status != MISSING]
        return ended(
            attempt,
            GRADED,
            "; ".join(bad),
            number=decision.number,
            late=decision.late,
            score=score,
            max_score=total,
            counts=counting,
            feedback=kind,
            released=len(released),
            findings=len(result.findings),
            seconds=round(result.seconds + time.monotonic() - t0, 1),
        )
