"""Names that must match, checked against each other: course.toml, the roster and submitted/.

``name_problems(course)`` gives one line for each thing that names nobody or is named nowhere:

- course.toml's own doubts (a due date without a time or a time zone: ``Settings.notes``);
- an extension for an id that is neither on the roster nor in submitted/ (with the id it may mean);
- a ``[points]`` key that is no graded cell of source/;
- a student who handed in (submitted/<id>/) but is not on the roster: graded, but the LMS files have
  no LMS id or email for them;
- a roster row without a hand-in, and a roster row without an LMS id or an email (the LMS files match on them).

``make term`` lists them all; ``make autograde``, ``make grades`` and ``make roster`` say them before
they work. None of them stops a command: each is the instructor's to fix or to know.
"""

from __future__ import annotations

import difflib
import json

import nbformat

from ..cells import grade_id, nbgrader_meta
from ..gradebook import gradebook_exists
from ..layout import ASSIGNMENT, Course
from .settings import Settings, load

ROSTER_IDS = "roster.json"  # downloaded/<assignment>/: every id ``make roster FILE=`` imported


def roster_ids_path(course: Course):
    return course.root / "downloaded" / ASSIGNMENT / ROSTER_IDS


def keep_roster_ids(course: Course, ids: list[str]) -> None:
    """Add the ids of an imported class list to the ones kept: the roster is the class list, not the gradebook
    (autograde adds every student it grades to the gradebook, on the class list or not)."""
    path = roster_ids_path(course)
    known = set(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else set()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sorted(known | set(ids)), indent=1), encoding="utf-8")


def roster(course: Course) -> dict[str, dict[str, str]]:
    """The class list (``make roster``): id → their names, email and LMS id ({} if none). It is the students
    ``make roster FILE=`` imported (kept in ``downloaded/whole-transformer/roster.json``), not every student of
    the gradebook: a student graded but never on the class list stays off it. A course whose roster was
    imported before that list was kept counts a gradebook student with a name, email or LMS id as on it."""
    everyone = gradebook_students(course)
    path = roster_ids_path(course)
    if path.is_file():
        ids = set(json.loads(path.read_text(encoding="utf-8")))
        return {sid: p for sid, p in everyone.items() if sid in ids}
    return {sid: p for sid, p in everyone.items() if any(p.values())}


def gradebook_students(course: Course) -> dict[str, dict[str, str]]:
    """Every student the gradebook holds: id → their names, email and LMS id ({} if none)."""
    from nbgrader.api import Gradebook  # lazy: nbgrader takes seconds to import; make term may have no gradebook

    if not gradebook_exists(course):
        return {}
    with Gradebook(course.db_url) as gb:
        return {
            s.id: {
                "first_name": s.first_name or "",
                "last_name": s.last_name or "",
                "email": s.email or "",
                "lms_user_id": s.lms_user_id or "",
            }
            for s in gb.students
        }


def _graded_cells(course: Course) -> set[str]:
    return {
        gid
        for path in sorted(course.source.glob("*.ipynb"))
        for c in nbformat.read(path, as_version=4).cells
        if (gid := grade_id(c)) and nbgrader_meta(c).get("grade")
    }


def _maybe(name: str, known: set[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def name_problems(course: Course, settings: Settings | None = None) -> list[str]:
    """One line for each name of course.toml, the roster or submitted/ that matches nothing (empty: all match)."""
    settings = settings or load(course)
    people = roster(course)
    handed_in = set(course.students())
    known = set(people) | handed_in
    where = settings.path.name if settings.path else "course.toml"
    lines = list(settings.notes)
    for sid in sorted(set(settings.extensions) - known):
        lines.append(
            f"{where} [extensions] {sid}: no such student (not on the roster, nothing in submitted/), so the "
            f"extension applies to nobody{_maybe(sid, known)}"
        )
    if settings.points and course.source.is_dir():
        cells = _graded_cells(course)
        for gid in sorted(set(settings.points) - cells):
            lines.append(f"{where} [points] {gid}: no graded cell of source/ has that grade_id{_maybe(gid, cells)}")
    if not people:
        if handed_in:
            lines.append(
                f"no roster: {len(handed_in)} student(s) handed in, but the gradebook holds no class list; the "
                "LMS files will have no LMS ids or emails: make roster FILE=students.csv"
            )
        return lines
    for sid in sorted(handed_in - set(people)):
        lines.append(
            f"{sid}: handed in (submitted/{sid}/) but not on the roster: graded, but the LMS files have no LMS id "
            f"or email for them; add them to the roster{_maybe(sid, set(people))}"
        )
    for sid in sorted(set(people) - handed_in):
        lines.append(f"{sid}: on the roster, nothing handed in (no submitted/{sid}/)")
    for sid, p in sorted(people.items()):
        lacking = [what for key, what in (("lms_user_id", "LMS id"), ("email", "email")) if not p[key]]
        if lacking:
            lines.append(f"{sid}: no {' and no '.join(lacking)} in the roster, so an LMS import cannot match them")
    return lines


def say_problems(course: Course, log, command: str, settings: Settings | None = None) -> list[str]:
    """``name_problems``, each said as a line of ``command``'s output; the lines."""
    lines = name_problems(course, settings)
    for line in lines:
        log(f"{command}: check: {line}")
    return lines
