"""Correct and wrong implementations of the four graded exercises, one plain .py file each.
# ruff: noqa: F821 (np and softmax are the notebook's)

A file is exactly what a student could write in the exercise's solution cell: one function
definition, using the notebook's ``np`` and ``softmax``. Its name says what it is::

    <exercise>__<correct|wrong>__<name>.py      e.g. greedy_decode__wrong__eos_dropped.py

and its first lines say it again, plus, for a wrong one, the words the visible check must say::

    # exercise: greedy_decode · verdict: wrong · mistake: break before append, so <eos> is dropped
    # check says: <eos> is missing

A correct implementation must get every point of its exercise; a wrong one must lose them all
(the exercise has one graded test cell). The tests here run the notebook's own cells with each
file in place of the solution (``grade``); the simulated class of the autograder tests builds
submissions from the same files (``solution_cell`` tells which cell to replace).

``hidden_tests.py`` generates the hidden part of each exercise's test cell, with every expected
value worked out by the reference and written as a literal (``--write`` updates the notebooks).
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SOURCE = ROOT / "source" / "whole-transformer"

#: The notebook of each exercise; the solution cell's grade_id is the exercise's name and its
#: graded test cells have grade_ids that start with test_<exercise>.
NOTEBOOK_OF = {
    "next_token": "03-one-word-at-a-time.ipynb",
    "greedy_decode": "03-one-word-at-a-time.ipynb",
    "make_xy": "04-how-it-learned.ipynb",
    "masked_loss": "04-how-it-learned.ipynb",
}
#: The locked cells that run before any student code (imports; PAD, EOS, EQ and softmax).
SETUP_CELLS = ("imports", "constants")


@dataclass(frozen=True)
class Implementation:
    exercise: str
    verdict: str  # "correct" or "wrong"
    name: str
    path: Path
    check_says: str | None  # for a wrong one: words the visible check's message must contain

    @property
    def source(self) -> str:
        return self.path.read_text()

    @property
    def correct(self) -> bool:
        return self.verdict == "correct"

    @property
    def id(self) -> str:
        return self.path.stem


def implementations(exercise: str | None = None, verdict: str | None = None) -> list[Implementation]:
    """Every implementation file, optionally only those of one exercise and/or one verdict."""
    out = []
    for path in sorted(p for p in HERE.glob("*.py") if p.stem.count("__") == 2 and not p.stem.startswith("_")):
        ex, ver, name = path.stem.split("__")
        if ex not in NOTEBOOK_OF or ver not in ("correct", "wrong"):
            raise ValueError(f"{path.name}: expected <exercise>__<correct|wrong>__<name>.py")
        says = None
        for line in path.read_text().splitlines():
            if line.startswith("# check says:"):
                says = line.split(":", 1)[1].strip()
        if (exercise is None or ex == exercise) and (verdict is None or ver == verdict):
            out.append(Implementation(ex, ver, name, path, says))
    return out


def notebook_cells(notebook: str) -> dict[str, dict]:
    """The cells of a source notebook that carry a grade_id, by grade_id (source, points)."""
    nb = json.loads((SOURCE / notebook).read_text())
    cells = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta and meta.get("grade_id"):
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cells[meta["grade_id"]] = {"source": src, "points": meta.get("points", 0), "grade": meta.get("grade"),
                                       "solution": meta.get("solution"), "cell_type": cell["cell_type"]}
    return cells


def solution_cell(exercise: str) -> tuple[str, str]:
    """(notebook file name, grade_id of the solution cell) of an exercise."""
    return NOTEBOOK_OF[exercise], exercise


def graded_cells(exercise: str) -> dict[str, dict]:
    """The graded test cells of an exercise, by grade_id, in notebook order."""
    cells = notebook_cells(NOTEBOOK_OF[exercise])
    return {gid: c for gid, c in cells.items() if c["grade"] and gid.startswith(f"test_{exercise}")}


@dataclass
class Graded:
    points: float
    max_points: float
    output: str  # what the cells printed (the visible check's message)
    errors: dict[str, str]  # grade_id → the error that cost the points
    namespace: dict  # the notebook's globals afterwards


def grade(exercise: str, solution_source: str, namespace_extra: dict | None = None) -> Graded:
    """Run the notebook's setup cells, then ``solution_source`` as the solution cell, then the
    exercise's graded test cells, in one fresh namespace, as nbgrader would in a kernel: a test
    cell that raises scores 0, one that does not scores its points."""
    cells = notebook_cells(NOTEBOOK_OF[exercise])
    ns: dict = {"__name__": "__main__"}
    out = io.StringIO()
    errors: dict[str, str] = {}
    points = max_points = 0.0
    with contextlib.redirect_stdout(out):
        for gid in SETUP_CELLS:
            exec(compile(cells[gid]["source"], f"<{gid}>", "exec"), ns)
        if namespace_extra:
            ns.update(namespace_extra)
        try:
            exec(compile(solution_source, f"<{exercise}>", "exec"), ns)
        except Exception as e:  # a solution cell that fails leaves the function undefined
            errors[exercise] = f"{type(e).__name__}: {e}"
        for gid, cell in graded_cells(exercise).items():
            max_points += cell["points"]
            try:
                exec(compile(cell["source"], f"<{gid}>", "exec"), ns)
            except Exception as e:
                errors[gid] = f"{type(e).__name__}: {e}"
            else:
                points += cell["points"]
    return Graded(points, max_points, out.getvalue(), errors, ns)
