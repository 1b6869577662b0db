"""``make collect-zip FILE=…``: a Canvas or Moodle "download all submissions" zip merged into submitted/.

Each download is kept (``downloaded/whole-transformer/archive/``, never overwritten: a second zip of the
same name is kept beside the first), its honest entries are extracted to ``…/extracted/<zip>/``, and
every released notebook in it is merged into ``submitted/<student>/whole-transformer/``
(``handin_merge``: added, replaced only by a newer file, the rest kept), with the course's file-name
rules:

- Canvas names a file ``<lastfirst>_[late_]<Canvas user id>_<submission id>_<file name>`` (a
  resubmission's file name gets ``-1``, ``-2``…);
- Moodle puts it in ``<Full Name>_<participant id>_assignsubmission_file_/<file name>`` (older
  versions: the same as one flat name).

Whose a file is, decided with evidence, per LMS, from the roster the gradebook holds (``make roster``):

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

When: a file's hand-in time is the time the zip gives it (the LMS's own), a wall time the course reads in
course.toml's time zone of the moment, recorded per file as UTC with the wall time and the zone it was read
in (``handin_merge``: the record of when). A download whose entries all carry one time, shared by two
students or more, carries the moment the zip was built, not when anyone handed in (Canvas's own zip code
writes its entries without a time): no time is taken from it. Lateness then comes from Canvas's ``late``
flag in the file name (a late flag of unknown length costs the first step of the late policy:
``LatePolicy.unknown_length``), or from the times the instructor supplies (``times``: a CSV of ``student``
and ``submitted``); ``make term`` names the students whose time is the LMS's flag only.

An entry that would land outside the course (an absolute path, ``..``), or that is a link or not a
plain file, is refused and named; nothing of it is written anywhere. ``replace=True``
(``REPLACE=1``) replaces each student's whole hand-in by what this zip holds, the old one set aside.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from whole_transformer.course.layout import Course
from whole_transformer.course.term.settings import load

from .handin_merge import Merged, downloaded, entry, merge_file, note_kept, set_aside

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


def _keep_participants(course: Course, known: dict[str, dict]) -> None:
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
    _keep_participants(course, known)
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


def forged(info: zipfile.ZipInfo) -> str:
    """Why an entry of the zip is refused ('' if it is an honest file)."""
    name = info.filename
    mode = info.external_attr >> 16
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "an absolute path: it would land outside the course"
    if ".." in re.split(r"[/\\]", name):
        return "its path climbs out with '..': it would land outside the course"
    if stat.S_ISLNK(mode):
        return "a symbolic link: only plain files are collected"
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):  # 0: no type given (a DOS zip, Python's)
        return "not a plain file (a device, pipe or socket)"
    if "\0" in name:
        return "its name holds a NUL character"
    return ""


@dataclass
class Collected:
    """What one collect-zip did: files placed (student → files now as in this zip), files it could not place
    and why, entries refused (forged, or whose student is contradicted or ambiguous) and why, and what happened
    to each student's hand-in; ``build_time``: the zip's own time, when its entries carry no other."""

    placed: dict[str, list[str]] = field(default_factory=dict)
    unplaced: list[tuple[str, str]] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    merged: Merged = field(default_factory=Merged)
    build_time: datetime | None = None
    flag_only: list[str] = field(default_factory=list)  # students whose time is the LMS's late flag alone


def _keep_download(course: Course, zip_path: Path) -> Path:
    """The zip copied into downloaded/…/archive/; a different download of the same name is kept beside it."""
    archive = downloaded(course) / "archive"
    archive.mkdir(parents=True, exist_ok=True)
    dest, n = archive / zip_path.name, 1
    while dest.exists() and dest.read_bytes() != zip_path.read_bytes():
        n += 1
        dest = archive / f"{zip_path.stem}-{n}{zip_path.suffix}"
    shutil.copy2(zip_path, dest)
    return dest


def _version(info: zipfile.ZipInfo) -> tuple:
    r = RESUBMITTED.match(PurePosixPath(info.filename).name)
    return (info.date_time, int(r.group("n")) if r else 0)


def _entries(z: zipfile.ZipFile, out: Collected, placing: Placing, notebooks, extracted: Path, where: str):
    """(student, notebook) → the zip's honest entries for it; each honest entry extracted, the rest said."""
    chosen: dict[tuple[str, str], list] = {}
    for info in z.infolist():
        why = forged(info)
        if why:
            out.refused.append((info.filename, why + "; nothing of it was written"))
            continue
        if info.is_dir():
            continue
        target = (extracted / info.filename).resolve()
        if not target.is_relative_to(extracted.resolve()):
            out.refused.append((info.filename, "it would land outside the course; nothing of it was written"))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(z.read(info))
        student, fname, why = place(info.filename, placing, notebooks, where)
        if why.startswith("REFUSED "):
            out.refused.append((info.filename, why.removeprefix("REFUSED ") + "; extracted, placed under no one"))
        elif student is None or fname is None:
            out.unplaced.append((info.filename, why))
        else:
            chosen.setdefault((student, fname), []).append(info)
    return chosen


