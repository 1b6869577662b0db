"""``make grades``: nbgrader's ``grades.csv``, and ``grades-detail.csv`` that tells zeros apart.

``grades.csv`` is ``nbgrader export``: one row per student and assignment with the total score, its
``duedate``, ``late_submission_penalty`` and ``score`` made right by course.toml (``course_columns``: the
student's due date with any extension, the points the late policy took, what is left; ``raw_score`` is the
tests' score), which nbgrader alone does not know. A student whose notebook could not be graded exports there
as 0, like a student who got everything wrong. ``grades-detail.csv`` says which: one row per student × graded
cell,

    student_id, notebook, grade_id, score, max_score, status, reason, cases

where ``status`` is ``graded`` (the test ran; the score is what it earned, partial credit by kind of case
included), ``unanswered`` (the test ran, and the answer is not written yet: the stub still raises
NotImplementedError, or the cell is as released), ``failed`` (the test could not run to the end: invalid
notebook, kernel died or hung, nbgrader failed; ``reason`` says which) or ``missing`` (nothing was handed in
for it). ``reason`` also notes findings on the cell (restored after tampering, suspicious code) so a zero can
be checked quickly, and for every graded cell that lost points why (``verdict_reason``): which exception on
which kind of case, the failed kinds and the catalogued mistake the answer is, or a question's wrong answer
and its hint. ``cases`` is the cases passed of the cases run ("12 of 15").
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from ..autograder.store import load_result
from ..autograder.submission import folder_digest
from ..cells import grade_id
from ..core.results import FAILED, GRADED, MISSING, UNANSWERED
from ..core.verdict import CellVerdict, Outcome
from ..gradebook import gradebook_exists
from ..layout import ASSIGNMENT, Course, redact, run_nbgrader
from ..plugins.verdict_text import TIMEOUTS, what_it_did
from ..term.names import say_problems
from .lms import write_lms
from .totals import totals

DETAIL_COLUMNS = ["student_id", "notebook", "grade_id", "score", "max_score", "status", "reason", "cases"]


def verdict_reason(verdict: CellVerdict | None) -> tuple[str | None, str, str]:
    """(status or None to keep it, reason, "cases passed of cases run") from the grader's verdict
    on a graded cell (``plugins/cell_verdict.assess``): unanswered, raised (which exception on which
    kind of case), wrong (the failed kinds and the named mistake; for a question, the answer and its hint)."""
    if verdict is None:
        return None, "", ""
    cases = f"{verdict.passed} of {verdict.run}"
    if verdict.outcome == Outcome.UNANSWERED:
        why = verdict.why if verdict.why is not None else "still as released"
        return UNANSWERED, f"not answered yet: {why}", cases
    if verdict.outcome == Outcome.RIGHT:
        return None, "", cases
    notes = []
    errors = verdict.errors or {}
    by_error: dict[str, list[str]] = {}
    for kind, ename in errors.items():
        by_error.setdefault(ename, []).append(kind)
    said_why = False
    for ename, kinds in by_error.items():
        what = what_it_did(ename, short=True)
        if ename in TIMEOUTS and verdict.why:  # the time limit the grader had: "ran over 30 s and was stopped"
            what, said_why = verdict.why, True
        notes.append(f"{what} on: {'; '.join(kinds)}")
    wrong = [k for k in verdict.failed or [] if k not in errors]
    if wrong:
        notes.append(f"wrong on: {'; '.join(wrong)}")
    if verdict.why and not said_why and (wrong or not by_error or verdict.why.startswith("the answer cell")):
        notes.append(verdict.why)
    if verdict.answer is not None:
        notes.append(f"answered {verdict.answer}" + (f" (hint: {verdict.hint})" if verdict.hint else ""))
    if verdict.mistake:
        notes.append(f"mistake: {verdict.mistake_name} ({verdict.mistake})")
    elif verdict.mistake_name is not None:
        note = verdict.mistake_name
        if verdict.stale:
            note += " (the mistake table is out of date: run python -m whole_transformer.course mistake-table --write)"
        if verdict.closest:
            note += f" (closest: {verdict.closest}, the same on {verdict.agree or 0} of {verdict.of or 0} cases)"
        notes.append(note)
    return None, "; ".join(notes), cases


def _cell_order(course: Course, notebook: str, names: list[str]) -> list[str]:
    for folder in (course.source, course.release):
        p = folder / f"{notebook}.ipynb"
        if p.exists():
            nb = nbformat.read(p, as_version=4)
            order = [grade_id(c) for c in nb.cells]
            pos = {g: i for i, g in enumerate(order) if g}
            return sorted(names, key=lambda g: pos.get(g, len(pos)))
    return sorted(names)


def detail_rows(course: Course) -> list[dict]:
    """The rows of grades-detail.csv: every student of the gradebook or submitted/, a row per graded cell."""
    rows = []
    with Gradebook(course.db_url) as gb:
        assignment = gb.find_assignment(ASSIGNMENT)
        layout = []
        for nb in sorted(assignment.notebooks, key=lambda n: n.name):
            most = {g.name: float(g.max_score) for g in nb.grade_cells}
            layout.append((nb.name, [(g, most[g]) for g in _cell_order(course, nb.name, list(most))]))
        students = sorted({s.id for s in gb.students} | set(course.students()))
        for student in students:
            rows += _student_rows(course, gb, student, layout)
    return rows


def _student_rows(course: Course, gb, student: str, layout: list) -> list[dict]:
    """One student's rows of grades-detail.csv: a graded cell each, in the notebooks' order."""
    rec = load_result(course, student)
    try:
        sub = gb.find_submission(ASSIGNMENT, student)
    except MissingEntry:
        sub = None
    folder = course.submitted / student
    changed = rec is not None and folder.is_dir() and rec.submission != folder_digest(folder)
    findings: dict[tuple[str, str], list[str]] = {}
    for fd in rec.findings if rec else []:
        findings.setdefault((fd.notebook, fd.cell), []).append(fd.finding)
    rows = []
    for nb_name, cells in layout:
        nb_rec = rec.notebooks.get(nb_name) if rec else None
        for gid, max_score in cells:
            score = 0.0
            if sub is not None:
                try:
                    g = gb.find_grade(gid, nb_name, ASSIGNMENT, student)
                    score = float(g.score or 0.0)
                except MissingEntry:
                    pass
            status, reason, cases = _cell_status(course, student, nb_name, gid, nb_rec, sub is not None)
            notes = [reason] if reason else []
            for f in findings.get((nb_name, gid), []):
                if f.removeprefix("while grading: ") not in notes:
                    notes.append(f)
            if changed:
                notes.append("the submission changed after grading: run make autograde")
            if status not in (GRADED, UNANSWERED):
                score = 0.0
            rows.append(
                {
                    "student_id": student,
                    "notebook": nb_name,
                    "grade_id": gid,
                    "score": f"{score:g}",
                    "max_score": f"{max_score:g}",
                    "status": status,
                    "reason": "; ".join(notes),
                    "cases": cases,
                }
            )
    return rows


def _cell_status(course: Course, student: str, nb_name: str, gid: str, nb_rec, submitted: bool) -> tuple[str, str, str]:
    """(status, reason, cases) of one graded cell: from the student's record, else from what is there."""
    cases = ""
    if nb_rec is not None:
        info = nb_rec.cells.get(gid)
        status, reason = (info.status, info.reason) if info else (nb_rec.status, nb_rec.reason)
        if info and status == GRADED:
            why_status, why, cases = verdict_reason(info.verdict)
            status, reason = why_status or status, "; ".join(r for r in (reason, why) if r)
    elif submitted and (course.autograde / student / ASSIGNMENT / f"{nb_name}.ipynb").exists():
        status, reason = GRADED, "graded by nbgrader outside make autograde"
    elif (course.submitted / student).is_dir():
        status, reason = FAILED, "not autograded yet: run make autograde"
    else:
        status, reason = MISSING, "no submission"
    return status, reason, cases


