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

The student is found in the roster the gradebook holds (``make roster``): by LMS id, else by name,
else by a student id equal to the one in the name. A file is placed only if it is one of the
released notebooks; every other file (and every student not in the roster) is reported. A file's
hand-in time is the time the zip gives it (the LMS's own), taken as local time in course.toml's time
zone, and recorded per file (``handin_merge.read_times``).

An entry that would land outside the course (an absolute path, ``..``), or that is a link or not a
plain file, is refused and named; nothing of it is written anywhere. ``replace=True``
(``REPLACE=1``) replaces each student's whole hand-in by what this zip holds, the old one set aside.
"""

from __future__ import annotations

import re
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from whole_transformer.course.layout import Course
from whole_transformer.course.term.settings import load

from .handin_merge import Merged, downloaded, merge_file, note_kept, set_aside

CANVAS = re.compile(r"^(?P<name>[^_/]+)_(?:late_)?(?P<lms>\d+)_(?P<sub>\d+)_(?P<file>[^/]+)$", re.I)
MOODLE = re.compile(r"^(?P<name>[^_/]+)_(?P<lms>\d+)_assignsubmission_[a-z]+_/?(?P<file>.+)$", re.I)
RESUBMITTED = re.compile(r"^(?P<stem>.+)-(?P<n>\d+)(?P<ext>\.ipynb)$")


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def roster_keys(course: Course) -> dict[str, str]:
    """LMS ids, names ("first last" and Canvas's "lastfirst", letters only) and ids → student id."""
    from nbgrader.api import Gradebook  # lazy: nbgrader takes seconds to import; only merging a zip needs it

    keys: dict[str, str] = {}
    with Gradebook(course.db_url) as gb:
        for s in gb.students:
            for k in (
                s.id,
                s.lms_user_id,
                f"{s.first_name or ''}{s.last_name or ''}",
                f"{s.last_name or ''}{s.first_name or ''}",
            ):
                if k and _key(k):
                    keys.setdefault(_key(k), s.id)
            if s.lms_user_id:
                keys[f"lms:{s.lms_user_id}"] = s.id
    return keys


def place(rel: str, keys: dict[str, str], notebooks: set[str]) -> tuple[str | None, str | None, str]:
    """(student id, file name in submitted/, why not) for a file at ``rel`` inside the zip."""
    m = CANVAS.match(rel) or MOODLE.match(rel)
    if m is None:
        return None, None, "its name is neither Canvas's nor Moodle's (name_id_..._file)"
    fname = Path(m.group("file")).name
    r = RESUBMITTED.match(fname)
    if fname not in notebooks and r and f"{r.group('stem')}{r.group('ext')}" in notebooks:
        fname = f"{r.group('stem')}{r.group('ext')}"
    student = keys.get(f"lms:{m.group('lms')}") or keys.get(_key(m.group("name")))
    if student is None:
        return (
            None,
            None,
            (
                f"no student in the roster has LMS id {m.group('lms')} or the name "
                f"{m.group('name')!r}: import the roster (make roster FILE=...) and run again"
            ),
        )
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
    and why, entries refused as forged and why, and what happened to each student's hand-in."""

    placed: dict[str, list[str]] = field(default_factory=dict)
    unplaced: list[tuple[str, str]] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    merged: Merged = field(default_factory=Merged)


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


def _entries(z: zipfile.ZipFile, out: Collected, keys, notebooks, extracted: Path) -> dict[tuple[str, str], list]:
    """(student, notebook) → the zip's honest entries for it; each honest entry extracted, the rest said."""
    chosen: dict[tuple[str, str], list] = {}
    for info in z.infolist():
        why = forged(info)
        if why:
            out.refused.append((info.filename, why))
            continue
        if info.is_dir():
            continue
        target = (extracted / info.filename).resolve()
        if not target.is_relative_to(extracted.resolve()):
            out.refused.append((info.filename, "it would land outside the course"))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(z.read(info))
        student, fname, why = place(info.filename, keys, notebooks)
        if student is None or fname is None:
            out.unplaced.append((info.filename, why))
        else:
            chosen.setdefault((student, fname), []).append(info)
    return chosen


def collect_zip(course: Course, zip_path: Path, log=print, replace: bool = False) -> Collected:
    """Merge the zip into submitted/ (``replace``: each student's whole hand-in replaced); what it did."""
    zip_path = Path(zip_path)
    if not zip_path.is_file():
        raise ValueError(f"no file {zip_path}: give the zip Canvas or Moodle downloaded, make collect-zip FILE=...")
    if not zipfile.is_zipfile(zip_path):
        raise ValueError(f"{zip_path} is not a zip file: download all submissions from Canvas or Moodle as one zip")
    notebooks = {p.name for p in course.release.glob("*.ipynb")}
    if not notebooks:
        raise ValueError(f"no released notebooks in {course.release}: run make release first")
    keys, zone = roster_keys(course), load(course).zone
    kept = _keep_download(course, zip_path)
    out = Collected()
    with zipfile.ZipFile(zip_path) as z:
        extracted = downloaded(course) / "extracted" / kept.stem
        chosen = _entries(z, out, keys, notebooks, extracted)
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
            when = datetime(*best.date_time).replace(tzinfo=zone)  # the LMS's time, local
            if merge_file(course, student, fname, z.read(best), when, f"{kept.name}: {best.filename}", out.merged):
                out.placed.setdefault(student, []).append(fname)
            for other in infos:
                if other is not best:
                    out.merged.note(student, f"left out {other.filename} (an earlier version in this download)")
    for student in out.merged.said:
        note_kept(course, student, {f for s, f in chosen if s == student}, out.merged)
    _say(out, kept, course, log)
    return out


def _say(out: Collected, kept: Path, course: Course, log) -> None:
    n = sum(len(v) for v in out.placed.values())
    log(
        f"collect-zip: {n} notebook(s) of {len(out.placed)} student(s) in submitted/ as in this download "
        f"(kept as {kept.relative_to(course.root)})"
        + (f"; {len(out.unplaced)} file(s) not placed" if out.unplaced else "; every file placed")
        + (f"; {len(out.refused)} entry(ies) refused" if out.refused else "")
    )
    for student, lines in sorted(out.merged.said.items()):
        log(f"  {student}: " + "; ".join(lines))
    for name, why in out.unplaced:
        log(f"  not placed: {name}: {why}")
    for name, why in out.refused:
        log(f"  REFUSED {name!r}: {why}; nothing of it was written")
