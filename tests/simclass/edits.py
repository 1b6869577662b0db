"""The changes a simulated student makes to a notebook, one builder each (tests/simclass/students.py's table).

A builder returns an ``Edit``: a function of the notebook and the ``Materials`` the class is made from
(hand_ins.py), which changes the notebook in place. Cells are found by their nbgrader grade_id.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import nbformat.v4 as nbf

from whole_transformer.course.cells import grade_id as gid

from .notebooks import cell, set_answer

if TYPE_CHECKING:
    from .hand_ins import Materials

Edit = Callable[[Any, "Materials"], object]


def answer(grade_id: str, source: str) -> Edit:
    """The answer cell ``grade_id`` says ``source``."""
    return lambda nb, m: set_answer(nb, grade_id, source)


def wrong_answer(exercise: str) -> Edit:
    """The exercise answered with the first wrong implementation of tests/implementations/."""
    return lambda nb, m: set_answer(nb, exercise, m.wrong[exercise])


def tamper(exercise: str, code: str) -> Edit:
    """The exercise's first wrong implementation, after ``code`` that tampers with the kernel."""
    return lambda nb, m: set_answer(nb, exercise, code + "\n\n" + m.wrong[exercise])


def append(grade_id: str, code: str) -> Edit:
    """``code`` added at the end of cell ``grade_id``, after what it holds."""

    def edit(nb, m):
        c = cell(nb, grade_id)
        c.source = c.source + "\n" + code

    return edit


def insert_after(grade_id: str, code: str) -> Edit:
    """A new code cell of the student's own, holding ``code``, right after cell ``grade_id``."""

    def edit(nb, m):
        idx = next(i for i, c in enumerate(nb.cells) if gid(c) == grade_id)
        nb.cells.insert(idx + 1, nbf.new_code_cell(code))

    return edit


def insert_with_paths(grade_id: str, template: str) -> Edit:
    """``insert_after`` with the course's paths and the loopback listener's port filled in ``template``."""
    return lambda nb, m: insert_after(grade_id, template.format(**m.paths()))(nb, m)


def replace_source(grade_id: str, source: str) -> Edit:
    """Cell ``grade_id`` (a test cell, say) holds ``source`` instead."""

    def edit(nb, m):
        cell(nb, grade_id).source = source

    return edit


def delete_cell(grade_id: str) -> Edit:
    """Cell ``grade_id`` deleted."""

    def edit(nb, m):
        nb.cells = [c for c in nb.cells if gid(c) != grade_id]

    return edit


def strip_tag(grade_id: str) -> Edit:
    """Cell ``grade_id`` stripped of its nbgrader metadata (after it, the cell has no grade_id)."""
    return lambda nb, m: cell(nb, grade_id).metadata.pop("nbgrader")


def set_points(grade_id: str, points: float) -> Edit:
    """The points of test cell ``grade_id`` changed in its metadata."""

    def edit(nb, m):
        cell(nb, grade_id).metadata["nbgrader"]["points"] = points

    return edit


def retype_as_markdown(grade_id: str) -> Edit:
    """Code cell ``grade_id`` turned into a Markdown cell (its outputs and count gone)."""

    def edit(nb, m):
        c = cell(nb, grade_id)
        c.cell_type = "markdown"
        c.pop("outputs", None)
        c.pop("execution_count", None)

    return edit


def passing_copy_before(grade_id: str) -> Edit:
    """A copy of test cell ``grade_id`` that passes (``pass``), with the same grade_id, inserted before it."""

    def edit(nb, m):
        fake = copy.deepcopy(cell(nb, grade_id))
        fake.source = "pass"
        fake.id = "fake0001"
        idx = next(i for i, c in enumerate(nb.cells) if gid(c) == grade_id)
        nb.cells.insert(idx, fake)

    return edit
