"""The assignment as a grader needs it (``Assignment``): data that travels with every submission, to a thread of
this process or a Dask worker on another machine, so that a grader needs no course folder.

``prepare`` builds it once per run from source/: a gradebook that knows the assignment (a snapshot of the course
gradebook when it was stamped from source/ as it is now, else the assignment generated in a private course, the
course gradebook then brought up to date from it unless the caller leaves the course alone), the released
notebooks and the earlier releases kept, the points of every test cell, the course's nbgrader_config.py and what
it gives the sandboxed kernels, course.toml's ``[partial_credit]``, and the fingerprint: what a grade depends on,
notebook by notebook. ``changed_notebooks`` compares two fingerprints, so that a change to one notebook regrades
only those who handed it in.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..answers.diagnose import partial_credit_settings
from ..gradebook import ensure_course_gradebook, grade_cells_of, private_course_config, source_digest, stamp_gradebook
from ..layout import ASSIGNMENT, Course, digest_files, nbgrader_config, run_nbgrader, sqlite_url
from ..publish.release import release_history


@dataclass(frozen=True)
class Assignment:
    """What a grader needs of the assignment, as data (about 250 kB): see the module doc."""

    fingerprint: str  # what a grade depends on (assignment_fingerprint)
    notebooks: list[str]
    grade_cells: dict[str, list[tuple[str, float]]]  # notebook → [(grade_id, max_score)]
    gradebook: bytes  # a SQLite gradebook that knows the assignment (each grading's private course starts from it)
    release: dict[str, str]  # notebook name → released notebook (JSON text)
    config: str  # the course's nbgrader_config.py
    kernels: dict | None  # warm_kernels.prestart's settings from that config; None: no warm kernels
    history: dict[str, list[str]] = field(default_factory=dict)  # notebook → earlier releases kept (oldest first)
    partial_credit: dict = field(default_factory=dict)  # course.toml's [partial_credit] (diagnose.py)

    @property
    def max_score(self) -> float:
        return sum(ms for cells in self.grade_cells.values() for _, ms in cells)

    def grade_ids(self, notebook: str) -> list[str]:
        return [gid for gid, _ in self.grade_cells.get(notebook, [])]


def prepare(course: Course, work: Path, log=print, *, update_course: bool = True) -> Assignment:
    """The assignment as source/ defines it now (see the module doc), built in ``work/assignment``;
    ``update_course=False`` never writes the course gradebook (``grade-one``)."""
    folder = work / "assignment"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    names = sorted(p.stem for p in course.source.glob("*.ipynb"))
    complete_release = all((course.release / f"{n}.ipynb").exists() for n in names)
    db, release = _stamped_snapshot(course, folder, names) if complete_release else (None, course.release)
    generated = db is None
    if db is None:
        db, release = _generated(course, folder, complete_release, log)
    cells = grade_cells_of(sqlite_url(db))
    if generated and update_course:
        ensure_course_gradebook(course, db, cells, folder, log)
        stamp_gradebook(course)
    config = course.root / "nbgrader_config.py"
    history: dict[str, list[str]] = {}
    for kept in release_history(course):
        for n, text in kept.items():
            history.setdefault(n, []).append(text)
    return Assignment(
        assignment_fingerprint(course, release, names),
        names,
        cells,
        db.read_bytes(),
        {n: (release / f"{n}.ipynb").read_text(encoding="utf-8") for n in names},
        config.read_text(encoding="utf-8"),
        kernel_settings(course.root),
        history,
        partial_credit_settings(course.root),
    )


def _stamped_snapshot(course: Course, folder: Path, names: list[str]) -> tuple[Path | None, Path]:
    """A copy of the course gradebook if it is a SQLite file generated from source/ as it is now (``make release``
    or an earlier run stamped it) and knows every notebook: (its copy, the release), else (None, the release)."""
    try:
        stamp = json.loads((course.state / "assignment.json").read_text()).get("source")
    except (OSError, json.JSONDecodeError):
        stamp = None
    if not (course.sqlite and course.gradebook.exists() and stamp == source_digest(course)):
        return None, course.release
    db = folder / "gradebook.db"
    shutil.copy2(course.gradebook, db)
    try:
        cells = grade_cells_of(sqlite_url(db))
    except Exception:  # noqa: BLE001 - the gradebook lacks the assignment: generate it
        cells = None
    return (db if cells and sorted(cells) == names else None), course.release


def _generated(course: Course, folder: Path, complete_release: bool, log) -> tuple[Path, Path]:
    """The assignment generated from source/ in a private course: (its gradebook, the release to grade against)."""
    (folder / "source").mkdir(parents=True)
    shutil.copytree(course.source, folder / "source" / ASSIGNMENT, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    private_course_config(folder, course.root / "nbgrader_config.py")
    done = run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], folder, log=folder / "nbgrader.log")
    db = folder / "gradebook.db"
    if done.returncode != 0 or not db.exists():
        tail = (folder / "nbgrader.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"nbgrader generate_assignment failed on source/:\n{tail}")
    return db, course.release if complete_release else folder / "release" / ASSIGNMENT


def assignment_fingerprint(course: Course, release: Path, names: list[str]) -> str:
    """What a grade depends on: the grading config (nbgrader_config.py) for every notebook, and each
    notebook's source and release (its tests, expected values and points): ``config|name=digest;…``,
    so that a change to one notebook regrades only those who handed that notebook in
    (``changed_notebooks``)."""
    config = [p for p in (course.root / "nbgrader_config.py",) if p.is_file()]
    per = {
        n: digest_files([course.source / f"{n}.ipynb", release / f"{n}.ipynb"], course.root)[:20] for n in sorted(names)
    }
    return f"{digest_files(config, course.root)[:20]}|" + ";".join(f"{n}={d}" for n, d in per.items())


def changed_notebooks(old: str, new: str) -> set[str] | None:
    """The notebooks whose grading differs between two fingerprints; None: all of them (the grading
    config changed, or a fingerprint of an older form)."""

    def parts(fp: str):
        common, sep, rest = fp.partition("|")
        if not sep:
            return None
        return common, dict(item.split("=", 1) for item in rest.split(";") if "=" in item)

    a, b = parts(old), parts(new)
    if a is None or b is None or a[0] != b[0]:
        return None
    return {n for n in set(a[1]) | set(b[1]) if a[1].get(n) != b[1].get(n)}


def kernel_settings(root: Path) -> dict | None:
    """What the nbgrader_config.py of the course folder ``root`` gives the sandboxed kernels (``SandboxExecute``), as
    ``warm_kernels.prestart``'s settings, or None if it turns warm kernels off: read once here, so that
    a grader can start their fork server before nbgrader has read the config (``grade.py``)."""
    from ..plugins.execute import SandboxExecute  # lazy: nbgrader and jupyter_client, for a run that prepares one

    ex = SandboxExecute(config=nbgrader_config(root))
    if not ex.warm_kernels:
        return None
    return {"memory": ex.memory_limit, "file_size": ex.file_size_limit, "headless": ex.headless_labs}
