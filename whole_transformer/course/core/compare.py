"""Comparing a result handed out by the student's kernel with the expected value, in the grader.

``case_passes`` decides one case by the test's comparison (``same``, ``shape``, ``choice``, ``id``,
``ids``, ``pair``, ``close``, ``sample``); ``judge`` names the kinds of case that failed.

``sample`` judges a sampler by its draws: a case's ``want`` is the probability of every id, and the
draws pass when no id of probability 0 was drawn and Pearson's statistic, sum of (count - n p)² / (n p)
over the ids that can be drawn, is at most ``chi_square_bound`` of their number less one. A right
sampler fails a case with probability below e^-16 (1 in 9 million); a case whose ``want`` is
``{"raises": name}`` passes when the function raised that exception with a message. Both read plain data
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


#: A case's tolerance unless it says its own (``rel``, ``abs``): got passes when |got - want| <= ABS + REL |want|.
REL, ABS = 1e-6, 1e-9
#: The upper tail the bound leaves to a right sampler: e^-TAIL.
TAIL = 16.0
#: An id this improbable is taken as never drawn (a temperature near 0 leaves the others about e^-100).
NEVER = 1e-12


def chi_square_bound(df: int) -> float:
    """A value a chi-square of ``df`` degrees of freedom exceeds with probability at most e^-TAIL.

    Laurent and Massart (2000), Lemma 1: P(X >= df + 2 sqrt(df x) + 2x) <= e^-x. For 5 ids (df 4):
    4 + 16 + 32 = 52. The cases give every id that can be drawn an expected count of 5 or more, where
    Pearson's statistic follows the chi-square closely.
    """
    return df + 2 * math.sqrt(df * TAIL) + 2 * TAIL


def pearson(draws, probs) -> float:
    """Pearson's statistic of ``draws`` (ids) against ``probs``; infinity when an id of probability 0
    (below NEVER) or out of range was drawn. NaN when there are no draws."""
    counts = [0] * len(probs)
    for d in draws:
        if not 0 <= d < len(probs) or probs[d] < NEVER:
            return math.inf
        counts[d] += 1
    n = len(draws)
    return sum((c - n * p) ** 2 / (n * p) for c, p in zip(counts, probs, strict=True) if p >= NEVER) if n else math.nan


def draws_fit(draws, probs) -> bool:
    """The draws (a list of ids) could come from ``probs`` (see the module's docstring)."""
    if not _ids(draws) or not draws:
        return False
    df = sum(1 for p in probs if p >= NEVER) - 1
    return pearson(draws, probs) <= chi_square_bound(df)


def same_distribution(draws, counts: dict) -> bool:
    """The draws (ids) and another sampler's ``counts`` (id as text → times drawn) could come from one
    distribution: the chi-square test of two samples, ids drawn fewer than 10 times in all pooled, at
    ``chi_square_bound`` (it names a catalogued mistake; it never gives points)."""
    if not _ids(draws) or not draws or not counts:
        return False
    mine: dict[str, int] = {}
    for d in draws:
        mine[str(d)] = mine.get(str(d), 0) + 1
    na, nb = len(draws), sum(counts.values())
    bins, rare = [], [0, 0]
    for key in set(mine) | set(counts):
        a, b = mine.get(key, 0), counts.get(key, 0)
        if a + b < 10:
            rare = [rare[0] + a, rare[1] + b]
        else:
            bins.append((a, b))
    if sum(rare):
        bins.append((rare[0], rare[1]))
    ka, kb = math.sqrt(nb / na), math.sqrt(na / nb)
    stat = sum((a * ka - b * kb) ** 2 / (a + b) for a, b in bins)
    return stat <= chi_square_bound(max(len(bins) - 1, 0))


def _sample_passes(case: dict, result: dict) -> bool:
    want = case["want"]
    if type(want) is dict:
        return result.get("error") == want["raises"] and result.get("said") is True
    return "value" in result and draws_fit(result["value"], want)


def _ids(value) -> bool:
    return type(value) is list and all(type(v) is int for v in value)


def tolerance(compare: str, case: dict) -> tuple[float, float]:
    """(rel, abs): how far a float of the case's ``want`` may be from the right one and still pass; for a
    sampler's case, how finely its probabilities matter (an id below NEVER is never drawn)."""
    return case.get("rel", REL), case.get("abs", NEVER if compare == "sample" else ABS)


def case_passes(compare: str, case: dict, result: dict) -> bool:
    """Whether one handed-out result (``grading.outcome``) is right for one expected case."""
    if type(result) is not dict:
        return False
    if compare == "sample":
        return _sample_passes(case, result)
    if "value" not in result:
        return False
    got, want = result["value"], case["want"]
    if "before" in case and result.get("after") != case["before"]:
        return False  # the function changed the list it was given
    rel, abs_tol = tolerance(compare, case)
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
