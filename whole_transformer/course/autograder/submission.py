"""One submission to grade, as data (``Submission``): its files, their digest, what was found in them before
grading, and the hand-in time the course decided when it took them in.

The files travel as bytes, never paths, so the grading can run in another process or on another machine. A
hand-in is read once, by the constructor of where it is:

- ``from_folder``: a student's folder in ``submitted/`` (put there by ``nbgrader collect``, ``make collect-zip``,
  the grading service, or by hand), its time read back from the record of when (``term/handin_time.py``);
- ``from_exchange``: an attempt in nbgrader's exchange inbound, with the time the service decided for it from the
  attempt's own folder (``service/watch.py``);
- ``from_download``: a student's files as one LMS download held them (``make collect-zip`` keeps what it extracted),
  each file's time the one collect-zip recorded (read back, never decided again).

Symbolic links are never followed (a link could point at the answers), and notebooks over 64 MB are not shipped;
both are findings. The digest of the same files is the same whichever the source, so an attempt the service
grades is recognised when ``make autograde`` finds its files in ``submitted/``, and the other way round.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..core.results import Finding
from ..layout import ASSIGNMENT, Course, content_digest, digest_files
from ..term.handin_merge import downloaded, read_times
from ..term.handin_time import HandinTime, recorded_handin, student_handin

MAX_NOTEBOOK_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Submission:
    """One student's hand-in, as data (see the module doc)."""

    student: str
    files: dict[str, bytes]  # path relative to the student's folder (whole-transformer/…) → content (regular files)
    digest: str  # of every regular file handed in (folder_digest)
    findings: list[Finding] = field(default_factory=list)  # found before grading (links, oversized notebooks)
    handin: HandinTime | None = None  # the time decided when the course took it in; None: nbgrader reads its own

    @property
    def handed_in_at(self) -> datetime | None:
        """The hand-in time the course trusts (aware), or None when it knows none."""
        return self.handin.used if self.handin else None

    @classmethod
    def from_folder(cls, course: Course, student: str) -> Submission:
        """``submitted/<student>/``, its time from the record of when (none without a whole-transformer/ folder)."""
        folder = course.submitted / student
        every = {str(p.relative_to(folder)): p.read_bytes() for p in submission_files(folder)}  # read once
        files = {rel: data for rel, data in every.items() if not _oversized(rel, len(data))}
        handin = student_handin(course, student) if (folder / ASSIGNMENT).is_dir() else None
        return cls(student, files, content_digest(every), _odd(folder), handin)

    @classmethod
    def from_exchange(cls, student: str, folder: Path, handin: HandinTime | None) -> Submission:
        """An attempt in the exchange's inbound ``folder``, laid out as ``submitted/<student>/`` would hold it, with the
        time the service decided for it."""
        every = {f"{ASSIGNMENT}/{p.relative_to(folder)}": p.read_bytes() for p in submission_files(folder)}
        files = {rel: data for rel, data in every.items() if not _oversized(rel, len(data))}
        return cls(student, files, content_digest(files), _odd(folder), handin)

    @classmethod
    def from_download(cls, course: Course, student: str, download: str) -> Submission:
        """The student's files that the LMS download ``download`` (its name in ``downloaded/…/archive/``) brought in,
        as extracted, each file's time as ``make collect-zip`` recorded it."""
        taken = {
            f: rec
            for f, rec in read_times(course).get(student, {}).items()
            if rec.get("from", "").startswith(f"{download}: ")
        }
        if not taken:
            raise ValueError(
                f"no file of {student} in the record of when came from {download} (make collect-zip records each "
                f"file it takes in: {downloaded(course).relative_to(course.root)}/handin-times.json)"
            )
        extracted = downloaded(course) / "extracted" / Path(download).stem
        files = {
            f"{ASSIGNMENT}/{f}": (extracted / rec["from"].split(": ", 1)[1]).read_bytes() for f, rec in taken.items()
        }
        from ..term.settings import load  # lazy: course.toml's zone, only for a download's wall times

        return cls(student, files, content_digest(files), [], recorded_handin(taken, load(course).timezone))

    def unpack(self, folder: Path) -> None:
        """The submission as handed in, rebuilt under ``folder`` from its bytes (nothing written outside it)."""
        folder.mkdir()
        for rel, data in self.files.items():
            p = (folder / rel).resolve()
            if not p.is_relative_to(folder.resolve()):
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)


def submission_files(folder: Path) -> list[Path]:
    """Regular files handed in (never through a symbolic link: a link could point at the answers)."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    out = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = [d for d in dirnames if d != ".ipynb_checkpoints"]
        for name in filenames:
            p = Path(dirpath) / name
            if not p.is_symlink() and p.is_file():
                out.append(p)
    return sorted(out)


def _oversized(name: str | Path, size: int) -> bool:
    """A notebook too large to grade (its file's name and size in bytes)."""
    return str(name).endswith(".ipynb") and size > MAX_NOTEBOOK_BYTES


def _odd(folder: Path) -> list[Finding]:
    """Symbolic links and oversized notebooks in a submission, which are not graded, as findings."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(folder))
            if p.is_symlink():
                out.append(Finding("files", f"{rel!r} is a symbolic link: ignored", "submission"))
            elif p.is_file() and _oversized(p, p.stat().st_size):
                out.append(
                    Finding("files", f"{rel!r} is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: ignored", "submission")
                )
    return out


def folder_digest(folder: Path) -> str:
    """What a student handed in, as one digest: the regular files' paths and contents."""
    return digest_files(submission_files(folder), folder)
