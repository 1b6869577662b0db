"""A hand-in is only ever added to: each collected file merged into what the student already handed in.

``merge_file`` puts one collected notebook into ``submitted/<student>/whole-transformer/``: a file the
student has not handed in yet is added; a file they have is replaced only by a newer one (both times
said); an older or identical one leaves it as it is. The other files of the hand-in stay. Each file's
hand-in time is recorded in ``downloaded/whole-transformer/handin-times.json`` (student → file → time,
UTC, and where it came from), and ``timestamp.txt`` holds the newest time of the files in the folder:
the time the course grades lateness by.

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

from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.term.times import parse_time, read_timestamp

TIMES = "handin-times.json"
_FMT = "%Y-%m-%d %H:%M:%S UTC"


def downloaded(course: Course) -> Path:
    return course.root / "downloaded" / ASSIGNMENT


def show(when: datetime | None) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if when else "an unknown time"


@dataclass
class Merged:
    """What one collect did to each student's hand-in: file → what happened (one line each)."""

    said: dict[str, list[str]] = field(default_factory=dict)

    def note(self, student: str, line: str) -> None:
        self.said.setdefault(student, []).append(line)


def read_times(course: Course) -> dict[str, dict[str, dict[str, str]]]:
    """student → file → {"time": "... UTC", "from": where it came from}, as recorded by every collect."""
    path = downloaded(course) / TIMES
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def file_time(course: Course, student: str, fname: str, hand_in: datetime | None = None) -> datetime | None:
    """The recorded hand-in time of one file (an LMS's own time for a zip), else ``hand_in`` (the time of the
    whole hand-in, when the caller knows it), else the folder's timestamp.txt."""
    rec = read_times(course).get(student, {}).get(fname)
    if rec and (when := parse_time(rec["time"])) is not None:
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
    record: bool = True,
) -> bool:
    """Merge one collected file into the student's hand-in; whether the file in submitted/ is now this one.
    ``hand_in``: the time of the hand-in as it stands, for a file without a recorded time; ``record=False``
    (the exchange, whose timestamp.txt the caller copies): no time recorded per file, timestamp.txt left alone."""
    folder = course.submitted / student / ASSIGNMENT
    dest = folder / fname
    had = file_time(course, student, fname, hand_in) if dest.is_file() else None
    if dest.is_file() and dest.read_bytes() == data:
        merged.note(student, f"kept {fname} (the same file as handed in {show(had)})")
        return True
    if dest.is_file() and had is not None and when <= had:
        merged.note(student, f"kept {fname} handed in {show(had)} (this one, {show(when)}, is not newer)")
        return False
    existed = dest.is_file()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{fname}.{os.getpid()}.part"
    tmp.write_bytes(data)
    os.replace(tmp, dest)
    if record:
        times = read_times(course)
        times.setdefault(student, {})[fname] = {"time": when.astimezone(UTC).strftime(_FMT), "from": origin}
        _write_times(course, times)
        _stamp(folder, when)
    if existed:
        merged.note(student, f"replaced {fname}: {show(had)} → {show(when)}")
    else:
        merged.note(student, f"added {fname} (handed in {show(when)})")
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
