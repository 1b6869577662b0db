"""Reading nbgrader's marks on notebook cells: one place for what a cell is to the course.

A cell is *protected* when it carries a grade_id and one of nbgrader's flags: read-only cells,
answer cells (``solution``), test cells (``grade`` without ``solution``) and task cells. Inside a
cell, nbgrader's markers delimit regions: ``### BEGIN SOLUTION`` … ``### END SOLUTION`` (the
answer, replaced by a stub in the release) and ``### BEGIN HIDDEN TESTS`` … ``### END HIDDEN
TESTS`` (removed from the release, run only by the autograder).
"""

from __future__ import annotations

import re

#: nbgrader's cell flags, as they appear in a cell's ``metadata.nbgrader``
NBGRADER_FLAGS = ("grade", "grade_id", "locked", "solution", "task", "points")
SOLUTION = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_TESTS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
#: the hidden region of a test cell, markers included (its lines in group 1)
HIDDEN_REGION = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)


def nbgrader_meta(cell) -> dict:
    """The cell's nbgrader metadata ({} when it has none)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def grade_id(cell) -> str | None:
    """The cell's nbgrader grade_id, or None."""
    gid = nbgrader_meta(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def tracked_id(cell) -> str:
    """The grade_id of a cell nbgrader tracks (a test, answer or read-only cell), which must have one."""
    gid = grade_id(cell)
    if not gid:
        raise ValueError(f"an nbgrader cell without a grade_id: {cell_source(cell)[:80]!r}")
    return gid


def grade_ids(nb) -> set[str]:
    """Every grade_id of a notebook's cells."""
    return {gid for gid in map(grade_id, nb.get("cells", [])) if gid}


def cell_source(cell) -> str:
    """The cell's source as one string (nbformat allows a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def is_test(cell) -> bool:
    """A graded code cell that is not an answer: an autograder test cell."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_protected(cell) -> bool:
    """A cell nbgrader tracks by grade_id: read-only, answer, test or task cell."""
    meta = nbgrader_meta(cell)
    return bool(grade_id(cell)) and bool(
        meta.get("grade") or meta.get("solution") or meta.get("locked") or meta.get("task")
    )


def cell_kind(cell) -> str:
    """What a protected cell is, in words."""
    meta = nbgrader_meta(cell)
    if meta.get("solution"):
        return "answer cell"
    if meta.get("grade"):
        return "test cell"
    if meta.get("task"):
        return "task cell"
    return "read-only cell"


def flags(cell) -> dict:
    """The cell's nbgrader flags, normalised (points a float, the other flags booleans)."""
    meta = nbgrader_meta(cell)
    out = {}
    for k in NBGRADER_FLAGS:
        v = meta.get(k)
        if k == "points" and v is not None:
            try:
                v = float(v)
            except (TypeError, ValueError):
                pass
        elif k != "grade_id":
            v = bool(v)
        out[k] = v
    return out


def split_region(source: str, markers: tuple[str, str] = HIDDEN_TESTS) -> tuple[str, str]:
    """(the lines outside the region, the lines inside it) of a cell's source; the marker lines
    belong to neither. A line is a marker when it contains the marker's text."""
    begin, end = markers
    outside, inside, within = [], [], False
    for line in source.split("\n"):
        if begin in line:
            within = True
        elif end in line:
            within = False
        elif within:
            inside.append(line)
        else:
            outside.append(line)
    return "\n".join(outside), "\n".join(inside)


def unmark_region(source: str, markers: tuple[str, str]) -> str:
    """The source with the region's marker lines removed and its lines kept."""
    begin, end = markers
    return "\n".join(line for line in source.split("\n") if begin not in line and end not in line)


def cell_name(cells, index: int) -> str:
    """A cell without a grade_id named as a student finds it: by the question or exercise it follows (``your cell
    after greedy_decode``), or the one it comes before at the top (``your cell before tokens_905``); its number
    only in a notebook with no graded cell at all. (A number counts cells no one numbers in JupyterLab.)"""
    before = next((g for c in reversed(list(cells)[:index]) if (g := grade_id(c))), None)
    if before is not None:
        return f"your cell after {before.removeprefix('test_')}"
    after = next((g for c in list(cells)[index + 1 :] if (g := grade_id(c))), None)
    if after is not None:
        return f"your cell before {after.removeprefix('test_')}"
    return f"cell {index + 1}"


def split_hidden(source: str, markers: tuple[str, str] = HIDDEN_TESTS) -> tuple[str, str]:
    """(visible part, hidden part) of a test cell's source."""
    visible, hidden = split_region(source, markers)
    return visible.rstrip(), hidden
