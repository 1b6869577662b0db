"""Grades where the institution keeps them: a Canvas gradebook import and a Moodle grade import.

``make grades`` writes both beside grades.csv, from ``totals.totals`` (late penalty applied):

- ``canvas-grades.csv``, Canvas's gradebook import (Grades ▸ Import): the columns Canvas's own
  export has, ``Student`` ("Last, First"), ``ID`` (the Canvas user id: the roster's LMS id),
  ``SIS User ID`` (left empty: the course does not know the institution's SIS id, and a wrong one
  would match nobody), ``SIS Login ID`` (the roster's email, the login most institutions give
  Canvas), ``Section``, then one column per grade: the total and one per notebook. Its second row,
  ``Points Possible``, gives the maxima. Canvas matches a row by ``ID``, else by ``SIS User ID``,
  else by ``SIS Login ID``; a column it does not know becomes a new assignment.
- ``moodle-grades.csv``, Moodle's grade import (Grades ▸ Import ▸ CSV file): one row per student
  with the columns to identify them by, ``ID number`` (the roster's LMS id) and ``Email address``
  (the roster's email), which the import's "Map from" maps to Moodle's "ID number" or "Email
  address" ("Map to"); then their names, the total, one column per notebook, and ``Feedback``
  (lateness and penalty), each mapped to a grade item on import.

A student without an LMS id or email in the roster has those cells empty; ``term/names.py`` says so
before the files are written.
"""

from __future__ import annotations

import csv
import os
from decimal import Decimal
from pathlib import Path

from whole_transformer.course.layout import Course

from .totals import StudentTotal, _cents, totals

CANVAS = "canvas-grades.csv"
MOODLE = "moodle-grades.csv"
CANVAS_ID_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_ID_COLUMNS = ["ID number", "Email address", "First name", "Last name"]
TOTAL = "The whole Transformer (total)"


def _n(x) -> str:
    """A score as every report prints it: in hundredths, rounded half up once, no trailing zeros (``15.93``, ``31``)."""
    return format(_cents(x).normalize(), "f") if not isinstance(x, Decimal) else format(x.normalize(), "f")


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)
    return path


def canvas_rows(all_totals: list[StudentTotal]) -> tuple[list[str], list[list[str]]]:
    names = sorted({n for t in all_totals for n in t.notebooks})
    header = CANVAS_ID_COLUMNS + [TOTAL] + names
    rows = []
    if all_totals:
        first = all_totals[0]
        rows.append(
            ["Points Possible", "", "", "", "", _n(first.max_score)] + [_n(first.notebooks[n][1]) for n in names]
        )
    for t in all_totals:
        rows.append(
            [t.display_name, t.lms_user_id, "", t.email, "", _n(t.final)] + [_n(t.notebooks[n][0]) for n in names]
        )
    return header, rows


def moodle_rows(all_totals: list[StudentTotal]) -> tuple[list[str], list[list[str]]]:
    names = sorted({n for t in all_totals for n in t.notebooks})
    header = MOODLE_ID_COLUMNS + [TOTAL] + names + ["Feedback"]
    rows = []
    for t in all_totals:
        note = t.lateness.describe() if t.lateness else "nothing handed in"
        if t.penalty:
            shown = t.printed()
            note += f"; {_n(shown.score)} before the late penalty of {_n(shown.penalty)} points"
        if t.lateness and t.lateness.handin and t.lateness.handin.used:  # the time used (term/handin_time.py)
            note += f"; {t.handed_in()}"
        rows.append(
            [t.lms_user_id, t.email, t.first_name, t.last_name, _n(t.final)]
            + [_n(t.notebooks[n][0]) for n in names]
            + [note]
        )
    return header, rows


def write_lms(course: Course, all_totals: list[StudentTotal] | None = None) -> tuple[Path, Path]:
    all_totals = totals(course) if all_totals is None else all_totals
    canvas = _write(course.root / CANVAS, *canvas_rows(all_totals))
    moodle = _write(course.root / MOODLE, *moodle_rows(all_totals))
    return canvas, moodle
