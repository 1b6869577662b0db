"""Autograde a whole class: every student once, in parallel or on a Dask cluster, nothing lost if killed.

Each student goes through the grading pipeline, one module a stage:

    locate → restore → scan → run → verdict      (run.py: grade_job, in a grader)
    → merge → record                              (merge.py, record.py: here, one student at a time)

A grader gets the student's files as a ``Job`` (``locate.make_job``: bytes, never paths) and the
assignment as a ``Pack`` (``gradebook.make_pack``: a SQLite gradebook that knows it, the released
notebooks and the course's nbgrader_config.py), grades in a private course folder of its own and
returns a ``StudentResult``. Graders run in threads of this process (``--jobs N``) or on the
workers of a Dask cluster (``--scheduler tcp://host:8786``), see ``graders.py``. The gradebook a
student's grading writes is always its private SQLite file: none can touch the course gradebook.

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

import os
import shutil
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..layout import ASSIGNMENT, Course, redact
from ..sandbox.bubblewrap import SandboxMissing, check_sandbox
from .claims import Claims
from .gradebook import Template, build_template, changed_notebooks, make_pack, open_gradebook
from .graders import DaskGraders, LocalGraders
from .locate import Job, make_job, submission_digest, submission_files
from .merge import merge
from .record import FAILED, GRADED, MISSING, NotebookResult, Record, StudentResult, load_record, write_integrity_report


@dataclass
class ClassRun:
    graded: list[str]
    skipped: list[str]
    seconds: float
    report: Path
    elsewhere: list[str] = field(default_factory=list)  # being graded by another run at the time
    left: list[str] = field(default_factory=list)  # not graded (stopped, or the grading infrastructure failed)
    workers: list[str] = field(default_factory=list)  # where each graded student was graded, in order


class Progress:
    """Students done, running and left, with the rate: a tqdm bar on a terminal, else a plain line
    on stderr every 15 s."""

    def __init__(self, total: int, enabled: bool = True):
        from tqdm import tqdm

        self.t0 = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.enabled = enabled and total > 0
        self.last = 0.0
        self.bar = tqdm(total=total, unit="student", file=sys.stderr, disable=not (self.enabled and self.tty),
                        bar_format="autograde {bar:20} {desc}", dynamic_ncols=True)
        self.total = total

    def update(self, done: int, running: int, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or not (force or self.tty or now - self.last >= 15):
            return
        self.last = now
        minutes = (now - self.t0) / 60
        rate = done / minutes if minutes > 0 and done else 0.0
        left = self.total - done - running
        eta = f", about {(self.total - done) / rate:.0f} min to go" if rate and done < self.total else ""
        text = f"{done}/{self.total} done · {running} running · {left} left · {rate:.1f} students/min{eta}"
        if self.tty:
            self.bar.n = done
            self.bar.set_description_str(text)
        else:
            print(f"autograde: {text}", file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.tty:
            self.bar.clear()

    def close(self) -> None:
        self.bar.close()


def _work_root(course: Course) -> Path:
    """This run's work folder; those of dead runs of this host are removed."""
    base = course.state / "work"
    host = socket.gethostname()
    if base.is_dir():
        for d in base.iterdir():
            h, _, pid = d.name.rpartition("-")
            if h == host and pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(d, ignore_errors=True)
            elif not pid.isdigit():
                shutil.rmtree(d, ignore_errors=True)  # not a run's folder (named host-pid)
    return base / f"{host}-{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_done(course: Course, student: str, template: Template) -> bool:
    """Graded already: the record matches what is handed in now, and the assignment as it is now in
    every notebook the student handed in (a test changed in a notebook they did not hand in leaves
    them graded; a change of the grading config, nbgrader_config.py, regrades everyone)."""
    rec = load_record(course, student)
    if (rec is None or rec.submission != submission_digest(course.submitted / student)
            or (course.autograde / student / ASSIGNMENT).exists() != (rec.count(GRADED) > 0)):
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


