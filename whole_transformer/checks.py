"""The visible checks students run: right or not yet, with a hint aimed at the likely mistake.

A check never prints the right answer, and the answers are not written here in the clear:
each is stored as a hash of its normal form, so reading this file gives hints, not answers.
The hidden tests in the notebooks decide the points; these checks only help.

    >>> check("tokens_905", 7)
    ✗ Not yet. Did you count <eos>? The sequence ends with it.
    False
"""

from __future__ import annotations

import hashlib
import inspect
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass, field


class NoAnswer(Exception):
    pass


# The forms read here are the forms the hidden tests accept (grading.same / same_shape): a check
# never says "Right." to an answer that would not earn its point, such as "8" or 8.0 for 8.
def _as_int(x) -> int:
    if isinstance(x, bool):
        raise ValueError("True/False is not a number")
    if isinstance(x, numbers.Integral):
        return int(x)
    if hasattr(x, "item") and getattr(x, "ndim", 1) == 0 and not isinstance(x, (str, float)):
        return _as_int(x.item())
    if isinstance(x, (str, float, numbers.Number)):
        raise ValueError(f"write a whole number, without quotes or a decimal point (like 12, not '12' or 12.0); "
                         f"got {x!r}")
    raise ValueError(f"expected a whole number, got {x!r}")


def _as_shape(x) -> tuple[int, ...]:
    if isinstance(x, str):
        raise ValueError(f"write the shape as a tuple of whole numbers, without quotes, such as (2, 3); got {x!r}")
    try:
        return tuple(_as_int(d) for d in x)
    except TypeError:
        raise ValueError(f"expected a shape such as (2, 3), got {x!r}") from None


def _as_choice(x) -> str:
    if not isinstance(x, str) or not x.strip():
        raise ValueError(f"expected one letter such as 'A', got {x!r}")
    letter = x.strip().rstrip(".):").strip().upper()
    if len(letter) != 1 or not letter.isalpha():
        raise ValueError(f"expected one letter such as 'A', got {x!r}")
    return letter


KINDS: dict[str, Callable] = {"int": _as_int, "shape": _as_shape, "choice": _as_choice}


def _digest(qid: str, value) -> str:
    return hashlib.sha256(f"{qid}:{value!r}".encode()).hexdigest()[:16]


@dataclass
class Question:
    qid: str
    kind: str
    answer_hash: str
    hints: dict[object, str] = field(default_factory=dict)  # normal form of a wrong answer → hint
    fallback: str = "Look again at the explanation above the question."

    def normal(self, answer):
        if answer is None or answer is Ellipsis:
            raise NoAnswer
        return KINDS[self.kind](answer)

    def is_right(self, answer) -> bool:
        return _digest(self.qid, self.normal(answer)) == self.answer_hash

    def feedback(self, answer) -> tuple[bool, str]:
        try:
            if self.is_right(answer):
                return True, "✓ Right."
            value = self.normal(answer)
        except NoAnswer:
            return False, "Write your answer in the cell above first (replace the None)."
        except ValueError as e:
            return False, f"✗ Cannot read that answer: {e}."
        return False, "✗ Not yet. " + self.hints.get(value, self.fallback)


QUESTIONS: dict[str, Question] = {}


def _q(qid: str, kind: str, answer_hash: str, hints: dict | None = None, fallback: str | None = None):
    QUESTIONS[qid] = Question(qid, kind, answer_hash, hints or {}, fallback or Question.fallback)


# ---------------------------------------------------------------- notebook 01
_q("tokens_905", "int", "034dc9d4c862521b", {
    7: "Did you count <eos>? The sequence ends with it.",
    6: "Count every token: three digits, '=', the words, and the token that ends the answer.",
    9: "905 has no tens word: count the words of 'nine hundred five' again.",
    4: "That is the prompt only (digits and '='); the answer is in the same sequence.",
}, "One token per digit, one for '=', one per word, and one that ends the answer.")
_q("logits_shape", "shape", "3fb470074cc5b30d", {
    (64, 8, 64): "That is the last block's output (d_model wide). The output layer turns each row into scores.",
    (64, 42): "There is one row of scores for every position, not one per sequence.",
    (8, 42): "Keep the batch axis: 64 sequences go in at once.",
    (64, 42, 8): "Check the order of the axes: batch, position, then one score per token.",
}, "The logits have one row per position of every sequence, one score per vocabulary token.")
_q("heads_4_to_8", "choice", "b83cd56cb4f8c9e5", {
    "A": "Each head gets d_model / heads columns: more heads cut the same matrices into thinner slices.",
    "C": "Each head gets d_model / heads columns: more heads cut the same matrices into thinner slices.",
}, "Answer with one of the letters A, B or C.")
_q("ffn_params", "int", "de532cc8a80480ac", {
    16384: "That counts the weights only, the biases are missing.",
    16512: "Both Linear layers have a bias: one of 128 numbers and one of 64.",
    16448: "Both Linear layers have a bias: one of 128 numbers and one of 64.",
    8320: "That is only the first Linear layer; the FFN has two.",
    8256: "That is only the second Linear layer; the FFN has two.",
}, "Count the weights and the biases of both Linear layers.")

