"""When a hand-in counts as handed in: the student's claim, only as far as the evidence allows.

``nbgrader submit`` runs as the student, so both the time in the inbound folder's name and
``timestamp.txt`` are the student's to write: they are a claim. What the student cannot set back is
the change time (ctime) the file system gives the folder and every file in it when they are
written: the hand-in was not complete before the newest of them (``changed_at``). The time used is
the later of the claim and that evidence (``judge``): ``nbgrader submit`` writes its time, then the
files, so an honest claim is a few seconds before the evidence. A claim earlier than the evidence by
more than ``TOLERANCE`` is an integrity finding, shown to the instructor (``make term``, ``make
grades``, the service's log and record). So is a claim later than the evidence by more than
``TOLERANCE``, which is not believed either: the evidence is the time used (else a student could
future-date an attempt past the service's cooldown).

Where the evidence is:

- the grading service reads the attempt's inbound folder itself (``service/watch.py``);
- ``make autograde``, ``make grades``, ``make feedback`` and ``make term`` (``student_handin``)
  find the exchange's inbound folder the hand-in in ``submitted/`` came from (nbgrader collect
  copies it, keeping its ``timestamp.txt``); the copies in ``submitted/`` carry the time they were
  copied, not the student's, so they are no evidence;
- a hand-in collected from an LMS download (``make collect-zip``) keeps the LMS's own time, recorded
  per file by ``autograder/handin_merge.py``: the LMS saw the student hand in, the course trusts it.

A hand-in with none of these (copied into ``submitted/`` by hand, no exchange) keeps its claim: there is
nothing to check it against.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from whole_transformer.course.layout import ASSIGNMENT, Course, exchange_root, inbound

from ..autograder.handin_merge import read_times
from .times import parse_time, read_timestamp, span

TOLERANCE = timedelta(minutes=5)
EXCHANGE, LMS, CLAIM = "the exchange", "the LMS's own time (make collect-zip)", "timestamp.txt alone"


def _show(when: datetime) -> str:
    return f"{when.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


@dataclass(frozen=True)
class HandinTime:
    """A hand-in's time: what the student claimed, what the evidence says, and the time the course uses."""

    used: datetime | None  # aware (UTC); None: no time at all (taken as on time, as before)
    claimed: datetime | None
    evidence: datetime | None  # the newest change time of the hand-in's files, where the course has them
    source: str  # EXCHANGE, LMS or CLAIM: where the evidence (or the time) came from

    @property
    def off_by(self) -> timedelta:
        """How far the claim is from the evidence, either way (zero when either is missing)."""
        if self.claimed is None or self.evidence is None:
            return timedelta(0)
        return abs(self.evidence - self.claimed)

    @property
    def finding(self) -> str:
        """The integrity finding ('' when none): a claim more than TOLERANCE away from the evidence."""
        if self.off_by <= TOLERANCE or self.claimed is None or self.evidence is None:
            return ""
        which = "later" if self.evidence > self.claimed else "earlier"
        return (
            f"claims to have handed in at {_show(self.claimed)}, but its files in {self.source} were written at "
            f"{_show(self.evidence)}, {span(self.off_by)} {which} (a time a student cannot change): "
            f"graded as handed in at {_show(self.evidence)}"
        )

    def describe(self) -> str:
        """The time used, and where it came from when that is not the claim."""
        if self.used is None:
            return "no hand-in time"
        note = ""
        if self.finding and self.claimed is not None:
            note = f" (the evidence in {self.source}; the claim said {_show(self.claimed)})"
        return f"handed in {_show(self.used)}{note}"


def judge(claimed: datetime | None, evidence: datetime | None, source: str) -> HandinTime:
    """The time used: the later of the claim and the evidence, the evidence when the claim is later than it by
    more than TOLERANCE (either alone when the other is missing)."""
    if claimed is not None and evidence is not None and claimed - evidence > TOLERANCE:
        return HandinTime(evidence, claimed, evidence, source)
    known = [t for t in (claimed, evidence) if t is not None]
    return HandinTime(max(known) if known else None, claimed, evidence, source)


def changed_at(folder: Path) -> datetime | None:
    """The newest change time (ctime) of the folder and everything in it (links not followed); None if absent."""
    newest = None
    for top, dirs, files in os.walk(folder):
        for name in [".", *dirs, *files]:
            try:
                t = os.lstat(os.path.join(top, name)).st_ctime
            except OSError:
                continue
            newest = t if newest is None else max(newest, t)
    return datetime.fromtimestamp(newest, UTC) if newest is not None else None


def earliest_claim(*texts: str | None) -> datetime | None:
    """The earliest readable time of the claims given (the folder's name, timestamp.txt)."""
    times = [t for t in (parse_time(x) for x in texts if x) if t is not None]
    return min(times) if times else None


def inbound_folder(exchange: Path, student: str, claim_text: str) -> Path | None:
    """The exchange's inbound folder a hand-in came from: the student's, whose name holds the claimed time, or
    whose own timestamp.txt says it (the name and the file are both the student's to write)."""
    try:
        folders = sorted(inbound(exchange).glob(f"{student}+{ASSIGNMENT}+*"))
    except OSError:
        return None
    for folder in folders:
        stamp = folder / "timestamp.txt"
        said = stamp.read_text(errors="replace").strip() if stamp.is_file() else ""
        if folder.name.split("+")[2:3] == [claim_text] or said == claim_text:
            return folder
    return None


@functools.lru_cache(maxsize=8)
def _exchange(root: str) -> Path:
    """The course's exchange (``c.Exchange.root`` of its nbgrader config), read once per course folder."""
    return exchange_root(Course(Path(root)), None)


def student_handin(course, student: str, exchange: Path | None = None) -> HandinTime:
    """The time of a student's hand-in in ``submitted/``: the LMS's, else the claim checked against the
    exchange's inbound folder it came from, else the claim alone."""
    folder = course.submitted / student / ASSIGNMENT
    claimed = read_timestamp(folder) if folder.is_dir() else None
    if read_times(course).get(student):
        return HandinTime(claimed, claimed, None, LMS)
    text = (folder / "timestamp.txt").read_text(errors="replace").strip() if claimed is not None else ""
    came_from = inbound_folder(exchange or _exchange(str(course.root)), student, text) if text else None
    if came_from is None:
        return judge(claimed, None, CLAIM)
    name_time = came_from.name.split("+")[2]
    return judge(earliest_claim(text, name_time), changed_at(came_from), EXCHANGE)
