"""The same forward pass in NumPy, every intermediate kept and named (for the microscope).

``trace(model, ids)`` runs ONE sequence (1-D ids) through the weights of a trained torch
``Transformer`` and returns the list of ``Intermediate`` steps, in the order they happen::

    token rows       (L, d_model)        the rows of the token table picked by the ids
    scaled           (L, d_model)        × √d_model  (the same array again if scale_embedding is off)
    + positions      (L, d_model)        + the fixed sinusoid row of each position
    then, for each block b (Intermediate.block = b):
      LayerNorm 1    (L, d_model)        each row to mean 0, variance 1, then × scale + shift
      Q, K, V        (h, L, d_k)         LayerNorm 1 @ W_Q.T (and W_K, W_V), split into heads
      scores         (h, L_q, L_k)       Q @ K.T / √d_k
      masked scores  (h, L_q, L_k)       -inf where a query may not look (a later key, or a PAD key)
      weights        (h, L_q, L_k)       softmax of each row: every row sums to 1
      mixed values   (h, L, d_k)         weights @ V
      attention out  (L, d_model)        the heads side by side, @ W_O.T + b_O
      residual 1     (L, d_model)        the block's input + attention out
      LayerNorm 2    (L, d_model)
      FFN hidden     (L, d_ff)           LayerNorm 2 @ up.T + b_up
      ReLU           (L, d_ff)           negatives set to 0
      FFN out        (L, d_model)        ReLU @ down.T + b_down
      residual 2     (L, d_model)        residual 1 + FFN out: the block's output
    final LayerNorm  (L, d_model)
    logits           (L, V)              final LayerNorm @ head.T + b_head

``forward(model, ids)`` gives the logits only, for one sequence (L, V) or a batch (B, L, V).
The computation is done in float64 from the float32 weights. It equals the torch model run in
float64 to about 1e-13, and the shipped float32 model to 1e-5 of the logits' size (what is left
is float32 rounding in torch: at most 8e-6 for read-60, whose logits reach 11, and 7e-5 for the
microscope model, whose logits reach 38). tests/test_numpy_model.py checks all three checkpoints.

>>> from whole_transformer.train import load_model
>>> from whole_transformer.task import prompt
>>> steps = trace(load_model("microscope"), prompt(89))
>>> find(steps, "weights", block=0).array.shape      # (h, L_q, L_k)
(1, 3, 3)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Intermediate", "NAMES", "BLOCK_NAMES", "trace", "forward", "find", "weights_of", "softmax_rows"]

#: The names of the steps before the blocks, inside every block, and after the blocks.
BEFORE = ("token rows", "scaled", "+ positions")
BLOCK_NAMES = (
    "LayerNorm 1",
    "Q",
    "K",
    "V",
    "scores",
    "masked scores",
    "weights",
    "mixed values",
    "attention out",
    "residual 1",
    "LayerNorm 2",
    "FFN hidden",
    "ReLU",
    "FFN out",
    "residual 2",
)
AFTER = ("final LayerNorm", "logits")
NAMES = BEFORE + BLOCK_NAMES + AFTER

LN_EPS = 1e-5  # torch.nn.LayerNorm's default


@dataclass(frozen=True)
class Intermediate:
    """One named step of the forward pass: its array, the names of the array's axes, its block."""

    name: str
    array: np.ndarray
    axes: tuple[str, ...]
    block: int | None = None  # None before and after the blocks
    formula: str = ""  # how it was computed, in words a lab can show

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    @property
    def label(self) -> str:
        """'block 1 · weights' (blocks numbered from 1, as the notebooks say), or just the name outside the
        blocks. ``block`` itself counts from 0, like the torch names blocks.0, blocks.1."""
        return self.name if self.block is None else f"block {self.block + 1} · {self.name}"

    def __repr__(self) -> str:
        dims = ", ".join(f"{a}={n}" for a, n in zip(self.axes, self.array.shape, strict=True))
        return f"Intermediate({self.label!r}, ({dims}))"


def weights_of(model) -> dict[str, np.ndarray]:
    """The model's weights as float64 NumPy arrays, by their torch names (e.g. 'blocks.0.attn.W_Q.weight')."""
    state = model.state_dict()
    out = {k: v.detach().cpu().numpy().astype(np.float64) for k, v in state.items() if k not in ("pos", "causal")}
    out["pos"] = model.pos.detach().cpu().numpy().astype(np.float64)
    return out