# ---------------------------------------------------------------- notebook 02
_q("attention_scores_shape", "shape", "ee60b08048c1344d", {
    (64, 8, 8): "With 4 heads, each head has its own table of scores: there is a heads axis.",
    (64, 4, 8, 16): "The last axis is the keys (one score per key position), not d_k.",
    (64, 8, 4, 8): "nanoGPT and this course put the heads axis right after the batch: (B, h, L_q, L_k).",
    (4, 8, 8): "Keep the batch axis: 64 sequences go in at once.",
}, "Scores have the shape (B, h, L_q, L_k).")
_q("std1_no_factor", "choice", "1700a9d8463b0e75", {
    "A": "Compare the starting lengths, not the settings: with std 1 and no factor a token row starts about "
         "8 long, as in the course's model, not 64 long as with the factor.",
    "C": "Nothing stops a model without the factor from learning: the factor only makes the token rows "
         "longer. Compare the length a token row starts with (std 1, no factor) with a position row's.",
}, "Answer with one of the letters A, B or C.")

# ---------------------------------------------------------------- notebook 03
_q("changes_during_inference", "choice", "d30fa689c0be1cef", {
    "A": "W_Q is a weight: inference only reads the weights, it never changes them.",
    "C": "The embedding table is a weight: inference only reads it.",
}, "Answer with one of the letters A, B or C.")
_q("rows_742", "int", "3ecde306b93ccfcf", {
    8: "The next word has not been written yet, so it is not an input.",
    3: "The model reads everything so far: the prompt too, not only the words.",
    6: "Did you count the '=' sign? It goes in with the digits.",
    1: "Training sees one row per token, and so does inference: the whole prefix goes in again.",
    4: "That is the prompt alone (7 4 2 =). The words already written go in too.",
}, "Count the tokens so far: the digits, '=', and the words already written.")

# ---------------------------------------------------------------- notebook 04
_q("counted_427", "int", "7148ea2564d6e858", {
    4: "<eos> is part of the answer too: the model has to learn to stop.",
    8: "The targets under the prompt (the next digit, and '=') are skipped.",
    6: "'=' is part of the question: its target is skipped too.",
    9: "427 has 8 targets in all, and only the answer's count.",
}, "Count the targets that are words or <eos>.")
_q("flat_shape", "shape", "2d7d8513c48041d7", {
    (320,): "Each row keeps its 42 scores: flatten the batch and position axes only.",
    (64, 210): "Flatten batch and positions, not positions and scores: the loss wants one row of scores per guess.",
    (42, 320): "One row per guess: the guesses go first, then the 42 scores.",
    (64, 5, 42): "That is the shape before flattening: merge the batch and position axes into one.",
}, "Every position of every sequence becomes one row of 42 scores.")
_q("no_causal_mask", "choice", "9977dac71882d171", {
    "A": "Without the mask each position can see the very token it must guess: the loss falls fast.",
    "C": "Without the mask each position can see the very token it must guess.",
}, "Answer with one of the letters A, B or C.")
_q("learns_nothing", "choice", "b711400ea007c776", {
    "A": "A bigger model does not fix a bug in the mask, the shift or the loss.",
    "C": "More data does not fix a bug in the mask, the shift or the loss.",
}, "Answer with one of the letters A, B or C.")


_MISSING = object()


# ---------------------------------------------------------------- answer cells that failed
# A check reads the notebook's variable, so after an answer cell raised (``std1_no_factor = B``
# without quotes is a NameError) the variable still holds an earlier value, or none. Grading that
# value would answer a question the student no longer asks. In IPython the checks therefore watch
# every cell that runs: a cell that assigns a question's variable (or defines an exercise's
# function) and fails marks that name, and the next successful run of such a cell clears the mark.
_FAILED: dict[str, str] = {}  # name → what the cell that should have set it raised


