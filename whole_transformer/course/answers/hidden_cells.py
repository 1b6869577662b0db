"""The hidden test cells of source/: generated from the cases of ``hidden_tests.py`` (an exercise) or from a
solution cell (a question), and kept in step.

``test_cell_source`` writes a test cell's whole source; ``out_of_sync`` names the cells that differ from it,
``write`` (``make release``) rewrites them. A cell is in step when it is that text, or differs from it only in
expected floats that lie within 1/STEP of their tolerance (``core/expected.in_step``: another CPU rounds a
float's last bits otherwise, and one in thousands of values lands on the other side of its rounding), so a
committed course is in step on any machine and keeps its bytes. A generated cell edited by hand is not
overwritten: ``write`` refuses, naming the place to make the change instead (``HandEdited``, ``hand_edited``).
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from whole_transformer.questions import QUESTIONS

from ..cells import cell_source, grade_id, is_test, tracked_id
from ..core.expected import in_step, split_expected
from .hidden_parts import (
    HEADER,
    HandEdited,
    exercise_hidden,
    is_hand_edited,
    question_hidden,
    solution_value,
    stamped,
)
from .hidden_tests import CASES

__all__ = [
    "HandEdited",
    "hand_edited",
    "home_of",
    "in_step_cell",
    "out_of_sync",
    "stored_expected",
    "test_cell_source",
    "write",
]


def home_of(test_id: str, notebook: str = "") -> str:
    """Where the instructor edits a test cell's cases (an exercise) or its answer (a question)."""
    name = test_id.removeprefix("test_")
    if name in CASES:
        module = CASES[name].__module__.rsplit(".", 1)[-1]  # hidden_tests, or the module it takes them from
        return f"whole_transformer/course/answers/{module}.py ({CASES[name].__name__})"
    return f"the solution cell {name} of source/whole-transformer/{notebook or 'its notebook'}"


def test_cell_source(test_id: str, solutions: dict[str, str], notebook: str = "") -> str:
    """The whole source of a graded test cell: the visible check, then the hidden part."""
    name = test_id.removeprefix("test_")
    if name in CASES:
        body = f'check("{name}")\n' + exercise_hidden(name, CASES[name]())
    else:
        body = f'check("{name}")\n' + question_hidden(name, solution_value(solutions[name], name))
    return stamped(body, home_of(test_id, notebook))


def _generated(test_id: str) -> bool:
    """A test cell this module writes: one of the course's exercises or questions (a course folder
    with other notebooks keeps its own tests as they are)."""
    name = test_id.removeprefix("test_")
    return name in CASES or name in QUESTIONS


def _notebooks(source: Path):
    for path in sorted(source.glob("*.ipynb")):
        yield path, nbformat.read(path, as_version=4)


def _planned(source: Path):
    """(path, notebook, [(cell, new source)]) for every source notebook."""
    for path, nb in _notebooks(source):
        solutions = {gid: cell_source(c) for c in nb.cells if (gid := grade_id(c)) and not is_test(c)}
        changes = [
            (c, test_cell_source(tracked_id(c), solutions, path.name))
            for c in nb.cells
            if is_test(c) and _generated(tracked_id(c))
        ]
        yield path, nb, changes


def in_step_cell(old: str, new: str) -> bool:
    """A test cell's source ``old`` is the generated ``new``: the same text, or, in a cell not edited by hand,
    the same text but for its stamp and expected floats each within 1/STEP of its tolerance."""
    if old == new:
        return True
    if is_hand_edited(old):
        return False
    old_rest, old_payload = split_expected(HEADER.sub("", old, count=1))
    new_rest, new_payload = split_expected(HEADER.sub("", new, count=1))
    return (
        old_payload is not None
        and new_payload is not None
        and old_rest == new_rest
        and in_step(old_payload, new_payload)
    )


def out_of_sync(source: Path) -> list[str]:
    """The grade_ids of test cells whose source is not what this module generates (``in_step_cell``)."""
    return [
        tracked_id(c)
        for _, _, changes in _planned(source)
        for c, new in changes
        if not in_step_cell(cell_source(c), new)
    ]


def stored_expected(source: Path) -> dict[str, dict]:
    """name → the EXPECTED payload of its generated test cell in ``source``, as the grader reads it."""
    out = {}
    for _, nb in _notebooks(source):
        for c in nb.cells:
            if is_test(c) and _generated(tracked_id(c)):
                payload = split_expected(cell_source(c))[1]
                if payload is not None:
                    out[tracked_id(c).removeprefix("test_")] = payload
    return out


def hand_edited(source: Path) -> list[tuple[str, str, str]]:
    """(notebook file, grade_id, where to edit) of every generated test cell edited by hand."""
    return [
        (path.name, tracked_id(c), home_of(tracked_id(c), path.name))
        for path, nb in _notebooks(source)
        for c in nb.cells
        if is_test(c) and _generated(tracked_id(c)) and is_hand_edited(cell_source(c))
    ]


def write(source: Path, discard: bool = False) -> list[str]:
    """Rewrite the test cells of the source notebooks; returns the grade_ids changed. Raises
    ``HandEdited`` if a cell was edited by hand (unless ``discard``: the edits are thrown away)."""
    edited = hand_edited(source)
    if edited and not discard:
        raise HandEdited(edited)
    changed = []
    for path, nb, changes in _planned(source):
        touched = False
        for c, new in changes:
            if not in_step_cell(cell_source(c), new):  # a cell in step keeps its bytes
                c.source = new
                changed.append(tracked_id(c))
                touched = True
        if touched:
            nbformat.write(nb, path)
    return changed
