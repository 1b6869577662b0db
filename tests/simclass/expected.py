"""A simulated student, and what the autograder must make of their hand-in.

A ``Student`` holds the notebooks handed in and says, for the graded cells that do not get full points,
the points and the status expected in ``grades-detail.csv`` (``expected_table`` fills in the rest: full
points in a notebook handed in, ``missing`` in one that was not); ``expected_now`` adds what issue 20's
grading says of a zero. Findings expected in ``integrity-report.csv`` are given as (notebook, cell, words
the finding must contain).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from whole_transformer.course.cells import grade_id as gid
from whole_transformer.course.layout import ASSIGNMENT

from .notebooks import Notebooks


@dataclass
class Student:
    name: str
    notebooks: dict  # file name (relative to submitted/<name>/<folder>/) → notebook
    expect: dict  # grade_id → (points, status); unlisted cells of handed-in notebooks: full, graded
    raw: dict = field(default_factory=dict)  # file name → text (invalid files)
    folder: str = ASSIGNMENT
    findings: list = field(default_factory=list)  # (notebook, cell or None, words)
    # findings the machine's load may add but need not (a slow student's cell timed out): allowed, not required
    may_find: list = field(default_factory=list)  # (notebook, cell or None, words)
    no_findings: bool = False  # nothing at all may be reported
    handed_in: tuple = ()  # notebook names counted as handed in (default: keys of notebooks)
    note: str = ""


def expected_table(nbs: Notebooks, s: Student) -> dict[str, tuple[float, str]]:
    """grade_id → (points, status) for every graded cell of the assignment."""
    handed = set(s.handed_in or [Path(k).stem for k in s.notebooks])
    out = {}
    for name in nbs.names:
        for g, pts in nbs.grade_cells(name).items():
            out[g] = (pts, "graded") if name in handed else (0.0, "missing")
    for g, v in s.expect.items():
        if g not in out:
            raise KeyError(f"{s.name}: no graded cell {g}")
        out[g] = v
    return out


def _answer_cell(nb, answer: str):
    """The cell of ``nb`` whose grade_id is ``answer``, or None."""
    return next((c for c in nb.cells if gid(c) == answer), None)


def _left_unanswered(nbs: Notebooks, s: Student, g: str) -> bool:
    """The student's answer cell of test ``g`` is as released, or still raises NotImplementedError."""
    answer = g.removeprefix("test_")
    for fname, nb in s.notebooks.items():
        mine = _answer_cell(nb, answer)
        if mine is not None:
            blank = _answer_cell(nbs.blank(Path(fname).stem), answer)
            return (blank is not None and mine.source == blank.source) or "raise NotImplementedError" in mine.source
    return False


def expected_now(nbs: Notebooks, s: Student, detail) -> dict[str, tuple[float, str]]:
    """The roster's expectations with issue 20's grading: a zero for an answer not written yet is
    ``unanswered``; a zero for a wrong answer is partial credit by kind of case, strictly below full
    (the class tests assert that: here it takes the row's score; ``detail``: grades-detail.csv's
    rows by (student, grade_id))."""
    out = {}
    for g, (points, status) in expected_table(nbs, s).items():
        row = detail.get((s.name, g))
        if status == "graded" and points == 0.0 and row is not None:
            if row["status"] == "unanswered" and _left_unanswered(nbs, s, g):
                status = "unanswered"
            elif row["status"] == "graded" and float(row["score"]) < float(row["max_score"]) and row["reason"]:
                points = float(row["score"])
        out[g] = (points, status)
    return out
