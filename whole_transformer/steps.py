"""Every intermediate step of the torch model's forward pass, caught as it runs (for the microscope).

``trace(model, ids)`` runs ONE sequence (1-D ids) through a float64 copy of a trained torch ``Transformer``
(its position rows worked out in float64 too) and returns the list of ``Intermediate`` steps, in the order they
happen. Each array is what the model itself computed, caught by forward hooks on its modules (the queries are
the model's own ``split_heads``, the weights its own attention); only the raw and the masked scores, which the
model never keeps, are worked out here from its queries and keys::

    token rows       (L, d_model)        the rows of the token table picked by the ids
    scaled           (L, d_model)        × √d_model  (the same array again if scale_embedding is off)
    + positions      (L, d_model)        + the fixed sinusoid row of each position: the first block's input
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

Nothing here computes a LayerNorm, an attention, a block or the forward pass: that is the torch model's job
(``model.py``), and in NumPy the student's (notebook 02).

>>> from whole_transformer.train import load_model
>>> from whole_transformer.task import prompt
>>> steps = trace(load_model("microscope"), prompt(89))
>>> find(steps, "weights", block=0).array.shape      # (h, L_q, L_k)
(1, 3, 3)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from .model import sinusoidal_positions

__all__ = ["Intermediate", "NAMES", "BLOCK_NAMES", "trace", "find"]

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

#: what each step is, in words a lab can show ({d}: d_model, {dk}: d_k)
FORMULA = {
    "token rows": "row id of the token table",
    "scaled": "token rows × √{d}",
    "+ positions": "scaled + sinusoid row of each position",
    "LayerNorm 1": "each row to mean 0, variance 1, then × scale + shift",
    "Q": "LayerNorm 1 @ W_Q.T",
    "K": "LayerNorm 1 @ W_K.T",
    "V": "LayerNorm 1 @ W_V.T",
    "scores": "Q @ K.T / √{dk}",
    "masked scores": "-inf where the key is later than the query or is PAD",
    "weights": "softmax of each row of the masked scores",
    "mixed values": "weights @ V",
    "attention out": "mixed values (heads side by side) @ W_O.T + b_O",
    "residual 1": "block input + attention out",
    "LayerNorm 2": "each row to mean 0, variance 1, then × scale + shift",
    "FFN hidden": "LayerNorm 2 @ up.T + b_up",
    "ReLU": "negatives set to 0",
    "FFN out": "ReLU @ down.T + b_down",
    "residual 2": "residual 1 + FFN out",
    "final LayerNorm": "each row to mean 0, variance 1, then × scale + shift",
    "logits": "final LayerNorm @ head.T + b_head",
}
AXES = {
    **dict.fromkeys(
        ("token rows", "scaled", "+ positions", "LayerNorm 1", "attention out", "residual 1"), ("L", "d_model")
    ),
    **dict.fromkeys(("LayerNorm 2", "FFN out", "residual 2", "final LayerNorm"), ("L", "d_model")),
    **dict.fromkeys(("Q", "K", "V", "mixed values"), ("h", "L", "d_k")),
    **dict.fromkeys(("scores", "masked scores", "weights"), ("h", "L_q", "L_k")),
    "FFN hidden": ("L", "d_ff"),
    "ReLU": ("L", "d_ff"),
    "logits": ("L", "V"),
}


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


def exact_copy(model):
    """A float64 copy of the model, its position rows worked out in float64 (the model keeps them as float32)."""
    exact = copy.deepcopy(model).double().eval()
    exact.pos = sinusoidal_positions(exact.cfg.max_len, exact.cfg.d_model, dtype=torch.float64)
    return exact


def _caught(exact, tokens: torch.Tensor) -> tuple[dict, list]:
    """Run the model once; (step name, block) → what its modules took in or gave out, and its attention."""
    seen: dict = {}
    handles = []

    def out(key):
        def hook(module, inputs, output):
            seen[key] = output[0] if isinstance(output, tuple) else output

        return hook

    def inp(key):
        def hook(module, inputs):
            seen[key] = inputs[0]

        return hook

    handles.append(exact.tok.register_forward_hook(out(("token rows", None))))
    handles.append(exact.ln_f.register_forward_hook(out(("final LayerNorm", None))))
    handles.append(exact.head.register_forward_hook(out(("logits", None))))
    for b, block in enumerate(exact.blocks):
        handles.append(block.register_forward_pre_hook(inp(("+ positions", b))))
        handles.append(block.ln1.register_forward_hook(out(("LayerNorm 1", b))))
        handles.append(block.attn.W_O.register_forward_pre_hook(inp(("mixed values", b))))
        handles.append(block.attn.W_O.register_forward_hook(out(("attention out", b))))
        handles.append(block.ln2.register_forward_pre_hook(inp(("residual 1", b))))
        handles.append(block.ln2.register_forward_hook(out(("LayerNorm 2", b))))
        handles.append(block.ffn.up.register_forward_hook(out(("FFN hidden", b))))
        handles.append(block.ffn.down.register_forward_pre_hook(inp(("ReLU", b))))
        handles.append(block.ffn.down.register_forward_hook(out(("FFN out", b))))
        handles.append(block.register_forward_hook(out(("residual 2", b))))
    try:
        with torch.no_grad():
            _, attention = exact(tokens, return_attention=True)
    finally:
        for h in handles:
            h.remove()
    return seen, attention


def trace(model, ids: npt.ArrayLike) -> list[Intermediate]:
    """Every intermediate of the forward pass of one sequence, in order (see the module docstring)."""
    ids = _check_ids(model, ids)
    exact = exact_copy(model)
    cfg = exact.cfg
    tokens = torch.from_numpy(ids)[None]  # (1, L)
    seen, attention = _caught(exact, tokens)
    d, dk = cfg.d_model, cfg.d_model // cfg.n_heads
    steps: list[Intermediate] = []

    formula = {**FORMULA}
    if not cfg.scale_embedding:
        formula["scaled"] = "token rows (no √d_model factor in this model)"
    if not cfg.causal:
        formula["masked scores"] = "-inf where the key is PAD (this model has no causal mask)"

    def keep(name, tensor, block=None):
        array = tensor.detach().numpy()
        array = array[0] if array.ndim > len(AXES[name]) else array  # the batch of one dropped
        steps.append(Intermediate(name, array, AXES[name], block, formula[name].format(d=d, dk=dk)))

    rows = seen[("token rows", None)]
    keep("token rows", rows)
    keep("scaled", rows * math.sqrt(d) if cfg.scale_embedding else rows.clone())
    keep("+ positions", seen[("+ positions", 0)])
    allowed = exact.mask(tokens)  # (1, 1, L, L) True where a query may look at a key
    with torch.no_grad():
        for b, block in enumerate(exact.blocks):
            keep("LayerNorm 1", seen[("LayerNorm 1", b)], b)
            q, k, v = block.attn.split_heads(seen[("LayerNorm 1", b)])  # (1, h, L, d_k) each: the model's own
            for name, t in (("Q", q), ("K", k), ("V", v)):
                keep(name, t, b)
            scores = q @ k.transpose(-2, -1) / math.sqrt(dk)  # (1, h, L, L)
            keep("scores", scores, b)
            keep("masked scores", scores.masked_fill(~allowed, -math.inf), b)
            keep("weights", attention[b], b)
            L = ids.size
            keep("mixed values", seen[("mixed values", b)].view(1, L, cfg.n_heads, dk).transpose(1, 2), b)
            for name in ("attention out", "residual 1", "LayerNorm 2", "FFN hidden", "ReLU", "FFN out", "residual 2"):
                keep(name, seen[(name, b)], b)
    keep("final LayerNorm", seen[("final LayerNorm", None)])
    keep("logits", seen[("logits", None)])
    return steps


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
