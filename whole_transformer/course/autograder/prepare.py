"""What a class run needs before anyone is graded (``autograde.py``): the sandbox, the job count and course.toml
checked, the students chosen, a fresh work folder of this run, and the ``Assignment`` every grader gets, prepared
(with the course gradebook brought up to date) by one run at a time."""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

from ..layout import Course, redact
from ..plugins.app import check_course_config
from ..publish.release import out_of_step
from ..sandbox.bubblewrap import check_sandbox
from ..term.names import say_problems
from ..term.settings import Settings, load
from .assignment import Assignment, prepare
from .claims import Claims


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


def check_run(course: Course, jobs: int, no_sandbox: bool, log, command: str = "autograde") -> tuple[bool, Settings]:
    """(whether the kernels are sandboxed, course.toml's settings): what must hold before anyone is graded
    (``command``: whose check it is, as its lines say)."""
    if jobs < 1:
        raise ValueError(f"--jobs must be 1 or more, got {jobs}")
    sandbox = check_sandbox(no_sandbox)
    if not sandbox:
        log(
            "WARNING: grading WITHOUT a sandbox: student code runs with your rights and can read the hidden "
            "tests and the gradebook."
        )
    if not course.source.is_dir():
        raise ValueError(f"no source notebooks in {course.source}")
    settings = load(course)  # a bad course.toml stops the run before anything is graded
    said = "make autograde" if command == "autograde" else command
    check_course_config(course.root, "autograde", said)  # else nbgrader's defaults: no sandbox, the expected values
    stale = out_of_step(course, grading=True)  # what in-step reports that decides a grade: points, hidden tests…
    if stale:
        raise ValueError(
            f"{said} refused: {len(stale)} thing(s) out of step, so the grading would not be what "
            "source/ and course.toml say:\n  " + "\n  ".join(stale) + "\nrun make release first (it brings "
            f"them in step; python -m whole_transformer.course in-step lists them), then {said}"
        )
    say_problems(course, log, command, settings)  # names of course.toml, the roster, submitted/ that match nothing
    return sandbox, settings


def chosen_students(course: Course, students: list[str] | None) -> list[str]:
    """The students to grade: everyone in submitted/, or those given (each must have a folder there)."""
    everyone = course.students()
    if students:
        unknown = [s for s in students if s not in everyone]
        if unknown:
            raise ValueError(f"no submission folder for {', '.join(unknown)} in {course.submitted}")
        everyone = [s for s in everyone if s in students]
    return everyone


def fresh_work(course: Course) -> Path:
    """This run's work folder, empty."""
    course.state.mkdir(parents=True, exist_ok=True)
    work = _work_root(course)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return work


def prepare_assignment(course: Course, claims: Claims, work: Path, log, update_course: bool = True) -> Assignment:
    """The assignment as source/ has it now, prepared by one run at a time (``update_course=False``: the course
    gradebook left as it is)."""
    t_prep = time.monotonic()
    claims.lock("assignment")  # one run at a time prepares the gradebook and the assignment
    try:
        assignment = prepare(course, work, log, update_course=update_course)
    finally:
        claims.unlock("assignment")
    where_db = "gradebook.db" if course.sqlite else redact(course.db_url)
    log(f"autograde: assignment ready in {time.monotonic() - t_prep:.1f} s; gradebook {where_db}")
    return assignment