def build_time(chosen: dict[tuple[str, str], list]) -> tuple | None:
    """The zip's own build time, if its entries carry nothing else: every entry placed has one same time, and two
    students or more share it (one student's files of one hand-in may share a time honestly)."""
    times = {info.date_time for infos in chosen.values() for info in infos}
    students = {s for s, _ in chosen}
    return next(iter(times)) if len(times) == 1 and len(students) > 1 else None


def read_supplied(path: Path, roster: list[Person], zone: ZoneInfo) -> dict[str, datetime]:
    """The instructor's hand-in times: a CSV with ``student`` (the roster's id, or the LMS id) and ``submitted``
    (a date and time, local in course.toml's zone unless it gives its own offset)."""
    out: dict[str, datetime] = {}
    bad = []
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        head = {re.sub(r"[\s-]+", "_", h.strip().lower()): h for h in reader.fieldnames or []}
        who = next((head[k] for k in ("student", "id", "student_id", "lms_user_id") if k in head), None)
        when = next((head[k] for k in ("submitted", "submitted_at", "time") if k in head), None)
        if who is None or when is None:
            raise ValueError(
                f"{path}: the hand-in times need the columns student and submitted (it has: {', '.join(head)})"
            )
        for n, row in enumerate(reader, start=2):
            sid = (row.get(who) or "").strip()
            person = next((p for p in roster if sid in (p.id, p.lms)), None)
            try:
                t = datetime.fromisoformat((row.get(when) or "").strip().replace("Z", "+00:00"))
            except ValueError:
                bad.append(f"line {n}: cannot read {row.get(when)!r} as a time (write 2026-10-16 23:40)")
                continue
            if person is None:
                bad.append(f"line {n}: {sid!r} is no student of the roster (its id or LMS id)")
                continue
            out[person.id] = (t.replace(tzinfo=zone) if t.tzinfo is None else t).astimezone(UTC)
    if bad:
        raise ValueError(f"{path}: nothing collected, fix these lines first:\n  " + "\n  ".join(bad))
    return out


