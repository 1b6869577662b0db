"""The course's one store of results: a graded submission merged into the course, and each student's result read
back.

``merge`` puts one grading (``core/results.Result``) into a course, the same for ``make autograde``, the grading
service and ``grade-one --merge``: first grades and comments into nbgrader's gradebook (``gradebook.db``, or the
database ``DB_URL`` names: the source of truth for the Formgrader and ``grades.csv``; an existing submission is
updated, never duplicated; manual grades and extra credit are kept; a notebook with a failure or a finding is
flagged for the Formgrader), with the hand-in time the course decided when it took the submission in; then the
graded notebooks, made inert (``plugins/inert.py``: nothing the student wrote runs in the instructor's
Formgrader), and ``result.json`` replace ``autograde/<student>/whole-transformer/`` in one rename. So a student
whose ``result.json`` is there is merged completely, and a merge stopped half-way is graded again.

``load_result`` reads ``result.json`` back (``make grades``, the insights, the next run, the service);
``write_integrity_report`` lists every result's findings. nbgrader leaves ``result.json`` where it is: the
course's nbgrader_config.py names it among the files nbgrader ignores, so ``generate_feedback`` never copies it
into a student's feedback.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import threading
from datetime import UTC, datetime
from pathlib import Path

from ..core.results import GRADED, MISSING, Result
from ..gradebook import open_gradebook
from ..layout import ASSIGNMENT, Course, write_json
from ..plugins.inert import clean_file
from .assignment import Assignment

RESULT = "result.json"


def result_path(course: Course, student: str) -> Path:
    return course.autograde / student / ASSIGNMENT / RESULT


def load_result(course: Course, student: str) -> Result | None:
    """The student's result, or None (never graded, unreadable, or written by another version of the course)."""
    try:
        data = json.loads(result_path(course, student).read_text())
        return Result.from_json(data)
    except (OSError, json.JSONDecodeError):
        return None
    except (KeyError, TypeError, ValueError, AttributeError):  # another version, or damaged: grade the student again
        return None


def merge(
    course: Course,
    result: Result,
    assignment: Assignment,
    when: datetime | None = None,
    gb=None,
    staging: Path | None = None,
) -> None:
    """Put one grading into the course: gradebook, then the graded notebooks and result.json (one rename).

    ``when``: the hand-in time the course decided (``Submission.handed_in_at``); None: the time nbgrader read.
    ``gb``: an open course Gradebook to use (one per run; else one is opened for this student)."""
    if gb is None:
        with open_gradebook(course) as own:
            return merge(course, result, assignment, when, own, staging)
    try:
        _merge_grades(gb, result, assignment, when)
    except BaseException:
        gb.db.rollback()
        raise
    staging = (staging or course.state / "staging") / result.student
    shutil.rmtree(staging, ignore_errors=True)
    write_graded(staging, result)
    dest = course.autograde / result.student / ASSIGNMENT
    dest.parent.mkdir(parents=True, exist_ok=True)
    old = staging.with_name(f"{result.student}.old")
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        os.replace(dest, old)
    os.replace(staging, dest)
    shutil.rmtree(old, ignore_errors=True)


def write_graded(folder: Path, result: Result) -> None:
    """The graded notebooks, made inert (the Formgrader shows them), and ``result.json``, into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for fname, data in result.graded.items():
        shown = clean_file(fname, data) if fname != RESULT else None  # a student's own result.json: never ours
        if shown is not None:
            (folder / fname).write_bytes(shown)
    write_json(folder / RESULT, result.to_json())


def _merge_grades(gb, result: Result, assignment: Assignment, when: datetime | None) -> None:
    from nbgrader.api import MissingEntry  # lazy: nbgrader's gradebook (sqlalchemy) is heavy

    try:
        gb.find_student(result.student)
    except MissingEntry:
        gb.add_student(result.student)
    handed_in = any(r.status != MISSING for r in result.notebooks.values())
    # no autoflush: one flush at the commit, not one per query (nor the one inside nbgrader's
    # add_submission, on objects not in the session yet, which SQLAlchemy warns about)
    with gb.db.no_autoflush:
        if result.graded_any:
            when = when.astimezone(UTC).replace(tzinfo=None) if when else result.timestamp  # nbgrader keeps naive UTC
            gb.update_or_create_submission(ASSIGNMENT, result.student, **({"timestamp": when} if when else {}))
            for nb_name, res in result.notebooks.items():
                snb = gb.find_submission_notebook(nb_name, ASSIGNMENT, result.student)
                snb.late_submission_penalty = res.late_penalty
                snb.flagged = (
                    res.status != GRADED
                    or any(c.status != GRADED for c in res.cells.values())
                    or any(f.notebook == nb_name for f in result.findings)
                )
                for g in snb.grades:  # a notebook not graded scores 0; a graded one what nbgrader gave each cell
                    cell = res.cells.get(g.name)
                    g.auto_score = (cell.score if cell else None) if res.status == GRADED else 0.0
                    g.needs_manual_grade = g.manual_score is not None or g.auto_score is None
                for c in snb.comments:
                    c.auto_comment = res.comments.get(c.name)
        elif handed_in:  # nothing could be graded (e.g. every notebook invalid): zeros, flagged for a look
            gb.update_or_create_submission(ASSIGNMENT, result.student)
            for nb_name, res in result.notebooks.items():
                snb = gb.find_submission_notebook(nb_name, ASSIGNMENT, result.student)
                snb.flagged = res.status != MISSING
                grades = {g.name: g for g in snb.grades}
                for gid in assignment.grade_ids(nb_name):
                    g = grades[gid]
                    g.auto_score = 0.0
                    g.needs_manual_grade = g.manual_score is not None
    gb.db.commit()


def write_integrity_report(course: Course, results: dict[str, Result | None]) -> Path:
    """``integrity-report.csv``: every finding of every student's result (student → result, or None)."""
    path = course.root / "integrity-report.csv"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student_id", "notebook", "cell", "finding"])
        for s, res in results.items():
            for fd in res.findings if res else []:
                w.writerow([s, fd.notebook, fd.cell, fd.finding])
    os.replace(tmp, path)
    return path
