"""Whose a file of an LMS download is: the id each LMS puts in its file names, cross-checked with the name.

From the roster the gradebook holds (``make roster``), per LMS:

- Canvas: the number is the Canvas user id, the roster's LMS id. The student with that LMS id is taken only if
  the name in the same entry is theirs; a name that is someone else's is refused for that entry, named. A
  number no roster student has: the name alone, if exactly one roster student has it.
- Moodle: the number is Moodle's *participant id* of that assignment, not the user id and not the "ID number"
  the roster holds, so it is never matched against the roster's LMS ids. It is matched through Moodle's
  grading worksheet (Assignment ▸ View all submissions ▸ Download grading worksheet: a CSV whose
  ``Identifier`` column reads "Participant 1004", beside ``Full name`` and ``Email address``), given as
  ``worksheet`` or found beside the zip, whose rows are matched to the roster by email, else by name. What a
  worksheet says, and a participant id learned from a name, is kept per assignment
  (``downloaded/whole-transformer/moodle-participants.json``) for later zips. The name in the entry must be
  that student's; a participant id known for someone else, or a name two roster students share, is refused
  for that entry, named.

Nothing is placed under a guess: an entry that fits nobody is "not placed", one that fits two or
contradicts itself is "refused", each with why. A file is placed only if it is one of the released notebooks.

Used by ``collect_zip.py`` (``make collect-zip``), which says what was placed, not placed and refused.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from whole_transformer.course.layout import Course

from ..term.handin_merge import downloaded

CANVAS = re.compile(r"^(?P<name>[^_/]+)_(?P<late>late_)?(?P<lms>\d+)_(?P<sub>\d+)_(?P<file>[^/]+)$", re.I)
MOODLE = re.compile(r"^(?P<name>[^_/]+)_(?P<lms>\d+)_assignsubmission_[a-z]+_/?(?P<file>.+)$", re.I)
RESUBMITTED = re.compile(r"^(?P<stem>.+)-(?P<n>\d+)(?P<ext>\.ipynb)$")


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True)
class Person:
    """A roster student as collect-zip matches them: id, LMS id, email and the letters of their name."""

    id: str
    lms: str
    email: str
    names: frozenset[str]  # "firstlast" and Canvas's "lastfirst", letters and digits only
    shown: str


def people(course: Course) -> list[Person]:
    """The roster the gradebook holds, as collect-zip matches it."""
    from nbgrader.api import Gradebook  # lazy: nbgrader takes seconds to import; only merging a zip needs it

    out = []
    with Gradebook(course.db_url) as gb:
        for s in gb.students:
            first, last = s.first_name or "", s.last_name or ""
            names = frozenset(k for k in (_key(first + last), _key(last + first)) if k)
            out.append(Person(s.id, s.lms_user_id or "", (s.email or "").lower(), names, f"{first} {last}".strip()))
    return out


PARTICIPANTS = "moodle-participants.json"


def read_participants(course: Course) -> dict[str, dict]:
    """Moodle participant id → {"student", "name", "from"}, as kept for this assignment."""
    path = downloaded(course) / PARTICIPANTS
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def keep_participants(course: Course, known: dict[str, dict]) -> None:
    path = downloaded(course) / PARTICIPANTS
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{PARTICIPANTS}.{os.getpid()}")
    tmp.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _worksheet_rows(path: Path) -> list[dict[str, str]] | None:
    """A Moodle grading worksheet's rows (None if the CSV is not one: no Identifier and Full name columns)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    if not rows or not {"Identifier", "Full name"} <= set(rows[0]):
        return None
    return rows


def find_worksheet(zip_path: Path, given: Path | None, log) -> Path | None:
    """The grading worksheet to read: the one given, else the one Moodle worksheet beside the zip (if one)."""
    if given is not None:
        if _worksheet_rows(Path(given)) is None:
            raise ValueError(
                f"{given} is not a Moodle grading worksheet (a CSV with the columns Identifier and Full name): "
                "download it from the assignment's View all submissions, Grading action, Download grading worksheet"
            )
        return Path(given)
    found = [p for p in sorted(zip_path.parent.glob("*.csv")) if _worksheet_rows(p) is not None]
    if len(found) > 1:
        log(
            f"collect-zip: {len(found)} Moodle grading worksheets beside the zip ({', '.join(p.name for p in found)}): "
            "none read; give the one of this assignment with WORKSHEET=..."
        )
        return None
    return found[0] if found else None


