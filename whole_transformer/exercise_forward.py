"""The visible checks' fixed cases of the forward pass students write in notebook 02, and their hints by shape.

``layer_norm``, ``multi_head_attention``, ``decoder_block`` and ``forward`` return arrays; a check runs the
student's function on these cases and compares its ``views.view`` (the shape, and the rows seen along one fixed
direction) with the hashes in ``data/exercise_checks.json``, as for the other exercises (``exercise_checks``).
The inputs are small random arrays (float64) and the tiny microscope model's weights; none of the results is
here. The hints of the catalogued mistakes name the first step of the microscope where the result differs.
"""

from __future__ import annotations

import numpy as np

from .exercise_cases import Case
from .weights import random_weights


def _rand(seed: int, shape, scale: float = 1.0, offset: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape) * scale + offset


def _tiny() -> dict[str, np.ndarray]:
    from .weights import load_weights  # lazy: torch reads the checkpoint

    return load_weights("microscope")


def ln_cases() -> list[Case]:
    return [
        Case(
            "one row of 6 numbers", lambda: ((_rand(1, (1, 6), 2.0, 1.0), _rand(2, 6, 0.3, 1.0), _rand(3, 6, 0.2)), {})
        ),
        Case("3 rows of 5 numbers", lambda: ((_rand(4, (3, 5), 1.5), _rand(5, 5, 0.3, 1.0), _rand(6, 5, 0.2)), {})),
        Case("a batch (2, 3, 4)", lambda: ((_rand(7, (2, 3, 4)), _rand(8, 4, 0.3, 1.0), _rand(9, 4, 0.2)), {})),
        Case(
            "rows of small variance, where eps matters",
            lambda: ((_rand(10, (2, 6), 0.005), _rand(11, 6, 0.3, 1.0), _rand(12, 6, 0.2)), {}),
        ),
    ]


def _attn(seed: int, d: int) -> tuple:
    return (*(_rand(seed + j, (d, d), 1 / np.sqrt(d)) for j in range(4)), _rand(seed + 4, d, 0.2))


def mha_cases() -> list[Case]:
    return [
        Case("4 tokens, d_model 6, one head", lambda: ((_rand(20, (4, 6)), *_attn(21, 6), 1), {})),
        Case("5 tokens, d_model 6, 2 heads (d_k 3)", lambda: ((_rand(30, (5, 6)), *_attn(31, 6), 2), {})),
        Case("3 tokens, d_model 8, 4 heads (d_k 2)", lambda: ((_rand(42, (3, 8)), *_attn(43, 8), 4), {})),
        Case(
            "a batch of 2, the second padded after 2 tokens",
            lambda: (
                (_rand(50, (2, 4, 6)), *_attn(51, 6), 2, np.array([[False] * 4, [False, False, True, True]])),
                {},
            ),
        ),
    ]


def block_cases() -> list[Case]:
    return [
        Case("the tiny model's block reading 8 9 =", lambda: ((_rand(60, (3, 6)), _tiny(), 0, 1), {})),
        Case(
            "random weights, d_model 6, 2 heads",
            lambda: ((_rand(61, (4, 6)), random_weights(62, 9, 6, 1, 10), 0, 2), {}),
        ),
        Case("block 1 of two, 4 heads", lambda: ((_rand(63, (5, 8)), random_weights(64, 9, 8, 2, 12), 1, 4), {})),
        Case(
            "a padded batch",
            lambda: (
                (
                    _rand(65, (2, 4, 6)),
                    random_weights(66, 9, 6, 1, 10),
                    0,
                    2,
                    np.array([[0, 0, 0, 0], [0, 0, 1, 1]]) == 1,
                ),
                {},
            ),
        ),
    ]


def fw_cases() -> list[Case]:
    return [
        Case("the tiny model reading 8 9 =", lambda: ((np.array([10, 11, 12]), _tiny(), 1), {})),
        Case(
            "random weights, 2 blocks, 2 heads",
            lambda: ((np.array([3, 5, 2, 7, 4]), random_weights(70, 9, 8, 2, 10), 2), {}),
        ),
        Case(
            "a right-padded batch",
            lambda: ((np.array([[3, 5, 2, 7], [6, 2, 0, 0]]), random_weights(71, 9, 6, 1, 10), 3), {}),
        ),
    ]


def _shape_hint(cases: list[Case], got, what: str) -> str | None:
    """A hint when the result is not an array of the right shape (read from its view: [shape, numbers])."""
    for o in got:
        if o.error is None and not (isinstance(o.value, tuple) and len(o.value) == 2):
            return f"It should return an array ({what}), but returned {o.describe()}."
    return None


def ln_diagnose(cases, got) -> str | None:
    return _shape_hint(cases, got, "of x's shape")


def mha_diagnose(cases, got) -> str | None:
    return _shape_hint(cases, got, "of x's shape, (L, d_model) or (B, L, d_model)")


def block_diagnose(cases, got) -> str | None:
    return _shape_hint(cases, got, "of x's shape")


def fw_diagnose(cases, got) -> str | None:
    return _shape_hint(cases, got, "the logits, (L, V) or (B, L, V)")


#: (name, signature, cases, hints by shape) of each exercise, for ``exercise_checks.EXERCISES``
FORWARD = [
    ("layer_norm", "layer_norm(x, gamma, beta, eps=1e-5)", ln_cases, ln_diagnose),
    (
        "multi_head_attention",
        "multi_head_attention(x, w_q, w_k, w_v, w_o, b_o, n_heads, key_pad=None)",
        mha_cases,
        mha_diagnose,
    ),
    ("decoder_block", "decoder_block(x, weights, i, n_heads, key_pad=None)", block_cases, block_diagnose),
    ("forward", "forward(ids, weights, n_heads=4, pad=0)", fw_cases, fw_diagnose),
]
#: the exercises that call the student's own earlier functions: those are checked first
CALLS = {
    "decoder_block": ("layer_norm", "multi_head_attention"),
    "forward": ("layer_norm", "multi_head_attention", "decoder_block"),
}
