"""The visible checks of the exercises: ✓ Right, or a hint aimed at the likely mistake.

``check("greedy_decode")`` runs the student's function on a few fixed cases (made here, the same
every time) and compares what it gives with what the reference solution gives on them. The
reference solutions are not here and neither are their results: ``data/exercise_checks.json``
holds, for each case, a salted hash of the right outcome and of the outcome of every typical
mistake (with the mistake's hint), computed when the course was built
(``python -m whole_transformer.course check-data --write``). Reading this module or that file gives
hints, not answers. When the results match a mistake's, its hint is shown; failing that, hints
read from the types of the results; failing that, the first case that differs and what the
function returned. The hidden tests use other cases and decide the points; a check only helps,
and never raises for a wrong function.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import grading as _grading
from .exercise_cases import Case, ca_cases, gd_cases, ml_cases, nt_cases, xy_cases
from .exercise_sampling import sampled, sn_cases, sn_diagnose
from .stepwise import CacheError, token_by_token

DATA = Path(__file__).with_name("data") / "exercise_checks.json"
FLOAT_DIGITS = 7  # floats are compared to 7 significant digits (the hidden tests: 1e-6 relative)
#: A float this close to 0 is hashed as 0: a sum that cancels leaves 1e-17 or -0.0 on one CPU, 0.0 on another.
ZERO = 1e-12


_TooManyCalls = _grading.TooManyCalls


@dataclass
class Outcome:
    value: object = None  # the returned value as plain Python (or the raw value if not plain)
    raw: object = None
    error: BaseException | None = None
    changed: bool = False  # the watched argument was changed

    def describe(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {self.error}"
        return _show(self.value)

    def canonical(self) -> str:
        """The outcome as text, floats to FLOAT_DIGITS significant digits (below ZERO: 0): what is hashed, so
        the same on any CPU (the data's floats lie far from where a rounding tips: ``check_data``)."""
        if self.error is not None:
            return "error:" + type(self.error).__name__
        return f"value:{_canon(self.value)};changed:{self.changed}"


def _canon(value) -> str:
    t = type(value)
    if t is bool:
        return "b" + str(value)
    if t is int:
        return f"i{value}"
    if t is float:
        if not math.isfinite(value):
            return "f" + repr(value)
        return "f" + f"{value if abs(value) >= ZERO else 0.0:.{FLOAT_DIGITS - 1}e}"
    if t is str:
        return "s" + json.dumps(value)
    if value is None:
        return "none"
    if t is tuple:
        return "[" + ",".join(_canon(v) for v in value) + "]"
    return "other:" + t.__name__


def digest(exercise: str, index: int, canonical: str, salt: str) -> str:
    return hashlib.sha256(f"{salt}:{exercise}:{index}:{canonical}".encode()).hexdigest()[:20]


def _show(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, tuple) and value and all(isinstance(v, float) for v in value):
        return "[" + ", ".join(f"{v:.4g}" for v in value) + "]"
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value)


def run_case(fn, case: Case) -> Outcome:
    """What ``fn`` does on one case: its value (as plain Python), or the error it raised."""
    args, kwargs = case.make()
    before = list(args[case.watch]) if case.watch is not None else None
    out = Outcome()
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.raw = fn(*args, **kwargs)
    except (Exception, _TooManyCalls) as e:  # noqa: BLE001 - the student's code may raise anything
        out.error = e
        return out
    try:
        out.value = _grading.plain(out.raw)
    except _grading.NotPlain:
        out.value = out.raw
    if case.watch is not None:
        out.changed = list(args[case.watch]) != before
    return out


def _is_number_not_int(v) -> bool:
    return isinstance(v, float) or isinstance(v, tuple)


def _nt_diagnose(cases, got) -> str | None:
    values = [o.value for o in got if o.error is None]
    if values and all(isinstance(v, float) and v.is_integer() for v in values):  # 3.0: an id, but a float
        return (
            f"It returns {values[0]!r}, a float. An id is a whole number that indexes the vocabulary: "
            "convert the id to an int before you return it."
        )
    for o in got:
        if o.error is None and (_is_number_not_int(o.value) or isinstance(o.value, bool)):
            return (
                "It returns a score (or several), not an id. The id of the next token is the position of the "
                "highest score: np.argmax(scores)."
            )
    for o in got:
        if o.error is not None and ("matmul" in str(o.error) or "shape" in str(o.error) or "align" in str(o.error)):
            return "Check the product: h is (d,) and W is (d, V), so the scores are h @ W + b, of shape (V,)."
    return None


def _gd_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and isinstance(o.value, tuple) and any(not isinstance(v, int) for v in o.value):
            return (
                "It appends scores, not ids. Append the position of the highest score of the last row "
                "(np.argmax), an int."
            )
    for o in got:
        if o.error is None and o.changed:
            return (
                "It changes the caller's prompt: append to a new list that starts as a copy of it, and leave "
                "the prompt you were given as it was."
            )
    for o in got:
        if o.error is None and not isinstance(o.value, tuple):
            return f"It should return the list of ids, but returned {o.describe()}."
    return None


