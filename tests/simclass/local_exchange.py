"""A local nbgrader exchange for the small course (minicourse.py), driven by real nbgrader commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from whole_transformer.course.layout import ASSIGNMENT, Course, nbgrader_env
from whole_transformer.course.publish.release import release

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


def course_with_exchange(tmp_path: Path, toml: str | None = None, notebooks: dict | None = None) -> tuple[Course, Path]:
    """The small course released (with ``toml`` as its course.toml, if given; ``notebooks``: name → notebook
    instead of the one mini notebook), and a local exchange it is released to."""
    root = make_course(tmp_path / "course", notebooks)
    if toml is not None:
        (root / "course.toml").write_text(toml)
    course = Course(root)
    release(course, log=lambda *a: None)
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    nbgrader(["release_assignment", ASSIGNMENT, "--force"], root, exchange)
    return course, exchange
