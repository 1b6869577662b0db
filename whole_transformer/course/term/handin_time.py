"""When a hand-in counts as handed in: decided once, when the course takes it in, and recorded with it.

``nbgrader submit`` runs as the student, so both the time in the inbound folder's name and
``timestamp.txt`` are the student's to write: they are a claim. What the student cannot set back is
the change time (ctime) the file system gives the folder and every file in it when they are
written: the hand-in was not complete before the newest of them (``changed_at``). The time used is
the later of the claim and that evidence (``judge``): ``nbgrader submit`` writes its time, then the
files, so an honest claim is a few seconds before the evidence. A claim earlier than the evidence by
more than ``TOLERANCE`` is an integrity finding, shown to the instructor (``make term``, ``make
grades``, the service's log and record). So is a claim later than the evidence by more than
``TOLERANCE``, which is not believed either: the evidence is the time used (else a student could
future-date an attempt past the service's cooldown). So is a claim copied from another attempt of the
same student (``twin_of``): the time used is then that attempt's own evidence, as for any other.

The time is decided where the evidence is, once, when the course first takes the hand-in in, and
written per file into the record of when (``term/handin_merge.py``, ``handin-times.json``):

- the grading service, from the attempt's inbound folder (``service/watch.py``; recorded by
  ``service/attempt.py`` when the attempt goes into the course);
- ``nbgrader collect`` (the course's ``MergeCollect``, ``plugins/collect.py``), from each inbound folder it
  takes in;
- ``make collect-zip``, the LMS's own time of each file (``autograder/collect_zip.py``); a download whose
  entries carry only its own build time gives none, and the LMS's ``late`` flag, or the times the instructor
  supplies, stand instead.

Every later command (``make autograde``, ``make grades``, ``make feedback``, ``make term``, the LMS files)
reads that record (``student_handin``) and never looks the evidence up again: matching a claim's text
against the exchange would let a late attempt borrow an earlier one's evidence. A hand-in with no record
(copied into ``submitted/`` by hand) keeps its claim, and is shown as "time not checked". Times are shown in
the course's time zone of the moment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from whole_transformer.course.layout import ASSIGNMENT

from .handin_merge import read_times
from .times import parse_time, read_timestamp, span

TOLERANCE = timedelta(minutes=5)
EXCHANGE = "the exchange"
LMS = "the LMS's own time (make collect-zip)"
LMS_FLAG = "the LMS's late flag alone (its download gives no times)"
SUPPLIED = "the time the instructor supplied (make collect-zip TIMES=...)"
CLAIM = "timestamp.txt alone"
#: the record's ``source`` → what it is, as said
SOURCES = {"exchange": EXCHANGE, "lms": LMS, "lms-flag": LMS_FLAG, "supplied": SUPPLIED, "claim": CLAIM}
KIND = {v: k for k, v in SOURCES.items()}
UNCHECKED = "time not checked"


def show(when: datetime, zone: str = "UTC", seconds: bool = False) -> str:
    """A time as the course shows it: in its zone (of the moment), to the minute (or the second)."""
    local = when.astimezone(ZoneInfo(zone))
    return f"{local:%Y-%m-%d %H:%M{':%S' if seconds else ''}} {local.tzname() if zone != 'UTC' else 'UTC'}"


@dataclass(frozen=True)
class HandinTime:
    """A hand-in's time: what the student claimed, what the evidence says, and the time the course uses."""

    used: datetime | None  # aware (UTC); None: no time at all (taken as on time, or by the LMS's late flag)
    claimed: datetime | None
    evidence: datetime | None  # the newest change time of the hand-in's files, where the course had them
    source: str  # EXCHANGE, LMS, LMS_FLAG, SUPPLIED or CLAIM: where the evidence (or the time) came from
    note: str = ""  # a finding besides claim against evidence (a claim copied from another attempt)
    late_flag: bool | None = None  # the LMS's own late flag, where its download gives no time (LMS_FLAG)
    zone: str = "UTC"  # the zone times are shown in (the course's, of the moment)
    unchecked: tuple[str, ...] = ()  # files of the hand-in no one recorded (copied in by hand)

    @property
    def off_by(self) -> timedelta:
        """How far the claim is from the evidence, either way (zero when either is missing)."""
        if self.claimed is None or self.evidence is None:
            return timedelta(0)
        return abs(self.evidence - self.claimed)

    @property
    def finding(self) -> str:
        """The integrity finding ('' when none): a claim copied from another attempt, or more than TOLERANCE
        away from the evidence."""
        if self.note:
            return self.note
        if self.off_by <= TOLERANCE or self.claimed is None or self.evidence is None:
            return ""
        which = "later" if self.evidence > self.claimed else "earlier"
        z = self.zone
        return (
            f"claims to have handed in at {show(self.claimed, z)}, but its files in {self.source} were written at "
            f"{show(self.evidence, z)}, {span(self.off_by)} {which} (a time a student cannot change): "
            f"graded as handed in at {show(self.evidence, z)}"
        )

    @property
    def flag_only(self) -> bool:
        """The LMS gave no time, only its late flag (``make term`` names these students)."""
        return self.used is None and self.late_flag is not None

    def describe(self) -> str:
        """The time used, and where it came from when that is not the claim."""
        if self.flag_only:
            return f"no hand-in time from the LMS (its download gives none): its late flag says {self.flag_says}"
        if self.used is None:
            return "no hand-in time"
        when = show(self.used, self.zone)
        if self.source == CLAIM:
            return f"handed in {when} ({UNCHECKED}: copied into submitted/ by hand, its timestamp.txt alone)"
        note = ""
        if self.finding and self.claimed is not None:
            note = f" (the evidence in {self.source}; the claim said {show(self.claimed, self.zone)})"
        if self.unchecked:
            note += f" ({UNCHECKED} for {', '.join(self.unchecked)}: copied in by hand)"
        return f"handed in {when}{note}"

    @property
    def flag_says(self) -> str:
        return "late" if self.late_flag else "on time"


