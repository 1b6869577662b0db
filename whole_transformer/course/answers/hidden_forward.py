"""The hidden cases of the forward pass students write in notebook 02: ``layer_norm``, ``multi_head_attention``,
``decoder_block`` and ``forward``.

Each returns an array, so the kernel hands out its ``views.view`` (the shape, and every row seen along one
fixed direction: ``hidden_parts.DRIVERS``), and the right result is the reference's own array seen the same way.
The inputs are made from seeds in the kernel (``grading.random_array``, ``weights.random_weights``) at odd sizes
(several heads, d_k ≠ d_model, lengths 1 to 8), or are the shipped checkpoints' own weights, which the kernel's
setup loads (``load_weights``); ``forward`` is judged on the logits of the 60-epoch and the 2-epoch model for
16 held-out numbers in one right-padded batch. The expected values stay small: a few numbers a case, stored
rounded by each case's tolerance as every hidden test's are (``core/expected.rounded_payload``).
"""

from __future__ import annotations

import numpy as np

from whole_transformer.views import view

from . import reference as ref
from .hidden_parts import Case, json_data, kernel_names

TOL64, TOL32 = (
    1e-7,
    1e-4,
)  # of the array's size: float64 inputs, float32 inputs (a float32 computation may stay float32)


def env() -> dict:
    """The kernel's names, here in the grader (``hidden_parts.FORWARD_SETUP``): what the cases' expressions are
    evaluated in."""
    return kernel_names("forward")


def _add(cases: list, e: dict, reference, kind: str, args: str, kwargs: str = "{}", tol: float = TOL64) -> None:
    a, kw = eval(args, e), eval(kwargs, e)  # noqa: S307 - the course's own case expressions, never a student's
    got = np.asarray(reference(*a, **kw))
    size = float(np.abs(got).max()) if got.size else 0.0
    n = got.shape[-1] if got.ndim else 1
    abs_tol = float(f"{tol * (1.0 + size) * np.sqrt(n):.2e}")
    cases.append(Case(kind, args, kwargs, json_data(view(got)), tol, abs=abs_tol))


R = "g.random_array"


def layer_norm_cases() -> list[Case]:
    e, cases = env(), []  # type: dict, list[Case]
    f = ref.layer_norm

    def rows(seed, shape, scale=1.0, offset=0.0, dt=""):
        """x, gamma (near 1) and beta (small), random from seed, as source."""
        d = shape[-1]
        x = f"{R}({seed}, {shape}, {scale}, {offset}{dt})"
        return f"{x}, {R}({seed + 1}, {d}, 0.4, 1.0{dt}), {R}({seed + 2}, {d}, 0.3{dt})"

    for i, (L, d) in enumerate([(1, 5), (3, 6), (7, 11), (8, 4)]):
        _add(cases, e, f, "random rows of several sizes", f"({rows(8100 + 10 * i, (L, d), 2.0, 0.5)})")
    _add(cases, e, f, "a batch (B, L, d)", f"({rows(8201, (2, 5, 6), 1.5)})")
    _add(cases, e, f, "rows of small variance (eps matters)", f"({rows(8301, (4, 6), 0.01)})")
    _add(cases, e, f, "eps given", f"({rows(8401, (3, 5), 0.2)})", "{'eps': 0.1}")
    _add(cases, e, f, "eps given", f"({rows(8411, (2, 7))}, 0.5)")
    _add(cases, e, f, "large values", f"({rows(8501, (5, 8), 50.0, 1000.0)})")
    _add(cases, e, f, "float32 inputs", f"({rows(8601, (4, 9), 2.0, 0.0, ', dtype=np.float32')})", tol=TOL32)
    W60, tiny = 'W_60["blocks.0.ln1.weight"], W_60["blocks.0.ln1.bias"]', 'W_tiny["ln_f.weight"], W_tiny["ln_f.bias"]'
    _add(cases, e, f, "the trained model's weights", f'(W_60["tok.weight"] * 8.0, {W60})')
    _add(cases, e, f, "the trained model's weights", f'(W_tiny["tok.weight"][2:12] * 6.0 ** 0.5, {tiny})')
    return cases


