"""How the service ends one attempt once it is decided: refused, malformed, failed, or graded.

A graded attempt that counts (``policy.counts``) goes into the course as ``make autograde`` would
have put it: its files become ``submitted/<student>/whole-transformer/`` (as nbgrader collect
writes them), and its result is merged (``autograder/merge.py``: gradebook, ``autograde/``, the
student's record), so that ``make autograde`` finds the student graded and leaves them. Then its
feedback is released, and last the attempt's record is written (``watch.Store``, by
``on_submission.py``): an attempt is done exactly when its record exists. ``Attempts`` holds what the
endings need of the service (the course, the exchange, the store, course.toml as last read, and the
assignment as last prepared); each ending returns the attempt's record.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..autograder.handin_merge import entry, record_files
from ..autograder.locate import Job, odd_files, submission_digest
from ..autograder.merge import merge
from ..autograder.pack import Pack
from ..autograder.record import StudentResult, load_record
from ..autograder.template import Template
from ..core.results import GRADED, MISSING, Finding
from ..layout import Course
from ..lti.after_grading import after_attempt
from ..term.handin_time import entry_fields
from ..term.settings import Settings
from . import attempt_feedback as fb
from .policy import Decision, counts, feedback_kind, when_text
from .watch import COLLECTED, FAILED, MALFORMED, REFUSED, Store, Submission, attempt_files


@dataclass(frozen=True)
class Prepared:
    """The assignment as the service grades it now: prepared at its start, again when source/ changes."""

    template: Template
    pack: Pack
    secrets: dict[str, str]  # what a student must not see (``reports.feedback.secrets``)
    built_from: str  # the digest of source/ it was prepared from (``gradebook.source_digest``)


def record(sub: Submission, status: str, reason: str = "", **more) -> dict:
    return {
        "name": sub.name,
        "student": sub.student,
        "when": sub.when.isoformat() if sub.when else "",  # the time used (watch.py: claim against evidence)
        **({"claimed": sub.handin.claimed.isoformat()} if sub.handin and sub.handin.claimed else {}),
        **({"integrity": sub.handin.finding} if sub.handin and sub.handin.finding else {}),
        "status": status,
        "reason": reason,
        "done_at": datetime.now(UTC).isoformat(),
        **more,
    }


def make_job(sub: Submission, template: Template, stage: Path) -> Job:
    """The attempt as a grading job; its digest is that of the same files in submitted/<student>/."""
    files = attempt_files(sub)
    folder = stage / sub.student
    shutil.rmtree(folder, ignore_errors=True)
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    digest = submission_digest(folder)
    shutil.rmtree(folder, ignore_errors=True)
    findings = [Finding("files", odd, "submission") for odd in odd_files(sub.folder)]
    return Job(sub.student, digest, template.fingerprint, files, findings)


def install(course: Course, student: str, files: dict[str, bytes], sub: Submission | None = None) -> None:
    """The attempt's files become submitted/<student>/ (replaced whole, by renames); with ``sub``, the time the
    service decided for it is recorded for each file (the record of when, ``autograder/handin_merge.py``), so
    that every later command (make grades, make term, the feedback) uses the very time of the service's record."""
    dest = course.submitted / student
    new, old = course.submitted / f".service-{student}.new", course.submitted / f".service-{student}.old"
    for d in (new, old):
        shutil.rmtree(d, ignore_errors=True)
    for rel, data in files.items():
        (new / rel).parent.mkdir(parents=True, exist_ok=True)
        (new / rel).write_bytes(data)
    if dest.exists():
        os.replace(dest, old)
    os.replace(new, dest)
    shutil.rmtree(old, ignore_errors=True)
    if sub is not None and sub.handin is not None:
        origin = f"the exchange: {sub.name} (the grading service)"
        rec = entry(sub.handin.used, origin, "exchange", **entry_fields(sub.handin))
        names = [rel.split("/", 1)[1] for rel in files if "/" in rel and rel.split("/", 1)[1] not in _STAMPS]
        record_files(course, student, dict.fromkeys(names, rec), whole=True)


_STAMPS = ("timestamp.txt", "submission_secret.txt")  # what describes an attempt, not a file handed in