def _assigned_names(source: str) -> set[str]:
    """The names of questions and exercises that a cell sets at its top level (read as text, so a
    cell with a syntax error counts too)."""
    names = set()
    for name in (*QUESTIONS, *EXERCISES):
        if re.search(rf"^(?:{re.escape(name)}\s*(?::[^=\n]*)?=(?!=)|def\s+{re.escape(name)}\s*\()",
                     source, re.M):
            names.add(name)
    return names


def _after_cell(result) -> None:
    """IPython's post_run_cell event: note the question and exercise names whose cell failed."""
    source = getattr(getattr(result, "info", None), "raw_cell", None) or ""
    names = _assigned_names(source)
    if not names:
        return
    error = result.error_before_exec or result.error_in_exec
    for name in names:
        if error is None:
            _FAILED.pop(name, None)
        else:
            _FAILED[name] = f"{type(error).__name__}: {error}"


def _watch_cells() -> None:
    """Register _after_cell with the running IPython, once (importing this module again is harmless)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    for cb in list(shell.events.callbacks["post_run_cell"]):
        if cb is _after_cell:
            return
        if getattr(cb, "__qualname__", "") == "_after_cell" and getattr(cb, "__module__", "") == __name__:
            shell.events.unregister("post_run_cell", cb)  # left by an earlier import of this module
    shell.events.register("post_run_cell", _after_cell)


_watch_cells()


def _did_not_run(name: str, what: str) -> str:
    if _FAILED[name].startswith("NotImplementedError"):
        return (f"✗ The {what} still raises NotImplementedError: delete the line `raise NotImplementedError()`, "
                "run the cell, then run this check again. Nothing was graded.")
    return (f"✗ The {what} did not run: it stopped with {_FAILED[name]}. So `{name}` is not what the cell "
            f"says now (or has changed since it ran), and nothing was graded. Fix the cell, run it, then run "
            "this check again.")


class _Quiet:
    """What check() returns in a notebook: true or false like the bool it wraps, but IPython shows
    nothing for it, so a check cell prints ✓ or ✗ and no ``Out[n]: True`` under it."""

    __slots__ = ("ok",)

    def __init__(self, ok: bool):
        self.ok = bool(ok)

    def __bool__(self) -> bool:
        return self.ok

    def __eq__(self, other) -> bool:
        return self.ok == other

    def __hash__(self) -> int:
        return hash(self.ok)

    def __repr__(self) -> str:
        return repr(self.ok)

    def _ipython_display_(self) -> None:
        pass


def _in_ipython(caller_globals: dict) -> bool:
    return "get_ipython" in caller_globals and "_ih" in caller_globals


def check(qid: str, answer=_MISSING):
    """Print whether an answer is right, or a hint aimed at the likely mistake.

    ``check("tokens_905")`` reads the notebook variable of the same name as the question, so the
    check works (and says what to do) even before the answer cell has run. For an exercise,
    ``check("greedy_decode")`` runs the notebook's function of that name beside the reference.
    When the cell that sets the variable (or defines the function) failed the last time it ran,
    the check says so and grades nothing.

    Returns True or False. Called from a notebook cell it returns a value IPython does not
    display (it is still true or false), so the cell shows only the printed line.
    """
    _watch_cells()
    caller = inspect.currentframe().f_back.f_globals
    ok = _check(qid, answer, caller)
    return _Quiet(ok) if _in_ipython(caller) else ok


def _check(qid: str, answer, caller: dict) -> bool:
    if qid in EXERCISES:
        fn = answer
        if fn is _MISSING:
            if qid in _FAILED:
                print(_did_not_run(qid, f"cell that defines `{qid}`"))
                return False
            fn = caller.get(qid, _MISSING)
            if fn is _MISSING:
                print(f"No function yet: run the cell that defines `{EXERCISES[qid].signature}` first.")
                return False
        return check_exercise(qid, fn)
    if qid not in QUESTIONS:
        raise ValueError(f"unknown question {qid!r}; the questions are {sorted(QUESTIONS)} "
                         f"and the exercises {sorted(EXERCISES)}")
    if answer is _MISSING:
        if qid in _FAILED:
            print(_did_not_run(qid, "answer cell"))
            return False
        if qid not in caller:
            print(f"No answer yet: write `{qid} = ...` in the answer cell above and run it.")
            return False
        answer = caller[qid]
    ok, message = QUESTIONS[qid].feedback(answer)
    print(message)
    return ok


# ---------------------------------------------------------------- exercises (notebooks 03 and 04)
# ``check("greedy_decode")`` runs the student's function beside the reference (reference.py) on
# a few small cases. When they differ, it runs the typical mistakes on the same cases: each is
# written below as the wrong code a student might write, and the one that gives exactly the
# student's results names the hint. Failing that, the first case that differs is shown, with
# what the function gave and what it should give. The hidden tests in the notebooks use other
# cases and decide the points; a check only helps, and never raises for a wrong function.

import warnings as _warnings  # noqa: E402

import numpy as _np  # noqa: E402

from . import grading as _grading  # noqa: E402
from . import reference as _ref  # noqa: E402

_MAX_CALLS = 200  # a greedy loop that calls the model more often than this does not stop


class _TooManyCalls(Exception):
    pass


@dataclass
class _Case:
    label: str  # what the case is, as the student reads it in a hint
    make: Callable[[], tuple[tuple, dict]]  # fresh (args, kwargs) for every run
    watch: int | None = None  # the argument (a list) that the function must not change


@dataclass
class _Outcome:
    value: object = None  # the returned value as plain Python (or the raw value if not plain)
    raw: object = None
    error: BaseException | None = None
    changed: bool = False  # the watched argument was changed

    def describe(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {self.error}"
        return _show(self.value)


@dataclass
class _Mistake:
    name: str
    code: Callable
    hint: str


@dataclass
class _Exercise:
    name: str
    signature: str
    reference: Callable
    cases: Callable[[], list[_Case]]
    mistakes: list[_Mistake]
    diagnose: Callable[[list[_Case], list[_Outcome]], str | None]  # hints from types, before mistakes


def _show(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, tuple) and value and all(isinstance(v, float) for v in value):
        return "[" + ", ".join(f"{v:.4g}" for v in value) + "]"
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value)


def _alike(a, b, rel: float = 1e-6) -> bool:
    """Plain values equal: ids exactly, floats within rel (NaN alike NaN)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(
            _alike(x, y, rel) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        a, b = float(a), float(b)
        if a != a or b != b:
            return a != a and b != b
        return a == b or abs(a - b) <= 1e-9 + rel * abs(b)
    return type(a) is type(b) and a == b


def _run(fn, case: _Case) -> _Outcome:
    args, kwargs = case.make()
    before = list(args[case.watch]) if case.watch is not None else None
    out = _Outcome()
    try:
        with _np.errstate(all="ignore"), _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            out.raw = fn(*args, **kwargs)
    except (Exception, _TooManyCalls) as e:  # the student's code may raise anything
        out.error = e
        return out
    try:
        out.value = _grading.plain(out.raw)
    except _grading.NotPlain:
        out.value = out.raw
    if case.watch is not None:
        out.changed = list(args[case.watch]) != before
    return out


def _same_outcome(a: _Outcome, b: _Outcome) -> bool:
    if a.error is not None or b.error is not None:
        return a.error is not None and b.error is not None and type(a.error) is type(b.error)
    return a.changed == b.changed and _alike(a.value, b.value)


def _counting(model):
    """The model, refusing to run more than _MAX_CALLS times (a loop that never stops)."""
    calls = [0]

    def counted(ids):
        calls[0] += 1
        if calls[0] > _MAX_CALLS:
            raise _TooManyCalls(f"the model was called more than {_MAX_CALLS} times: does your loop stop?")
        return model(ids)

    return counted


def _check_exercise(ex: _Exercise, fn) -> tuple[bool, str]:
    if not callable(fn):
        return False, f"✗ `{ex.name}` is not a function: define it with `def {ex.signature}:` and run that cell."
    cases = ex.cases()
    want = [_run(ex.reference, c) for c in cases]
    got = [_run(fn, c) for c in cases]
    bad = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if not _same_outcome(g, w)]
    if not bad:
        return True, f"✓ Right. {ex.name} agrees with the reference on all {len(cases)} cases."
    first = got[bad[0]]
    if isinstance(first.error, NotImplementedError):
        return False, (f"✗ Not written yet: replace `raise NotImplementedError()` in {ex.name} with your code, "
                       "run that cell, then run this one again.")
    if isinstance(first.error, _TooManyCalls):
        return False, f"✗ Not yet. On {cases[bad[0]].label}: {first.error}"
    if first.error is None and first.raw is None:
        return False, f"✗ Not yet. {ex.name} returns None: did you forget the `return` at the end?"
    for m in ex.mistakes:  # a typical mistake that gives exactly these results
        theirs = [_run(m.code, c) for c in cases]
        if all(_same_outcome(g, t) for g, t in zip(got, theirs, strict=True)):
            return False, "✗ Not yet. " + m.hint
    hint = ex.diagnose(cases, got)
    if hint:
        return False, "✗ Not yet. " + hint
    i = bad[0]
    for m in ex.mistakes:  # a mistake that explains at least the first case that differs
        if _same_outcome(got[i], _run(m.code, cases[i])):
            return False, f"✗ Not yet. On {cases[i].label}: {m.hint}"
    if first.error is not None:
        return False, f"✗ Not yet. On {cases[i].label} it {first.describe()}"
    extra = " It also changed the list it was given." if first.changed else ""
    return False, (f"✗ Not yet. On {cases[i].label} it returned {first.describe()}; "
                   f"the right result is {want[i].describe()}.{extra}")


