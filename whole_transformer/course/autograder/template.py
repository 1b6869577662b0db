"""The assignment as nbgrader knows it (``Template``), built once per run from source/.

``build_template`` gives a gradebook that holds the assignment, the released notebooks and the points
of every test cell: a snapshot of the course gradebook when it was stamped from source/ as it is now,
else the assignment generated in a private course (the course gradebook is then brought up to date
from it, ``gradebook.py``). ``assignment_fingerprint`` is what a grade depends on, notebook by notebook;
``changed_notebooks`` compares two of them, so that a change to one notebook regrades only those who
handed it in.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..gradebook import ensure_course_gradebook, grade_cells_of, private_course_config, source_digest, stamp_gradebook
from ..layout import ASSIGNMENT, Course, digest_files, run_nbgrader, sqlite_url


@dataclass
class Template:
    """The assignment as nbgrader knows it, built once per run from source/."""

    folder: Path
    db: Path  # a SQLite gradebook that knows the assignment (private grading copies start from it)
    release: Path  # released notebooks students started from
    notebooks: list[str]
    fingerprint: str
    grade_cells: dict[str, list[tuple[str, float]]]  # notebook → [(grade_id, max_score)]


def build_template(course: Course, work: Path, log=print) -> Template:
    """The assignment as nbgrader knows it: its gradebook and release, from source/.

    If the course gradebook is a SQLite file generated from source/ as it is now (``make release``
    or an earlier autograde stamped it), a snapshot of it is used; otherwise the assignment is
    generated in a private course and the course gradebook is brought up to date from it.
    """
    folder = work / "template"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    names = sorted(p.stem for p in course.source.glob("*.ipynb"))
    complete_release = all((course.release / f"{n}.ipynb").exists() for n in names)
    try:
        stamp = json.loads((course.state / "assignment.json").read_text()).get("source")
    except (OSError, json.JSONDecodeError):
        stamp = None
    if course.sqlite and complete_release and course.gradebook.exists() and stamp == source_digest(course):
        db = folder / "gradebook.db"
        shutil.copy2(course.gradebook, db)
        try:
            cells = grade_cells_of(sqlite_url(db))
        except Exception:  # noqa: BLE001 - the gradebook lacks the assignment: generate it
            cells = None
        if cells and sorted(cells) == names:
            return Template(
                folder, db, course.release, names, assignment_fingerprint(course, course.release, names), cells
            )
    (folder / "source").mkdir(parents=True)
    shutil.copytree(course.source, folder / "source" / ASSIGNMENT, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    private_course_config(folder, course.root / "nbgrader_config.py")
    done = run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], folder, log=folder / "nbgrader.log")
    db = folder / "gradebook.db"
    if done.returncode != 0 or not db.exists():
        tail = (folder / "nbgrader.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"nbgrader generate_assignment failed on source/:\n{tail}")
    release = course.release if complete_release else folder / "release" / ASSIGNMENT
    template = Template(
        folder, db, release, names, assignment_fingerprint(course, release, names), grade_cells_of(sqlite_url(db))
    )
    ensure_course_gradebook(course, template.db, template.grade_cells, template.folder, log)
    stamp_gradebook(course)
    return template


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
