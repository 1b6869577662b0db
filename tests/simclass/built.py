"""What the suite builds once per test session and shares: the small course and the real course released, and the
simulated class graded.

pytest-xdist's workers of one run share a temporary root (``shared_root``). Each build is made there once, by the
first worker that needs it, under a file lock (another worker that needs it waits, then reads it), in a folder named
by the digest of what it is made from (``inputs_digest``: source/, the package, nbgrader_config.py, the class's
builders and implementations): a build of other inputs is never taken for it. A build that failed is not tried again
by the next worker, which fails with the first one's error. Tests that only read a build take its folder; a test that
writes into it takes a copy (``copy_course``: a folder copied, milliseconds).

Every release here takes the answer keys from a copy of the package's questions.json (``release_course``): the
package's visible checks' data and mistake table are left alone, not worked out again (about 35 s of CPU each time);
that they are in step is tests/test_term.py's ``test_the_repository_is_in_step``.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import json
import os
import shutil
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from whole_transformer.course.layout import Course

from .expected import Student
from .notebooks import Notebooks

REPO = Path(__file__).resolve().parents[2]
#: what a build is made from (relative to the repository): a change to any file under them is another build
INPUTS = ("source", "whole_transformer", "nbgrader_config.py", "tests/simclass", "tests/implementations")


def release_course(course: Course, log=lambda *a: None):
    """``make release`` for a test's course: answer keys from a copy of the package's questions.json beside the
    course (so the package's data files are neither rewritten nor worked out again); the release folder."""
    from whole_transformer.course.answers import check_data
    from whole_transformer.course.publish.release import release

    keys = course.root.parent / f"{course.root.name}-questions.json"
    if not keys.exists():
        shutil.copy(check_data.QUESTIONS_DATA, keys)
    return release(course, log=log, questions_data=keys)


def copy_course(folder: Path, dest: Path) -> Course:
    """A copy of a built course (``folder``) at ``dest``, for a test that writes into it, with its answer keys."""
    shutil.copytree(folder, dest, symlinks=True)
    keys = folder.parent / f"{folder.name}-questions.json"
    if keys.exists():
        shutil.copy(keys, dest.parent / f"{dest.name}-questions.json")
    return Course(dest)


_DIGEST: list[str] = []


def inputs_digest() -> str:
    """A digest of every file a build is made from (``INPUTS``), worked out once per process."""
    if not _DIGEST:
        h = hashlib.sha256()
        for top in INPUTS:
            path = REPO / top
            files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
            for p in files:
                if "__pycache__" in p.parts or ".ipynb_checkpoints" in p.parts:
                    continue
                h.update(str(p.relative_to(REPO)).encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
        _DIGEST.append(h.hexdigest()[:16])
    return _DIGEST[0]


def shared_root(tmp_path_factory) -> Path:
    """The temporary folder every pytest-xdist worker of this run shares (pytest's own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(tmp_path_factory, name: str, build: Callable[[Path], dict | None]) -> tuple[Path, dict]:
    """``build(folder)`` once per test run, whichever worker needs it first; (the folder, what build returned: a
    dict of JSON data, kept beside it). Another worker waits for it; a failed build fails every test that needs it,
    with its error, and is not tried again."""
    where = shared_root(tmp_path_factory) / "built" / f"{name}-{inputs_digest()}"
    where.parent.mkdir(parents=True, exist_ok=True)
    done, failed = where / "built.json", where.with_name(where.name + ".failed")
    with open(where.with_name(where.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        if not done.exists() and not failed.exists():
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir()
            t0 = time.monotonic()
            try:
                meta = build(where) or {}
            except BaseException:
                failed.write_text(traceback.format_exc())
                raise
            meta["seconds"] = round(time.monotonic() - t0, 1)
            meta["by"] = os.environ.get("PYTEST_XDIST_WORKER", "master")
            done.write_text(json.dumps(meta))
    if failed.exists():
        pytest.fail(f"building {name} failed (once for this run; its error):\n{failed.read_text()[-4000:]}")
    return where, json.loads(done.read_text())


# ---------------------------------------------------------------- the builds
def build_released(folder: Path, real_source: bool) -> dict:
    """The small course (``real_source`` False: tests/simclass/minicourse.py) or the real one, released."""
    from .minicourse import make_course

    course = Course(make_course(folder / "course", real_source=real_source))
    release_course(course)
    return {}


def build_class(folder: Path, released: Path) -> dict:
    """The simulated class (tests/simclass/students.py) handed in to a copy of the released real course, graded by
    ``autograde`` (``WT_CLASS_JOBS`` students at once, default 2) with real nbgrader in the sandbox, then ``grades``,
    ``feedback`` and ``insights``. What the tests check but cannot read from the course is returned: the port of the
    loopback listener the network student must not reach, how many connections it got, and who was graded."""
    from whole_transformer.course.autograder.autograde import autograde
    from whole_transformer.course.reports.feedback import feedback
    from whole_transformer.course.reports.grades import grades
    from whole_transformer.course.reports.insights import insights

    from .loopback import loopback_listener
    from .notebooks import write_submission
    from .students import roster

    course = copy_course(released, folder / "course")
    nbs = Notebooks(course.root)
    lines: list[str] = []
    jobs = int(os.environ.get("WT_CLASS_JOBS", "2"))
    with loopback_listener() as listener:  # reachable from here; the student who tries the network must not reach it
        students = roster(nbs, course.root, port=listener.port)
        for s in students:
            write_submission(course.root, s.name, s.notebooks, raw=s.raw, folder=s.folder)
        t0 = time.monotonic()
        run = autograde(course, jobs=jobs, log=lines.append)
        wall = time.monotonic() - t0
        reached = listener.accepted
    t1 = time.monotonic()
    grades(course, log=lines.append)
    feedback(course, log=lines.append)
    insights(course, log=lines.append)
    return {
        "port": listener.port,
        "listener_reached": reached,
        "graded": run.graded,
        "students": len(students),
        "jobs": jobs,
        "grading_seconds": round(wall, 1),
        "reports_seconds": round(time.monotonic() - t1, 1),
        "log": lines,
    }


@dataclass
class GradedClass:
    """The simulated class as graded once for the run (``build_class``): its course (read it; copy it to write), its
    notebooks, the students as the roster has them, and what the build returned (``meta``)."""

    course: Course
    nbs: Notebooks
    students: dict[str, Student]
    meta: dict

    @classmethod
    def read(cls, root: Path, meta: dict) -> GradedClass:
        from .students import roster

        nbs = Notebooks(root)
        return cls(Course(root), nbs, {s.name: s for s in roster(nbs, root, port=meta["port"])}, meta)

    def detail(self) -> dict[tuple[str, str], dict]:
        """grades-detail.csv's rows by (student, grade_id)."""
        with open(self.course.root / "grades-detail.csv") as f:
            return {(r["student_id"], r["grade_id"]): r for r in csv.DictReader(f)}
