"""The visible checks of the exercises: ✓ Right, or a hint aimed at the likely mistake.

``check("greedy_decode")`` runs the student's function on a few fixed cases (made here, the same
every time) and compares what it gives with what the reference solution gives on them. The
reference solutions are not here and neither are their results: ``data/exercise_checks.json``
holds, for each case, a salted hash of the right outcome and of the outcome of every typical
mistake (with the mistake's hint), computed when the course was built
(``python -m whole_transformer.course check-data --write``). What that hides, said plainly: the file
holds no code and no result in the clear, but its salt is in it, so the right result of a visible
case with few possible outcomes (an id, a short list of ids) can be found by trying outcomes; that
is the result of one fixed case, not the function, and the hidden tests use other cases.
When the results match a mistake's on every case, or on every case that differs, its hint is shown;
failing that, hints read from what the function returned (types, shapes, nan); failing that, where
the first wrong result starts to differ (a row, an id, x or y), or what the function returned.
While the cases run, the course's own code for the step is a tripwire (``tripwire.py``): a function
that calls it is told so. The hidden tests decide the points; a check only helps, and never raises
for a wrong function.
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

from . import exercise_hints as hints
from . import grading as _grading
from . import tripwire as _tripwire
from .exercise_cases import Case, ca_cases, gd_cases, ml_cases, nt_cases, xy_cases
from .exercise_forward import CALLS, FORWARD
from .exercise_sampling import NotFromRng, sampled, sn_cases, sn_diagnose
from .stepwise import CacheError, token_by_token
from .views import viewed

DATA = Path(__file__).with_name("data") / "exercise_checks.json"
FLOAT_DIGITS = 7  # floats are compared to 7 significant digits (the hidden tests: 1e-6 relative)
#: A float this close to 0 is hashed as 0: a sum that cancels leaves 1e-17 or -0.0 on one CPU, 0.0 on another.
ZERO = 1e-12


_TooManyCalls = _grading.TooManyCalls
_HARNESS_ERRORS = (CacheError, _TooManyCalls, NotFromRng)


@dataclass
class Outcome:
    value: object = None  # the returned value as plain Python (or the raw value if not plain)
    raw: object = None
    error: BaseException | None = None
    changed: bool = False  # the watched argument was changed
    called: str | None = None  # a callable it may not call (``tripwire.FORBIDDEN``) that it called

    def describe(self) -> str:
        if self.error is not None:
            said = str(self.error).strip()
            return f"raised {type(self.error).__name__}: {said}" if said else f"raised {type(self.error).__name__}()"
        return _show(self.value)

    def canonical(self) -> str:
        """The outcome as text, floats to FLOAT_DIGITS significant digits (below ZERO: 0): what is hashed, so
        the same on any CPU (the data's floats lie far from where a rounding tips: ``check_data``).

        An error is its type and whether it says something (an exercise that asks for a message is right only
        with one); an error of the course's own harness (a broken cache, a loop that never stops, draws not
        from ``rng``) is also its message, which says what was wrong."""
        if self.called is not None:
            return "called:" + self.called
        if self.error is not None:
            if isinstance(self.error, _HARNESS_ERRORS):
                return f"error:{type(self.error).__name__}:{self.error}"
            return f"error:{type(self.error).__name__}:" + ("said" if str(self.error).strip() else "silent")
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


def item_digests(exercise: str, index: int, value, salt: str) -> list[str] | None:
    """A digest of each item of a result that is a list (a row of attention, an id, x or y), else None:
    what lets a check say where a wrong result starts to differ."""
    if type(value) is not tuple:
        return None
    return [digest(exercise, index, f"item {j}:{_canon(v)}", salt) for j, v in enumerate(value)]


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


@dataclass
class Exercise:
    name: str
    signature: str
    cases: Callable[[], list[Case]]
    diagnose: Callable[[list[Case], list[Outcome]], str | None]  # hints from types, before the first case
    driver: Callable[[Callable], Callable] | None = None  # what calls the function on a case (default: one call)
    differs: Callable[[Case, int, int, int], str] | None = None  # where a wrong list starts to differ, in words

    def runner(self, fn) -> Callable:
        """What runs on each case: the function itself, or the driver that calls it (token by token)."""
        return self.driver(fn) if self.driver is not None else fn


EXERCISES: dict[str, Exercise] = {
    "next_token": Exercise("next_token", "next_token(h, W, b)", nt_cases, hints.nt_diagnose),
    "greedy_decode": Exercise(
        "greedy_decode",
        "greedy_decode(model, prompt, eos=1, max_new=6)",
        gd_cases,
        hints.gd_diagnose,
        differs=hints.gd_differs,
    ),
    "make_xy": Exercise("make_xy", "make_xy(seq, eq=12, pad=0)", xy_cases, hints.xy_diagnose, differs=hints.xy_differs),
    "masked_loss": Exercise("masked_loss", "masked_loss(logits, targets, pad=0)", ml_cases, hints.ml_diagnose),
    "cached_attention": Exercise(
        "cached_attention",
        "cached_attention(q, k, v, cache=None)",
        ca_cases,
        hints.ca_diagnose,
        token_by_token,
        hints.ca_differs,
    ),
    "sample_next": Exercise(
        "sample_next",
        "sample_next(scores, temperature=1.0, top_k=None, top_p=None, rng=None)",
        sn_cases,
        sn_diagnose,
        sampled,
    ),
}


EXERCISES.update({name: Exercise(name, sig, cases, hints, viewed) for name, sig, cases, hints in FORWARD})


@lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads(DATA.read_text())


def _hashes(ex: Exercise, outcomes: list[Outcome]) -> list[str]:
    salt = _data()["salt"]
    return [digest(ex.name, i, o.canonical(), salt) for i, o in enumerate(outcomes)]


def run_cases(ex: Exercise, fn) -> list[Outcome]:
    """``fn`` on every case of ``ex``, the course's own code for its step a tripwire meanwhile (``tripwire``)."""
    cases = ex.cases()
    got = []
    with _tripwire.run(ex.name, fn) as trip:
        for c in cases:
            o = run_case(ex.runner(fn), c)
            if trip.called:
                o.called = trip.called[0]
                del trip.called[:]
            got.append(o)
    return got