def lateness_note(course: Course, student: str, settings=None) -> str:
    """On time, late by how much (and the penalty), or an extension, as course.toml has it."""
    from whole_transformer.course.term.late import student_lateness
    from whole_transformer.course.term.settings import load

    try:
        return student_lateness(course, settings or load(course), student).describe()
    except ValueError as e:  # an unreadable timestamp.txt: said on the student's line, grading goes on
        return f"hand-in time unreadable: {e}"


def summary_line(student: str, rec: Record, gb, template: Template, when: str = "") -> str:
    """One line for the log: the student's score, notebooks graded, failed and missing, findings,
    and when it was handed in (``when``: ``lateness_note``)."""
    from nbgrader.api import MissingEntry

    score = 0.0
    try:
        sub = gb.find_submission(ASSIGNMENT, student)
        score, maximum = sub.score, sub.max_score
    except MissingEntry:
        maximum = sum(ms for c in template.grade_cells.values() for _, ms in c)
    gb.db.commit()  # end the read transaction
    counts = {k: rec.count(k) for k in (GRADED, FAILED, MISSING)}
    parts = [f"{counts[GRADED]} graded"]
    if counts[FAILED]:
        parts.append(f"{counts[FAILED]} failed")
    if counts[MISSING]:
        parts.append(f"{counts[MISSING]} missing")
    bad_cells = sum(1 for v in rec.notebooks.values() if v.status == GRADED
                    for c in v.cells.values() if c.status != GRADED)
    if bad_cells:
        parts.append(f"{bad_cells} test cell(s) failed to run")
    return (f"{student:<24} {score:6.1f} / {maximum:<5.1f} notebooks: {', '.join(parts):<34} "
            f"findings: {len(rec.findings)}  ({rec.seconds:.0f} s)" + (f"  {when}" if when else ""))


