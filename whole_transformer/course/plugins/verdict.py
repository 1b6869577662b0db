"""The verdict on each graded test cell, decided in the grading process, never in the student's kernel.

A hidden test in ``source/`` has two parts, the kernel's and the EXPECTED part (their format:
``core/expected.py``; ``answers/hidden_parts.py`` writes them).

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

The verdict on one cell (``assess``): ``cell_verdict.py``, as data: ``core/verdict.py``; how a result is
compared: ``core/compare.py``; the verdict's words (the errors only the grader writes, the messages, the
instructor's summary of the failed cases): ``verdict_text.py``.
"""

from __future__ import annotations

import json

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from ..cells import is_test
from ..core.expected import split_expected
from ..core.verdict import CellVerdict
from .cell_verdict import assess
from .run_result import VERDICTS


def cell_time_limit(config) -> float | None:
    """A cell's time limit in the grader's config (nbgrader_config.py's ``SandboxExecute.timeout``), if set."""
    value = config.get("SandboxExecute", {}).get("timeout")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def hold_expected(nb) -> dict[str, dict]:
    """Cut the expected values out of every test cell of ``nb``: grade_id → the values, kept out of the kernel."""
    held = {}
    for cell in nb.cells:
        if not is_test(cell):
            continue
        source, payload = split_expected(cell.source)
        if payload is not None:
            cell.source = source
            held[cell.metadata.nbgrader["grade_id"]] = payload
    return held


def judge_notebook(nb, held: dict, settings: dict, seconds: float | None = None) -> dict[str, CellVerdict | None]:
    """Each test cell of ``nb`` (run) judged on what its hidden test handed out, against ``held``'s expected values
    (``hold_expected``), with its points and ``settings`` (course.toml's [partial_credit]); its outputs become the
    verdict. grade_id → the verdict (None: the cell gave none)."""
    answers = {
        c.metadata.nbgrader["grade_id"]: c
        for c in nb.cells
        if c.get("metadata", {}).get("nbgrader", {}).get("solution") and "grade_id" in c.metadata.nbgrader
    }
    verdicts = {}
    for cell in nb.cells:
        if is_test(cell):
            gid = cell.metadata.nbgrader["grade_id"]
            expected = held.get(gid)
            solution = answers.get(expected["name"]) if expected else None
            points = float(cell.metadata.nbgrader.get("points", 0) or 0)
            cell.outputs, verdicts[gid] = assess(cell, expected, solution, points, settings, seconds)
    return verdicts


class HoldExpected(NbGraderPreprocessor):
    """Before the kernel runs: cut the expected values out of every test cell and keep them here."""

    def preprocess(self, nb, resources):
        resources.setdefault("wt_expected", {}).update(hold_expected(nb))
        return nb, resources


class Verdict(NbGraderPreprocessor):
    """After the kernel: judge each test cell's handed-out results; its outputs become the verdict.

    A failed exercise earns its passed kinds' share of the points (nbgrader reads the score from
    an ``execute_result`` before the error); the verdict, as data, goes into the notebook's resources
    (``run_result.VERDICTS``; ``{}`` when there is none), which ``run_result.RunResult`` hands back with the run's
    result.
    """

    partial_credit_file = Unicode(
        "",
        help="JSON of course.toml's [partial_credit] (exercise → kind → "
        "weight); empty: every kind of case weighs the same",
    ).tag(config=True)

    def preprocess(self, nb, resources):
        settings = {}
        if self.partial_credit_file:
            with open(self.partial_credit_file, encoding="utf-8") as f:
                settings = json.load(f)
        judged = judge_notebook(nb, resources.get("wt_expected", {}), settings, cell_time_limit(self.config))
        verdicts = resources.setdefault(VERDICTS, {})
        for gid, verdict in judged.items():
            verdicts[gid] = verdict.to_json() if verdict is not None else {}
        return nb, resources
