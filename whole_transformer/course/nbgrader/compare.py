"""Comparing a result handed out by the student's kernel with the expected value, in the grader.

``case_passes`` decides one case by the test's comparison (``same``, ``shape``, ``choice``, ``id``,
``ids``, ``pair``, ``close``); ``judge`` names the kinds of case that failed. Both read plain data
only (numbers, strings, lists, null: what ``grading.outcome`` hands out), by exact type.
"""

from __future__ import annotations

import math

from ...questions import choice_letter


def _same(got, want, rel: float, abs_tol: float) -> bool:
    """got equals want: ints exactly, floats within tolerance, lists item by item, by exact type.

    An int where a float is expected is accepted; a float where an int is expected is not (a
    count or an id must be a whole number), nor a bool for a number.
    """
    tw, tg = type(want), type(got)
    if tw is list:
        return (
            tg is list
            and len(got) == len(want)
            and all(_same(g, w, rel, abs_tol) for g, w in zip(got, want, strict=True))
        )
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


def floats(value):
    """Every float in a plain value, lists and tuples walked (JSON data, or ``grading.plain``'s)."""
    if type(value) is float:
        yield value
    elif type(value) in (list, tuple):
        for v in value:
            yield from floats(v)
