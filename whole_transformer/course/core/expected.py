"""The format of a hidden test's expected values: the EXPECTED part of its cell in ``source/``.

A hidden test has two parts (``answers/hidden_parts.py`` writes them)::

    ### BEGIN HIDDEN TESTS
    grading.hand_out("make_xy", make_xy, [((task.sequence(0),), {}), …], watch=0)
    ### BEGIN EXPECTED
    # {"name": "make_xy", "compare": "pair", "cases": [{"kind": "a one-digit number", "want": […]}, …]}
    ### END EXPECTED
    ### END HIDDEN TESTS

The kernel runs the first part; the EXPECTED part, one JSON comment line between its markers, is cut out
before the kernel runs anything and stays with the grader (``plugins/verdict.py``). Its payload: the
test's ``name``, how a result is compared (``compare``: ``core/compare.py``) and the ``cases``, each with
its ``kind`` and the right result (``want``); a question's test also says ``question`` and ``what`` it asks.

The floats of a ``want`` are stored rounded (``rounded_payload``), so that the same cases give the same
text on any CPU and BLAS, which change a float's last bits (a sum taken in another order): to
``digits_for(rel)`` significant digits and a grid of ``quantum_for(abs)``, from the case's tolerance
(``compare.tolerance``). The rounding moves a float by at most 1/FINER of its tolerance: a right result
still passes, and a wrong one still fails. Two payloads are ``in_step`` when they differ only in floats
that lie within 1/STEP of their tolerance of each other (another CPU's rounding, a value on the edge of
two roundings); a real change of a case, an input or an expected value by more, is not.
"""

from __future__ import annotations

import json
import math
import re

from .compare import tolerance

BEGIN, END = "### BEGIN EXPECTED", "### END EXPECTED"
_REGION = re.compile(rf"^[ \t]*{re.escape(BEGIN)}[ \t]*\n(.*?)^[ \t]*{re.escape(END)}[ \t]*(\n|$)", re.S | re.M)


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


#: A stored float lies within 1/FINER of its case's tolerance of the exact value (rounding to half a unit).
FINER = 2000
#: Two stored floats within 1/STEP of the tolerance of each other are the same expected value.
STEP = 100


def digits_for(rel: float) -> int:
    """Significant digits kept of a float compared within ``rel``: 10 for 1e-6, 9 for 1e-5. Half a unit of the
    last digit is at most 0.5 * 10^(1 - digits) of the value: ``rel`` / 2000 and less."""
    return max(1, math.ceil(-math.log10(rel) - 1e-9) + 1 + round(math.log10(FINER / 2)))


def quantum_for(abs_tol: float) -> int:
    """The exponent of the absolute grid a float compared within ``abs_tol`` is rounded to: -12 for 1e-9
    (half a step, 5e-13, is ``abs_tol`` / 2000). A value that is 0 but for a CPU's rounding (2e-17) is 0."""
    return math.floor(math.log10(abs_tol) + 1e-9) - round(math.log10(FINER / 2))


def round_float(x: float, digits: int, quantum: int) -> float:
    """``x`` to ``digits`` significant digits, or to a multiple of 10^quantum where that is coarser; the
    nearest double of a short decimal, so the same on every machine (Python's float text is exact)."""
    if not math.isfinite(x):
        return x
    text = f"{x:.{digits - 1}e}"
    if int(text.partition("e")[2]) - (digits - 1) < quantum:  # the grid is coarser than the digits
        n = round(x / 10.0**quantum)
        return float(f"{n}e{quantum}") if n else 0.0
    return float(text) or 0.0  # no -0.0: the sign of a zero is a CPU's rounding too


def rounded(value, rel: float, abs_tol: float):
    """Every float of a plain value (lists and dicts walked) rounded for the tolerance (rel, abs_tol)."""
    if type(value) is float:
        return round_float(value, digits_for(rel), quantum_for(abs_tol))
    if type(value) is list:
        return [rounded(v, rel, abs_tol) for v in value]
    if type(value) is dict:
        return {k: rounded(v, rel, abs_tol) for k, v in value.items()}
    return value


def rounded_payload(payload: dict) -> dict:
    """The payload with each case's ``want`` (and ``before``) rounded by the case's tolerance."""
    cases = []
    for case in payload["cases"]:
        rel, abs_tol = tolerance(payload["compare"], case)
        cases.append({k: rounded(v, rel, abs_tol) if k in ("want", "before") else v for k, v in case.items()})
    return {**payload, "cases": cases}


def _close(a, b, rel: float, abs_tol: float) -> bool:
    """JSON values the same but for floats within 1/STEP of the tolerance (exact types, as the grader reads)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        if not (math.isfinite(a) and math.isfinite(b)):
            return a == b or (math.isnan(a) and math.isnan(b))
        return abs(a - b) <= (abs_tol + rel * max(abs(a), abs(b))) / STEP
    if type(a) is list:
        return len(a) == len(b) and all(_close(x, y, rel, abs_tol) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_close(a[k], b[k], rel, abs_tol) for k in a)
    return a == b


def in_step(old: dict, new: dict) -> bool:
    """The payloads are the same test: everything equal but floats of a case within 1/STEP of its tolerance,
    and ``old`` stored as rounded (a payload written before the rounding, or by hand, is rewritten)."""
    if old.keys() != new.keys() or any(old[k] != new[k] for k in old if k != "cases"):
        return False
    if type(old.get("cases")) is not list or type(new.get("cases")) is not list:
        return False
    if len(old["cases"]) != len(new["cases"]) or not all(type(c) is dict for c in old["cases"] + new["cases"]):
        return False
    if json.dumps(rounded_payload(old)) != json.dumps(old):
        return False
    for a, b in zip(old["cases"], new["cases"], strict=True):
        if a.keys() != b.keys():
            return False
        if any(a[k] != b[k] for k in a if k not in ("want", "before")):  # the kind, the tolerance, …
            return False
        rel, abs_tol = tolerance(new["compare"], b)
        if not all(_close(a[k], b[k], rel, abs_tol) for k in a if k in ("want", "before")):
            return False
    return True
