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
from traitlets import Unicode

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
            changed = type(result) is dict and "value" in result and result.get("after") != case.get("before")
            if "before" in case and changed:
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
    """After the kernel: judge each test cell's handed-out results; its outputs become the verdict.

    A failed exercise earns its passed kinds' share of the points (nbgrader reads the score from
    an ``execute_result`` before the error); the details go into the cell's metadata
    (``DETAIL_KEY``), from which the grading records them (``grading/student.py``).
    """

    partial_credit_file = Unicode("", help="JSON of course.toml's [partial_credit] (exercise → kind → "
                                           "weight); empty: every kind of case weighs the same").tag(config=True)

    def preprocess(self, nb, resources):
        held = resources.get("wt_expected", {})
        settings = {}
        if self.partial_credit_file:
            with open(self.partial_credit_file, encoding="utf-8") as f:
                settings = json.load(f)
        answers = {c.metadata.nbgrader["grade_id"]: c for c in nb.cells
                   if c.get("metadata", {}).get("nbgrader", {}).get("solution") and "grade_id" in c.metadata.nbgrader}
        for cell in nb.cells:
            if is_test(cell):
                expected = held.get(cell.metadata.nbgrader["grade_id"])
                solution = answers.get(expected["name"]) if expected else None
                points = float(cell.metadata.nbgrader.get("points", 0) or 0)
                cell.outputs, detail = assess(cell, expected, solution, points, settings)
                cell.metadata[DETAIL_KEY] = detail
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


#: The error the grader writes for an answer not written yet (the stub still raising
#: NotImplementedError, or the answer cell left as released): unanswered, not wrong.
NOT_ANSWERED = "NotAnswered"
#: The cell metadata key under which the verdict's details stay in the graded notebook (instructor's).
DETAIL_KEY = "wt_verdict"
WRAP = 96  # the width the instructor's summary of failed cases is wrapped to


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
    return [_error(NOT_ANSWERED, text)], {"outcome": "unanswered", "passed": 0, "run": len(expected["cases"]),
                                          "why": why}


def assess(cell, expected: dict | None, solution=None, points: float = 0.0,
           settings: dict | None = None) -> tuple[list[NotebookNode], dict]:
    """(the outputs a test cell keeps, the details of the verdict for the instructor's records).

    ``solution``: the answer cell (to tell an answer left as released); ``points``: the cell's
    points, for partial credit by kind of case (``answers/diagnose.partial_score``, weights from
    ``settings``). The details: ``outcome`` (right, wrong, raised, unanswered), cases passed of
    cases run, failed kinds, exceptions by kind, the named mistake or the wrong answer and its hint.
    """
    outputs = cell.get("outputs", [])
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if expected is None:
        return [_error(GRADER_ERROR, "this test has no expected values: regenerate the hidden tests "
                                     "(python -m whole_transformer.course hidden-tests --write)")], {}
    n = len(expected["cases"])
    handed = _handed(outputs, expected["name"])
    if len(handed) != 1:
        if errors and not handed:  # the kernel's own error: the student's code raised first, or a timeout
            e = errors[-1]
            ename = str(e.get("ename", "Error"))
            if _left_as_released(solution) or ename == "NotImplementedError":
                return _not_answered(expected, "is still as released" if _left_as_released(solution)
                                     else "still raises NotImplementedError")
            # the kernel cannot speak for the grader
            ename = "Error" if ename in (FAILED, GRADER_ERROR, NOT_ANSWERED) else ename
            return [_error(ename, str(e.get("evalue", "")))], {
                "outcome": "raised", "passed": 0, "run": n, "errors": {"the whole test cell": ename}}
        why = "no results were handed out" if not handed else "more than one set of results was handed out"
        return [_error(FAILED, f"{expected['name']}: {why}")], {"outcome": "wrong", "passed": 0, "run": n,
                                                                 "why": why}
    results = handed[0].get("results") if handed[0] is not None else None
    try:
        if results is None:
            raise ValueError("unreadable")
        failed = judge(expected, results)
        passed = [case_passes(expected["compare"], c, r) for c, r in zip(expected["cases"], results, strict=True)]
    except (ValueError, TypeError, KeyError):
        failed, passed = ["the results handed out could not be read"], [False] * n
    if not failed:
        text = f"{PASSED} ({n} case{'s' if n != 1 else ''})\n" if not expected.get("question") else f"{PASSED}\n"
        return [NotebookNode(output_type="stream", name="stdout", text=text)], {
            "outcome": "right", "passed": n, "run": n}
    errs, raised = {}, []
    for c, r, ok in zip(expected["cases"], results if type(results) is list else [None] * n, passed, strict=False):
        if not ok:
            raised.append(type(r) is dict and "error" in r)
            if raised[-1]:
                errs.setdefault(c.get("kind", "the answer"), str(r["error"]))
    stub = len(raised) == n and all(raised) and set(errs.values()) == {"NotImplementedError"}
    if _left_as_released(solution) or stub:
        return _not_answered(expected, "is still as released" if _left_as_released(solution)
                             else "still raises NotImplementedError")
    detail = {"outcome": "raised" if raised and all(raised) else "wrong", "passed": sum(passed), "run": n,
              "failed": failed, "errors": errs}
    message = failure_message(expected, failed)
    if expected.get("question"):
        detail.update(_question_detail(expected, results))
        if detail.get("hint"):
            message += f". Hint: {detail['hint']}"
    else:
        from ..answers.diagnose import diagnose, kinds_of, partial_score

        found = diagnose(expected, results)
        detail.update({"mistake": found["mistake"], "mistake_name": found["name"]})
        if found["mistake"]:
            detail["says"] = found["says"]
            message += f". This looks like a typical mistake, {found['name']!r}: {found['says']}"
        else:
            detail.update({k: found[k] for k in ("closest", "agree", "of") if k in found})
            if found.get("stale"):
                detail["stale"] = True
        kinds = kinds_of(expected["cases"])
        detail["kinds_passed"] = [k for k in kinds if all(
            ok for c, ok in zip(expected["cases"], passed, strict=True) if c.get("kind", "the answer") == k)]
        detail["kinds"] = len(kinds)
        if points:
            detail["score"] = partial_score(expected, passed, points, settings)
            detail["points"] = float(points)
    error = _error(FAILED, message)
    error["traceback"] = _instructor_summary(cell, expected, results, passed, message)
    out = [error]
    if detail.get("score"):
        out.insert(0, NotebookNode(output_type="execute_result", execution_count=None, metadata={},
                                   data={"text/plain": f"{detail['score']:g}"}))
    return out, detail


