"""Autograde a whole class: every student once, in parallel or on a Dask cluster, nothing lost if killed.

Each student goes through the grading pipeline, one module a stage:

    locate → restore → scan → run → verdict      (student.py: grade_job, in a grader)
    → merge → record                              (merge.py, record.py: here, one student at a time)

A grader gets the student's files as a ``Job`` (``locate.make_job``: bytes, never paths) and the
assignment as a ``Pack`` (``pack.make_pack``: a SQLite gradebook that knows it, the released
notebooks and the course's nbgrader_config.py), grades in a private course folder of its own and
returns a ``StudentResult``. Graders run in threads of this process (``--jobs N``) or on the
workers of a Dask cluster (``--scheduler tcp://host:8786``), see ``graders.py``. The gradebook a
student's grading writes is always its private SQLite file: none can touch the course gradebook. What a
run checks and prepares before anyone is graded: ``prepare.py``.

The loop that hands students to the graders and takes their results is the course's one scheduling
loop (``core/scheduler.py``, which the grading service runs too); ``_Batch`` is this run's policy for it.
Results are merged here as they come back: grades into the course gradebook (``gradebook.db`` or
the database ``DB_URL`` names), the graded notebooks into ``autograde/<student>/whole-transformer/``,
and last the record ``autograde/.wt/students/<student>.json``. A student whose record matches the
submission and the assignment as they are now is already graded and is skipped, so a run that was
stopped (Ctrl-C) or killed half-way and is started again grades each remaining student once
(``--force`` grades everyone again). A student is claimed before grading and until merged
(``claims.py``), so two runs started at once on the same course share the class instead of grading
anyone twice. A task whose Dask worker dies is run again by the cluster on another worker; only the
result that comes back is merged. At the end ``integrity-report.csv`` is written from all records,
and a summary per student is printed.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook

from ..core.results import FAILED, GRADED, MISSING, NotebookResult
from ..core.scheduler import Scheduler
from ..gradebook import open_gradebook
from ..layout import ASSIGNMENT, Course
from ..sandbox.bubblewrap import SandboxMissing
from ..term.settings import Settings
from .claims import Claims
from .class_log import Progress, Tally, lateness_note, log_summary, summary_line
from .graders import DaskGraders, LocalGraders
from .locate import Job, make_job, submission_digest, submission_files
from .merge import merge
from .pack import Pack
from .prepare import check_run, chosen_students, fresh_work, prepare_assignment
from .record import StudentResult, load_record, write_integrity_report
from .template import Template, changed_notebooks


@dataclass
class ClassRun:
    graded: list[str]
    skipped: list[str]
    seconds: float
    report: Path
    elsewhere: list[str] = field(default_factory=list)  # being graded by another run at the time
    left: list[str] = field(default_factory=list)  # not graded (stopped, or the grading infrastructure failed)
    workers: list[str] = field(default_factory=list)  # where each graded student was graded, in order


def is_done(course: Course, student: str, template: Template) -> bool:
    """Graded already: the record matches what is handed in now, and the assignment as it is now in
    every notebook the student handed in (a test changed in a notebook they did not hand in leaves
    them graded; a change of the grading config, nbgrader_config.py, regrades everyone)."""
    rec = load_record(course, student)
    if (
        rec is None
        or rec.submission != submission_digest(course.submitted / student)
        or (course.autograde / student / ASSIGNMENT).exists() != (rec.count(GRADED) > 0)
    ):
        return False
    if rec.assignment == template.fingerprint:
        return True
    changed = changed_notebooks(rec.assignment, template.fingerprint)
    handed = {n for n, v in rec.notebooks.items() if v.status != MISSING}
    return changed is not None and not changed & handed and set(rec.notebooks) == set(template.notebooks)


def _failed_result(job: Job, template: Template, e: BaseException) -> StudentResult:
    result = StudentResult(job.student, job.submission, job.assignment, {}, list(job.findings))
    for name in template.notebooks:
        why = f"the autograder failed on this student: {type(e).__name__}: {e}"
        result.notebooks[name] = NotebookResult(FAILED, why)
        result.notebooks[name].settle(g for g, _ in template.grade_cells[name])
    return result


@dataclass
class _Batch:
    """``make autograde``'s policy for the scheduling loop (``core/scheduler.py``): the class in ``queue``,
    biggest submissions first, each student claimed and merged into the course as their result comes back,
    one at a time; a grader's failure is the student's failed result, a failure of the grading
    infrastructure leaves the student for the next run."""

    course: Course
    template: Template
    pack: Pack
    claims: Claims
    settings: Settings
    force: bool
    tally: Tally
    bar: Progress
    log: Callable[[str], None]
    gb: Gradebook
    staging: Path
    queue: list[str]  # the biggest submissions first, so that the last ones to finish are short

    def more(self) -> bool:
        return bool(self.queue)

    def ready(self, loop: Scheduler[str, Job, Pack, StudentResult]) -> Iterator[tuple[str, Job]]:
        """Students for the graders while they have room: each claimed, and not graded meanwhile."""
        while self.queue and loop.room():
            s = self.queue.pop(0)
            if not self.claims.claim(s):
                self.tally.elsewhere.append(s)  # another run is grading this student now
                continue
            if not self.force and is_done(self.course, s, self.template):
                self.claims.release(s)  # graded by another run since this one started
                self.tally.skipped.append(s)
                continue
            yield s, make_job(self.course, s, self.template)

    def started(self, loop: Scheduler[str, Job, Pack, StudentResult], student: str) -> None:
        pass  # the progress bar counts the gradings under way at each pause

    def not_started(self, student: str, error: Exception) -> None:
        raise error  # the graders cannot take a job: the run stops (students merged so far stay graded)

    def failed(self, student: str, job: Job, error: BaseException, infrastructure: bool) -> None:
        """A failure of the grading infrastructure leaves the student for the next run; a grader's failure
        is the student's failed result; a missing sandbox stops the run."""
        if isinstance(error, SandboxMissing):
            raise error
        if infrastructure:
            self.log(f"{student}: not graded ({type(error).__name__}: {error}); left for the next run")
            self.tally.left.append(student)
            self.claims.release(student)
            return
        self.graded(student, job, _failed_result(job, self.template, error))  # a grader bug must not stop the class

    def graded(self, student: str, job: Job, result: StudentResult) -> None:
        """Merge one finished student into the course, and say so."""
        merge(self.course, result, self.template, self.gb, self.staging)
        self.claims.release(student)
        self.tally.graded.append(student)
        self.tally.where.append(result.worker)
        self.bar.clear()
        self.log(
            summary_line(student, result, self.gb, self.template, lateness_note(self.course, student, self.settings))
        )

    def pause(self, finished: bool, running: int) -> None:
        """Between two passes: the progress bar, and a short wait when nothing finished."""
        if finished:
            self.bar.update(len(self.tally.graded), running, force=not running)
        else:
            self.bar.update(len(self.tally.graded), running)
            time.sleep(0.2)


