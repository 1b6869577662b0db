"""The fixed cases of the exercises' visible checks, and the stand-in model they decode with.

Each exercise's cases are made fresh on every call (``nt_cases()`` …): the arguments a student's
function is run on, beside the reference, by ``exercise_checks``. The stand-in model of notebook 03
reads "2 0 2 =" and says "two hundred two":

    >>> from whole_transformer.exercise_cases import STAND_IN_PROMPT, STAND_IN_VOCAB, stand_in_model
    >>> [STAND_IN_VOCAB[i] for i in STAND_IN_PROMPT]
    ['2', '0', '2', '=']
    >>> stand_in_model(STAND_IN_PROMPT).shape
    (4, 7)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import grading as _grading
from .task import copy_sequence, sequence

_counting = _grading.counted  # a greedy loop that never stops fails its case


@dataclass
class Case:
    label: str  # what the case is, as the student reads it in a hint
    make: Callable[[], tuple[tuple, dict]]  # fresh (args, kwargs) for every run
    watch: int | None = None  # the argument (a list) that the function must not change


# ---------------------------------------------------------------- the stand-in model of notebook 03
#: Seven tokens, enough to read 202 aloud.
STAND_IN_VOCAB = ["<pad>", "<eos>", "0", "2", "=", "two", "hundred"]
#: "2 0 2 =" as ids.
STAND_IN_PROMPT = [3, 2, 3, 4]
#: Row t: the scores a token t gives to each possible next token.
STAND_IN_TOKEN = np.array(
    [
        # <pad> <eos>  0    2    =   two hundred
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # <pad>
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # <eos>
        [0.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0],  # 0: then 2
        [0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 0.0],  # 2: then 0
        [0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0],  # =: then two
        [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.0],  # two: then hundred
        [0.0, 1.0, 0.0, 0.0, 0.0, 3.0, 0.0],  # hundred: then two
    ]
)
#: Row p: what being at position p adds (the '=' after three digits, the end after the last word).
STAND_IN_POSITION = np.zeros((10, 7))
STAND_IN_POSITION[2, 4] = 3.0  # position 2: '=' comes next
STAND_IN_POSITION[6, 1] = 3.0  # position 6: <eos> comes next


def stand_in_model(ids):
    """Row p of the output = STAND_IN_TOKEN[ids[p]] + STAND_IN_POSITION[p]: (len(ids), 7)."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if not 1 <= len(ids) <= len(STAND_IN_POSITION):
        raise ValueError(f"the stand-in model reads 1 to {len(STAND_IN_POSITION)} ids, got {len(ids)}")
    return STAND_IN_TOKEN[ids] + STAND_IN_POSITION[: len(ids)]


def nt_cases() -> list[Case]:
    def c(label, h, W, b):
        return Case(label, lambda: ((np.array(h, float), np.array(W, float), np.array(b, float)), {}))

    rng = np.random.default_rng(2024)
    h4, W46, b6 = rng.normal(size=4), rng.normal(size=(4, 6)), rng.normal(size=6) * 0.1
    return [
        c(
            "h = [2, 0.5] with a 2 × 4 output layer",
            [2.0, 0.5],
            [[0.5, 1.0, -1.0, 0.25], [1.0, 1.5, 2.0, -0.5]],
            [0.0, 0.0, 0.5, 1.0],
        ),
        c("a random h (4,), W (4, 6), b (6,)", h4, W46, b6),
        c("a case where the bias decides", [1.0, 1.0], [[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]], [0.0, -0.5, 0.2]),
        c(
            "a tie: ids 1 and 3 share the highest score",
            [1.0, 2.0],
            [[0.0, 1.0, 0.0, 3.0], [0.5, 1.5, 1.0, 0.5]],
            [0.0, 0.0, 0.0, 0.0],
        ),
        c("scores that are all negative", [1.0, 1.0], [[-3.0, -1.0, -2.0], [-1.0, -2.0, -2.0]], [0.0, 0.0, -1.0]),
        c(
            "a square W (d = V = 3)",
            [1.0, 0.0, 2.0],
            [[0.0, 3.0, 1.0], [5.0, 0.0, 0.0], [1.0, 0.0, 2.0]],
            [0.0, 0.0, 0.0],
        ),
    ]


