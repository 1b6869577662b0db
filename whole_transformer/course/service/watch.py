"""The service's queue: nbgrader's exchange inbound folder, and the durable record of what was done.

nbgrader's ``submit`` puts each attempt in ``<exchange>/<course_id>/inbound/`` as a folder named
``<student>+<assignment>+<timestamp>+<random>`` holding the notebooks, ``timestamp.txt`` and
``submission_secret.txt``. Every such folder of the course's assignment is one attempt
(``Attempt``; ``autograder/submission.Submission.from_exchange`` reads its files for grading). An attempt is
done once its record (``AttemptRecord``, its status one of the core's, ``core/results.Status``),
``autograde/.wt/service/attempts/<key>.json``, is written (``Store``): that is written last, after the grades
are merged and the feedback is released, so a service killed at any moment grades again, on restart, exactly
the attempts that have no record, and no other.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import time
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

from ..core.results import Status
from ..layout import ASSIGNMENT, Course, inbound, write_json
from ..term.handin_time import HandinTime, inbound_time
from ..term.times import parse_time

#: how long an attempt's folder may lack its submission_secret.txt while nbgrader submit writes it
WRITING_SECONDS = 60


@dataclass(frozen=True)
class Attempt:
    """One attempt handed in through the exchange."""

    name: str  # the inbound folder's name
    folder: Path
    student: str
    when: datetime | None  # aware (UTC): the time used (``handin``); None when the name holds no readable time
    problem: str = ""  # why it cannot be graded at all ("" when it can)
    writing: bool = False  # nbgrader submit is still writing it: looked at again at the next pass
    handin: HandinTime | None = None  # the claim (name, timestamp.txt) against the folder's change times

    @property
    def handed_in(self) -> datetime:
        """When it was handed in: every attempt without a problem has a readable time (read_attempt sees to it)."""
        assert self.when is not None, f"{self.name}: no hand-in time, so it has a problem and is not graded"
        return self.when

    @property
    def secret(self) -> str:
        """The attempt's submission_secret.txt: with it, nbgrader names the feedback file the student fetches."""
        try:
            return (self.folder / "submission_secret.txt").read_text()  # as nbgrader reads it
        except OSError:
            return ""


def read_attempt(folder: Path) -> Attempt | None:
    """The attempt in one inbound folder; None for another assignment's (not this course's to grade)."""
    parts = folder.name.split("+")
    if len(parts) in (3, 4) and parts[1] != ASSIGNMENT:
        return None
    student = parts[0] if len(parts) in (3, 4) else ""
    when = parse_time(parts[2]) if len(parts) in (3, 4) else None
    problem = ""
    if not student or len(parts) not in (3, 4):
        problem = "the folder's name is not <student>+<assignment>+<time>+<random> as nbgrader submit writes it"
    elif when is None:
        problem = f"the time in the folder's name ({parts[2]!r}) cannot be read"
    elif not folder.is_dir() or folder.is_symlink():
        problem = "it is not a folder"
    elif _handed_in_by_another(folder, student):
        problem = (
            f"the folder belongs to another account (uid {folder.stat().st_uid}) than {student}'s: one student "
            "cannot hand in for another"
        )
    elif not _secret_written(folder):
        if time.time() - folder.stat().st_mtime < WRITING_SECONDS:
            return Attempt(folder.name, folder, student, when, writing=True)
        problem = (
            "it has no submission_secret.txt (not handed in with nbgrader submit): its feedback cannot be released"
        )
    if problem:
        return Attempt(folder.name, folder, student, when, problem)
    handin = _handin(folder, student)
    return Attempt(folder.name, folder, student, handin.used, handin=handin)


def _handin(folder: Path, student: str) -> HandinTime:
    """The attempt's time: the earlier of the folder name's time and its timestamp.txt (both the student's
    claim), no earlier than the newest change time of the folder and its files; a claim copied from an earlier
    attempt of the student is a finding (``term/handin_time.inbound_time``). Decided here, once: the service's
    record keeps it, and so does the record of when of the hand-in it becomes (``attempt.install``)."""
    siblings = [f for f in folder.parent.glob(f"{student}+{ASSIGNMENT}+*") if f.name.split("+")[0] == student]
    return inbound_time(folder, sorted(siblings))


def _secret_written(folder: Path) -> bool:
    """nbgrader submit writes the notebooks, then timestamp.txt, then submission_secret.txt, into a folder
    already in the inbound: the attempt is whole once the secret is there and not empty."""
    try:
        return (folder / "submission_secret.txt").stat().st_size > 0
    except OSError:
        return False