def _is_number_not_int(v) -> bool:
    return isinstance(v, float) or isinstance(v, tuple)


# ---- next_token
def _nt_cases() -> list[_Case]:
    def c(label, h, W, b):
        return _Case(label, lambda: ((_np.array(h, float), _np.array(W, float), _np.array(b, float)), {}))

    rng = _np.random.default_rng(2024)
    h4, W46, b6 = rng.normal(size=4), rng.normal(size=(4, 6)), rng.normal(size=6) * 0.1
    return [
        c("h = [2, 0.5] with a 2 × 4 output layer", [2.0, 0.5], [[0.5, 1.0, -1.0, 0.25], [1.0, 1.5, 2.0, -0.5]],
          [0.0, 0.0, 0.5, 1.0]),
        c("a random h (4,), W (4, 6), b (6,)", h4, W46, b6),
        c("a case where the bias decides", [1.0, 1.0], [[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]], [0.0, -0.5, 0.2]),
        c("a tie: ids 1 and 3 share the highest score", [1.0, 2.0], [[0.0, 1.0, 0.0, 3.0], [0.5, 1.5, 1.0, 0.5]],
          [0.0, 0.0, 0.0, 0.0]),
        c("scores that are all negative", [1.0, 1.0], [[-3.0, -1.0, -2.0], [-1.0, -2.0, -2.0]], [0.0, 0.0, -1.0]),
        c("a square W (d = V = 3)", [1.0, 0.0, 2.0], [[0.0, 3.0, 1.0], [5.0, 0.0, 0.0], [1.0, 0.0, 2.0]],
          [0.0, 0.0, 0.0]),
    ]


