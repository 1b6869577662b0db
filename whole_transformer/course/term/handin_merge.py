"""A hand-in is only ever added to: each collected file merged into what the student already handed in.

``merge_file`` puts one collected notebook into ``submitted/<student>/whole-transformer/``: a file the
student has not handed in yet is added; a file they have is replaced only by a newer one (both times
said); an older or identical one leaves it as it is. The other files of the hand-in stay.

The record of when (``downloaded/whole-transformer/handin-times.json``, student → file → entry): each file's
hand-in time is decided once, by whoever takes it in (``nbgrader collect``'s merge, ``make collect-zip``, the
grading service), and written here with it: the time as an absolute UTC time (``time``; ``null`` when the LMS
gave none), where it came from (``from``: the inbound folder or the zip entry), what kind of evidence it is
(``source``: ``exchange``, ``lms``, ``lms-flag``, ``supplied``), and what else was known then (``claimed``,
``evidence``, ``finding``, the LMS's ``late`` flag, the zip's own wall time ``local`` and the ``zone`` it was
read in). Every later command reads this record (``term/handin_time.student_handin``) and never looks the
evidence up again. For a zip, ``timestamp.txt`` also holds the newest time of the files in the folder; for the
exchange it stays the student's own (nbgrader's release_feedback needs it as written).

``set_aside`` is the one way to replace a whole hand-in (``make collect-zip REPLACE=1``): the old
folder is moved to ``downloaded/whole-transformer/replaced/<time>/<student>/``, never deleted.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.term.times import parse_time, read_timestamp

TIMES = "handin-times.json"
_FMT = "%Y-%m-%d %H:%M:%S UTC"


def downloaded(course: Course) -> Path:
    return course.root / "downloaded" / ASSIGNMENT


def show(when: datetime | None, zone: str = "UTC") -> str:
    """A time as a collect's lines say it: in the course's zone (of the moment), to the minute."""
    if when is None:
        return "an unknown time"
    local = when.astimezone(ZoneInfo(zone))
    return f"{local:%Y-%m-%d %H:%M} {'UTC' if zone == 'UTC' else local.tzname()}"


@dataclass
class Merged:
    """What one collect did to each student's hand-in: file → what happened (one line each)."""

    said: dict[str, list[str]] = field(default_factory=dict)
    zone: str = "UTC"  # the course's time zone, which the lines show times in

    def note(self, student: str, line: str) -> None:
        self.said.setdefault(student, []).append(line)


def read_times(course: Course) -> dict[str, dict[str, dict[str, str]]]:
    """student → file → {"time": "... UTC", "from": where it came from}, as recorded by every collect."""
    path = downloaded(course) / TIMES
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def utc_text(when: datetime) -> str:
    """An aware time as the record writes it: UTC, to the microsecond the evidence gives (none for a zip's)."""
    utc = when.astimezone(UTC)
    return utc.strftime("%Y-%m-%d %H:%M:%S.%f UTC" if utc.microsecond else _FMT)


def entry(when: datetime | None, origin: str, source: str, **more) -> dict:
    """One file's record: its time (UTC; None when unknown), where it came from, the kind of evidence, and
    what else was known when it was taken in (times written as UTC; empty values left out)."""
    out: dict = {"time": utc_text(when) if when else None, "from": origin, "source": source}
    for key, value in more.items():
        if value is None or value == "":
            continue
        out[key] = utc_text(value) if isinstance(value, datetime) else value
    return out


def entry_order(rec: dict) -> datetime | None:
    """The time an entry sorts by: its hand-in time, else (an LMS that gave none) the time its download held it."""
    for key in ("time", "held_by"):
        if rec.get(key) and (when := parse_time(rec[key])) is not None:
            return when
    return None


def record_files(course: Course, student: str, entries: dict[str, dict], whole: bool = False) -> None:
    """Write the entries of some of a student's files (``whole``: the student's record is exactly these)."""
    times = read_times(course)
    if whole:
        times[student] = dict(entries)
    else:
        times.setdefault(student, {}).update(entries)
    _write_times(course, times)


