"""What the student's side reads from its environment, each read here and nowhere else.

Each variable is set by the course for a kernel it runs (or by nbgrader), never by a student:

- ``NBGRADER_EXECUTION``: nbgrader's own, ``autograde`` or ``validate`` while it runs the notebook;
- ``WT_LABS_HEADLESS``: the labs build no widgets and train nothing (``make autograde`` sets it);
- ``WT_YOUR_MODEL_DIR``: where the student's own model is saved (the lecture build and the tests give
  their runs a folder of their own).

The course side's variables are read in ``whole_transformer/course/env_vars.py``; docs/code.md has the
table of all of them. ``flag`` is how a yes/no variable is read:

>>> import os
>>> os.environ["WT_EXAMPLE"] = "Yes"
>>> flag("WT_EXAMPLE")
True
>>> os.environ["WT_EXAMPLE"] = "off"
>>> flag("WT_EXAMPLE", default=True)
False
>>> del os.environ["WT_EXAMPLE"]
>>> flag("WT_EXAMPLE", default=True)
True
"""

from __future__ import annotations

import os

YES = frozenset({"1", "yes", "true", "on"})
NO = frozenset({"0", "no", "false", "off", "none"})

NBGRADER_EXECUTION = "NBGRADER_EXECUTION"
LABS_HEADLESS = "WT_LABS_HEADLESS"
YOUR_MODEL_DIR = "WT_YOUR_MODEL_DIR"


def flag(name: str, default: bool = False) -> bool:
    """``name`` read as yes (1, yes, true, on) or no (0, no, false, off, none), any case; ``default``
    when it is unset, empty or anything else."""
    value = os.environ.get(name, "").strip().lower()
    if value in YES:
        return True
    if value in NO:
        return False
    return default


def nbgrader_execution() -> str:
    """What nbgrader is doing with this notebook: ``autograde``, ``validate``, or "" (not running it)."""
    return os.environ.get(NBGRADER_EXECUTION, "")


def labs_headless() -> bool:
    """True when nothing will display the labs (``WT_LABS_HEADLESS`` set, as while autograding)."""
    return flag(LABS_HEADLESS)


def your_model_dir() -> str | None:
    """The folder ``WT_YOUR_MODEL_DIR`` names for the student's own model, if set (else the kernel's folder)."""
    return os.environ.get(YOUR_MODEL_DIR) or None