def _nt_score(h, W, b):
    return _np.max(h @ W + b)


def _nt_no_bias(h, W, b):
    return int(_np.argmax(h @ W))


def _nt_argmin(h, W, b):
    return int(_np.argmin(h @ W + b))


def _nt_w_at_h(h, W, b):
    return int(_np.argmax(W @ h + b))


def _nt_last_on_tie(h, W, b):
    return int(_np.argsort(h @ W + b)[-1])


def _nt_best_from_zero(h, W, b):
    scores = h @ W + b
    best, best_id = 0.0, 0
    for i, s in enumerate(scores):
        if s > best:
            best, best_id = s, i
    return best_id


def _nt_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and (_is_number_not_int(o.value) or isinstance(o.value, bool)):
            return ("It returns a score (or several), not an id. The id of the next token is the position of the "
                    "highest score: np.argmax(scores).")
    for o in got:
        if o.error is not None and ("matmul" in str(o.error) or "shape" in str(o.error) or "align" in str(o.error)):
            return "Check the product: h is (d,) and W is (d, V), so the scores are h @ W + b, of shape (V,)."
    return None


_NEXT_TOKEN = _Exercise(
    "next_token", "next_token(h, W, b)", _ref.next_token, _nt_cases,
    [
        _Mistake("returns the score", _nt_score,
                 "It returns the highest score, not its id: np.argmax gives the position of the highest score."),
        _Mistake("no bias", _nt_no_bias, "The bias b is missing: the scores are h @ W + b."),
        _Mistake("argmin", _nt_argmin, "It picks the lowest score; greedy decoding picks the highest."),
        _Mistake("W @ h", _nt_w_at_h,
                 "Check the product: h is (d,) and W is (d, V), so the scores are h @ W + b, of shape (V,)."),
        _Mistake("last on a tie", _nt_last_on_tie,
                 "On a tie it picks the last of the highest scores. Take the first one (the lowest id), "
                 "as np.argmax does."),
        _Mistake("search starts at 0", _nt_best_from_zero,
                 "When every score is negative it picks id 0: start the search from the first score "
                 "(or from -inf), not from 0."),
    ],
    _nt_diagnose,
)