def autograde(
    course: Course,
    jobs: int = 1,
    *,
    force: bool = False,
    students: list[str] | None = None,
    no_sandbox: bool = False,
    cell_timeout: int | None = None,
    scheduler: str | None = None,
    progress: bool | None = None,
    log=print,
) -> ClassRun:
    """Grade every student of submitted/ (or those given) who is not graded yet; see module doc.

    ``scheduler``: the address of a Dask scheduler (``tcp://host:8786``) to grade on its workers;
    else ``jobs`` students at once here. Ctrl-C stops cleanly: students merged so far stay graded."""
    t0 = time.monotonic()
    sandbox, settings = check_run(course, jobs, no_sandbox, log)
    everyone = chosen_students(course, students)
    work = fresh_work(course)
    claims = Claims(course)
    graders = None
    tally = Tally()
    try:
        template, pack = prepare_assignment(course, claims, work, log)
        todo = _todo(course, everyone, template, force, tally)
        graders = (
            DaskGraders(scheduler, sandbox, cell_timeout, log)
            if scheduler
            else LocalGraders(jobs, work, sandbox, cell_timeout)
        )
        log(
            f"autograde: {len(todo)} to grade, {len(tally.skipped)} already graded, {graders.describe()} "
            f"({'sandboxed with bubblewrap' if sandbox else 'NO SANDBOX'})"
        )
        bar = Progress(len(todo), enabled=progress if progress is not None else True)
        gb = open_gradebook(course)
        try:
            batch = _Batch(
                course, template, pack, claims, settings, force, tally, bar, log, gb, work / "staging", list(todo)
            )
            Scheduler(graders, batch).run(batch.more, batch.pause)
        except BaseException:
            _stopping(tally, todo, bar, log)  # Ctrl-C or an error: students merged so far stay graded
            graders.stop()
            graders = None
            raise
        finally:
            gb.close()
        bar.close()
    finally:
        if graders is not None:
            graders.close()
        claims.close()
        shutil.rmtree(work, ignore_errors=True)
    records = {s: load_record(course, s) for s in course.students()}
    report = write_integrity_report(course, records)
    seconds = time.monotonic() - t0
    log_summary(tally, records, report, seconds, log)
    return ClassRun(tally.graded, tally.skipped, seconds, report, tally.elsewhere, tally.left, tally.where)


def _todo(course: Course, everyone: list[str], template: Template, force: bool, tally: Tally) -> list[str]:
    """Who to grade, the biggest submissions first (those graded already go to ``tally.skipped``)."""
    todo: list[str] = []
    for s in sorted(
        everyone, key=lambda s: -len([p for p in submission_files(course.submitted / s) if p.suffix == ".ipynb"])
    ):
        (tally.skipped if is_done(course, s, template) and not force else todo).append(s)
    return todo


def _stopping(tally: Tally, todo: list[str], bar: Progress, log) -> None:
    """Stopped (Ctrl-C or an error): the bar closed, and who is left said before the graders stop."""
    bar.close()
    tally.left = [s for s in todo if s not in set(tally.graded) | set(tally.elsewhere) | set(tally.skipped)]
    log(
        f"autograde: stopping: {len(tally.graded)} graded in this run, {len(tally.left)} left (run it "
        "again to grade who is left)"
    )
