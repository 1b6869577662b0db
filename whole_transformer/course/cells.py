"""Reading nbgrader's marks on notebook cells: one place for what a cell is to the course."""

from __future__ import annotations


def nbgrader_meta(cell) -> dict:
    """The cell's nbgrader metadata ({} when it has none)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def grade_id(cell) -> str | None:
    """The cell's nbgrader grade_id, or None."""
    gid = nbgrader_meta(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def cell_source(cell) -> str:
    """The cell's source as one string (nbformat allows a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def is_test(cell) -> bool:
    """A graded code cell that is not an answer: an autograder test cell."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")
