"""The merge stage: one student's grading put into the course, in the autograde process.

Grades and comments go into the course gradebook (an existing submission is updated, never
duplicated; manual grades are kept; a notebook with a failure or a finding is flagged for the
Formgrader); the graded notebooks, made inert (``plugins/inert.py``: nothing the student wrote runs
in the instructor's Formgrader), replace ``autograde/<student>/whole-transformer/`` by renames;
the nbgrader log goes to ``autograde/.wt/logs/``; and last the record (``record.py``), so that a
student whose record is written is merged completely.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC
from pathlib import Path

from ..core.results import GRADED, MISSING
from ..gradebook import open_gradebook
from ..layout import ASSIGNMENT, Course
from ..plugins.inert import clean_file
from ..term.handin_time import student_handin
from .record import StudentResult, write_record
from .template import Template


def merge(course: Course, result: StudentResult, template: Template, gb=None, staging: Path | None = None) -> None:
    """Put one student's grading into the course: gradebook, autograde folder, record (last).

    ``gb``: an open course Gradebook to use (one per run; else one is opened for this student)."""
    if gb is None:
        with open_gradebook(course) as own:
            return merge(course, result, template, own, staging)
    try:
        _merge_grades(gb, result, template, _trusted_time(course, result.student))
    except BaseException:
        gb.db.rollback()
        raise

    dest = course.autograde / result.student / ASSIGNMENT
    if result.graded:
        staging = (staging or course.state / "staging") / result.student
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for fname, data in result.graded.items():
            shown = clean_file(fname, data)  # the Formgrader shows it to the instructor: made inert
            if shown is not None:
                (staging / fname).write_bytes(shown)
        dest.parent.mkdir(parents=True, exist_ok=True)
        old = staging.with_name(f"{result.student}.old")
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            os.replace(dest, old)
        os.replace(staging, dest)
        shutil.rmtree(old, ignore_errors=True)
    elif dest.exists():
        shutil.rmtree(dest)
    if result.log:
        logs = course.state / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        (logs / f"{result.student}.log").write_text(result.log)
    write_record(course, result.record())


def _trusted_time(course: Course, student: str):
    """The hand-in time the course can trust (``term/handin_time.py``), for the gradebook; None where the course
    has no hand-in of the student (a private course of the service's feedback): nbgrader's own then."""
    if not (course.submitted / student / ASSIGNMENT).is_dir():
        return None
    used = student_handin(course, student).used
    return used.astimezone(UTC).replace(tzinfo=None) if used else None  # nbgrader keeps naive UTC


def _merge_grades(gb, result: StudentResult, template: Template, trusted=None) -> None:
    from nbgrader.api import MissingEntry

    try:
        gb.find_student(result.student)
    except MissingEntry:
        gb.add_student(result.student)
    graded_any = any(r.status == GRADED for r in result.notebooks.values())
    handed_in = any(r.status != MISSING for r in result.notebooks.values())
    data = result.scores if graded_any else None
    if data is not None:
        when = trusted or data["timestamp"]
        kw = {"timestamp": when} if when else {}
        # no autoflush: one flush at the commit, not one per query (nor the one inside nbgrader's
        # add_submission, on objects not in the session yet, which SQLAlchemy warns about)
        with gb.db.no_autoflush:
            gb.update_or_create_submission(ASSIGNMENT, result.student, **kw)
            for nb_name, nb_data in data["notebooks"].items():
                res = result.notebooks.get(nb_name)
                snb = gb.find_submission_notebook(nb_name, ASSIGNMENT, result.student)
                snb.late_submission_penalty = nb_data["late"]
                snb.flagged = (
                    bool(res and res.status != GRADED)
                    or any(c.status != GRADED for c in (res.cells.values() if res else []))
                    or any(f.notebook == nb_name for f in result.findings)
                )
                grades = {g.name: g for g in snb.grades}  # one query per notebook
                comments = {c.name: c for c in snb.comments}
                for gid, (auto, extra_credit) in nb_data["grades"].items():
                    g = grades[gid]
                    if res is not None and res.status != GRADED:
                        auto = 0.0
                    g.auto_score = auto
                    g.extra_credit = extra_credit
                    g.needs_manual_grade = g.manual_score is not None or auto is None
                for cid, text in nb_data["comments"].items():
                    comments[cid].auto_comment = text
        gb.db.commit()
    elif handed_in:
        # nothing could be graded (e.g. every notebook invalid): zeros, flagged for a look
        with gb.db.no_autoflush:
            gb.update_or_create_submission(ASSIGNMENT, result.student)
            for nb_name, res in result.notebooks.items():
                snb = gb.find_submission_notebook(nb_name, ASSIGNMENT, result.student)
                snb.flagged = res.status != MISSING
                grades = {g.name: g for g in snb.grades}
                for gid, _ in template.grade_cells.get(nb_name, []):
                    g = grades[gid]
                    g.auto_score = 0.0
                    g.needs_manual_grade = g.manual_score is not None
        gb.db.commit()
    else:
        gb.db.commit()
