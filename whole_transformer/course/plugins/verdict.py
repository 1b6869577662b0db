"""The verdict on each graded test cell, decided in the grading process, never in the student's kernel.

A hidden test in ``source/`` has two parts (``hidden.py`` writes them)::

    ### BEGIN HIDDEN TESTS
    grading.hand_out("make_xy", make_xy, [((task.sequence(0),), {}), …], watch=0)
    ### BEGIN EXPECTED
    # {"name": "make_xy", "compare": "pair", "cases": [{"kind": "a one-digit number", "want": […]}, …]}
    ### END EXPECTED
    ### END HIDDEN TESTS

During ``nbgrader autograde`` two preprocessors stand around the kernel (``nbgrader_config.py``):

1. ``HoldExpected`` (before the kernel runs anything) cuts the EXPECTED part out of every test
   cell and keeps it in this process. The kernel runs only the first part: the student's function
   on the hidden inputs, handing the results out as one output of type ``grading.RESULTS_MIME``.
2. ``Verdict`` (after the kernel) reads that output, compares each case here with the expected
   value, and replaces the cell's outputs by the verdict: a line "Tests passed." or an
   error ``TestFailed`` naming the kinds of case that failed. nbgrader's own ``SaveAutoGrades``
   then scores the cell from that verdict, so it is what lands in the gradebook, in
   ``grades.csv``, ``grades-detail.csv``, the Formgrader and the feedback.

Whatever the student's code did in the kernel, it can only change the results it handed out. A
result that is not plain data (numbers, strings, lists, null), a missing or duplicated results
output, or results for another test fail the cell.

The verdict on one cell (``assess``): ``cell_verdict.py``; how a result is compared: ``compare.py``; the
verdict's words (the errors only the grader writes, the messages, the instructor's summary of the failed
cases): ``verdict_text.py``.
"""

from __future__ import annotations

import json
import re

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from ..cells import is_test

# verdict_outputs, case_passes, judge and the verdict's words: imported from here by the tests
from .cell_verdict import assess, verdict_outputs  # noqa: F401
from .compare import case_passes, judge  # noqa: F401
from .verdict_text import FAILED, NOT_ANSWERED, failure_message  # noqa: F401

BEGIN, END = "### BEGIN EXPECTED", "### END EXPECTED"
_REGION = re.compile(rf"^[ \t]*{re.escape(BEGIN)}[ \t]*\n(.*?)^[ \t]*{re.escape(END)}[ \t]*(\n|$)", re.S | re.M)
#: The cell metadata key under which the verdict's details stay in the graded notebook (instructor's).
DETAIL_KEY = "wt_verdict"


# ------------------------------------------------------------------------------ the expected part
def expected_region(payload: dict) -> str:
    """The EXPECTED part of a hidden test, holding ``payload`` as one JSON comment line."""
    return f"{BEGIN}\n# {json.dumps(payload, ensure_ascii=False, allow_nan=False)}\n{END}"


def split_expected(source: str) -> tuple[str, dict | None]:
    """(the source without its EXPECTED part, the expected payload or None)."""
    m = _REGION.search(source)
    if not m:
        return source, None
    text = "".join(line.lstrip()[1:].strip() for line in m.group(1).splitlines() if line.strip().startswith("#"))
    payload = json.loads(text)
    return source[: m.start()] + source[m.end() :], payload


# ------------------------------------------------------------------------------ the preprocessors
class HoldExpected(NbGraderPreprocessor):
    """Before the kernel runs: cut the expected values out of every test cell and keep them here."""

    def preprocess(self, nb, resources):
        held = resources.setdefault("wt_expected", {})
        for cell in nb.cells:
            if not is_test(cell):
                continue
            source, payload = split_expected(cell.source)
            if payload is not None:
                cell.source = source
                held[cell.metadata.nbgrader["grade_id"]] = payload
        return nb, resources


class Verdict(NbGraderPreprocessor):
    """After the kernel: judge each test cell's handed-out results; its outputs become the verdict.

    A failed exercise earns its passed kinds' share of the points (nbgrader reads the score from
    an ``execute_result`` before the error); the details go into the cell's metadata
    (``DETAIL_KEY``), from which the grading records them (``autograder/student.py``).
    """

    partial_credit_file = Unicode(
        "",
        help="JSON of course.toml's [partial_credit] (exercise → kind → "
        "weight); empty: every kind of case weighs the same",
    ).tag(config=True)

    def preprocess(self, nb, resources):
        held = resources.get("wt_expected", {})
        settings = {}
        if self.partial_credit_file:
            with open(self.partial_credit_file, encoding="utf-8") as f:
                settings = json.load(f)
        answers = {
            c.metadata.nbgrader["grade_id"]: c
            for c in nb.cells
            if c.get("metadata", {}).get("nbgrader", {}).get("solution") and "grade_id" in c.metadata.nbgrader
        }
        for cell in nb.cells:
            if is_test(cell):
                expected = held.get(cell.metadata.nbgrader["grade_id"])
                solution = answers.get(expected["name"]) if expected else None
                points = float(cell.metadata.nbgrader.get("points", 0) or 0)
                cell.outputs, detail = assess(cell, expected, solution, points, settings)
                cell.metadata[DETAIL_KEY] = detail
        return nb, resources
