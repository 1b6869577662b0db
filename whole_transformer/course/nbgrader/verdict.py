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

How a result is compared: ``compare.py``; the verdict's words (the errors only the grader writes,
the messages, the instructor's summary of the failed cases): ``verdict_text.py``.
"""

from __future__ import annotations

import json
import re

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from ...grading import RESULTS_MIME
from ..cells import is_test
from .compare import case_passes, judge
from .verdict_text import (
    FAILED,
    GRADER_ERROR,
    NOT_ANSWERED,
    error,
    failure_message,
    instructor_summary,
    question_detail,
)

BEGIN, END = "### BEGIN EXPECTED", "### END EXPECTED"
_REGION = re.compile(rf"^[ \t]*{re.escape(BEGIN)}[ \t]*\n(.*?)^[ \t]*{re.escape(END)}[ \t]*(\n|$)", re.S | re.M)
MAX_RESULTS_BYTES = 4_000_000
PASSED = "Tests passed."


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
    (``DETAIL_KEY``), from which the grading records them (``grading/student.py``).
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


def _handed(outputs, name: str) -> list:
    """The results handed out for test ``name`` (results of another name are ignored)."""
    out: list[dict | None] = []
    for o in outputs:
        if o.get("output_type") not in ("display_data", "execute_result") or RESULTS_MIME not in o.get("data", {}):
            continue
        raw = o["data"][RESULTS_MIME]
        try:
            if isinstance(raw, str) and len(raw) > MAX_RESULTS_BYTES:
                raise ValueError("too large")
            data = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            data = None
        if type(data) is dict and data.get("name") == name:
            out.append(data)
        elif type(data) is not dict:
            out.append(None)  # unreadable: it may have been this test's
    return out


#: The cell metadata key under which the verdict's details stay in the graded notebook (instructor's).
DETAIL_KEY = "wt_verdict"


def verdict_outputs(cell, expected: dict | None, solution=None) -> list[NotebookNode]:
    """The outputs a test cell keeps: the verdict on its results, or why there is none."""
    return assess(cell, expected, solution)[0]


def _left_as_released(solution) -> bool:
    """The answer cell is exactly as released (nbgrader's checksum of it is unchanged)."""
    from nbgrader.utils import compute_checksum

    if solution is None:
        return False
    meta = solution.get("metadata", {}).get("nbgrader", {})
    try:
        return "checksum" in meta and meta["checksum"] == compute_checksum(solution)
    except (KeyError, TypeError, ValueError):
        return False


def _not_answered(expected: dict, why: str) -> tuple[list[NotebookNode], dict]:
    text = f"{expected['name']} {why}"
    return [error(NOT_ANSWERED, text)], {
        "outcome": "unanswered",
        "passed": 0,
        "run": len(expected["cases"]),
        "why": why,
    }


def _still_as_released(expected: dict, solution) -> tuple[list[NotebookNode], dict]:
    return _not_answered(
        expected, "is still as released" if _left_as_released(solution) else "still raises NotImplementedError"
    )


def _no_single_result(expected: dict, outputs, handed: list, solution) -> tuple[list[NotebookNode], dict]:
    """The verdict when the cell handed out no results, or more than one set."""
    errors = [o for o in outputs if o.get("output_type") == "error"]
    n = len(expected["cases"])
    if errors and not handed:  # the kernel's own error: the student's code raised first, or a timeout
        e = errors[-1]
        ename = str(e.get("ename", "Error"))
        if _left_as_released(solution) or ename == "NotImplementedError":
            return _still_as_released(expected, solution)
        # the kernel cannot speak for the grader
        ename = "Error" if ename in (FAILED, GRADER_ERROR, NOT_ANSWERED) else ename
        return [error(ename, str(e.get("evalue", "")))], {
            "outcome": "raised",
            "passed": 0,
            "run": n,
            "errors": {"the whole test cell": ename},
        }
    why = "no results were handed out" if not handed else "more than one set of results was handed out"
    return [error(FAILED, f"{expected['name']}: {why}")], {"outcome": "wrong", "passed": 0, "run": n, "why": why}


def _judged(expected: dict, results) -> tuple[list[str], list[bool]]:
    """(the kinds of case that failed, whether each case passed)."""
    try:
        if results is None:
            raise ValueError("unreadable")
        failed = judge(expected, results)
        passed = [case_passes(expected["compare"], c, r) for c, r in zip(expected["cases"], results, strict=True)]
    except (ValueError, TypeError, KeyError):
        failed, passed = ["the results handed out could not be read"], [False] * len(expected["cases"])
    return failed, passed


def _raised(expected: dict, results, passed: list[bool]) -> tuple[dict, list[bool]]:
    """(the first exception of each kind of failed case, whether each failed case raised)."""
    n = len(expected["cases"])
    errs: dict[str, str] = {}
    raised: list[bool] = []
    for c, r, ok in zip(expected["cases"], results if type(results) is list else [None] * n, passed, strict=False):
        if not ok:
            raised.append(type(r) is dict and "error" in r)
            if raised[-1]:
                errs.setdefault(c.get("kind", "the answer"), str(r["error"]))
    return errs, raised


def _diagnosed(expected: dict, results, passed: list[bool], points: float, settings, detail: dict) -> str:
    """An exercise's wrong results: the typical mistake they match, the kinds passed and the
    partial score go into ``detail``; returns what the message adds (the mistake, if named)."""
    from ..answers.diagnose import diagnose, kinds_of, partial_score

    found = diagnose(expected, results)
    detail.update({"mistake": found["mistake"], "mistake_name": found["name"]})
    said = ""
    if found["mistake"]:
        detail["says"] = found["says"]
        said = f". This looks like a typical mistake, {found['name']!r}: {found['says']}"
    else:
        detail.update({k: found[k] for k in ("closest", "agree", "of") if k in found})
        if found.get("stale"):
            detail["stale"] = True
    kinds = kinds_of(expected["cases"])
    detail["kinds_passed"] = [
        k
        for k in kinds
        if all(ok for c, ok in zip(expected["cases"], passed, strict=True) if c.get("kind", "the answer") == k)
    ]
    detail["kinds"] = len(kinds)
    if points:
        detail["score"] = partial_score(expected, passed, points, settings)
        detail["points"] = float(points)
    return said


def assess(
    cell, expected: dict | None, solution=None, points: float = 0.0, settings: dict | None = None
) -> tuple[list[NotebookNode], dict]:
    """(the outputs a test cell keeps, the details of the verdict for the instructor's records).

    ``solution``: the answer cell (to tell an answer left as released); ``points``: the cell's
    points, for partial credit by kind of case (``answers/diagnose.partial_score``, weights from
    ``settings``). The details: ``outcome`` (right, wrong, raised, unanswered), cases passed of
    cases run, failed kinds, exceptions by kind, the named mistake or the wrong answer and its hint.
    """
    outputs = cell.get("outputs", [])
    if expected is None:
        return [
            error(
                GRADER_ERROR,
                "this test has no expected values: regenerate the hidden tests "
                "(python -m whole_transformer.course hidden-tests --write)",
            )
        ], {}
    n = len(expected["cases"])
    handed = _handed(outputs, expected["name"])
    if len(handed) != 1:
        return _no_single_result(expected, outputs, handed, solution)
    results = handed[0].get("results") if handed[0] is not None else None
    failed, passed = _judged(expected, results)
    if not failed:
        text = f"{PASSED} ({n} case{'s' if n != 1 else ''})\n" if not expected.get("question") else f"{PASSED}\n"
        return [NotebookNode(output_type="stream", name="stdout", text=text)], {
            "outcome": "right",
            "passed": n,
            "run": n,
        }
    errs, raised = _raised(expected, results, passed)
    stub = len(raised) == n and all(raised) and set(errs.values()) == {"NotImplementedError"}
    if _left_as_released(solution) or stub:
        return _still_as_released(expected, solution)
    detail = {
        "outcome": "raised" if raised and all(raised) else "wrong",
        "passed": sum(passed),
        "run": n,
        "failed": failed,
        "errors": errs,
    }
    message = failure_message(expected, failed)
    if expected.get("question"):
        detail.update(question_detail(expected, results))
        if detail.get("hint"):
            message += f". Hint: {detail['hint']}"
    else:
        message += _diagnosed(expected, results, passed, points, settings, detail)
    failure = error(FAILED, message)
    failure["traceback"] = instructor_summary(cell, expected, results, passed, message)
    out = [failure]
    if detail.get("score"):
        out.insert(
            0,
            NotebookNode(
                output_type="execute_result",
                execution_count=None,
                metadata={},
                data={"text/plain": f"{detail['score']:g}"},
            ),
        )
    return out, detail