def file_time(course: Course, student: str, fname: str, hand_in: datetime | None = None) -> datetime | None:
    """The recorded hand-in time of one file (for an LMS that gave none, the time its download held it),
    else ``hand_in`` (the time of the whole hand-in, when the caller knows it), else the folder's timestamp.txt."""
    rec = read_times(course).get(student, {}).get(fname)
    if rec and (when := entry_order(rec)) is not None:
        return when
    if hand_in is not None:
        return hand_in
    folder = course.submitted / student / ASSIGNMENT
    return read_timestamp(folder) if folder.is_dir() else None


def _write_times(course: Course, times: dict) -> None:
    path = downloaded(course) / TIMES
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{TIMES}.{os.getpid()}")
    tmp.write_text(json.dumps(times, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _stamp(folder: Path, when: datetime) -> None:
    old = read_timestamp(folder) if (folder / "timestamp.txt").is_file() else None
    if old is None or when > old:
        (folder / "timestamp.txt").write_text(when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC"))


def merge_file(
    course: Course,
    student: str,
    fname: str,
    data: bytes,
    when: datetime,
    origin: str,
    merged: Merged,
    hand_in: datetime | None = None,
    record: dict | None = None,
    stamp: bool = True,
) -> bool:
    """Merge one collected file into the student's hand-in; whether the file in submitted/ is now this one.
    ``when``: the time the file is compared by (newer replaces); ``record``: the file's entry in the record of
    when (default: ``when`` as the LMS's own time); ``hand_in``: the time of the hand-in as it stands, for a file
    without a recorded time; ``stamp=False`` (the exchange, whose timestamp.txt the caller copies):
    timestamp.txt left alone."""
    folder = course.submitted / student / ASSIGNMENT
    dest = folder / fname
    rec = entry(when, origin, "lms") if record is None else record
    known = fname in read_times(course).get(student, {})
    had = file_time(course, student, fname, hand_in) if dest.is_file() else None
    if dest.is_file() and dest.read_bytes() == data:
        if not known:  # the same file, never recorded (copied in before the course kept its record): now it is
            record_files(course, student, {fname: rec})
        merged.note(student, f"kept {fname} (the same file as handed in {show(had, merged.zone)})")
        return True
    if dest.is_file() and had is not None and when <= had:
        merged.note(
            student,
            f"kept {fname} handed in {show(had, merged.zone)} (this one, {show(when, merged.zone)}, is not newer)",
        )
        return False
    existed = dest.is_file()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{fname}.{os.getpid()}.part"
    tmp.write_bytes(data)
    os.replace(tmp, dest)
    record_files(course, student, {fname: rec})
    if stamp and rec.get("time"):
        _stamp(folder, when)
    new = (
        show(when, merged.zone)
        if rec.get("time")
        else "no time from the LMS" + (", flagged late" if rec.get("late") else "")
    )
    if existed:
        merged.note(student, f"replaced {fname}: {show(had, merged.zone)} → {new}")
    else:
        merged.note(student, f"added {fname} (handed in {new})" if rec.get("time") else f"added {fname} ({new})")
    return True


def note_kept(course: Course, student: str, touched: set[str], merged: Merged, what: str = "download") -> None:
    """Say which files of the student's hand-in this collect left alone (they were not in it, the ``what``)."""
    folder = course.submitted / student / ASSIGNMENT
    others = sorted(p.name for p in folder.glob("*.ipynb") if p.name not in touched) if folder.is_dir() else []
    if others:
        merged.note(student, f"kept {', '.join(others)} (not in this {what})")


def set_aside(course: Course, student: str, stamp: str) -> Path | None:
    """Move the student's whole hand-in out of submitted/ (``--replace``); where it went, or None if there was none."""
    folder = course.submitted / student / ASSIGNMENT
    if not folder.is_dir():
        return None
    dest = downloaded(course) / "replaced" / stamp / student
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(folder), str(dest))
    times = read_times(course)
    if times.pop(student, None) is not None:
        _write_times(course, times)
    return dest
