"""The two LMS grade imports, as their own guides describe them, to read canvas-grades.csv and moodle-grades.csv.

Canvas (Grades ▸ Import, "How do I import grades in the Gradebook?"): the first row names the columns;
``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID`` and ``Section`` identify a student, every later
column is an assignment; a row whose ``Student`` is ``Points Possible`` gives the maxima. A row is
matched to a student of the course by ``ID`` (the Canvas user id), else ``SIS User ID``, else ``SIS Login
ID``; a row that matches nobody is an error ("students could not be found"), as is a score that is
not a number.

Moodle (Grades ▸ Import ▸ CSV file, ``grade/import/csv``): the first row names the columns; the
instructor maps one column ("Map from") to one user field ("Map to": ``userid``, ``username``,
``useridnumber`` or ``useremail``) and each other column to a grade item, a feedback, or nothing; a row
whose value finds no user is an error ("user mapping error"), as is a grade that is not a number.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


@dataclass
class LmsUser:
    """A person as the LMS knows them."""

    name: str
    lms_id: str  # Canvas's user id; Moodle's ID number (idnumber)
    email: str  # Canvas's login (SIS Login ID) here; Moodle's email
    sis_id: str = ""


class ImportError_(AssertionError):
    """What the LMS would refuse the file for."""


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def canvas_import(path: Path, users: list[LmsUser]) -> dict[str, dict[str, float]]:
    """user name → assignment → score, as Canvas would import the file; raises on what Canvas refuses."""
    rows = _rows(path)
    if not rows or any(c not in rows[0] for c in CANVAS_IDENTITY):
        raise ImportError_(f"Canvas needs the columns {', '.join(CANVAS_IDENTITY)}")
    assignments = [c for c in rows[0] if c not in CANVAS_IDENTITY]
    by = {
        "ID": {u.lms_id: u for u in users if u.lms_id},
        "SIS User ID": {u.sis_id: u for u in users if u.sis_id},
        "SIS Login ID": {u.email: u for u in users if u.email},
    }
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        if row["Student"].strip() == "Points Possible":
            continue
        user = next((by[col][row[col]] for col in by if row[col] and row[col] in by[col]), None)
        if user is None:
            raise ImportError_(f"students could not be found: {row['Student']!r} (ID {row['ID']!r})")
        out[user.name] = {a: _number(row[a], f"Canvas, {row['Student']}, {a}") for a in assignments if row[a] != ""}
    return out


def moodle_import(path: Path, users: list[LmsUser], map_from: str, map_to: str) -> dict[str, dict[str, float]]:
    """user name → grade item → grade, as Moodle's CSV import would, with ``map_from`` mapped to ``map_to``."""
    field = {"useridnumber": "lms_id", "useremail": "email"}[map_to]
    rows = _rows(path)
    if not rows or map_from not in rows[0]:
        raise ImportError_(f"Moodle: no column {map_from!r} to map from")
    known = {getattr(u, field): u for u in users if getattr(u, field)}
    items = [c for c in rows[0] if c not in (map_from, "ID number", "Email address", "First name", "Last name")]
    items = [c for c in items if c != "Feedback"]
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        user = known.get(row[map_from])
        if user is None:
            raise ImportError_(f"user mapping error: could not find user with {map_to} of {row[map_from]!r}")
        out[user.name] = {i: _number(row[i], f"Moodle, {row[map_from]}, {i}") for i in items}
    return out


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ImportError_(f"{where}: {text!r} is not a number") from None
