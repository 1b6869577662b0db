"""The instructor's commands run in the course's own environment, whichever ``python`` started them.

The docs write a command as ``python -m whole_transformer.course in-step``. Started by a Python that
lacks the instructor's packages (nbgrader; ``make venv`` installs them into ``.venv``), ``instructor_python``
starts the same command again with the course's ``.venv/bin/python`` and says so; with no such
environment it stops with one line saying what to run, instead of a traceback.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

NEEDED = ("nbgrader", "nbformat")


def instructor_python(argv: list[str], root: str | None = None) -> None:
    """Return if this Python has what the commands need; else re-run them with .venv's, or exit saying why."""
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if not missing:
        return
    here = Path(root or ".").resolve()
    for base in (here, Path(__file__).resolve().parents[2]):
        venv = base / ".venv" / "bin" / "python"
        if venv.is_file() and Path(sys.prefix).resolve() != (base / ".venv").resolve():  # not already in it
            print(f"({sys.executable} lacks {', '.join(missing)}: running this with {venv})", file=sys.stderr)
            sys.stderr.flush()
            os.execv(str(venv), [str(venv), "-m", "whole_transformer.course", *argv])
    sys.exit(
        f"error: {sys.executable} lacks {', '.join(missing)}, which the instructor's commands need, and there is "
        "no .venv here; run make venv, then .venv/bin/python -m whole_transformer.course "
        + " ".join(argv or ["--help"])
        + " (or the make target of the command)"
    )
