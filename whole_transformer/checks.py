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


def check(qid: str, answer=_MISSING) -> bool:
    """Print whether an answer is right, or a hint aimed at the likely mistake; return True if right.

    ``check("tokens_905")`` reads the notebook variable of the same name as the question, so the
    check works (and says what to do) even before the answer cell has run. For an exercise,
    ``check("greedy_decode")`` runs the notebook's function of that name beside the reference.
    """
    if qid in EXERCISES:
        fn = answer
        if fn is _MISSING:
            fn = inspect.currentframe().f_back.f_globals.get(qid, _MISSING)
            if fn is _MISSING:
                print(f"No function yet: run the cell that defines `{EXERCISES[qid].signature}` first.")
                return False
        return check_exercise(qid, fn)
    if qid not in QUESTIONS:
        raise ValueError(f"unknown question {qid!r}; the questions are {sorted(QUESTIONS)} "
                         f"and the exercises {sorted(EXERCISES)}")
    if answer is _MISSING:
        caller = inspect.currentframe().f_back.f_globals
        if qid not in caller:
            print(f"No answer yet: write `{qid} = ...` in the answer cell above and run it.")
            return False
        answer = caller[qid]
    ok, message = QUESTIONS[qid].feedback(answer)
    print(message)
    return ok


# ---------------------------------------------------------------- exercises (notebooks 03 and 04)
from .exercise_checks import EXERCISES, check_exercise  # noqa: E402
