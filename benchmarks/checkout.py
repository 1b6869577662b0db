"""The checkout the benchmarks measure: its folders, the course's notebooks, the simulated class of its test
suite (tests/simclass/), and its course command run as an instructor runs it."""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from whole_transformer.course.layout import ASSIGNMENT, checkout_env

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "source" / ASSIGNMENT
NOTEBOOKS = ("01-whole-machine.ipynb", "02-microscope.ipynb", "03-one-word-at-a-time.ipynb", "04-how-it-learned.ipynb")
TESTS_DIR = ROOT / "tests"  # the simulated class of the course's test suite is tests/simclass/


def tests_importable() -> None:
    """tests/ on sys.path, as pytest has it (``pythonpath`` in pyproject.toml)."""
    if str(TESTS_DIR) not in sys.path:
        sys.path.insert(0, str(TESTS_DIR))


def class_generator():
    """(make_course, Notebooks, write_submission, roster) from tests/simclass/."""
    tests_importable()
    # lazy: tests/ is importable only now; the simulated class is for the groups that grade
    from simclass.minicourse import make_course
    from simclass.notebooks import Notebooks, write_submission
    from simclass.students import roster

    return make_course, Notebooks, write_submission, roster


def released(root: Path) -> None:
    """A course folder of the benchmarks released as ``make release`` does, with answer keys of its own (a copy of
    the package's, beside it), so that the package's visible checks' data and mistake table, which a course made from
    source/ leaves as they are, are not worked out again (about 35 s of CPU, measured by no row)."""
    tests_importable()
    from simclass.built import release_course  # lazy: tests/ is importable only now

    from whole_transformer.course.layout import Course

    release_course(Course(root))


@functools.cache
def _built() -> Path:
    """The course built from source/ and released (``released``), once per run of the benchmarks, in a temporary
    folder removed when the run ends."""
    tmp = Path(tempfile.mkdtemp(prefix="wt-bench-built-"))
    atexit.register(shutil.rmtree, tmp, True)
    base = class_generator()[0](tmp / "course", real_source=True)
    released(base)
    return base


def released_copy(dest: Path) -> Path:
    """A copy at ``dest`` of the course built from source/ and released (``_built``): each group that needs one takes
    a copy (milliseconds) instead of building its own (about 7 s of CPU each, five of them in a run)."""
    tests_importable()
    from simclass.built import copy_course  # lazy: tests/ is importable only now

    return copy_course(_built(), dest).root


def course_cli(root: Path, *args: str, timeout: float = 1800, preexec_fn=None) -> tuple[float, str]:
    """Run `python -m whole_transformer.course --root ROOT ARGS` as an instructor does; (seconds, output).
    ``preexec_fn`` runs in the child before the command (the service group's CPU meter puts it in its cgroup)."""
    env = checkout_env()
    env.pop("NBGRADER_EXECUTION", None)
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "whole_transformer.course", "--root", str(root), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec_fn,
    )
    seconds = time.perf_counter() - t
    out = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        tail = " ".join(out.strip().splitlines()[-3:])[-300:]
        raise RuntimeError(f"`course {' '.join(args)}` exited with {done.returncode}: {tail}")
    return seconds, out
