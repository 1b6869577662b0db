"""``make roster FILE=students.csv``: the class list into the gradebook (nbgrader's students table).

The CSV has a header row; the columns (any order, case and spaces ignored; others are left out):

    id            the student's id in the course: their submitted/<id>/ folder (required)
    first_name    last_name    email
    lms_user_id   their id in the LMS (Canvas user id, Moodle id), for the grade files and collect-zip

``id`` may also be called ``student_id`` or ``username``, ``lms_user_id`` ``lms_id``. As
``nbgrader db student import`` does, a student already in the gradebook is updated, never removed.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

COLUMNS = {
    "id": ("id", "student_id", "username"),
    "first_name": ("first_name", "firstname", "first"),
    "last_name": ("last_name", "lastname", "last"),
    "email": ("email", "email_address"),
    "lms_user_id": ("lms_user_id", "lms_id"),
}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")


def _norm(h: str) -> str:
    return re.sub(r"[\s-]+", "_", h.strip().lower())


def read_roster(path: Path) -> list[dict[str, str]]:
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no file {path}: give the class list as a CSV, make roster FILE=students.csv")
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = {_norm(h): h for h in (reader.fieldnames or [])}
        where = {}
        for key, names in COLUMNS.items():
            found = [header[n] for n in names if n in header]
            if found:
                where[key] = found[0]
        if "id" not in where:
            raise ValueError(
                f"{path}: no id column; the header must name one of {', '.join(COLUMNS['id'])} "
                f"(it has: {', '.join(reader.fieldnames or []) or 'nothing'})"
            )
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
    from nbgrader.api import Gradebook

    from whole_transformer.course.grading.gradebook import prepare_database

    rows = read_roster(path)
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
    log(f"roster: {added} students added, {updated} updated in the gradebook, from {Path(path).name}")
    return added, updated