def autograde(course: Course, jobs: int = 1, *, force: bool = False, students: list[str] | None = None,
              no_sandbox: bool = False, cell_timeout: int | None = None, scheduler: str | None = None,
              progress: bool | None = None, log=print) -> ClassRun:
    """Grade every student of submitted/ (or those given) who is not graded yet; see module doc.

    ``scheduler``: the address of a Dask scheduler (``tcp://host:8786``) to grade on its workers;
    else ``jobs`` students at once here. Ctrl-C stops cleanly: students merged so far stay graded."""
    t0 = time.monotonic()
    if jobs < 1:
        raise ValueError(f"--jobs must be 1 or more, got {jobs}")
    sandbox = check_sandbox(no_sandbox)
    if not sandbox:
        log("WARNING: grading WITHOUT a sandbox: student code runs with your rights and can read the hidden "
            "tests and the gradebook.")
    if not course.source.is_dir():
        raise ValueError(f"no source notebooks in {course.source}")
    from whole_transformer.course.term.settings import load

    settings = load(course)  # a bad course.toml stops the run before anything is graded
    from whole_transformer.course.build.release import points_planned

    stale = points_planned(course, settings)
    if stale:
        raise ValueError("course.toml [points] differs from source/ (" + ", ".join(
            f"{gid} {old:g} → {new:g}" for _, gid, old, new in stale) + "): run make release first, then autograde")
    everyone = course.students()
    if students:
        unknown = [s for s in students if s not in everyone]
        if unknown:
            raise ValueError(f"no submission folder for {', '.join(unknown)} in {course.submitted}")
        everyone = [s for s in everyone if s in students]
    course.state.mkdir(parents=True, exist_ok=True)
    work = _work_root(course)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    claims = Claims(course)
    graders = None
    bar = None
    graded: list[str] = []
    where: list[str] = []
    elsewhere: list[str] = []
    left: list[str] = []
    try:
        t_prep = time.monotonic()
        claims.lock("assignment")  # one run at a time prepares the gradebook and the assignment
        try:
            template = build_template(course, work, log)
        finally:
            claims.unlock("assignment")
        pack = make_pack(course, template)
        where_db = "gradebook.db" if course.sqlite else redact(course.db_url)
        log(f"autograde: assignment ready in {time.monotonic() - t_prep:.1f} s; gradebook {where_db}")

        todo, skipped = [], []
        for s in sorted(everyone, key=lambda s: -len([p for p in submission_files(course.submitted / s)
                                                       if p.suffix == ".ipynb"])):
            (skipped if is_done(course, s, template) and not force else todo).append(s)
        graders = (DaskGraders(scheduler, sandbox, cell_timeout, log) if scheduler
                   else LocalGraders(jobs, work, sandbox, cell_timeout))
        log(f"autograde: {len(todo)} to grade, {len(skipped)} already graded, {graders.describe()} "
            f"({'sandboxed with bubblewrap' if sandbox else 'NO SANDBOX'})")
        bar = Progress(len(todo), enabled=progress if progress is not None else True)
        gb = open_gradebook(course)
        staging = work / "staging"
        queue = list(todo)  # the biggest submissions first, so that the last ones to finish are short
        running: dict[object, Job] = {}
        try:
            while queue or running:
                while queue and len(running) < graders.capacity():
                    s = queue.pop(0)
                    if not claims.claim(s):
                        elsewhere.append(s)  # another run is grading this student now
                        continue
                    if not force and is_done(course, s, template):
                        claims.release(s)  # graded by another run since this one started
                        skipped.append(s)
                        continue
                    job = make_job(course, s, template)
                    running[graders.submit(job, pack)] = job
                finished = [f for f in running if f.done()]
                if not finished:
                    bar.update(len(graded), len(running))
                    time.sleep(0.2)
                    continue
                for fut in finished:
                    job = running.pop(fut)
                    try:
                        result = graders.result(fut)
                    except SandboxMissing:
                        raise
                    except BaseException as e:  # noqa: BLE001 - sorted below
                        if isinstance(e, KeyboardInterrupt):
                            raise
                        if graders.infrastructure_error(e):
                            log(f"{job.student}: not graded ({type(e).__name__}: {e}); left for the next run")
                            left.append(job.student)
                            claims.release(job.student)
                            continue
                        result = _failed_result(job, template, e)  # a grader bug must not stop the class
                    merge(course, result, template, gb, staging)
                    claims.release(job.student)
                    graded.append(job.student)
                    where.append(result.worker)
                    bar.clear()
                    log(summary_line(job.student, result, gb, template, lateness_note(course, job.student,
                                                                                       settings)))
                bar.update(len(graded), len(running), force=not running)
        except BaseException:
            # Ctrl-C or an error: stop the graders now; students merged so far stay graded
            bar.close()
            left = [s for s in todo if s not in set(graded) | set(elsewhere) | set(skipped)]
            log(f"autograde: stopping: {len(graded)} graded in this run, {len(left)} left (run it again to "
                "grade who is left)")
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
    total_findings = sum(len(r.findings) for r in records.values() if r)
    log(f"autograde: graded {len(graded)}, skipped {len(skipped)} already graded, in {seconds:.1f} s "
        f"({60 * len(graded) / max(seconds, 1e-9):.1f} students/min); {total_findings} finding(s) in {report.name}")
    if elsewhere:
        log(f"autograde: {len(elsewhere)} student(s) were being graded by another run: {', '.join(elsewhere)}")
    if left:
        log(f"autograde: {len(left)} student(s) left for the next run: {', '.join(left)}")
    look = []
    for s, r in records.items():
        bad = [f"{n[:2]} {v.status}" for n, v in (r.notebooks.items() if r else []) if v.status == FAILED]
        nf = len(r.findings) if r else 0
        if bad or nf:
            look.append(f"{s} ({', '.join(bad + ([f'{nf} finding(s)'] if nf else []))})")
    if look:
        log(f"to look at ({len(look)}): " + "; ".join(look))
    return ClassRun(graded, skipped, seconds, report, elsewhere, left, where)
