"""``nbgrader collect`` that merges: a hand-in through the exchange is only ever added to.

Stock ``nbgrader collect --update`` replaces a student's whole ``submitted/<student>/whole-transformer/``
by their latest submission, so a student who hands in one changed notebook the second time loses the
other three. ``MergeCollect`` (``c.ExchangeFactory.collect`` in nbgrader_config.py) collects a student
seen for the first time as nbgrader does, and merges every later submission file by file with the rules
and words of ``make collect-zip`` (``autograder/handin_merge.py``): a file not handed in yet is added, one
handed in is replaced only by a newer one (both times said), the rest is kept. ``--update`` is not needed.

"Newer" goes by the time the course trusts (``term/handin_time.py``): a submission's claim (its folder's
name, its timestamp.txt) only as far as the change time of its inbound folder allows, against the time of
the hand-in as it stands. When a submission adds or replaces a file, its timestamp.txt and
submission_secret.txt come along (the hand-in's time is its newest file's; release_feedback uses both).

Replacing a whole hand-in is a choice made on purpose: ``nbgrader collect whole-transformer
--MergeCollect.replace=True``; the old folder is kept in ``downloaded/whole-transformer/replaced/``.
"""

from __future__ import annotations

import fnmatch
import shutil
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets import Bool

from ..autograder.handin_merge import Merged, merge_file, note_kept, read_times, set_aside
from ..layout import Course
from ..term.handin_time import EXCHANGE, HandinTime, changed_at, earliest_claim, judge, student_handin

#: the files of a submission that describe it rather than being handed in (they follow the newest file)
STAMPS = ("timestamp.txt", "submission_secret.txt")


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
        course, merged = Course(Path(self.coursedir.root).resolve()), Merged()
        first = []
        for rec in self.src_records:
            dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, rec["username"], self.assign))
            if dest.is_dir() and not self.replace:
                self._merge(course, rec, dest, merged)
            else:
                if dest.is_dir():
                    self._set_aside(course, rec["username"])
                first.append(rec)
        self.src_records = first
        if first:
            super().copy_files()  # nbgrader's collect (owner check, size limit, ignore patterns) into a new folder
            for rec in first:
                src = Path(self.inbound_path) / rec["filename"]
                names = ", ".join(sorted(p.name for p in src.glob("*.ipynb"))) or "no notebook"
                merged.note(rec["username"], f"added {names} ({self._when(src).describe()})")
        for student, lines in sorted(merged.said.items()):
            self.log.info("collect %s: %s", student, "; ".join(lines))

    @property
    def assign(self) -> str:
        return self.coursedir.assignment_id

    def _when(self, src: Path) -> HandinTime:
        """The time the course trusts for one inbound submission: its claim as far as its change time allows."""
        stamp = src / "timestamp.txt"
        text = stamp.read_text(errors="replace").strip() if stamp.is_file() else None
        return judge(earliest_claim(text, src.name.rsplit("+", 3)[2]), changed_at(src), EXCHANGE)

    def _set_aside(self, course: Course, student: str) -> None:
        where = set_aside(course, student, datetime.now(UTC).strftime("%Y%m%dT%H%M%S"))
        if where is not None:
            self.log.warning(
                "collect --MergeCollect.replace=True: the whole hand-in of %s is replaced by the latest submission; "
                "the old one is kept in %s/",
                student,
                where.relative_to(course.root),
            )

    def _merge(self, course: Course, rec: dict, dest: Path, merged: Merged) -> None:
        """Merge one inbound submission into the student's hand-in in ``dest``, file by file."""
        student, src = rec["username"], Path(self.inbound_path) / rec["filename"]
        new = self._when(src)
        if new.finding:
            self.log.warning("INTEGRITY %s: %s", student, new.finding)
        when = new.used or datetime.now(UTC)  # the folder's change time is always there
        before = student_handin(course, student, Path(self.root)).used
        record = bool(read_times(course).get(student))  # files collected from an LMS keep their times per file
        touched, took = set(), False
        for path in sorted(src.iterdir()):
            if path.name in STAMPS or self._ignored(path.name):
                continue
            if not path.is_file() or path.is_symlink():
                merged.note(student, f"left out {path.name} (only plain files are merged)")
                continue
            data, old = path.read_bytes(), dest / path.name
            was = old.read_bytes() if old.is_file() else None
            origin = f"the exchange: {rec['filename']}"
            if merge_file(course, student, path.name, data, when, origin, merged, before, record) and was != data:
                took = True  # added or replaced, not kept
            touched.add(path.name)
        if took and not record and (before is None or when > before):
            for name in STAMPS:
                if (src / name).is_file():
                    shutil.copyfile(src / name, dest / name)
        note_kept(course, student, touched, merged, "submission")

    def _ignored(self, name: str) -> bool:
        return any(fnmatch.fnmatch(name, pattern) for pattern in self.coursedir.ignore)