def _handed_in_by_another(folder: Path, student: str) -> bool:
    """On a hub whose students are accounts of this machine (``make classroom``), nbgrader submit runs as
    the student, so the folder is theirs; anyone else's folder under their name is not their attempt.
    Where the student has no account here (containers, tests), the name is all there is."""
    try:
        return folder.stat().st_uid != pwd.getpwnam(student).pw_uid
    except (KeyError, OSError):
        return False


def inbound_attempts(exchange: Path) -> list[Attempt]:
    """Every attempt of the assignment in the exchange, oldest first (unreadable times last)."""
    where = inbound(exchange)
    try:
        entries = sorted(os.scandir(where), key=lambda e: e.name)
    except OSError:
        return []
    subs = [s for s in (read_attempt(Path(e.path)) for e in entries) if s is not None and not s.writing]
    far = datetime.max.replace(tzinfo=UTC)
    return sorted(subs, key=lambda s: (s.when or far, s.name))


@dataclass
class AttemptRecord:
    """How the service ended one attempt, as kept (one JSON file each, written last): the attempt, the time used
    (``when``; None when its name holds none), its status and why, and for a graded or refused one what the policy
    decided and what came of it."""

    name: str  # the inbound folder's name
    student: str
    when: datetime | None
    status: Status
    reason: str = ""
    done_at: datetime | None = None
    claimed: datetime | None = None  # the student's claim, when the evidence said otherwise
    integrity: str | None = None  # the integrity finding on the time (term/handin_time.py)
    number: int | None = None  # the graded attempt this is (1-based), or would have been
    late: bool | None = None
    score: float | None = None
    max_score: float | None = None
    counts: bool | None = None  # whether it became the attempt that counts (merged into the course)
    feedback: str | None = None  # "pass_fail" or "full"
    released: int | None = None  # feedback pages released
    findings: int | None = None
    seconds: float | None = None

    def to_json(self) -> dict:
        """As stored: the time used as ISO text ('' when none), every other field that is set."""
        out = {k: v for k, v in asdict(self).items() if v is not None or k == "when"}
        for key in ("when", "done_at", "claimed"):
            if key in out:
                out[key] = out[key].isoformat() if out[key] else ""
        return out

    @classmethod
    def from_json(cls, data: dict) -> AttemptRecord:
        known = {f.name for f in fields(cls)}
        kept = {k: v for k, v in data.items() if k in known}
        for key in ("when", "done_at", "claimed"):
            kept[key] = datetime.fromisoformat(kept[key]) if kept.get(key) else None
        kept["status"] = Status(kept["status"])
        return cls(**kept)


class Store:
    """The durable record of the attempts done: one JSON file per attempt (``AttemptRecord``), written atomically."""

    def __init__(self, course: Course):
        self.folder = course.state / "service" / "attempts"
        self.folder.mkdir(parents=True, exist_ok=True)
        self._cache: dict[str, AttemptRecord] = {}

    def _path(self, name: str) -> Path:
        return self.folder / f"{hashlib.sha256(name.encode()).hexdigest()[:32]}.json"

    def get(self, name: str) -> AttemptRecord | None:
        if name not in self._cache:
            rec = _read(self._path(name))
            if rec is None:
                return None
            self._cache[name] = rec
        return self._cache[name]

    def done(self, name: str) -> bool:
        return self.get(name) is not None

    def write(self, record: AttemptRecord) -> None:
        write_json(self._path(record.name), record.to_json())
        self._cache[record.name] = record
        self._merging(record.name).unlink(missing_ok=True)

    def _merging(self, name: str) -> Path:
        return self._path(name).with_suffix(".merging")

    def merging(self, name: str) -> None:
        """Say, durably, that this attempt goes into the course now (until its record is written): a service
        stopped in between finds its own merge on restart, not one of ``make autograde``, and grades the
        attempt again, releasing its feedback."""
        write_json(self._merging(name), {"name": name})

    def was_merging(self, name: str) -> bool:
        return self._merging(name).exists()

    def all(self) -> list[AttemptRecord]:
        return [rec for p in sorted(self.folder.glob("*.json")) if (rec := _read(p)) is not None]

    def history(self, student: str) -> list[AttemptRecord]:
        """The student's attempts done so far, oldest first."""
        far = datetime.min.replace(tzinfo=UTC)
        return sorted((r for r in self.all() if r.student == student), key=lambda r: (r.when or far, r.name))


def _read(path: Path) -> AttemptRecord | None:
    try:
        return AttemptRecord.from_json(json.loads(path.read_text()))
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