def read_worksheet(course: Course, path: Path, roster: list[Person], log) -> dict[str, dict]:
    """Participant ids of a grading worksheet matched to the roster (by email, else by name) and kept."""
    known = read_participants(course)
    unmatched = []
    for row in _worksheet_rows(path) or []:
        m = re.search(r"(\d+)\s*$", row.get("Identifier") or "")
        if m is None:
            continue
        name, email = (row.get("Full name") or "").strip(), (row.get("Email address") or "").strip().lower()
        by_mail = [p for p in roster if email and p.email == email]
        who = by_mail or [p for p in roster if _key(name) in p.names]
        if len(who) != 1:
            unmatched.append(f"{row['Identifier']} {name!r}" + (" (two roster students have that name)" if who else ""))
            continue
        known[m.group(1)] = {"student": who[0].id, "name": name, "from": f"the worksheet {path.name}"}
    keep_participants(course, known)
    log(
        f"collect-zip: read Moodle's participant ids from {path.name}"
        + (f"; matching no one on the roster: {', '.join(unmatched)}" if unmatched else "")
    )
    return known


@dataclass
class Placing:
    """What collect-zip knows to place files: the roster, Moodle's participant ids, what this zip taught."""

    roster: list[Person]
    participants: dict[str, dict]
    learned: dict[str, dict] = field(default_factory=dict)


def _by_name(name: str, roster: list[Person]) -> list[Person]:
    return [p for p in roster if _key(name) in p.names or _key(name) == _key(p.id)]


def whose(m: re.Match, moodle: bool, placing: Placing, where: str) -> tuple[str | None, str, bool]:
    """(student id, why not, refused) for the entry matched by ``m``: by the id the LMS puts there, cross-checked
    with the name in the same entry; by the name alone where the id is unknown and one student has it."""
    number, name, roster = m.group("lms"), m.group("name"), placing.roster
    named = _by_name(name, roster)
    if moodle:
        known = placing.participants.get(number) or placing.learned.get(number)
        if known is not None:
            person = next((p for p in roster if p.id == known["student"]), None)
            if person is None:
                return (
                    None,
                    f"Moodle participant {number} is {known['student']} ({known['from']}), not on the roster",
                    True,
                )
            if _key(name) not in person.names and _key(name) != _key(known.get("name", "")):
                return (
                    None,
                    f"Moodle participant {number} is {person.id} ({person.shown}, {known['from']}), but the entry is "
                    f"named {name!r}: nothing placed under a guess",
                    True,
                )
            return person.id, "", False
        what = f"Moodle participant {number} (its participant id for this assignment, not an LMS id of the roster)"
    else:
        by_id = [p for p in roster if p.lms and p.lms == number]
        if by_id:
            person = by_id[0]
            if not person.names or _key(name) in person.names:
                return person.id, "", False
            return (
                None,
                f"Canvas user id {number} is {person.id}'s ({person.shown}) in the roster, but the entry is named "
                f"{name!r}"
                + (f", which is {named[0].id}'s" if len(named) == 1 else "")
                + ": nothing placed under a guess",
                True,
            )
        what = f"Canvas user id {number} (no roster student has it as LMS id)"
    if len(named) > 1:
        return (
            None,
            f"{what}: the name {name!r} is that of {', '.join(p.id for p in named)}: which one is not known",
            True,
        )
    if not named:
        hint = "give Moodle's grading worksheet beside the zip (or WORKSHEET=...), or " if moodle else ""
        return (
            None,
            f"{what}: no student in the roster has the name {name!r}: {hint}import the roster "
            "(make roster FILE=...) and run again",
            False,
        )
    if moodle:
        placing.learned[number] = {"student": named[0].id, "name": name, "from": f"the name in {where}"}
    return named[0].id, "", False


def place(
    rel: str, placing: Placing, notebooks: set[str], where: str = "the zip"
) -> tuple[str | None, str | None, str]:
    """(student id, file name in submitted/, why not) for a file at ``rel`` inside the zip; a refusal's why starts
    with "REFUSED"."""
    moodle = MOODLE.match(rel)
    m = moodle or CANVAS.match(rel)
    if m is None:
        return None, None, "its name is neither Canvas's nor Moodle's (name_id_..._file)"
    fname = Path(m.group("file")).name
    r = RESUBMITTED.match(fname)
    if fname not in notebooks and r and f"{r.group('stem')}{r.group('ext')}" in notebooks:
        fname = f"{r.group('stem')}{r.group('ext')}"
    student, why, refused = whose(m, moodle is not None, placing, where)
    if student is None:
        return None, None, ("REFUSED " if refused else "") + why
    if fname not in notebooks:
        return student, None, f"{fname!r} is not one of the notebooks ({', '.join(sorted(notebooks))})"
    return student, fname, ""