def write_detail(course: Course, path: Path | None = None, rows: list[dict] | None = None) -> Path:
    """``grades-detail.csv`` (or ``path``) from ``rows``, else from ``detail_rows``."""
    path = path or course.root / "grades-detail.csv"
    rows = detail_rows(course) if rows is None else rows
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=DETAIL_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)
    return path


def _graded_yet(course: Course) -> None:
    """Refuse before anything is written when nothing is graded yet, saying what to run."""
    if not gradebook_exists(course):
        where = course.gradebook if course.sqlite else redact(course.db_url)
        raise ValueError(f"no gradebook at {where}: run make release, then make autograde, then make grades")
    with Gradebook(course.db_url) as gb:
        try:
            graded = len(gb.find_assignment(ASSIGNMENT).submissions)
        except MissingEntry:
            raise ValueError("the gradebook has no assignment yet: run make release, then make autograde") from None
    if not graded:
        raise ValueError("nothing is graded yet: run make autograde first, then make grades (nothing was written)")


def course_columns(path: Path, all_totals) -> None:
    """nbgrader's export made right where course.toml decides: ``duedate`` each student's due date (an extension
    included; empty only when the course sets none), ``late_submission_penalty`` the points the late policy took
    and ``score`` what is left, as the page per student and the LMS files print them; ``raw_score`` stays the
    tests' score. (nbgrader alone knows neither course.toml's due date nor its late policy: it wrote 0.0 and an
    empty due date for every late student.)"""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = list(reader.fieldnames or []), list(reader)
    if not {"student_id", "duedate", "late_submission_penalty", "score"} <= set(fields):
        return
    by_student = {t.student: t for t in all_totals}
    for row in rows:
        t = by_student.get(row["student_id"])
        if t is None or row.get("assignment", ASSIGNMENT) != ASSIGNMENT or t.lateness is None:
            continue
        shown = t.printed()
        row["duedate"] = t.lateness.due.isoformat(sep=" ") if t.lateness.due else ""
        row["late_submission_penalty"] = f"{shown.penalty:f}"
        row["score"] = f"{shown.final:f}"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def grades(course: Course, log=print) -> tuple[Path, Path]:
    """grades.csv, grades-detail.csv and the LMS files; all or nothing: grades.csv is replaced only once the
    export and every row are ready."""
    _graded_yet(course)
    say_problems(course, log, "grades")
    out = course.root / "grades.csv"
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    done = run_nbgrader(["export", "--to", str(tmp)], course.root)
    if done.returncode != 0 or not tmp.exists():
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"nbgrader export failed:\n{(done.stdout or '')[-2000:]}{(done.stderr or '')[-2000:]}")
    try:
        rows = detail_rows(course)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        course_columns(tmp, totals(course))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, out)
    detail = write_detail(course, rows=rows)
    counts = {k: sum(1 for r in rows if r["status"] == k) for k in (GRADED, UNANSWERED, FAILED, MISSING)}
    log(
        f"wrote {out.name} and {detail.name}: {len(rows)} graded cells — {counts[GRADED]} graded, "
        f"{counts[UNANSWERED]} unanswered, {counts[FAILED]} failed, {counts[MISSING]} missing"
    )
    write_lms_files(course, log)
    return out, detail


def write_lms_files(course: Course, log=print) -> None:
    """canvas-grades.csv and moodle-grades.csv, the late penalty applied (``lms.py``)."""
    all_totals = totals(course)
    canvas, moodle = write_lms(course, all_totals)
    late = sum(1 for t in all_totals if t.penalty)
    log(
        f"wrote {canvas.name} (Canvas gradebook import) and {moodle.name} (Moodle grade import): "
        f"{len(all_totals)} students, {late} with a late penalty"
    )
    for t in all_totals:  # term/handin_time.py: a hand-in time its evidence contradicts
        if t.lateness and t.lateness.handin and t.lateness.handin.finding:
            log(f"INTEGRITY {t.student}: {t.lateness.handin.finding}")
