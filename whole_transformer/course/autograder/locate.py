"""The locate stage: which file a student handed in is which notebook of the assignment.

The expected names come from the assignment; a notebook handed in under another name
(``03-one-word-at-a-time (1).ipynb``, a sub-folder) is recognised by its nbgrader cells and graded
as the notebook it is, with a finding. A file that is not valid JSON or not a notebook cannot be
graded (``read_notebook`` says why). Symbolic links are never followed (a link could point at the
answers), and notebooks over 64 MB are not shipped. ``make_job`` packs a student's files as data
(bytes, never paths), so the grading can run in another process or on another machine.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import nbformat

from ..cells import grade_ids
from ..core.results import Finding
from ..layout import ASSIGNMENT, Course, digest_files
from .template import Template


@dataclass
class Job:
    """One student's grading, as data: the files handed in travel with the task."""

    student: str
    submission: str  # digest of the files handed in (submission_digest)
    assignment: str  # fingerprint of the assignment (Template.fingerprint)
    files: dict[str, bytes]  # path relative to submitted/<student>/ → content (regular files only)
    findings: list[Finding]  # found before grading (symbolic links, oversized notebooks)


MAX_NOTEBOOK_BYTES = 64 * 2**20


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


def odd_files(folder: Path) -> list[str]:
    """Symbolic links and oversized notebooks in a submission, which are not graded."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(folder))
            if p.is_symlink():
                out.append(f"{rel!r} is a symbolic link: ignored")
            elif p.suffix == ".ipynb" and p.is_file() and p.stat().st_size > MAX_NOTEBOOK_BYTES:
                out.append(f"{rel!r} is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: ignored")
    return out


def submission_digest(folder: Path) -> str:
    """What a student handed in, as one digest: the regular files' paths and contents."""
    return digest_files(submission_files(folder), folder)


def read_notebook(path: Path):
    """(notebook, None) or (None, why it cannot be graded)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        return None, f"{path.name} is not UTF-8 text ({e.reason}); it cannot be graded"
    except OSError as e:
        return None, f"{path.name} could not be read ({e.strerror})"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"{path.name} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); it cannot be graded"
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None, f"{path.name} is JSON but not a notebook (no list of cells); it cannot be graded"
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as e:  # noqa: BLE001 - nbformat raises many kinds
        return None, f"{path.name} is not a readable notebook ({type(e).__name__}: {e}); it cannot be graded"
    return nb, None


def locate(folder: Path, expected: list[str], release_ids: dict[str, set[str]]):
    """{notebook name: (path, finding or None)} for the files a student handed in.

    A file under its own name is taken as is. Any other notebook file (renamed, a copy, in a
    sub-folder) is matched to a missing notebook by the grade ids only that notebook has, or else
    by a very similar name; the best matches are taken first.
    """
    canonical = folder / ASSIGNMENT
    found: dict[str, tuple[Path, str | None]] = {}
    files = [p for p in submission_files(folder) if p.suffix == ".ipynb" and p.stat().st_size <= MAX_NOTEBOOK_BYTES]
    for name in expected:
        p = canonical / f"{name}.ipynb"
        if p in files:
            found[name] = (p, None)
    others = [p for p in files if all(p != f for f, _ in found.values())]
    wanted = [n for n in expected if n not in found]
    if not others or not wanted:
        return found
    counts: dict[str, int] = {}
    for ids in release_ids.values():
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
    distinctive = {n: {i for i in release_ids.get(n, set()) if counts[i] == 1} for n in wanted}
    pairs = []
    for p in others:
        nb, _ = read_notebook(p)
        ids = grade_ids(nb) if nb is not None else set()
        for n in wanted:
            overlap = len(ids & distinctive[n]) / max(1, len(distinctive[n]))
            similar = difflib.SequenceMatcher(None, p.stem.lower(), n.lower()).ratio()
            if overlap > 0 or similar >= 0.8:
                pairs.append((2 * overlap + similar, str(p), p, n))
    for _, _, p, n in sorted(pairs, reverse=True):
        if n in found or any(p == f for f, _ in found.values()):
            continue
        found[n] = (p, f"notebook handed in as {str(p.relative_to(folder))!r}; graded as {n}.ipynb")
    return found


def make_job(course: Course, student: str, template: Template) -> Job:
    folder = course.submitted / student
    files = {}
    for p in submission_files(folder):
        if p.suffix == ".ipynb" and p.stat().st_size > MAX_NOTEBOOK_BYTES:
            continue  # reported by odd_files, never shipped
        files[str(p.relative_to(folder))] = p.read_bytes()
    findings = [Finding("files", odd, "submission") for odd in odd_files(folder)]
    return Job(student, submission_digest(folder), template.fingerprint, files, findings)


def unpack(job: Job, folder: Path) -> None:
    """The submission as handed in, rebuilt under ``folder`` from the bytes that came with the job."""
    folder.mkdir()
    for rel, data in job.files.items():
        p = (folder / rel).resolve()
        if not p.is_relative_to(folder.resolve()):
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
