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
from .exercise_checks import EXERCISES, check_exercise  # noqa: E402
