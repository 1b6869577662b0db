"""Build submissions for the simulated class from the course's own notebooks.

A submission starts from the released notebooks (what a student downloads) and is changed the way
a student would change it: answers written (taken from the source's solution cells), an exercise
replaced by one of tests/implementations/, cells edited, deleted, re-tagged, files renamed...
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat

from whole_transformer.course.cells import SOLUTION, nbgrader_meta, unmark_region
from whole_transformer.course.cells import grade_id as gid
from whole_transformer.course.layout import ASSIGNMENT


class Notebooks:
    """The release and source notebooks of a course folder, read once."""

    def __init__(self, course: Path):
        self.course = course
        self.release = {
            p.stem: nbformat.read(p, as_version=4) for p in sorted((course / "release" / ASSIGNMENT).glob("*.ipynb"))
        }
        self.source = {
            p.stem: nbformat.read(p, as_version=4) for p in sorted((course / "source" / ASSIGNMENT).glob("*.ipynb"))
        }

    @property
    def names(self) -> list[str]:
        return list(self.release)

    def blank(self, name: str):
        """The notebook as released (a student who changed nothing)."""
        return copy.deepcopy(self.release[name])

    def solved(self, name: str):
        """The released notebook with every answer cell written as in the source (full marks)."""
        nb = self.blank(name)
        answers = {
            gid(c): unmark_region(c.source, SOLUTION)
            for c in self.source[name].cells
            if nbgrader_meta(c).get("solution")
        }
        for c in nb.cells:
            if gid(c) in answers:
                c.source = answers[gid(c)]
        return nb

    def grade_cells(self, name: str) -> dict[str, float]:
        """grade_id → points of the graded cells of a notebook."""
        return {
            gid(c): float(c.metadata["nbgrader"]["points"])
            for c in self.source[name].cells
            if nbgrader_meta(c).get("grade")
        }


def cell(nb, grade_id):
    for c in nb.cells:
        if gid(c) == grade_id:
            return c
    raise KeyError(grade_id)


def set_answer(nb, grade_id: str, source: str):
    cell(nb, grade_id).source = source
    return nb


def write_submission(
    course: Path,
    student: str,
    notebooks: dict[str, object],
    *,
    raw: dict[str, str] | None = None,
    folder: str = ASSIGNMENT,
) -> Path:
    """submitted/<student>/<folder>/: notebooks {file name: notebook}, raw {file name: text}."""
    d = course / "submitted" / student / folder
    d.mkdir(parents=True, exist_ok=True)
    for fname, nb in notebooks.items():
        fname = fname if fname.endswith(".ipynb") else f"{fname}.ipynb"
        (d / fname).write_text(json.dumps(nb, indent=1))
    for fname, text in (raw or {}).items():
        (d / fname).write_text(text)
    return d