# ---- greedy_decode
def _gd_cases() -> list[_Case]:
    stand_in = _ref.stand_in_model

    def c(label, model, prompt, **kw):
        return _Case(label, lambda: ((_counting(model), list(prompt)), dict(kw)), watch=1)

    random9 = _grading.score_model(907, 9)
    eos5 = _grading.score_model(911, 8)
    never = _grading.score_model(913, 7, eos=1, never_eos=True)
    ties = _grading.score_model(919, 6, ties=True)
    return [
        c("the stand-in model reading '2 0 2 =' (eos=1, max_new=6)", stand_in, _ref.STAND_IN_PROMPT),
        c("the stand-in model with max_new=2", stand_in, _ref.STAND_IN_PROMPT, max_new=2),
        c("the stand-in model with max_new=0", stand_in, _ref.STAND_IN_PROMPT, max_new=0),
        c("a random model of 9 tokens, prompt [4, 7, 2]", random9, [4, 7, 2], eos=1, max_new=6),
        c("a model that never picks eos, max_new=4", never, [3, 5], eos=1, max_new=4),
        c("a random model whose eos is 5, prompt [2, 6, 3, 7]", eos5, [2, 6, 3, 7], eos=5, max_new=6),
        c("a prompt of one token", random9, [6], eos=1, max_new=6),
        c("a model whose scores often tie, prompt [4, 5]", ties, [4, 5], eos=1, max_new=6),
    ]


def _gd_eos_dropped(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argmax(model(ids)[-1]))
        if nxt == eos:
            break
        ids.append(nxt)
    return ids


