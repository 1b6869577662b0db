"""A shipped checkpoint's weights as plain NumPy arrays, for the forward pass students write in notebook 02.

``load_weights("60")`` gives a dict of float64 arrays, named as the torch model names them (its
``state_dict``). A ``Linear`` layer keeps its weight as (out, in), so it acts on a row x as ``x @ w.T``; the
names and shapes of the full model (d_model 64, 4 heads, 2 blocks, d_ff 128, 42 tokens)::

    tok.weight               (42, 64)     the token table E: row t is token t's row
    blocks.{i}.ln1.weight    (64,)        block i's first LayerNorm: its scale gamma
    blocks.{i}.ln1.bias      (64,)        ... and its shift beta
    blocks.{i}.attn.W_Q.weight (64, 64)   the queries' weight (no bias); W_K and W_V alike
    blocks.{i}.attn.W_O.weight (64, 64)   the output projection's weight
    blocks.{i}.attn.W_O.bias (64,)        ... and its bias
    blocks.{i}.ln2.weight, .bias (64,)    the second LayerNorm
    blocks.{i}.ffn.up.weight (128, 64)    the FFN's first layer, d_model → d_ff, and up.bias (128,)
    blocks.{i}.ffn.down.weight (64, 128)  its second layer, d_ff → d_model, and down.bias (64,)
    ln_f.weight, ln_f.bias   (64,)        the final LayerNorm
    head.weight              (42, 64)     the output layer, 64 → 42, and head.bias (42,)

The position rows are not among them: they are fixed, not learned, and the forward pass makes them.

>>> W = load_weights("microscope")
>>> W["tok.weight"].shape, W["blocks.0.ffn.up.weight"].shape, W["head.bias"].dtype
((42, 6), (12, 6), dtype('float64'))
"""

from __future__ import annotations

import numpy as np


def weights_of(model) -> dict[str, np.ndarray]:
    """A torch model's learned weights as float64 NumPy arrays, by their torch names (its state_dict)."""
    return {name: t.detach().cpu().numpy().astype(np.float64) for name, t in model.state_dict().items()}


def load_weights(name: str = "60") -> dict[str, np.ndarray]:
    """The weights of a shipped checkpoint ("60", "2" or "microscope"), as float64 arrays by their torch names."""
    from .train import load_model  # lazy: torch, only when a checkpoint is read

    return weights_of(load_model(name))


def float64_model(name: str = "60"):
    """The shipped torch model run in float64, its position rows worked out in float64 too (the shipped model
    keeps them as float32): what a NumPy forward pass in float64 can equal to the last digits."""
    import torch  # lazy, as the two below: torch only when a torch model is asked for

    from .model import sinusoidal_positions  # lazy: torch
    from .train import load_model  # lazy: torch

    model = load_model(name).double()
    model.pos = sinusoidal_positions(model.cfg.max_len, model.cfg.d_model, dtype=torch.float64)
    return model


def random_weights(
    seed: int, vocab: int = 9, d_model: int = 8, n_layers: int = 1, d_ff: int = 12, dtype=np.float64
) -> dict[str, np.ndarray]:
    """A made-up model's weights, named and shaped as ``load_weights`` gives them, from ``seed``.

    For trying a forward pass on other sizes than the shipped models' (the hidden tests do): each matrix is
    normal with std 1/√(its input size), each scale near 1, each shift and bias small.
    """
    rng = np.random.default_rng(seed)

    def matrix(out: int, inp: int) -> np.ndarray:
        return rng.normal(size=(out, inp)) / np.sqrt(inp)

    def near(n: int, centre: float, spread: float) -> np.ndarray:
        return centre + spread * rng.normal(size=n)

    W = {"tok.weight": rng.normal(size=(vocab, d_model)) / np.sqrt(d_model)}
    for i in range(n_layers):
        p = f"blocks.{i}."
        W[p + "ln1.weight"], W[p + "ln1.bias"] = near(d_model, 1.0, 0.3), near(d_model, 0.0, 0.2)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            W[p + f"attn.{name}.weight"] = matrix(d_model, d_model)
        W[p + "attn.W_O.bias"] = near(d_model, 0.0, 0.2)
        W[p + "ln2.weight"], W[p + "ln2.bias"] = near(d_model, 1.0, 0.3), near(d_model, 0.0, 0.2)
        W[p + "ffn.up.weight"], W[p + "ffn.up.bias"] = matrix(d_ff, d_model), near(d_ff, 0.0, 0.2)
        W[p + "ffn.down.weight"], W[p + "ffn.down.bias"] = matrix(d_model, d_ff), near(d_model, 0.0, 0.2)
    W["ln_f.weight"], W["ln_f.bias"] = near(d_model, 1.0, 0.3), near(d_model, 0.0, 0.2)
    W["head.weight"], W["head.bias"] = matrix(vocab, d_model), near(vocab, 0.0, 0.2)
    return {k: v.astype(dtype) for k, v in W.items()}
