"""``nbgrader collect`` that merges: a hand-in through the exchange is only ever added to.

Stock ``nbgrader collect --update`` replaces a student's whole ``submitted/<student>/whole-transformer/``
by their latest submission, so a student who hands in one changed notebook the second time loses the
other three. ``MergeCollect`` (``c.ExchangeFactory.collect`` in nbgrader_config.py) collects a student
seen for the first time as nbgrader does, and merges every later submission file by file with the rules
and words of ``make collect-zip`` (``term/handin_merge.py``): a file not handed in yet is added, one
handed in is replaced only by a newer one (both times said), the rest is kept. ``--update`` is not needed.

Every attempt of a student in the inbound not taken in yet is taken in, oldest first by the time the course
trusts, not only the one nbgrader picks by its claimed time: a student who hands in twice between two collects
has both merged, in the order their files were written. Each attempt's time is decided here, once, from its own
inbound folder (``term/handin_time.inbound_time``: the claim as far as the folder's change time allows; a claim
copied from an earlier attempt of the student is a finding) and recorded with each file it brings
(``term/handin_merge.py``, the record of when), with the attempts taken in: no later command looks the
exchange up again. When an attempt adds or replaces a file, its timestamp.txt and submission_secret.txt come
along (release_feedback uses both, as the student wrote them).

Replacing a whole hand-in is a choice made on purpose: ``nbgrader collect whole-transformer
--MergeCollect.replace=True``; the old folder is kept in ``downloaded/whole-transformer/replaced/``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets import Bool

from ..layout import Course
from ..term.handin_merge import Merged, downloaded, entry, merge_file, note_kept, record_files, set_aside
from ..term.handin_time import HandinTime, entry_fields, inbound_time, student_handin
from ..term.settings import load

#: the files of a submission that describe it rather than being handed in (they follow the newest file)
STAMPS = ("timestamp.txt", "submission_secret.txt")
TAKEN = "taken-in.json"  # the inbound folders taken in so far: folder name → student, time used


def taken_in(course: Course) -> dict[str, dict]:
    path = downloaded(course) / TAKEN
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def note_taken(course: Course, name: str, student: str, h: HandinTime) -> None:
    """Say, in the course, that an inbound attempt was taken in, with the time decided for it."""
    done = taken_in(course)
    done[name] = entry(h.used, name, "exchange", student=student, **entry_fields(h))
    path = downloaded(course) / TAKEN
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{TAKEN}.{os.getpid()}")
    tmp.write_text(json.dumps(done, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


class MergeCollect(ExchangeCollect):
    replace = Bool(
        False,
        config=True,
        help="Replace each collected student's whole hand-in by their latest submission (the old one kept in "
        "downloaded/whole-transformer/replaced/) instead of merging file by file.",
    )

    def copy_files(self):
        if not self.src_records:
            return super().copy_files()  # nbgrader's own "No submissions ... to collect"
        course = Course(Path(self.coursedir.root).resolve())
        merged = Merged(zone=load(course).timezone)
        done = taken_in(course)
        first, later = [], []
        for rec in self.src_records:
            student = rec["username"]
            dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, self.assign))
            attempts = self._attempts(student)
            new = [(src, h) for src, h in attempts if src.name not in done]
            if self.replace:  # the whole hand-in replaced by the latest attempt, by the time the course trusts
                new = attempts[-1:]
                if dest.is_dir():
                    self._set_aside(course, student)
            if not new:
                later.append((student, dest, attempts[-1:]))  # nothing new: said as kept
                continue
            for _, h in new:
                if h.finding:
                    self.log.warning("INTEGRITY %s: %s", student, h.finding)
            if dest.is_dir():
                later.append((student, dest, new))
            else:
                first.append({**rec, "filename": new[0][0].name})
                later.append((student, dest, new[1:]))
        self.src_records = first
        if first:
            super().copy_files()  # nbgrader's collect (owner check, size limit, ignore patterns) into a new folder
            for rec in first:
                self._record_first(course, rec, merged)
        for student, dest, attempts in later:
            for src, h in attempts:
                self._merge(course, student, src, h, dest, merged)
        for student, lines in sorted(merged.said.items()):
            self.log.info("collect %s: %s", student, "; ".join(lines))

    @property
    def assign(self) -> str:
        return self.coursedir.assignment_id

    def _attempts(self, student: str) -> list[tuple[Path, HandinTime]]:
        """Every inbound attempt of the student, with its time (decided from its own folder), oldest first."""
        folders = sorted(Path(self.inbound_path).glob(f"{student}+{self.assign}+*"))
        folders = [f for f in folders if f.is_dir() and f.name.rsplit("+", 3)[0] == student]
        timed = [(f, inbound_time(f, folders)) for f in folders]
        far = datetime.max.replace(tzinfo=UTC)
        return sorted(timed, key=lambda fh: (fh[1].used or far, fh[0].name))

    def _record_first(self, course: Course, rec: dict, merged: Merged) -> None:
        """A student seen for the first time, copied by nbgrader: each file's time recorded, said."""
        student, src = rec["username"], Path(self.inbound_path) / rec["filename"]
        h = replace(inbound_time(src, [f for f, _ in self._attempts(student)]), zone=merged.zone)
        dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, self.assign))
        origin = f"the exchange: {src.name}"
        files = sorted(p.name for p in dest.iterdir() if p.is_file() and p.name not in STAMPS) if dest.is_dir() else []
        fields = entry_fields(h)
        record_files(course, student, {f: entry(h.used, origin, "exchange", **fields) for f in files}, whole=True)
        note_taken(course, src.name, student, h)
        names = ", ".join(f for f in files if f.endswith(".ipynb")) or "no notebook"
        merged.note(student, f"added {names} ({h.describe()})")

    def _set_aside(self, course: Course, student: str) -> None:
        where = set_aside(course, student, datetime.now(UTC).strftime("%Y%m%dT%H%M%S"))
        if where is not None:
            self.log.warning(
                "collect --MergeCollect.replace=True: the whole hand-in of %s is replaced by the latest submission; "
                "the old one is kept in %s/",
                student,
                where.relative_to(course.root),
            )

    def _merge(self, course: Course, student: str, src: Path, new: HandinTime, dest: Path, merged: Merged) -> None:
        """Merge one inbound attempt into the student's hand-in in ``dest``, file by file, each file's time recorded."""
        when = new.used or datetime.now(UTC)  # the folder's change time is always there
        before = student_handin(course, student).used
        origin = f"the exchange: {src.name}"
        rec = entry(new.used, origin, "exchange", **entry_fields(new))
        touched, took = set(), False
        for path in sorted(src.iterdir()):
            if path.name in STAMPS or self._ignored(path.name):
                continue
            if not path.is_file() or path.is_symlink():
                merged.note(student, f"left out {path.name} (only plain files are merged)")
                continue
            data, old = path.read_bytes(), dest / path.name
            was = old.read_bytes() if old.is_file() else None
            if merge_file(course, student, path.name, data, when, origin, merged, before, rec, stamp=False):
                took = took or was != data  # added or replaced, not kept
            touched.add(path.name)
        if took and (before is None or when > before):
            for name in STAMPS:
                if (src / name).is_file():
                    shutil.copyfile(src / name, dest / name)
        note_taken(course, src.name, student, new)
        note_kept(course, student, touched, merged, "submission")

    def _ignored(self, name: str) -> bool:
        return any(fnmatch.fnmatch(name, pattern) for pattern in self.coursedir.ignore)