def gd_cases() -> list[Case]:
    stand_in = stand_in_model

    def c(label, model, prompt, **kw):
        return Case(label, lambda: ((_counting(model), list(prompt)), dict(kw)), watch=1)

    random9 = _grading.score_model(907, 9)
    eos5 = _grading.score_model(911, 8)
    never = _grading.score_model(913, 7, eos=1, never_eos=True)
    ties = _grading.score_model(919, 6, ties=True)
    return [
        c("the stand-in model reading '2 0 2 =' (eos=1, max_new=6)", stand_in, STAND_IN_PROMPT),
        c("the stand-in model with max_new=2", stand_in, STAND_IN_PROMPT, max_new=2),
        c("the stand-in model with max_new=0", stand_in, STAND_IN_PROMPT, max_new=0),
        c("a random model of 9 tokens, prompt [4, 7, 2]", random9, [4, 7, 2], eos=1, max_new=6),
        c("a model that never picks eos, max_new=4", never, [3, 5], eos=1, max_new=4),
        c("a random model whose eos is 5, prompt [2, 6, 3, 7]", eos5, [2, 6, 3, 7], eos=5, max_new=6),
        c("a prompt of one token", random9, [6], eos=1, max_new=6),
        c("a model whose scores often tie, prompt [4, 5]", ties, [4, 5], eos=1, max_new=6),
    ]


def xy_cases() -> list[Case]:
    def c(label, seq, **kw):
        return Case(label, lambda: ((list(seq),), dict(kw)), watch=0)

    return [
        c("427: 4 2 7 = four hundred twenty seven <eos>", sequence(427)),
        c("7: 7 = seven <eos>", sequence(7)),
        c("905: 9 0 5 = nine hundred five <eos>", sequence(905)),
        c("38 with pad=-1", sequence(38), pad=-1),
        c("a sequence whose '=' is id 3: [5, 6, 3, 7, 8, 1] with eq=3", [5, 6, 3, 7, 8, 1], eq=3),
        c("the copy task 1 2 = 1 2 <eos>", copy_sequence(12)),
    ]


def ml_cases() -> list[Case]:
    def c(label, logits, targets, **kw):
        return Case(label, lambda: ((np.array(logits, float), np.array(targets)), dict(kw)))

    rng = np.random.default_rng(4242)
    return [
        c(
            "logits (4, 3), targets [2, 0, 1, 0]",
            [[1.0, 0.5, 2.0], [0.0, 2.0, 1.0], [0.5, 1.5, -1.0], [3.0, 0.0, 0.0]],
            [2, 0, 1, 0],
        ),
        c("random logits (6, 5), three rows PAD", rng.normal(size=(6, 5)), [0, 3, 0, 1, 4, 0]),
        c("random logits (3, 4), no PAD row", rng.normal(size=(3, 4)), [1, 3, 2]),
        c("pad=2 (so target 0 counts)", rng.normal(size=(5, 4)), [0, 2, 3, 2, 0], pad=2),
        c("large logits (about 800)", rng.normal(size=(4, 6)) * 30 + 800, [5, 0, 1, 2]),
    ]


def ca_cases() -> list[Case]:
    """cached_attention's cases: each reads a whole sequence token by token (``stepwise.token_by_token``
    makes the calls), so its arguments are the rows of every token, Q, K, V (L, d_k), and where to start."""
    rng = np.random.default_rng(3238)

    def c(label, qkv, start=0):
        rows = tuple(np.array(a, float) for a in qkv)
        return Case(label, lambda: ((*(a.copy() for a in rows), start), {}))

    def random(L, d, scale=1.0):
        return [rng.normal(size=(L, d)) * scale for _ in range(3)]

    return [
        c("one token, so an empty cache (d_k 2)", ([[1.0, 0.5]], [[0.5, -1.0]], [[2.0, 3.0]])),
        c(
            "three tokens one at a time (d_k 2)",
            (
                [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
                [[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]],
                [[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]],
            ),
        ),
        c("random rows: 6 tokens, d_k 4", random(6, 4)),
        c("random rows: 5 tokens, d_k 16 (one head of the model)", random(5, 16)),
        c("a cache of 3 earlier tokens handed in, then 2 new tokens (d_k 4)", random(5, 4), 3),
        c("large scores (rows × 30)", random(4, 3, 30.0)),
    ]