def _xy_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and o.changed:
            return "It changes the caller's sequence: build x and y as new lists (seq[:-1] and seq[1:] are copies)."
    for o in got:
        if o.error is None and not (isinstance(o.value, tuple) and len(o.value) == 2):
            return f"It should return two lists, x and y (return x, y), but returned {o.describe()}."
    return None


def _ml_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and isinstance(o.value, tuple):
            return (
                "It returns several numbers; the loss is one number: the mean of the rows' losses, over the "
                "rows that count."
            )
    for c, o in zip(cases, got, strict=True):
        if "large" in c.label and o.error is None and isinstance(o.value, float) and not np.isfinite(o.value):
            return (
                "With large logits it gives nan or inf: exp overflows. Use the notebook's softmax, which "
                "subtracts each row's maximum first."
            )
    return None


def _ca_diagnose(cases, got) -> str | None:
    for c, o in zip(cases, got, strict=True):
        if isinstance(o.error, CacheError):  # the contract broken: its message says how
            return f"On {c.label}, {o.error}."
    return None


@dataclass
class Exercise:
    name: str
    signature: str
    cases: Callable[[], list[Case]]
    diagnose: Callable[[list[Case], list[Outcome]], str | None]  # hints from types, before the first case
    driver: Callable[[Callable], Callable] | None = None  # what calls the function on a case (default: one call)

    def runner(self, fn) -> Callable:
        """What runs on each case: the function itself, or the driver that calls it (token by token)."""
        return self.driver(fn) if self.driver is not None else fn


EXERCISES: dict[str, Exercise] = {
    "next_token": Exercise("next_token", "next_token(h, W, b)", nt_cases, _nt_diagnose),
    "greedy_decode": Exercise(
        "greedy_decode", "greedy_decode(model, prompt, eos=1, max_new=6)", gd_cases, _gd_diagnose
    ),
    "make_xy": Exercise("make_xy", "make_xy(seq, eq=12, pad=0)", xy_cases, _xy_diagnose),
    "masked_loss": Exercise("masked_loss", "masked_loss(logits, targets, pad=0)", ml_cases, _ml_diagnose),
    "cached_attention": Exercise(
        "cached_attention", "cached_attention(q, k, v, cache=None)", ca_cases, _ca_diagnose, token_by_token
    ),
    "sample_next": Exercise(
        "sample_next",
        "sample_next(scores, temperature=1.0, top_k=None, top_p=None, rng=None)",
        sn_cases,
        sn_diagnose,
        sampled,
    ),
}


@lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads(DATA.read_text())


def _hashes(ex: Exercise, outcomes: list[Outcome]) -> list[str]:
    salt = _data()["salt"]
    return [digest(ex.name, i, o.canonical(), salt) for i, o in enumerate(outcomes)]


def _verdict(ex: Exercise, fn) -> tuple[bool, str]:
    if not callable(fn):
        return False, f"✗ `{ex.name}` is not a function: define it with `def {ex.signature}:` and run that cell."
    data = _data()["exercises"][ex.name]
    cases = ex.cases()
    got = [run_case(ex.runner(fn), c) for c in cases]
    mine = _hashes(ex, got)
    bad = [i for i, (h, right) in enumerate(zip(mine, data["right"], strict=True)) if h != right]
    if not bad:
        return True, f"✓ Right. {ex.name} gives the right result on all {len(cases)} cases."
    first = got[bad[0]]
    if isinstance(first.error, NotImplementedError):
        return False, (
            f"✗ Not written yet: replace `raise NotImplementedError()` in {ex.name} with your code, "
            "run that cell, then run this one again."
        )
    if isinstance(first.error, _TooManyCalls):
        return False, f"✗ Not yet. On {cases[bad[0]].label}: {first.error}"
    if first.error is None and first.raw is None:
        return False, f"✗ Not yet. {ex.name} returns None: did you forget the `return` at the end?"
    for m in data["mistakes"]:  # a typical mistake that gives exactly these results
        if m["outcomes"] == mine:
            return False, "✗ Not yet. " + m["hint"]
    hint = ex.diagnose(cases, got)
    if hint:
        return False, "✗ Not yet. " + hint
    i = bad[0]
    for m in data["mistakes"]:  # a mistake that explains at least the first case that differs
        if m["outcomes"][i] == mine[i]:
            return False, f"✗ Not yet. On {cases[i].label}: {m['hint']}"
    if first.error is not None:
        return False, f"✗ Not yet. On {cases[i].label} it {first.describe()}"
    extra = " It also changed the list it was given." if first.changed else ""
    return False, f"✗ Not yet. On {cases[i].label} it returned {first.describe()}, which is not right.{extra}"


def check_exercise(name: str, fn) -> bool:
    """Run ``fn`` on the fixed cases of exercise ``name``; print ✓ or a hint; return True if right."""
    ok, message = _verdict(EXERCISES[name], fn)
    print(message)
    return ok