def _question_detail(expected: dict, results) -> dict:
    """The wrong answer given (short) and the hint the course gives for it."""
    from ...questions import QUESTIONS, NoAnswer

    r = results[0] if type(results) is list and results else None
    if type(r) is not dict or "value" not in r:
        return {"answer": f"(raised {r.get('error')})" if type(r) is dict else "(none)", "hint": ""}
    value = r["value"]
    q = QUESTIONS.get(expected["name"])
    hint = ""
    if q is not None:
        try:
            normal = q.normal(tuple(value) if type(value) is list else value)
            hint = q.hints.get(normal, q.fallback)
        except NoAnswer:
            hint = "Write your answer in the cell above first (replace the None)."
        except (ValueError, TypeError) as e:
            hint = f"Cannot read that answer: {e}."
    return {"answer": _short(value), "hint": hint}


def _short(value, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def _case_inputs(source: str) -> list[str]:
    """The source of each case's arguments in the kernel's part of a hidden test (``hand_out``'s list)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "hand_out" \
                and len(node.args) >= 3 and isinstance(node.args[2], ast.List):
            return [" ".join((ast.get_source_segment(source, e) or "?").split()) for e in node.args[2].elts]
    return []


def _instructor_summary(cell, expected: dict, results, passed: list[bool], message: str) -> list[str]:
    """The traceback of a failed verdict, for the graded notebook and the Formgrader (never the
    feedback, which shows the message alone): each failed case's input, returned and expected
    value, short and wrapped to ``WRAP`` columns."""
    import textwrap

    lines = textwrap.wrap(f"{FAILED}: {message}", WRAP, subsequent_indent="    ")
    inputs = _case_inputs(cell.get("source", ""))
    shown = 0
    for i, (case, ok) in enumerate(zip(expected["cases"], passed, strict=True)):
        if ok:
            continue
        shown += 1
        if shown > 12:
            lines.append(f"… and {len(passed) - sum(passed) - 12} more failed case(s)")
            break
        r = results[i] if type(results) is list and i < len(results) else None
        got = ("raised " + str(r["error"])) if type(r) is dict and "error" in r else \
            _short(r.get("value")) if type(r) is dict else "nothing readable"
        if type(r) is dict and "before" in case and r.get("after") != case["before"]:
            got += " (and changed its argument)"
        lines.append("")
        lines += textwrap.wrap(f"case {i + 1}, {case.get('kind', 'the answer')}:", WRAP)
        if i < len(inputs):
            given = inputs[i] if len(inputs[i]) <= 160 else inputs[i][:159] + "…"
            lines += textwrap.wrap(f"input    {given}", WRAP, subsequent_indent="         ")
        lines += textwrap.wrap(f"returned {got}", WRAP, subsequent_indent="         ")
        lines += textwrap.wrap(f"expected {_short(case.get('want'))}", WRAP, subsequent_indent="         ")
    return lines