def collect_zip(
    course: Course,
    zip_path: Path,
    log=print,
    replace: bool = False,
    worksheet: Path | None = None,
    times: Path | None = None,
) -> Collected:
    """Merge the zip into submitted/ (``replace``: each student's whole hand-in replaced); what it did.
    ``worksheet``: Moodle's grading worksheet (else one beside the zip); ``times``: hand-in times the
    instructor supplies, for a download that gives none."""
    zip_path = Path(zip_path)
    if not zip_path.is_file():
        raise ValueError(f"no file {zip_path}: give the zip Canvas or Moodle downloaded, make collect-zip FILE=...")
    if not zipfile.is_zipfile(zip_path):
        raise ValueError(f"{zip_path} is not a zip file: download all submissions from Canvas or Moodle as one zip")
    notebooks = {p.name for p in course.release.glob("*.ipynb")}
    if not notebooks:
        raise ValueError(f"no released notebooks in {course.release}: run make release first")
    roster, settings = people(course), load(course)
    if not roster:
        raise ValueError(
            "the roster is empty, so no file of the zip can be placed under a student: import the class list "
            "first (make roster FILE=students.csv), then run make collect-zip again; nothing was collected"
        )
    zone = settings.zone
    sheet = find_worksheet(zip_path, worksheet, log)
    participants = read_worksheet(course, sheet, roster, log) if sheet else read_participants(course)
    supplied = read_supplied(Path(times), roster, zone) if times else {}
    placing = Placing(roster, participants)
    kept = _keep_download(course, zip_path)
    out = Collected()
    with zipfile.ZipFile(zip_path) as z:
        extracted = downloaded(course) / "extracted" / kept.stem
        chosen = _entries(z, out, placing, notebooks, extracted, kept.name)
        built = build_time(chosen)
        if built is not None:
            out.build_time = datetime(*built).replace(tzinfo=zone)
        if replace:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
            for student in sorted({s for s, _ in chosen}):
                where = set_aside(course, student, stamp)
                if where is not None:
                    log(
                        f"collect-zip REPLACE=1: the whole hand-in of {student} is replaced by this download; "
                        f"the old one is kept in {where.relative_to(course.root)}/"
                    )
        for (student, fname), infos in sorted(chosen.items()):
            best = max(infos, key=_version)
            when, rec = _when(best, kept, zone, settings.timezone, out.build_time, supplied.get(student))
            if rec["source"] == "lms-flag" and student not in out.flag_only:
                out.flag_only.append(student)
            if merge_file(course, student, fname, z.read(best), when, rec["from"], out.merged, record=rec):
                out.placed.setdefault(student, []).append(fname)
            for other in infos:
                if other is not best:
                    out.merged.note(student, f"left out {other.filename} (an earlier version in this download)")
    if placing.learned:
        _keep_participants(course, {**read_participants(course), **placing.learned})
    for student in out.merged.said:
        note_kept(course, student, {f for s, f in chosen if s == student}, out.merged)
    _say(out, kept, course, log)
    return out


def _when(info: zipfile.ZipInfo, kept: Path, zone: ZoneInfo, zone_name: str, built, supplied) -> tuple[datetime, dict]:
    """(the time a file is compared by, its entry in the record of when) for one zip entry."""
    origin = f"{kept.name}: {info.filename}"
    wall = datetime(*info.date_time)
    if built is None:  # the LMS's own time, a wall time in the course's zone
        when = wall.replace(tzinfo=zone)
        return when, entry(when, origin, "lms", local=wall.isoformat(sep=" "), zone=zone_name)
    if supplied is not None:
        return supplied, entry(supplied, origin, "supplied", held_by=built)
    m = CANVAS.match(info.filename)
    late = bool(m and m.group("late"))
    return built, entry(None, origin, "lms-flag", late=late, held_by=built)


def _say(out: Collected, kept: Path, course: Course, log) -> None:
    n = sum(len(v) for v in out.placed.values())
    log(
        f"collect-zip: {n} notebook(s) of {len(out.placed)} student(s) in submitted/ as in this download "
        f"(kept as {kept.relative_to(course.root)})"
        + (f"; {len(out.unplaced)} file(s) not placed" if out.unplaced else "; every file placed")
        + (f"; {len(out.refused)} entry(ies) refused" if out.refused else "")
    )
    if out.build_time is not None:
        log(
            f"  the download gives no hand-in times: every entry carries {out.build_time:%Y-%m-%d %H:%M}, the moment "
            "the zip was built, so none is taken from it; lateness comes from the LMS's late flag (a late flag "
            "says not how late: it costs the first step of the late policy) or from TIMES=times.csv"
            + (f"; by the flag only: {', '.join(out.flag_only)}" if out.flag_only else "")
        )
    for student, lines in sorted(out.merged.said.items()):
        log(f"  {student}: " + "; ".join(lines))
    for name, why in out.unplaced:
        log(f"  not placed: {name}: {why}")
    for name, why in out.refused:
        log(f"  REFUSED {name!r}: {why}")
