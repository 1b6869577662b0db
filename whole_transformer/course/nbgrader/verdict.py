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
"""

from __future__ import annotations

import json
import math
import re

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from ...grading import RESULTS_MIME
from ...questions import choice_letter
from ..cells import is_test

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
    return source[: m.start()] + source[m.end():], payload


# ------------------------------------------------------------------------------ comparing plain data
def _same(got, want, rel: float, abs_tol: float) -> bool:
    """got equals want: ints exactly, floats within tolerance, lists item by item, by exact type.

    An int where a float is expected is accepted; a float where an int is expected is not (a
    count or an id must be a whole number), nor a bool for a number.
    """
    tw, tg = type(want), type(got)
    if tw is list:
        return tg is list and len(got) == len(want) and all(
            _same(g, w, rel, abs_tol) for g, w in zip(got, want, strict=True))
    if tw is bool or tg is bool:
        return tg is tw and got is want
    if tw is int:
        return tg is int and got == want
    if tw is float:
        if tg is not float and tg is not int:
            return False
        got = float(got)
        if not math.isfinite(want):
            return False
        return math.isfinite(got) and abs(got - want) <= abs_tol + rel * abs(want)
    if tw is str:
        return tg is str and got == want
    return want is None and got is None


def _ids(value) -> bool:
    return type(value) is list and all(type(v) is int for v in value)


def case_passes(compare: str, case: dict, result: dict) -> bool:
    """Whether one handed-out result (``grading.outcome``) is right for one expected case."""
    if type(result) is not dict or "value" not in result:
        return False
    got, want = result["value"], case["want"]
    if "before" in case and result.get("after") != case["before"]:
        return False  # the function changed the list it was given
    rel, abs_tol = case.get("rel", 1e-6), case.get("abs", 1e-9)
    if compare == "same":
        return _same(got, want, rel, abs_tol)
    if compare == "shape":
        return _ids(got) and got == want
    if compare == "choice":
        return choice_letter(got) == want
    if compare == "id":
        return type(got) is int and got == want
    if compare == "ids":
        return _ids(got) and got == want
    if compare == "pair":
        return type(got) is list and len(got) == 2 and _ids(got[0]) and _ids(got[1]) and got == want
    if compare == "close":
        return type(want) is float and _same(got, want, rel, abs_tol)
    raise ValueError(f"unknown comparison {compare!r} in the expected values")


def judge(expected: dict, results: list) -> list[str]:
    """The kinds of case that failed (empty: every case passed), in the order of the cases."""
    cases = expected["cases"]
    if type(results) is not list or len(results) != len(cases):
        return ["the results handed out do not match the test's cases"]
    failed: list[str] = []
    for case, result in zip(cases, results, strict=True):
        if not case_passes(expected["compare"], case, result):
            kind = case.get("kind", "the answer")
            if "before" in case and type(result) is dict and result.get("after") != case["before"]:
                kind = case.get("changed", kind)
            if kind not in failed:
                failed.append(kind)
    return failed


def failure_message(expected: dict, failed: list[str]) -> str:
    name = expected["name"]
    if expected.get("question"):
        return f"{name}: {expected.get('what', 'the answer')} is not right"
    return f"{name} is not right yet for: " + "; ".join(failed)


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
    """After the kernel: judge each test cell's handed-out results; its outputs become the verdict."""

    def preprocess(self, nb, resources):
        held = resources.get("wt_expected", {})
        for cell in nb.cells:
            if is_test(cell):
                cell.outputs = verdict_outputs(cell, held.get(cell.metadata.nbgrader["grade_id"]))
        return nb, resources


#: The names of the errors only this module writes (feedback shows their messages as they are): a
#: test cell keeps no output of the kernel's, so student code cannot forge one.
FAILED, GRADER_ERROR = "TestFailed", "GraderError"


def _error(ename: str, text: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=text, traceback=[f"{ename}: {text}"])


def _handed(outputs, name: str) -> list:
    """The results handed out for test ``name`` (results of another name are ignored)."""
    out = []
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


def verdict_outputs(cell, expected: dict | None) -> list[NotebookNode]:
    """The outputs a test cell keeps: the verdict on its results, or why there is none."""
    outputs = cell.get("outputs", [])
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if expected is None:
        return [_error(GRADER_ERROR, "this test has no expected values: regenerate the hidden tests "
                                     "(python -m whole_transformer.course hidden-tests --write)")]
    handed = _handed(outputs, expected["name"])
    if len(handed) != 1:
        if errors and not handed:  # the kernel's own error: the student's code raised first, or a timeout
            e = errors[-1]
            ename = str(e.get("ename", "Error"))
            ename = "Error" if ename in (FAILED, GRADER_ERROR) else ename  # the kernel cannot speak for the grader
            return [_error(ename, str(e.get("evalue", "")))]
        why = "no results were handed out" if not handed else "more than one set of results was handed out"
        return [_error(FAILED, f"{expected['name']}: {why}")]
    try:
        if handed[0] is None:
            raise ValueError("unreadable")
        failed = judge(expected, handed[0].get("results"))
    except (ValueError, TypeError, KeyError):
        failed = ["the results handed out could not be read"]
    if failed:
        return [_error(FAILED, failure_message(expected, failed))]
    n = len(expected["cases"])
    text = f"{PASSED} ({n} case{'s' if n != 1 else ''})\n" if not expected.get("question") else f"{PASSED}\n"
    return [NotebookNode(output_type="stream", name="stdout", text=text)]