def judge(claimed: datetime | None, evidence: datetime | None, source: str, note: str = "") -> HandinTime:
    """The time used: the later of the claim and the evidence, the evidence when the claim is later than it by
    more than TOLERANCE (either alone when the other is missing)."""
    if claimed is not None and evidence is not None and claimed - evidence > TOLERANCE:
        return HandinTime(evidence, claimed, evidence, source, note)
    known = [t for t in (claimed, evidence) if t is not None]
    return HandinTime(max(known) if known else None, claimed, evidence, source, note)


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


def claim_texts(folder: Path) -> tuple[str, str]:
    """An inbound folder's claim as written: the time in its name, and its timestamp.txt ('' if none)."""
    parts = folder.name.rsplit("+", 3)
    name_time = parts[2] if len(parts) == 4 else (parts[-1] if len(parts) == 3 else "")
    stamp = folder / "timestamp.txt"
    said = stamp.read_text(errors="replace")[:100].strip() if stamp.is_file() and not stamp.is_symlink() else ""
    return name_time, said


def inbound_time(folder: Path, siblings: list[Path] = ()) -> HandinTime:  # type: ignore[assignment]
    """One inbound attempt's time: its claim (name, timestamp.txt) no earlier than its change time; a claim the
    same as that of another of ``siblings`` (the student's other attempts) written earlier is a finding."""
    name_time, said = claim_texts(folder)
    h = judge(earliest_claim(name_time, said or None), changed_at(folder), EXCHANGE)
    twin = twin_of(folder, h, siblings)
    return replace(h, note=twin) if twin else h


def twin_of(folder: Path, h: HandinTime, siblings: list[Path]) -> str:
    """The finding for an attempt whose claim is that of an attempt written before it ('' when none)."""
    mine = {t for t in claim_texts(folder) if t}
    for other in siblings:
        if other == folder or not mine & {t for t in claim_texts(other) if t}:
            continue
        then = changed_at(other)
        if then is None or h.evidence is None or h.evidence - then <= timedelta(seconds=1):
            continue
        return (
            f"claims the time of an earlier attempt ({other.name}, written at {show(then, h.zone, True)}): its "
            f"folder's name and timestamp.txt copy that attempt's, but its own files were written at "
            f"{show(h.evidence, h.zone, True)} (a time a student cannot change): graded as handed in at "
            f"{show(h.used or h.evidence, h.zone, True)}"
        )
    return ""