def _mha(seed: int, d: int, scale: float = 1.0, dtype: str = "") -> str:
    """w_q, w_k, w_v, w_o, b_o of one attention (d × d), random from seed, as source."""
    ws = ", ".join(f"{R}({seed + j}, ({d}, {d}), {scale / np.sqrt(d):.6g}{dtype})" for j in range(4))
    return f"{ws}, {R}({seed + 4}, {d}, 0.2{dtype})"


def _pads(lengths: list[int], L: int) -> str:
    """key_pad of a right-padded batch whose sequences have these lengths, as source."""
    return "g.array(" + repr([[j >= n for j in range(L)] for n in lengths]) + ", bool)"


def _attn(W: str, b: int) -> str:
    p = f"blocks.{b}.attn."
    return ", ".join(f'{W}["{p}{n}"]' for n in ("W_Q.weight", "W_K.weight", "W_V.weight", "W_O.weight", "W_O.bias"))


def multi_head_attention_cases() -> list[Case]:
    e, cases = env(), []  # type: dict, list[Case]
    f = ref.multi_head_attention
    _add(cases, e, f, "one head", f"({R}(9101, (5, 4)), {_mha(9102, 4)}, 1)")
    for i, (L, d, h) in enumerate([(6, 8, 2), (8, 12, 3), (3, 10, 5), (7, 6, 2)]):
        s = 9200 + 10 * i
        _add(cases, e, f, "several heads (d_k < d_model)", f"({R}({s}, ({L}, {d})), {_mha(s + 1, d)}, {h})")
    _add(cases, e, f, "one token", f"({R}(9301, (1, 6)), {_mha(9302, 6)}, 2)")
    _add(cases, e, f, "two tokens", f"({R}(9311, (2, 4)), {_mha(9312, 4)}, 2)")
    _add(cases, e, f, "a batch without PAD", f"({R}(9401, (2, 4, 6)), {_mha(9402, 6)}, 3)")
    _add(
        cases,
        e,
        f,
        "a right-padded batch, PAD keys masked",
        f"({R}(9501, (3, 7, 8)), {_mha(9502, 8)}, 4, {_pads([7, 5, 3], 7)})",
    )
    _add(
        cases,
        e,
        f,
        "a right-padded batch, PAD keys masked",
        f"({R}(9511, (2, 5, 6)), {_mha(9512, 6)}, 2)",
        f"{{'key_pad': {_pads([2, 4], 5)}}}",
    )
    _add(
        cases,
        e,
        f,
        "one sequence with PAD keys at its end",
        f"({R}(9521, (6, 4)), {_mha(9522, 4)}, 2, g.array({[j >= 4 for j in range(6)]!r}, bool))",
    )
    _add(cases, e, f, "large scores", f"({R}(9601, (6, 8), 30.0), {_mha(9602, 8, 3.0)}, 2)")
    _add(
        cases,
        e,
        f,
        "float32 inputs",
        f"({R}(9701, (5, 6), dtype=np.float32), {_mha(9702, 6, 1.0, ', dtype=np.float32')}, 3)",
        tol=TOL32,
    )
    _add(cases, e, f, "the trained model's weights", f"({R}(9801, (8, 64)), {_attn('W_60', 0)}, 4)")
    _add(cases, e, f, "the trained model's weights", f"({R}(9811, (16, 8, 64)), {_attn('W_60', 1)}, 4, held_x == 0)")
    return cases


