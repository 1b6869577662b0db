"""A local nbgrader exchange for the small course (minicourse.py), driven by real nbgrader commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from whole_transformer.course.layout import ASSIGNMENT, Course, nbgrader_env

from .built import copy_course, release_course
from .minicourse import make_course


def nbgrader(args, cwd, exchange, user="instructor"):
    """``nbgrader <args>`` in ``cwd`` against the exchange at ``exchange``, as ``user`` (a student passes
    ``--student``; the instructor is the login name); fails the test with nbgrader's output if it fails."""
    env = nbgrader_env() if (Path(cwd) / "nbgrader_config.py").exists() else dict(os.environ)
    student = [f"--student={user}"] if user != "instructor" else []  # else nbgrader takes the login name
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args, *student, f"--Exchange.root={exchange}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done


def course_with_exchange(
    tmp_path: Path, toml: str | None = None, notebooks: dict | None = None, released: Path | None = None
) -> tuple[Course, Path]:
    """The small course released (with ``toml`` as its course.toml, if given; ``notebooks``: name → notebook
    instead of the one mini notebook), and a local exchange it is released to. ``released``: the small course as
    released once for the run (the ``released_mini`` fixture), copied instead of released again when it is the
    same course (the one mini notebook, no [points] in course.toml to change it)."""
    if released is not None and notebooks is None and "[points]" not in (toml or ""):
        course = copy_course(released, tmp_path / "course")
        if toml is not None:
            (course.root / "course.toml").write_text(toml)
    else:
        root = make_course(tmp_path / "course", notebooks)
        if toml is not None:
            (root / "course.toml").write_text(toml)
        course = Course(root)
        release_course(course)
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    nbgrader(["release_assignment", ASSIGNMENT, "--force"], course.root, exchange)
    return course, exchange