def score_of(result: StudentResult, grade_cells: dict) -> tuple[float, float]:
    total = sum(ms for cells in grade_cells.values() for _, ms in cells)
    got = 0.0
    for name, data in ((result.scores or {}).get("notebooks") or {}).items():
        res = result.notebooks.get(name)
        if res is not None and res.status == GRADED:
            got += sum(float(auto or 0.0) + float(extra or 0.0) for auto, extra in data["grades"].values())
    return round(got, 3), total


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
    def assignment(self) -> Prepared:
        """The assignment, which the service prepares before anything is graded."""
        assert self.prepared is not None, "the service grades only once the assignment is prepared"
        return self.prepared

    def graded_by_instructor(self, sub: Submission) -> dict | None:
        """The record of an attempt ``make autograde`` already graded, exactly these files (handed in while the
        service was off, then collected): grading it again would replace the feedback the instructor released."""
        if self.store.was_merging(sub.name):  # the service's own merge, stopped before its record: not theirs
            return None
        graded = load_record(self.course, sub.student)
        if graded is None:
            return None
        try:
            same = graded.submission == make_job(sub, self.assignment.template, self.work / "stage").submission
        except Exception:  # noqa: BLE001 - files that cannot be read: the grading path reports them
            return None
        if not same:
            return None
        return record(
            sub,
            COLLECTED,
            "collected and graded by the instructor (make autograde) before it was seen here; "
            "left to them: not graded again, not one of the attempts on submission",
        )

    def refuse(self, sub: Submission, decision: Decision) -> dict:
        """Not graded under the policy: the student's feedback says why and when the next attempt counts."""
        lines = [f"Handed in {when_text(sub.handed_in, self.settings.zone)}.", decision.why]
        pages = {nid: fb.page(f"{nid}: not graded", lines) for nid in fb.notebook_ids(sub)}
        fb.release(self.exchange, sub, pages)
        return record(sub, REFUSED, decision.why, number=decision.number, late=decision.late)

    def malformed(self, sub: Submission) -> dict:
        """Cannot be graded at all (see ``watch.read_submission``): reported, and said to the student if possible."""
        if sub.secret and sub.folder.is_dir():
            why = f"This attempt could not be graded: {sub.problem}. It does not count; your instructor has been told."
            fb.release(self.exchange, sub, {nid: fb.page(f"{nid}: not graded", [why]) for nid in fb.notebook_ids(sub)})
        return record(sub, MALFORMED, sub.problem)

    def failed(self, sub: Submission, why: str) -> dict:
        """The grader itself failed on this attempt: it does not count; said to the student and reported."""
        line = f"This attempt could not be graded ({why}). It does not count; your instructor has been told."
        fb.release(self.exchange, sub, {nid: fb.page(f"{nid}: not graded", [line]) for nid in fb.notebook_ids(sub)})
        return record(sub, FAILED, why)

    def _header(self, sub: Submission, decision: Decision, score, total, counting: bool, kind: str) -> list[str]:
        policy, zone = self.settings.service, self.settings.zone
        of = f" of {policy.attempts}" if policy.attempts else ""
        lines = [
            f"Graded attempt {decision.number}{of}, handed in {when_text(sub.handed_in, zone)}"
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

    def graded(self, sub: Submission, decision: Decision, job: Job, result: StudentResult) -> dict:
        """A graded attempt: into the course if it counts, its feedback released, its record returned."""
        t0 = time.monotonic()
        template = self.assignment.template
        handed = [r for r in result.notebooks.values() if r.status != MISSING]
        if not any(r.status == GRADED for r in handed):
            reasons = "; ".join(sorted({r.reason for r in handed})) or "no notebook of the assignment was handed in"
            pages = fb.pass_fail_pages(
                result, template.grade_cells, [f"This attempt could not be graded and does not count: {reasons}"]
            )
            fb.release(self.exchange, sub, fb.pages_by_id(sub, result, pages, [reasons]))
            return record(sub, FAILED, reasons, seconds=round(result.seconds, 1))
        score, total = score_of(result, template.grade_cells)
        counting = counts(self.settings.service, score, self.store.history(sub.student))
        if counting:
            self.store.merging(sub.name)
            install(self.course, sub.student, job.files, sub)
            merge(self.course, result, template)
            after_attempt(self.course, sub.student, self.log)  # the score to the LMS: lti/after_grading.py
        kind = feedback_kind(self.settings, sub.student, sub.handed_in)
        header = self._header(sub, decision, score, total, counting, kind)
        pages = fb.pass_fail_pages(result, template.grade_cells, header)
        if kind == "full":
            own = fb.own_text(job.files)
            secrets = self.assignment.secrets
            pages.update(fb.full_pages(self.course, result, template, self.work, secrets, own, header, self.log))
        released = fb.release(self.exchange, sub, fb.pages_by_id(sub, result, pages, header))
        bad = [f"{n}: {r.reason}" for n, r in result.notebooks.items() if r.reason and r.status != MISSING]
        return record(
            sub,
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