def _check_ids(model, ids) -> np.ndarray:
    if hasattr(ids, "detach"):  # a torch tensor
        ids = ids.detach().cpu().numpy()
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise ValueError(f"trace reads ONE sequence: give 1-D ids like prompt(89), got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("the sequence is empty: give at least one token id, e.g. prompt(89)")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"token ids must be whole numbers, got {ids!r}")
    vocab, max_len = model.cfg.vocab_size, model.cfg.max_len
    bad = [int(i) for i in arr if not 0 <= i < vocab]
    if bad:
        raise ValueError(f"unknown token ids {bad}: ids run from 0 to {vocab - 1}")
    if arr.size > max_len:
        raise ValueError(f"the sequence has {arr.size} tokens, more than the model's max_len={max_len}")
    return arr.astype(np.int64)


def _layer_norm(x: np.ndarray, scale: np.ndarray, shift: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)  # the biased variance, as torch uses
    return (x - mean) / np.sqrt(var + LN_EPS) * scale + shift


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; -inf entries get weight 0. A row with no allowed key at all
    (only possible when the sequence starts with PAD) gets equal weights, as in the torch model.

    The package's one softmax in NumPy (the labs use it too); ``model.softmax_rows`` is its torch
    twin, which autograd can follow.

    >>> softmax_rows(np.array([[0.0, 0.0], [1.0, -np.inf]]))
    array([[0.5, 0.5],
           [1. , 0. ]])
    """
    top = scores.max(-1, keepdims=True)
    all_masked = np.isneginf(top)
    e = np.exp(scores - np.where(all_masked, 0.0, top))
    e = np.where(all_masked, 1.0, e)
    return e / e.sum(-1, keepdims=True)


Record = Callable[..., np.ndarray]  # record(name, array, axes, block=None, formula=""): keeps a step, returns it


def trace(model, ids: npt.ArrayLike) -> list[Intermediate]:
    """Every intermediate of the forward pass of one sequence, in order (see the module docstring)."""
    ids = _check_ids(model, ids)
    cfg = model.cfg
    W = weights_of(model)
    steps: list[Intermediate] = []

    def record(name, array, axes, block=None, formula=""):
        steps.append(Intermediate(name, array, tuple(axes), block, formula))
        return array

    x = _embed(record, W, ids, cfg)
    allowed = _allowed(ids, cfg)
    for b in range(cfg.n_layers):
        x = _attention_sublayer(record, W, b, x, allowed, cfg)
        x = _ffn_sublayer(record, W, b, x)
    z = _normed(record, "final LayerNorm", x, W, "ln_f.")
    record("logits", z @ W["head.weight"].T + W["head.bias"], ("L", "V"), formula="final LayerNorm @ head.T + b_head")
    return steps


def _normed(
    record: Record, name: str, x: np.ndarray, W: dict[str, np.ndarray], p: str, b: int | None = None
) -> np.ndarray:
    """A LayerNorm step: x's rows normalised with the scale and shift named ``p`` + weight, bias."""
    return record(
        name,
        _layer_norm(x, W[p + "weight"], W[p + "bias"]),
        ("L", "d_model"),
        b,
        "each row to mean 0, variance 1, then × scale + shift",
    )


def _embed(record: Record, W: dict[str, np.ndarray], ids: np.ndarray, cfg) -> np.ndarray:
    """token rows, scaled, + positions: the blocks' input x."""
    L, d = len(ids), cfg.d_model
    x = record("token rows", W["tok.weight"][ids], ("L", "d_model"), formula="row id of the token table")
    if cfg.scale_embedding:
        x = record("scaled", x * math.sqrt(d), ("L", "d_model"), formula=f"token rows × √{d}")
    else:
        x = record("scaled", x.copy(), ("L", "d_model"), formula="token rows (no √d_model factor in this model)")
    return record("+ positions", x + W["pos"][:L], ("L", "d_model"), formula="scaled + sinusoid row of each position")


def _allowed(ids: np.ndarray, cfg) -> np.ndarray:
    """(L_q, L_k): True where a query may look at a key."""
    L = len(ids)
    allowed = ids[None, :] != cfg.pad_id  # (1, L_k) PAD keys are never looked at
    if cfg.causal:
        return allowed & np.tri(L, dtype=bool)  # (L_q, L_k) no query looks at a later key
    return np.broadcast_to(allowed, (L, L))


def _attention_sublayer(
    record: Record, W: dict[str, np.ndarray], b: int, x: np.ndarray, allowed: np.ndarray, cfg
) -> np.ndarray:
    """Block b's LayerNorm 1 … residual 1: x plus what the attention brings from the other positions."""
    p = f"blocks.{b}."
    L, d, h = len(x), cfg.d_model, cfg.n_heads
    dk = d // h

    def heads(m):
        return m.reshape(L, h, dk).transpose(1, 0, 2)  # (L, d_model) → (h, L, d_k)

    a_in = _normed(record, "LayerNorm 1", x, W, p + "ln1.", b)
    q = record("Q", heads(a_in @ W[p + "attn.W_Q.weight"].T), ("h", "L", "d_k"), b, "LayerNorm 1 @ W_Q.T")
    k = record("K", heads(a_in @ W[p + "attn.W_K.weight"].T), ("h", "L", "d_k"), b, "LayerNorm 1 @ W_K.T")
    v = record("V", heads(a_in @ W[p + "attn.W_V.weight"].T), ("h", "L", "d_k"), b, "LayerNorm 1 @ W_V.T")
    s = record("scores", q @ k.transpose(0, 2, 1) / math.sqrt(dk), ("h", "L_q", "L_k"), b, f"Q @ K.T / √{dk}")
    s = record(
        "masked scores",
        np.where(allowed[None], s, -np.inf),
        ("h", "L_q", "L_k"),
        b,
        "-inf where the key is later than the query" + (" or is PAD" if cfg.causal else " (PAD keys only)"),
    )
    w = record("weights", softmax_rows(s), ("h", "L_q", "L_k"), b, "softmax of each row of the masked scores")
    mixed = record("mixed values", w @ v, ("h", "L", "d_k"), b, "weights @ V")
    side_by_side = mixed.transpose(1, 0, 2).reshape(L, d)  # (L, d_model) the heads side by side
    a = record(
        "attention out",
        side_by_side @ W[p + "attn.W_O.weight"].T + W[p + "attn.W_O.bias"],
        ("L", "d_model"),
        b,
        "mixed values (heads side by side) @ W_O.T + b_O",
    )
    return record("residual 1", x + a, ("L", "d_model"), b, "block input + attention out")


def _ffn_sublayer(record: Record, W: dict[str, np.ndarray], b: int, x: np.ndarray) -> np.ndarray:
    """Block b's LayerNorm 2 … residual 2: x plus what the FFN makes of each position on its own."""
    p = f"blocks.{b}."
    f_in = _normed(record, "LayerNorm 2", x, W, p + "ln2.", b)
    hid = record(
        "FFN hidden",
        f_in @ W[p + "ffn.up.weight"].T + W[p + "ffn.up.bias"],
        ("L", "d_ff"),
        b,
        "LayerNorm 2 @ up.T + b_up",
    )
    r = record("ReLU", np.maximum(hid, 0.0), ("L", "d_ff"), b, "negatives set to 0")
    f = record(
        "FFN out",
        r @ W[p + "ffn.down.weight"].T + W[p + "ffn.down.bias"],
        ("L", "d_model"),
        b,
        "ReLU @ down.T + b_down",
    )
    return record("residual 2", x + f, ("L", "d_model"), b, "residual 1 + FFN out")


def find(steps: Sequence[Intermediate], name: str, block: int | None = None) -> Intermediate:
    """The step called ``name`` (in ``block``, for the steps inside a block) from a trace."""
    if name not in NAMES:
        raise ValueError(f"no step is called {name!r}; the steps are {list(NAMES)}")
    if name in BLOCK_NAMES and block is None:
        raise ValueError(f"{name!r} happens inside every block: say which, e.g. find(steps, {name!r}, block=0)")
    want = block if name in BLOCK_NAMES else None
    for s in steps:
        if s.name == name and s.block == want:
            return s
    blocks = sorted({s.block for s in steps if s.block is not None})
    raise ValueError(f"no {name!r} in block {block}: this model has blocks {blocks}")


def forward(model, ids) -> np.ndarray:
    """Logits in NumPy: 1-D ids (L,) → (L, V); a batch (B, L) → (B, L, V)."""
    if hasattr(ids, "detach"):
        ids = ids.detach().cpu().numpy()
    arr = np.asarray(ids)
    if arr.ndim == 2:
        if arr.shape[0] == 0:
            raise ValueError("the batch is empty: give at least one sequence")
        return np.stack([trace(model, row)[-1].array for row in arr])
    return trace(model, arr)[-1].array
