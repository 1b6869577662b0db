"""The verdict on one graded test cell, from the results its kernel handed out (``verdict.py``'s ``Verdict``
calls ``assess`` for every test cell).

``assess`` reads the one set of results the cell handed out, judges each case with the expected values
(``core/compare.py``), and returns the outputs the cell keeps (a line "Tests passed.", or an error naming the
kinds of case that failed, after a partial score) and the verdict for the instructor's records
(``core/verdict.CellVerdict``): right, wrong, raised, or not answered (the answer cell still as released, or
its stub still raising).
"""

from __future__ import annotations

import json

from nbformat import NotebookNode

from ...grading import RESULTS_MIME
from ...tripwire import forbidden_names, what_it_is
from ..answers.diagnose import diagnose, kinds_of, partial_score
from ..answers.forbidden import refusal
from ..cells import cell_source
from ..core.compare import case_passes, judge
from ..core.verdict import CellVerdict, Outcome
from .verdict_text import (
    FAILED,
    GRADER_ERROR,
    NOT_ANSWERED,
    TIMEOUTS,
    answer_and_hint,
    error,
    failure_message,
    instructor_summary,
    ran_over,
    what_it_did,
)

MAX_RESULTS_BYTES = 4_000_000
PASSED = "Tests passed."
NO_EXPECTED = (
    "this test has no expected values: regenerate the hidden tests "
    "(python -m whole_transformer.course hidden-tests --write)"
)


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


def verdict_outputs(cell, expected: dict | None, solution=None) -> list[NotebookNode]:
    """The outputs a test cell keeps: the verdict on its results, or why there is none."""
    return assess(cell, expected, solution)[0]


def _left_as_released(solution) -> bool:
    """The answer cell is exactly as released (nbgrader's checksum of it is unchanged)."""
    from nbgrader.utils import compute_checksum  # lazy: nbgrader is heavy, and only an answer cell needs it

    if solution is None:
        return False
    meta = solution.get("metadata", {}).get("nbgrader", {})
    try:
        return "checksum" in meta and meta["checksum"] == compute_checksum(solution)
    except (KeyError, TypeError, ValueError):
        return False


def _not_answered(expected: dict, why: str) -> tuple[list[NotebookNode], CellVerdict]:
    text = f"{expected['name']} {why}"
    return [error(NOT_ANSWERED, text)], CellVerdict(Outcome.UNANSWERED, passed=0, run=len(expected["cases"]), why=why)


def _still_as_released(expected: dict, solution) -> tuple[list[NotebookNode], CellVerdict]:
    return _not_answered(
        expected, "is still as released" if _left_as_released(solution) else "still raises NotImplementedError"
    )


def stopped_by_the_clock(cell) -> bool:
    """Whether a cell (the answer cell of a question) was stopped for running over its time."""
    return cell is not None and any(
        o.get("output_type") == "error" and o.get("ename") in TIMEOUTS for o in cell.get("outputs", [])
    )


def _no_single_result(
    expected: dict, outputs, handed: list, solution, seconds: float | None = None
) -> tuple[list[NotebookNode], CellVerdict]:
    """The verdict when the cell handed out no results, or more than one set."""
    errors = [o for o in outputs if o.get("output_type") == "error"]
    n = len(expected["cases"])
    name = expected["name"]
    if errors and not handed:  # the kernel's own error: the student's code raised first, or a timeout
        e = errors[-1]
        ename = str(e.get("ename", "Error"))
        if _left_as_released(solution) or ename == "NotImplementedError":
            return _still_as_released(expected, solution)
        # the kernel cannot speak for the grader
        ename = "Error" if ename in (FAILED, GRADER_ERROR, NOT_ANSWERED) else ename
        verdict = CellVerdict(Outcome.RAISED, passed=0, run=n, errors={"the whole test cell": ename})
        if stopped_by_the_clock(solution):  # the answer cell was stopped first: what the test missed is its answer
            verdict.why = f"the answer cell {ran_over(seconds)}"
            text = f"{name}: your answer cell {ran_over(seconds)}, so there was no answer to grade"
            return [error(FAILED, text)], verdict
        verdict.why = what_it_did(ename, seconds)
        if ename in TIMEOUTS or ename == "DeadKernelError":
            text = f"{name}: your code {verdict.why}, so no case of this test could be checked"
            return [error(FAILED, text + (": does a loop of it never end?" if ename in TIMEOUTS else ""))], verdict
        return [error(ename, str(e.get("evalue", "")))], verdict
    why = "no results were handed out" if not handed else "more than one set of results was handed out"
    return [error(FAILED, f"{name}: {why}")], CellVerdict(Outcome.WRONG, passed=0, run=n, why=why)


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


def _called(results) -> str | None:
    """The first forbidden callable a case's function called (``grading.hand_out`` records it), or None."""
    known = forbidden_names()
    for r in results if type(results) is list else ():
        if type(r) is dict and "called" in r:
            # the kernel's word is taken only for a name of the table (else: some forbidden callable, unnamed)
            return r["called"] if r["called"] in known else "one of the course's functions for this step"
    return None


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


