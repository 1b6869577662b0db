"""The lecture edition asks before it answers: for projecting, every question's and Predict's answer, and every
exercise's solution, is hidden behind a "Show answer" control until the lecturer opens it.

``ask_first(nb)`` (on a lecture notebook whose cells still have their nbgrader metadata) puts, above each
question's answer cell, a Markdown cell holding the answer inside ``<details><summary>Show answer</summary>``:
closed, it shows only that control; a click on it, or Tab to it and Enter or Space, opens it, in JupyterLab and in
a browser alike. The answer cell itself keeps its code (the check cell under it needs it) with its input folded
away (``jupyter.source_hidden``) and the tag ``ANSWER_TAG``, by which the HTML export leaves that input out.

``worked(nb)`` undoes it on a run notebook: the worked edition, answers in place, for reading
(``notebooks/html/<name>-worked.html``).
"""

from __future__ import annotations

import copy

import nbformat

from whole_transformer.exercise_checks import EXERCISES
from whole_transformer.questions import QUESTIONS

from ..cells import SOLUTION, grade_id, is_test, unmark_region

ANSWER_TAG = "wt-answer"  # an answer cell, folded in the lecture edition and left out of its HTML page
SHOW_TAG = "wt-show-answer"  # the Markdown cell with the "Show answer" control
SUMMARY = "Show answer"


def answer_lines(source: str) -> str:
    """The answer a solution cell gives: its code without the markers and without comment lines."""
    code = unmark_region(source, SOLUTION)
    return "\n".join(line for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def show_answer_cell(cell_id: str, answer: str) -> nbformat.NotebookNode:
    text = f'<details class="wt-answer"><summary>{SUMMARY}</summary>\n\n```python\n{answer}\n```\n\n</details>'
    cell = nbformat.v4.new_markdown_cell(text)
    cell.id = f"{cell_id}-show"[:64]
    cell.metadata["tags"] = [SHOW_TAG]
    return cell


def ask_first(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Each question's answer and each exercise's solution behind a "Show answer" control (see the module's
    docstring); nb is changed in place."""
    cells = []
    for cell in nb.cells:
        asked = grade_id(cell) in QUESTIONS or grade_id(cell) in EXERCISES
        if cell.cell_type == "code" and asked and not is_test(cell):
            cells.append(show_answer_cell(cell.get("id", grade_id(cell)), answer_lines(cell.source)))
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
            cell.metadata["tags"] = [*cell.metadata.get("tags", []), ANSWER_TAG]
        cells.append(cell)
    nb.cells = cells
    return nb


def worked(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The worked edition of a lecture notebook: the answers in place, no "Show answer" cells (a copy)."""
    nb = copy.deepcopy(nb)
    nb.cells = [c for c in nb.cells if SHOW_TAG not in c.metadata.get("tags", [])]
    for cell in nb.cells:
        tags = [t for t in cell.metadata.get("tags", []) if t != ANSWER_TAG]
        if ANSWER_TAG in cell.metadata.get("tags", []):
            cell.metadata.get("jupyter", {}).pop("source_hidden", None)
            if not cell.metadata.get("jupyter", True):
                cell.metadata.pop("jupyter")
        if tags:
            cell.metadata["tags"] = tags
        else:
            cell.metadata.pop("tags", None)
    return nb
