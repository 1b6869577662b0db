"""``make roster FILE=students.csv``: the class list into the gradebook (nbgrader's students table);
``make roster`` (no FILE): the roster as the gradebook holds it, and who has handed in (``list_roster``).

The CSV has a header row; the columns (any order, case and spaces ignored; others are left out):

    id            the student's id in the course: their submitted/<id>/ folder (required)
    first_name    last_name    email
    lms_user_id   their id in the LMS (Canvas user id, Moodle id), for the grade files and collect-zip

``id`` may also be called ``student_id`` or ``username``, ``lms_user_id`` ``lms_id``. A file separated
by semicolons or tabs is read as such, and said; a column it lacks is said with what will lack it. As
``nbgrader db student import`` does, a student already in the gradebook is updated, never removed.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from ..gradebook import prepare_database
from ..layout import ASSIGNMENT
from .handin_time import student_handin
from .names import keep_roster_ids, roster, say_problems

COLUMNS = {
    "id": ("id", "student_id", "username"),
    "first_name": ("first_name", "firstname", "first"),
    "last_name": ("last_name", "lastname", "last"),
    "email": ("email", "email_address"),
    "lms_user_id": ("lms_user_id", "lms_id"),
}
_WHY = {
    "first_name": "the LMS files and the Formgrader will have no first names",
    "last_name": "the LMS files and the Formgrader will have no last names",
    "email": "canvas-grades.csv will have no SIS Login ID and moodle-grades.csv no Email address to match students on",
    "lms_user_id": "canvas-grades.csv and moodle-grades.csv will have no LMS id to match students on, "
    "and collect-zip finds students by name only",
}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")


def _norm(h: str) -> str:
    return re.sub(r"[\s-]+", "_", h.strip().lower())


_DELIMITERS = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "bars"}


def _delimiter(first_line: str) -> str:
    """The delimiter of the header line: the one of , ; tab | that splits it most (a comma if none does)."""
    counts = {d: first_line.count(d) for d in _DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def read_roster(path: Path, notes: list[str] | None = None) -> list[dict[str, str]]:
    """The roster's rows (id and what else it has); what a reader should know (another delimiter, a column
    it lacks) is appended to ``notes``."""
    path = Path(path)
    notes = [] if notes is None else notes
    if not path.is_file():
        raise ValueError(f"no file {path}: give the class list as a CSV, make roster FILE=students.csv")
    with open(path, newline="", encoding="utf-8-sig") as f:
        delimiter = _delimiter(f.readline())
        f.seek(0)
        if delimiter != ",":
            notes.append(f"{path.name} is separated by {_DELIMITERS[delimiter]}, not commas: read that way")
        reader = csv.DictReader(f, delimiter=delimiter)
        header = {_norm(h): h for h in (reader.fieldnames or [])}
        where = {}
        for key, names in COLUMNS.items():
            found = [header[n] for n in names if n in header]
            if found:
                where[key] = found[0]
        if "id" not in where:
            raise ValueError(
                f"{path}: no id column; the header must name one of {', '.join(COLUMNS['id'])} "
                f"(it has: {', '.join(reader.fieldnames or []) or 'nothing'}, read as separated by "
                f"{_DELIMITERS[delimiter]})"
            )
        for key in sorted(set(COLUMNS) - set(where), key=list(COLUMNS).index):
            notes.append(f"{path.name} has no {key} column ({' or '.join(COLUMNS[key])}): {_WHY[key]}")
        rows: list[dict[str, str]] = []
        seen: dict[str, int] = {}  # id → its line
        bad: list[str] = []
        for n, row in enumerate(reader, start=2):
            rec = {k: (row.get(col) or "").strip() for k, col in where.items()}
            sid = rec["id"]
            if not sid and not any(rec.values()):
                continue  # an empty line
            if not _ID.match(sid):
                bad.append(f"line {n}: id {sid!r} (letters, digits and . _ @ + - only; it names a folder)")
            elif sid in seen:
                bad.append(f"line {n}: id {sid!r} again (first on line {seen[sid]})")
            else:
                seen[sid] = n
                rows.append(rec)
    if bad:
        raise ValueError(f"{path}: nothing imported, fix these lines first:\n  " + "\n  ".join(bad))
    return rows


def import_roster(course, path: Path, log=print) -> tuple[int, int]:
    """Add or update every student of the CSV in the course gradebook; (added, updated)."""
    from nbgrader.api import Gradebook  # lazy: nbgrader takes seconds to import; reading a CSV needs none

    notes: list[str] = []
    rows = read_roster(path, notes)
    for note in notes:
        log(f"roster: {note}")
    prepare_database(course, log)
    added = updated = 0
    with Gradebook(course.db_url) as gb:
        known = {s.id for s in gb.students}
        for rec in rows:
            fields = {k: v for k, v in rec.items() if k != "id" and v}
            gb.update_or_create_student(rec["id"], **fields)
            if rec["id"] in known:
                updated += 1
            else:
                added += 1
    keep_roster_ids(course, [rec["id"] for rec in rows])
    log(f"roster: {added} students added, {updated} updated in the gradebook, from {Path(path).name}")
    say_problems(course, log, "roster")
    return added, updated


def list_roster(course, log=print) -> list[str]:
    """``make roster`` with no FILE: every student of the roster and of submitted/, and who handed in what when."""
    people = roster(course)
    handed_in = set(course.students())
    log(
        f"roster: {len(people)} student(s) on the class list, {len(handed_in & set(people))} of them handed in"
        + (f"; {len(handed_in - set(people))} more handed in without being on it" if handed_in - set(people) else "")
    )
    rows = []
    for sid in sorted(set(people) | handed_in):
        p = people.get(sid)
        who = f"{p['first_name']} {p['last_name']}".strip() if p else "(not on the roster)"
        ids = f"{p['email'] or 'no email'}, LMS id {p['lms_user_id'] or 'none'}" if p else ""
        folder = course.submitted / sid / ASSIGNMENT
        if sid in handed_in and folder.is_dir():
            h = student_handin(course, sid)  # the time recorded when it was taken in, in the course's zone
            n = len(list(folder.glob("*.ipynb")))
            got = f"handed in {n} notebook(s)" + (f", {h.describe().removeprefix('handed in ')}" if h.used else "")
        else:
            got = "nothing handed in"
        rows.append(f"  {sid:<16} {who:<24} {ids:<40} {got}")
    for row in rows:
        log(row.rstrip())
    say_problems(course, log, "roster")
    return rows