def _diagnosed(expected: dict, results, passed: list[bool], points: float, settings, verdict: CellVerdict) -> str:
    """An exercise's wrong results: the typical mistake they match, the kinds passed and the
    partial score go into ``verdict``; returns what the message adds (the mistake, if named)."""
    found = diagnose(expected, results)
    verdict.mistake, verdict.mistake_name = found["mistake"], found["name"]
    said = ""
    if found["mistake"]:
        verdict.says = found["says"]
        said = f". This looks like a typical mistake, {found['name']!r}: {found['says']}"
    else:
        verdict.closest, verdict.agree, verdict.of = found["closest"], found["agree"], found["of"]
        verdict.stale = bool(found.get("stale"))
    kinds = kinds_of(expected["cases"])
    verdict.kinds_passed = [
        k
        for k in kinds
        if all(ok for c, ok in zip(expected["cases"], passed, strict=True) if c.get("kind", "the answer") == k)
    ]
    verdict.kinds = len(kinds)
    if points:
        verdict.score = partial_score(expected, passed, points, settings)
        verdict.points = float(points)
    return said


def assess(
    cell,
    expected: dict | None,
    solution=None,
    points: float = 0.0,
    settings: dict | None = None,
    seconds: float | None = None,
) -> tuple[list[NotebookNode], CellVerdict | None]:
    """(the outputs a test cell keeps, the verdict for the instructor's records, or None without expected values).

    ``solution``: the answer cell (to tell an answer left as released); ``points``: the cell's
    points, for partial credit by kind of case (``answers/diagnose.partial_score``, weights from
    ``settings``). The verdict (``core/verdict.CellVerdict``): the outcome (right, wrong, raised,
    unanswered), cases passed of cases run, failed kinds, exceptions by kind, the named mistake or the
    wrong answer and its hint.
    """
    outputs = cell.get("outputs", [])
    if expected is None:
        return [error(GRADER_ERROR, NO_EXPECTED)], None
    n = len(expected["cases"])
    refused = refusal(expected["name"], cell_source(solution) if solution is not None else "")
    if refused:  # it calls what it should build (answers/forbidden.py): no points, whatever it returned
        return [error(FAILED, refused)], CellVerdict(Outcome.WRONG, passed=0, run=n, failed=["refused"], says=refused)
    handed = _handed(outputs, expected["name"])
    if len(handed) != 1:
        return _no_single_result(expected, outputs, handed, solution, seconds)
    results = handed[0].get("results") if handed[0] is not None else None
    failed, passed = _judged(expected, results)
    called = _called(results)
    if called:  # the function called the course's own code for its step (whole_transformer/tripwire.py)
        why = f"it calls {called}, {what_it_is(called)}"
        text = (
            f"{expected['name']} earns nothing: {why}. A graded function earns points only for what it computes "
            "itself: write this step yourself, without calling it"
        )
        return [error(FAILED, text)], CellVerdict(Outcome.WRONG, passed=0, run=n, failed=failed, why=why)
    if not failed:
        text = f"{PASSED} ({n} case{'s' if n != 1 else ''})\n" if not expected.get("question") else f"{PASSED}\n"
        out = NotebookNode(output_type="stream", name="stdout", text=text)
        return [out], CellVerdict(Outcome.RIGHT, passed=n, run=n)
    errs, raised = _raised(expected, results, passed)
    stub = len(raised) == n and all(raised) and set(errs.values()) == {"NotImplementedError"}
    if _left_as_released(solution) or stub:
        return _still_as_released(expected, solution)
    outcome = Outcome.RAISED if raised and all(raised) else Outcome.WRONG
    verdict = CellVerdict(outcome, passed=sum(passed), run=n, failed=failed, errors=errs)
    if stopped_by_the_clock(solution):  # the answer is what the cell had reached when it was stopped
        verdict.why = f"the answer cell {ran_over(seconds)}"
    return _wrong(cell, expected, results, passed, verdict, points, settings)


def _wrong(
    cell, expected: dict, results, passed: list[bool], verdict: CellVerdict, points: float, settings
) -> tuple[list[NotebookNode], CellVerdict]:
    """The verdict on results that are wrong (or raised): the error the student sees, after the partial score,
    and the verdict (``verdict`` so far, then the named mistake or the wrong answer and its hint)."""
    message = failure_message(expected, verdict.failed or [], verdict.errors)
    if verdict.why:  # the answer cell was stopped by the clock
        message += f". Your answer cell {verdict.why.removeprefix('the answer cell ')}: what it had reached was graded"
    if expected.get("question"):
        verdict.answer, verdict.hint = answer_and_hint(expected, results)
        if verdict.hint:
            message += f". Hint: {verdict.hint}"
    else:
        message += _diagnosed(expected, results, passed, points, settings, verdict)
    failure = error(FAILED, message)
    failure["traceback"] = instructor_summary(cell, expected, results, passed, message)
    out = [failure]
    if verdict.score:
        out.insert(
            0,
            NotebookNode(
                output_type="execute_result",
                execution_count=None,
                metadata={},
                data={"text/plain": f"{verdict.score:g}"},
            ),
        )
    return out, verdict