def _where_it_differs(ex: Exercise, case: Case, index: int, o: Outcome, right_items) -> str | None:
    """Where a wrong list (rows, ids, x and y) first differs from the right one, in words; None if unknown."""
    if ex.differs is None or right_items is None or o.error is not None or type(o.value) is not tuple:
        return None
    mine = item_digests(ex.name, index, o.value, _data()["salt"]) or []
    j = next(
        (j for j, (a, b) in enumerate(zip(mine, right_items, strict=False)) if a != b), min(len(mine), len(right_items))
    )
    return ex.differs(case, j, len(mine), len(right_items))


def _verdict(ex: Exercise, fn) -> tuple[bool, str]:
    if not callable(fn):
        return False, f"✗ `{ex.name}` is not a function: define it with `def {ex.signature}:` and run that cell."
    data = _data()["exercises"][ex.name]
    cases = ex.cases()
    got = run_cases(ex, fn)
    called = next((o.called for o in got if o.called), None)
    if called is not None:
        return False, (
            f"✗ {ex.name} calls {called}, {_tripwire.what_it_is(called)}. A graded function earns points "
            "only for what it computes itself, so the hidden tests would give it nothing: write this step yourself."
        )
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
    for m in data["mistakes"]:  # a typical mistake that explains every case that differs
        if all(m["outcomes"][i] == mine[i] for i in bad):
            return False, "✗ Not yet. " + m["hint"]
    i = bad[0]
    if first.error is not None:
        return False, f"✗ Not yet. On {cases[i].label} it {first.describe()}"
    where = _where_it_differs(ex, cases[i], i, first, data.get("items", [None] * len(cases))[i])
    extra = " It also changed the list it was given." if first.changed else ""
    if where:
        return False, f"✗ Not yet. {where}{extra}"
    return False, f"✗ Not yet. On {cases[i].label} it returned {first.describe()}, which is not right.{extra}"


def _earlier_not_right(name: str, namespace: dict) -> str | None:
    """The hint when a function that ``name`` calls (the notebook's own) is not right yet, else None."""
    for earlier in CALLS.get(name, ()):
        fn = namespace.get(earlier)
        if callable(fn) and not _verdict(EXERCISES[earlier], fn)[0]:
            return (
                f"✗ Not yet: {name} calls your {earlier}, which is not right yet, so {name} cannot be either. "
                f'Run check("{earlier}") for a hint, fix {earlier}, then check {name} again.'
            )
    return None


def check_exercise(name: str, fn, namespace: dict | None = None) -> bool:
    """Run ``fn`` on the fixed cases of exercise ``name``; print ✓ or a hint; return True if right.

    ``namespace`` (the notebook's globals): when a function that calls the notebook's earlier ones is not
    right, a wrong earlier one is named first.
    """
    ok, message = _verdict(EXERCISES[name], fn)
    earlier = None if ok or "Not written yet" in message else _earlier_not_right(name, namespace or {})
    print(earlier or message)
    return ok
