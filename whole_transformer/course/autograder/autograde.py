"""Autograde a whole class: every student once, in parallel or on a Dask cluster, nothing lost if killed.

Each student is one grading unit (``grade.py``): their ``Submission`` (``submission.py``: the files handed in, as
bytes, and the hand-in time the course decided when it took them in) graded against the ``Assignment``
(``assignment.py``: a SQLite gradebook that knows it, the released notebooks, the course's nbgrader_config.py)
into a ``Result``, in a private course folder of the grader's own. Graders run in threads of this process
(``--jobs N``) or on the workers of a Dask cluster (``--scheduler tcp://host:8786``), see ``graders.py``; none
touches the course. What a run checks and prepares before anyone is graded: ``prepare.py``.

The loop that hands students to the graders and takes their results back is the course's one scheduling loop
(``core/scheduler.py``, which the grading service runs too); ``ClassQueue`` is this run's queue for it. Results
are merged here, one at a time, as they come back (``store.merge``: grades into the course gradebook, then the
graded notebooks and ``result.json`` into ``autograde/<student>/whole-transformer/``). A student whose
``result.json`` matches the submission and the assignment as they are now is already graded and is skipped, so a
run that was stopped (Ctrl-C) or killed half-way and is started again grades each remaining student once
(``--force`` grades everyone again). A student is claimed before grading and until merged (``claims.py``), so
two runs started at once on the same course share the class instead of grading anyone twice. A task whose Dask
worker dies is run again by the cluster on another worker; only the result that comes back is merged. At the end
``integrity-report.csv`` is written from all results, and a summary per student is printed.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..core.results import FAILED, GRADED, MISSING, NotebookResult, Result
from ..core.scheduler import Scheduler
from ..gradebook import open_gradebook
from ..layout import ASSIGNMENT, Course
from ..sandbox import zygote as kernel_zygote
from ..sandbox.bubblewrap import SandboxMissing
from .assignment import Assignment, changed_notebooks
from .claims import Claims
from .class_log import ClassLog
from .graders import DaskGraders, LocalGraders
from .prepare import check_run, chosen_students, fresh_work, prepare_assignment
from .store import load_result, merge, write_integrity_report
from .submission import Submission, folder_digest, submission_files
from .warm_nbgrader import WarmRuns
from .warm_nbgrader import close as close_warm_nbgrader


@dataclass
class ClassRun:
    graded: list[str]
    skipped: list[str]
    seconds: float
    report: Path
    elsewhere: list[str] = field(default_factory=list)  # being graded by another run at the time
    left: list[str] = field(default_factory=list)  # not graded (stopped, or the grading infrastructure failed)
    workers: list[str] = field(default_factory=list)  # where each graded student was graded, in order


def is_done(course: Course, student: str, assignment: Assignment) -> bool:
    """Graded already: the result matches what is handed in now (its graded notebooks all there), and the
    assignment as it is now in every notebook the student handed in (a test changed in a notebook they did not hand
    in leaves them graded; a change of the grading config, nbgrader_config.py, regrades everyone)."""
    res = load_result(course, student)
    if res is None or res.submission != folder_digest(course.submitted / student):
        return False
    graded = course.autograde / student / ASSIGNMENT
    if any(nb.status == GRADED and not (graded / f"{n}.ipynb").is_file() for n, nb in res.notebooks.items()):
        return False  # a graded notebook taken out of autograde/ by hand: grade again
    if res.assignment == assignment.fingerprint:
        return True
    changed = changed_notebooks(res.assignment, assignment.fingerprint)
    handed = {n for n, v in res.notebooks.items() if v.status != MISSING}
    return changed is not None and not changed & handed and set(res.notebooks) == set(assignment.notebooks)


def failed_result(submission: Submission, assignment: Assignment, e: BaseException) -> Result:
    """The result of a grading that raised: every notebook failed, saying why."""
    result = Result(submission.student, submission.digest, assignment.fingerprint, findings=list(submission.findings))
    for name in assignment.notebooks:
        why = f"the autograder failed on this student: {type(e).__name__}: {e}"
        result.notebooks[name] = NotebookResult(FAILED, why)
        result.notebooks[name].settle(assignment.grade_ids(name))
    return result


class ClassQueue:
    """``make autograde``'s queue for the scheduling loop (``core/scheduler.py``): the class, biggest submissions
    first (so that the last ones to finish are short), each student claimed and merged into the course as their
    result comes back, one at a time, through the one open gradebook; a grader's failure is the student's failed
    result, a failure of the grading infrastructure leaves the student for the next run."""

    def __init__(
        self,
        course: Course,
        assignment: Assignment,
        claims: Claims,
        gb,
        todo: list[str],
        said: ClassLog,
        *,
        force: bool,
        staging: Path,
    ):
        """``gb``: the course gradebook, open; ``force``: grade again who is graded; ``staging``: where a merge
        gathers the graded notebooks."""
        self.course, self.assignment, self.claims, self.gb, self.said = course, assignment, claims, gb, said
        self.queue, self.force, self.staging = list(todo), force, staging

    def more(self) -> bool:
        return bool(self.queue)

    def ready(self, loop: Scheduler[str, Submission, Assignment, Result]) -> Iterator[tuple[str, Submission]]:
        """Students for the graders while they have room: each claimed, and not graded meanwhile."""
        tally = self.said.tally
        while self.queue and loop.room():
            s = self.queue.pop(0)
            if not self.claims.claim(s):
                tally.elsewhere.append(s)  # another run is grading this student now
                continue
            if not self.force and is_done(self.course, s, self.assignment):
                self.claims.unclaim(s)  # graded by another run since this one started
                tally.skipped.append(s)
                continue
            yield s, Submission.from_folder(self.course, s)

    def started(self, loop: Scheduler[str, Submission, Assignment, Result], student: str) -> None:
        pass  # the progress bar counts the gradings under way at each pause

    def not_started(self, student: str, error: Exception) -> None:
        raise error  # the graders cannot take a job: the run stops (students merged so far stay graded)

    def failed(self, student: str, submission: Submission, error: BaseException, infrastructure: bool) -> None:
        """A failure of the grading infrastructure leaves the student for the next run; a grader's failure
        is the student's failed result; a missing sandbox stops the run."""
        if isinstance(error, SandboxMissing):
            raise error
        if infrastructure:
            self.said.left(student, error)
            self.claims.unclaim(student)
            return
        # a grader's bug must not stop the class: the student's failed result
        self.graded(student, submission, failed_result(submission, self.assignment, error))

    def graded(self, student: str, submission: Submission, result: Result) -> None:
        """Merge one finished student into the course, and say so."""
        merge(self.course, result, self.assignment, submission.handed_in_at, self.gb, self.staging)
        self.claims.unclaim(student)
        self.said.graded(student, result, self.gb, self.assignment)


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
    said = ClassLog(course, settings, log)
    graders: LocalGraders | DaskGraders | None = None
    warm = False  # the kernel zygote and the warm nbgrader, started for this run
    try:
        assignment = prepare_assignment(course, claims, work, log)
        todo = _todo(course, everyone, assignment, force, said)
        if scheduler:
            graders = DaskGraders(scheduler, sandbox, cell_timeout, log)
        else:
            # the kernel zygote and the warm nbgrader pay for themselves from the second student on (one alone: 0.8 s
            # slower with the zygote); each student's nbgrader run is then forked from the warm nbgrader
            warm = sandbox and len(todo) > 1
            graders = LocalGraders(jobs, work, sandbox, cell_timeout, WarmRuns() if warm else None)
        log(
            f"autograde: {len(todo)} to grade, {len(said.tally.skipped)} already graded, {graders.describe()} "
            f"({'sandboxed with bubblewrap' if sandbox else 'NO SANDBOX'})"
        )
        said.start(len(todo), progress if progress is not None else True)
        with open_gradebook(course) as gb:
            queue = ClassQueue(course, assignment, claims, gb, todo, said, force=force, staging=work / "staging")
            try:
                Scheduler(graders, queue).run(queue.more, said.pause)
            except BaseException:
                said.stopping(todo)  # Ctrl-C or an error: students merged so far stay graded
                graders.stop()
                graders = None
                raise
    finally:
        if graders is not None:
            graders.close()
        if warm:
            kernel_zygote.close_all()  # the run's kernel zygote and its folder: the run is over
            close_warm_nbgrader()  # and its warm nbgrader
        claims.close()
        shutil.rmtree(work, ignore_errors=True)
    results = {s: load_result(course, s) for s in course.students()}
    report = write_integrity_report(course, results)
    seconds = time.monotonic() - t0
    said.end(results, report, seconds)
    t = said.tally
    return ClassRun(t.graded, t.skipped, seconds, report, t.elsewhere, t.left, t.where)


def _todo(course: Course, everyone: list[str], assignment: Assignment, force: bool, said: ClassLog) -> list[str]:
    """Who to grade, the biggest submissions first (those graded already go to the tally's skipped)."""
    todo: list[str] = []
    for s in sorted(
        everyone, key=lambda s: -len([p for p in submission_files(course.submitted / s) if p.suffix == ".ipynb"])
    ):
        (said.tally.skipped if is_done(course, s, assignment) and not force else todo).append(s)
    return todo