def entry_fields(h: HandinTime) -> dict:
    """What the record of when keeps of a time decided from the evidence (``handin_merge.entry``'s extras)."""
    return {"claimed": h.claimed, "evidence": h.evidence, "note": h.note}


def _from_entry(rec: dict, zone: str) -> HandinTime:
    source = SOURCES.get(rec.get("source", "lms"), LMS)  # a record of before sources were kept: a zip's
    when = parse_time(rec["time"]) if rec.get("time") else None
    claimed = parse_time(rec["claimed"]) if rec.get("claimed") else None
    evidence = parse_time(rec["evidence"]) if rec.get("evidence") else None
    late = rec.get("late") if source == LMS_FLAG else None
    return HandinTime(when, claimed, evidence, source, rec.get("note", ""), late, zone)


def lms_local(rec: dict, zone: str) -> dict:
    """A zip's entry read again in the course's zone of the moment: the zip gives a wall time without a zone,
    which the course takes as its own zone's (the one set now, not the one set when it was collected)."""
    if rec.get("source", "lms") != "lms" or not rec.get("local") or rec.get("zone") == zone:
        return rec
    try:
        wall = datetime.fromisoformat(rec["local"])
    except ValueError:
        return rec
    return {**rec, "time": wall.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}


def rezoned(course, zone: str) -> list[str]:
    """Students whose zip times were read in another zone than the course's now (``make term`` says so)."""
    out = []
    for student, files in read_times(course).items():
        zones = {r.get("zone") for r in files.values() if r.get("source", "lms") == "lms" and r.get("local")}
        if zones - {zone, None}:
            out.append(f"{student} (read as {', '.join(sorted(z for z in zones if z and z != zone))})")
    return out


def student_handin(course, student: str, zone: str | None = None) -> HandinTime:
    """The time of a student's hand-in in ``submitted/``, from the record of when: the newest time of the files it
    holds (with the finding of any of them); no record: the claim in timestamp.txt, "time not checked"."""
    if zone is None:
        from .settings import load  # lazy: settings import tomllib and zoneinfo only here

        zone = load(course).timezone
    folder = course.submitted / student / ASSIGNMENT
    recorded = read_times(course).get(student, {})
    present = (
        {p.name for p in folder.iterdir() if p.is_file() and p.name not in ("timestamp.txt",)}
        if (folder.is_dir())
        else set()
    )
    mine = {f: r for f, r in recorded.items() if f in present}
    if not mine:
        claimed = read_timestamp(folder) if folder.is_dir() else None
        return HandinTime(claimed, claimed, None, CLAIM, zone=zone)
    return recorded_handin(mine, zone, tuple(sorted(f for f in present - set(mine) if f.endswith(".ipynb"))))


def recorded_handin(entries: dict[str, dict], zone: str, unchecked: tuple[str, ...] = ()) -> HandinTime:
    """The time of a hand-in of these files, from their entries in the record of when (file → entry, at least
    one): the newest time (with the finding of any of them), else the LMS's late flag; ``unchecked``: the hand-in's
    notebooks no one recorded."""
    mine = {f: _from_entry(lms_local(r, zone), zone) for f, r in entries.items()}
    timed = [h for h in mine.values() if h.used is not None]
    flagged = [h for h in mine.values() if h.flag_only]
    if timed:
        newest = max(timed, key=lambda h: h.used or datetime.min.replace(tzinfo=UTC))
        others = [h.finding for h in mine.values() if h.finding and h is not newest]
        late = True if any(h.late_flag for h in flagged) else None
        note = newest.note or ("" if newest.finding or not others else others[0])
        return replace(newest, note=note, late_flag=late, unchecked=unchecked)
    late = any(h.late_flag for h in flagged)
    return HandinTime(None, None, None, LMS_FLAG, late_flag=late, zone=zone, unchecked=unchecked)
