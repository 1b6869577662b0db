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

Whose a file is: ``lms_names.py`` (the id each LMS puts in its file names, cross-checked with the name);
nothing is placed under a guess.

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

from ..term.handin_merge import Merged, downloaded, entry, merge_file, note_kept, set_aside
from .lms_names import (
    CANVAS,
    RESUBMITTED,
    Person,
    Placing,
    find_worksheet,
    keep_participants,
    people,
    place,
    read_participants,
    read_worksheet,
)


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
    out = Collected(merged=Merged(zone=settings.timezone))
    with zipfile.ZipFile(zip_path) as z:
        extracted = downloaded(course) / "extracted" / kept.stem
        chosen = _entries(z, out, placing, notebooks, extracted, kept.name)
        built = build_time(chosen)
        if built is not None:
            out.build_time = datetime(*built).replace(tzinfo=zone)
        if replace:
            _set_aside_all(course, sorted({s for s, _ in chosen}), log)
        for (student, fname), infos in sorted(chosen.items()):
            _merge_one(course, z, out, student, fname, infos, kept, settings, supplied.get(student))
    if placing.learned:
        keep_participants(course, {**read_participants(course), **placing.learned})
    for student in out.merged.said:
        note_kept(course, student, {f for s, f in chosen if s == student}, out.merged)
    _say(out, kept, course, log)
    return out


def _set_aside_all(course: Course, students: list[str], log) -> None:
    """REPLACE=1: each student's whole hand-in set aside before this download's files go in."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    for student in students:
        where = set_aside(course, student, stamp)
        if where is not None:
            log(
                f"collect-zip REPLACE=1: the whole hand-in of {student} is replaced by this download; "
                f"the old one is kept in {where.relative_to(course.root)}/"
            )


def _merge_one(course: Course, z, out: Collected, student: str, fname: str, infos, kept: Path, settings, supplied):
    """The newest of the zip's entries for one student's notebook merged, its time recorded; the rest said."""
    best = max(infos, key=_version)
    when, rec = _when(best, kept, settings.zone, settings.timezone, out.build_time, supplied)
    if rec["source"] == "lms-flag" and student not in out.flag_only:
        out.flag_only.append(student)
    if merge_file(course, student, fname, z.read(best), when, rec["from"], out.merged, record=rec):
        out.placed.setdefault(student, []).append(fname)
    for other in infos:
        if other is not best:
            out.merged.note(student, f"left out {other.filename} (an earlier version in this download)")


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