def decoder_block_cases() -> list[Case]:
    e, cases = env(), []  # type: dict, list[Case]
    f = ref.decoder_block
    _add(cases, e, f, "random weights of several sizes", f"({R}(10101, (5, 6)), RW(10102, 9, 6, 1, 10), 0, 2)")
    _add(cases, e, f, "random weights of several sizes", f"({R}(10111, (8, 12)), RW(10112, 9, 12, 1, 7), 0, 3)")
    _add(cases, e, f, "random weights of several sizes", f"({R}(10121, (1, 4)), RW(10122, 9, 4, 1, 6), 0, 1)")
    _add(cases, e, f, "the block named by i", f"({R}(10201, (4, 8)), RW(10202, 9, 8, 3, 12), 2, 2)")
    _add(cases, e, f, "the block named by i", f"({R}(10211, (6, 6)), RW(10212, 9, 6, 2, 9), 1, 3)")
    _add(
        cases,
        e,
        f,
        "a right-padded batch, PAD keys masked",
        f"({R}(10301, (3, 6, 8)), RW(10302, 9, 8, 1, 12), 0, 2, {_pads([6, 4, 2], 6)})",
    )
    _add(cases, e, f, "large values", f"({R}(10401, (5, 6), 40.0), RW(10402, 9, 6, 1, 10), 0, 2)")
    _add(
        cases,
        e,
        f,
        "float32 inputs",
        f"({R}(10501, (4, 6), dtype=np.float32), RW(10502, 9, 6, 1, 10, np.float32), 0, 2)",
        tol=TOL32,
    )
    _add(cases, e, f, "the trained model's weights", f"({R}(10601, (8, 64), 3.0), W_60, 0, 4)")
    _add(cases, e, f, "the trained model's weights", f"({R}(10611, (16, 8, 64), 3.0), W_60, 1, 4, held_x == 0)")
    return cases


def _ids(seed: int, shape, low: int, high: int) -> str:
    return f"g.random_ids({seed}, {shape}, {low}, {high})"


def forward_cases() -> list[Case]:
    e, cases = env(), []  # type: dict, list[Case]
    f = ref.forward
    for i, (L, d, h, n) in enumerate([(5, 8, 2, 1), (8, 6, 3, 2), (3, 12, 4, 2)]):
        s = 11100 + 10 * i
        _add(cases, e, f, "random weights of several sizes", f"({_ids(s, L, 1, 9)}, RW({s + 1}, 9, {d}, {n}, 10), {h})")
    _add(cases, e, f, "one token", f"({_ids(11201, 1, 1, 9)}, RW(11202, 9, 8, 2, 10), 2)")
    _add(
        cases,
        e,
        f,
        "a right-padded batch",
        f"(g.array({[[3, 5, 2, 7, 4, 6], [8, 2, 5, 0, 0, 0], [4, 1, 0, 0, 0, 0]]}, int), RW(11301, 9, 8, 2, 10), 2)",
    )
    _add(
        cases,
        e,
        f,
        "a pad other than 0",
        f"(g.array({[[0, 5, 2, 7, 3], [8, 0, 3, 3, 3]]}, int), RW(11401, 9, 6, 1, 10), 3)",
        "{'pad': 3}",
    )
    _add(cases, e, f, "n_heads given", f"({_ids(11501, 6, 1, 9)}, RW(11502, 9, 8, 1, 10))", "{'n_heads': 1}")
    _add(cases, e, f, "float32 weights", f"({_ids(11601, 5, 1, 9)}, RW(11602, 9, 8, 1, 10, np.float32), 2)", tol=TOL32)
    _add(cases, e, f, "the tiny model reading 8 9 =", "(task.prompt(89), W_tiny, 1)")
    _add(cases, e, f, "the 60-epoch model reading one number", "(task.sequence(427)[:-1], W_60)")
    _add(cases, e, f, "the 60-epoch model on 16 held-out numbers", "(held_x, W_60)")
    _add(cases, e, f, "the 2-epoch model on 16 held-out numbers", "(held_x, W_2, 4, 0)")
    return cases