def _gd_prompt_only(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argmax(model(prompt)[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids


def _gd_last_token(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argmax(model([ids[-1]])[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids


def _gd_first_row(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argmax(model(ids)[0]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids


def _gd_steps(extra):
    def decode(model, prompt, eos=1, max_new=6):
        ids = list(prompt)
        for _ in range(max_new + extra):
            nxt = int(_np.argmax(model(ids)[-1]))
            ids.append(nxt)
            if nxt == eos:
                break
        return ids

    return decode


def _gd_scores(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        best = model(ids)[-1].max()
        ids.append(best)
        if best == eos:
            break
    return ids


def _gd_no_stop(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        ids.append(int(_np.argmax(model(ids)[-1])))
    return ids


def _gd_eos_is_1(model, prompt, eos=1, max_new=6):
    return _ref.greedy_decode(model, prompt, eos=1, max_new=max_new)


def _gd_changes_prompt(model, prompt, eos=1, max_new=6):
    ids = prompt
    for _ in range(max_new):
        nxt = int(_np.argmax(model(ids)[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids


def _gd_answer_only(model, prompt, eos=1, max_new=6):
    return _ref.greedy_decode(model, prompt, eos, max_new)[len(prompt):]


def _gd_last_on_tie(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(_np.argsort(model(ids)[-1], kind="stable")[-1])
        ids.append(nxt)
        if nxt == eos:
            break
    return ids


def _gd_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and isinstance(o.value, tuple) and any(not isinstance(v, int) for v in o.value):
            return ("It appends scores, not ids. Append the position of the highest score of the last row "
                    "(np.argmax), an int.")
    for o in got:
        if o.error is None and o.changed:
            return "It changes the caller's prompt: start from a copy, ids = list(prompt)."
    for o in got:
        if o.error is None and not isinstance(o.value, tuple):
            return f"It should return the list of ids, but returned {o.describe()}."
    return None


_GREEDY = _Exercise(
    "greedy_decode", "greedy_decode(model, prompt, eos=1, max_new=6)", _ref.greedy_decode, _gd_cases,
    [
        _Mistake("eos dropped", _gd_eos_dropped,
                 "<eos> is missing from the end. Append the picked id first, then stop if it is eos: the "
                 "result keeps eos."),
        _Mistake("prompt only", _gd_prompt_only,
                 "Every step must run the model on everything so far (the prompt and the ids already "
                 "picked), not on the prompt alone."),
        _Mistake("last token only", _gd_last_token,
                 "It runs the model on the last token only. The model needs every id so far: pass the "
                 "whole list, then read the last row."),
        _Mistake("first row", _gd_first_row,
                 "It reads the first row of the scores. Only the last row (scores[-1]) chooses the next token."),
        _Mistake("one too many", _gd_steps(1),
                 "It writes one token too many: at most max_new new ids (for _ in range(max_new))."),
        _Mistake("one too few", _gd_steps(-1),
                 "It writes one token too few: max_new new ids are allowed (for _ in range(max_new))."),
        _Mistake("scores, not ids", _gd_scores,
                 "It appends scores, not ids. Append the position of the highest score (np.argmax)."),
        _Mistake("never stops at eos", _gd_no_stop,
                 "It does not stop at eos: break right after appending the eos id."),
        _Mistake("eos hard-coded", _gd_eos_is_1,
                 "It stops at id 1 whatever eos is: compare with the eos argument."),
        _Mistake("changes the prompt", _gd_changes_prompt,
                 "It changes the caller's prompt: start from a copy, ids = list(prompt)."),
        _Mistake("last on a tie", _gd_last_on_tie,
                 "When several scores tie for the highest it picks the last of them. Take the first (the "
                 "lowest id), as np.argmax does."),
        _Mistake("answer only", _gd_answer_only,
                 "Return the whole list: the prompt, then the picked ids (ending with eos if it was picked)."),
    ],
    _gd_diagnose,
)


# ---- make_xy
def _xy_cases() -> list[_Case]:
    from .task import copy_sequence, sequence

    def c(label, seq, **kw):
        return _Case(label, lambda: ((list(seq),), dict(kw)), watch=0)

    return [
        c("427: 4 2 7 = four hundred twenty seven <eos>", sequence(427)),
        c("7: 7 = seven <eos>", sequence(7)),
        c("905: 9 0 5 = nine hundred five <eos>", sequence(905)),
        c("38 with pad=-1", sequence(38), pad=-1),
        c("a sequence whose '=' is id 3: [5, 6, 3, 7, 8, 1] with eq=3", [5, 6, 3, 7, 8, 1], eq=3),
        c("the copy task 1 2 = 1 2 <eos>", copy_sequence(12)),
    ]


def _xy_split(k_shift=0, pad_arg=True, eq_arg=True):
    def make_xy(seq, eq=12, pad=0):
        x, y = list(seq[:-1]), list(seq[1:])
        k = list(seq).index(eq if eq_arg else 12) + k_shift
        for i in range(max(k, 0)):
            y[i] = pad if pad_arg else 0
        return x, y

    return make_xy


def _xy_no_shift(seq, eq=12, pad=0):
    k = list(seq).index(eq)
    return list(seq), [pad] * (k + 1) + list(seq[k + 1:])


def _xy_same_rows(seq, eq=12, pad=0):
    x = list(seq[:-1])
    k = x.index(eq)
    return x, [pad] * (k + 1) + x[k + 1:]


def _xy_reversed(seq, eq=12, pad=0):
    x, y = list(seq[1:]), list(seq[:-1])
    k = list(seq).index(eq)
    return x, [pad] * k + y[k:]


def _xy_x_padded(seq, eq=12, pad=0):
    x, y = _ref.make_xy(seq, eq, pad)
    k = list(seq).index(eq)
    return [pad] * k + x[k:], y


def _xy_changes_seq(seq, eq=12, pad=0):
    x, y = _ref.make_xy(seq, eq, pad)
    seq.pop()
    return x, y


def _xy_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and o.changed:
            return "It changes the caller's sequence: build x and y as new lists (seq[:-1] and seq[1:] are copies)."
    for o in got:
        if o.error is None and not (isinstance(o.value, tuple) and len(o.value) == 2):
            return f"It should return two lists, x and y (return x, y), but returned {o.describe()}."
    return None


_MAKE_XY = _Exercise(
    "make_xy", "make_xy(seq, eq=12, pad=0)", _ref.make_xy, _xy_cases,
    [
        _Mistake("no shift", _xy_no_shift,
                 "x and y are not shifted: x is the sequence without its last token, y without its first."),
        _Mistake("same rows", _xy_same_rows,
                 "x and y are not shifted: x is the sequence without its last token, y without its first."),
        _Mistake("shift reversed", _xy_reversed,
                 "The shift goes the other way: x = seq[:-1] (without the last token), y = seq[1:] "
                 "(without the first)."),
        _Mistake("'=' target kept", _xy_split(-1),
                 "The target '=' (under the last digit) is kept. It is part of the question: every target up "
                 "to and including '=' becomes pad."),
        _Mistake("first word dropped", _xy_split(+1),
                 "The first word's target (the one under '=') is padded too. It is the first word of the "
                 "answer and must count: pad only the targets up to and including '='."),
        _Mistake("pad hard-coded", _xy_split(pad_arg=False),
                 "It writes 0 for the skipped targets; use the pad argument (the course's PAD is 0, but a "
                 "caller may give another id)."),
        _Mistake("eq hard-coded", _xy_split(eq_arg=False),
                 "It looks for id 12; look for the eq argument instead."),
        _Mistake("x padded too", _xy_x_padded,
                 "Only the targets y are set to pad; x keeps every token (the model must read the question)."),
        _Mistake("changes seq", _xy_changes_seq,
                 "It changes the caller's sequence: build x and y as new lists (seq[:-1] and seq[1:] are copies)."),
    ],
    _xy_diagnose,
)


# ---- masked_loss
def _ml_cases() -> list[_Case]:
    def c(label, logits, targets, **kw):
        return _Case(label, lambda: ((_np.array(logits, float), _np.array(targets)), dict(kw)))

    rng = _np.random.default_rng(4242)
    return [
        c("logits (4, 3), targets [2, 0, 1, 0]", [[1.0, 0.5, 2.0], [0.0, 2.0, 1.0], [0.5, 1.5, -1.0],
                                                    [3.0, 0.0, 0.0]], [2, 0, 1, 0]),
        c("random logits (6, 5), three rows PAD", rng.normal(size=(6, 5)), [0, 3, 0, 1, 4, 0]),
        c("random logits (3, 4), no PAD row", rng.normal(size=(3, 4)), [1, 3, 2]),
        c("pad=2 (so target 0 counts)", rng.normal(size=(5, 4)), [0, 2, 3, 2, 0], pad=2),
        c("large logits (about 800)", rng.normal(size=(4, 6)) * 30 + 800, [5, 0, 1, 2]),
    ]


def _ml_nll(logits, targets):
    p = _ref.softmax(logits)
    return -_np.log(p[_np.arange(len(targets)), targets])


def _ml_all_rows(logits, targets, pad=0):
    return float(_ml_nll(logits, targets).mean())


def _ml_keep_mean(logits, targets, pad=0):
    keep = targets != pad
    return float((_ml_nll(logits, targets) * keep).mean())


def _ml_pad_zero(logits, targets, pad=0):
    return float(_ml_nll(logits, targets)[targets != 0].mean())


def _ml_sum(logits, targets, pad=0):
    return float(_ml_nll(logits, targets)[targets != pad].sum())


def _ml_sign(logits, targets, pad=0):
    return -float(_ml_nll(logits, targets)[targets != pad].mean())


def _ml_inverted(logits, targets, pad=0):
    return float(_ml_nll(logits, targets)[targets == pad].mean())


def _ml_no_log(logits, targets, pad=0):
    p = _ref.softmax(logits)[_np.arange(len(targets)), targets]
    return float(-p[targets != pad].mean())


def _ml_naive(logits, targets, pad=0):
    e = _np.exp(logits)
    p = e / e.sum(axis=1, keepdims=True)
    nll = -_np.log(p[_np.arange(len(targets)), targets])
    return float(nll[targets != pad].mean())


def _ml_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and isinstance(o.value, tuple):
            return ("It returns several numbers; the loss is one number, the mean over the rows that count "
                    "(e.g. float(nll[keep].mean())).")
    for c, o in zip(cases, got, strict=True):
        if "large" in c.label and o.error is None and isinstance(o.value, float) and not _np.isfinite(o.value):
            return ("With large logits it gives nan or inf: exp overflows. Use the notebook's softmax, which "
                    "subtracts each row's maximum first.")
    return None


_MASKED_LOSS = _Exercise(
    "masked_loss", "masked_loss(logits, targets, pad=0)", _ref.masked_loss, _ml_cases,
    [
        _Mistake("mean over all rows", _ml_all_rows,
                 "It averages over every row, PAD rows included. Keep only the rows whose target is not pad."),
        _Mistake("(nll * keep).mean()", _ml_keep_mean,
                 "It adds up only the rows that count but then divides by all N rows, PAD rows included. "
                 "Divide by the number of rows whose target is not pad."),
        _Mistake("pad hard-coded", _ml_pad_zero,
                 "It skips the targets that are 0; skip the ones equal to the pad argument (pad may not be 0)."),
        _Mistake("sum", _ml_sum, "It returns the sum; the loss is the mean over the rows that count."),
        _Mistake("sign", _ml_sign, "The sign is wrong: the loss is −log p of the right token, a positive number."),
        _Mistake("mask inverted", _ml_inverted,
                 "It keeps the PAD rows and drops the others: the rows that count are targets != pad."),
        _Mistake("no log", _ml_no_log,
                 "The cross-entropy of a row is −log p of its right token, not −p."),
        _Mistake("softmax without the max", _ml_naive,
                 "With large logits it gives nan or inf: exp overflows. Use the notebook's softmax, which "
                 "subtracts each row's maximum first."),
    ],
    _ml_diagnose,
)

EXERCISES: dict[str, _Exercise] = {ex.name: ex for ex in (_NEXT_TOKEN, _GREEDY, _MAKE_XY, _MASKED_LOSS)}


def check_exercise(name: str, fn) -> bool:
    """Run ``fn`` beside the reference of exercise ``name``; print ✓ or a hint; return True if right."""
    ok, message = _check_exercise(EXERCISES[name], fn)
    print(message)
    return ok
