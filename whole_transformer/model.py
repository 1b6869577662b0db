"""The whole decoder-only Transformer, small enough to read every number of it.

ids (B, L) → token table × √d_model + sinusoidal positions → n_layers pre-LayerNorm blocks
(x + attention(LN(x)), then x + FFN(LN(x))) → final LayerNorm → output layer → logits (B, L, V).

At the defaults (d_model 64, 4 heads, 2 blocks, d_ff 128, 42 tokens) it has 72,106 parameters;
``parameter_table`` says where they are, from the config alone.

Two shortcuts give the same numbers for less work and are used only for speed: ``logits_at``
(training needs scores only where a target counts) and ``extend`` with a cache of keys and values
(``decode.read_numbers`` reads 1,000 numbers without re-running every prefix). Everything the
course shows goes through ``forward``.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ModelConfig, parameter_counts, parameter_table  # noqa: F401  (re-exported)

# One thread for torch in every process that uses the course's model. Its matrices are tiny: a
# second thread saves nothing, and on a busy machine (a laptop in class, a shared CI runner, an
# autograder running notebooks side by side) threads waiting for each other make every step many
# times slower. Call torch.set_num_threads after this import to choose otherwise.
torch.set_num_threads(1)


def count_parameters(model: nn.Module) -> int:
    """Counted by torch: every trainable number of the model."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def sinusoidal_positions(max_len: int, d_model: int) -> torch.Tensor:
    """(max_len, d_model): column 2i is sin(pos / 10000^(2i/d)), column 2i+1 its cos."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (L, 1)
    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d/2,)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)[:, : d_model // 2]
    return pe.float()


def softmax_rows(scores: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis, written out: exp(s - row max) / row sum.

    The same numbers as ``torch.softmax(scores, -1)`` up to rounding; on CPU torch's own kernel is
    several times slower on rows as short as ours (up to 16 keys). Subtracting the row max keeps
    exp from overflowing and does not change the result, so no gradient needs to flow through it.
    """
    e = (scores - scores.amax(-1, keepdim=True).detach()).exp()
    return e / e.sum(-1, keepdim=True)


@contextmanager
def single_thread():
    """Run torch on one thread inside the block, then restore the thread count.

    This model's matrices are tiny: a second thread saves nothing, and on a busy machine (a laptop
    in class, a shared CI runner) threads waiting for each other make a training step many times
    slower. One thread also makes training give the same numbers whatever the core count.
    """
    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Attention(nn.Module):
    """Multi-head self-attention: W_Q, W_K, W_V without bias, W_O with bias."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d = cfg.d_model
        self.n_heads = cfg.n_heads
        self.W_Q = nn.Linear(d, d, bias=False)
        self.W_K = nn.Linear(d, d, bias=False)
        self.W_V = nn.Linear(d, d, bias=False)
        self.W_O = nn.Linear(d, d)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, need_weights: bool = False, past: dict | None = None):
        """x (B, L, d_model) → (B, L, d_model); mask (B, 1, L, L) is True where a query may look at a key.

        ``past`` is for fast decoding only (``Transformer.extend``): it keeps the keys and values of
        the positions before x, and x holds only the new positions; mask is then (B, 1, L, L_past + L).
        """
        B, L, d = x.shape
        h = self.n_heads
        q = self.W_Q(x).view(B, L, h, d // h).transpose(1, 2)  # (B, h, L, d_k)
        k = self.W_K(x).view(B, L, h, d // h).transpose(1, 2)  # (B, h, L, d_k)
        v = self.W_V(x).view(B, L, h, d // h).transpose(1, 2)  # (B, h, L, d_k)
        if past is not None:
            if past:
                k = torch.cat([past["k"], k], 2)  # (B, h, L_past + L, d_k)
                v = torch.cat([past["v"], v], 2)
            past["k"], past["v"] = k, v
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)  # (B, h, L, L)
        scores = scores.masked_fill(~mask, -1e9)
        weights = softmax_rows(scores)  # (B, h, L, L) each row sums to 1
        mixed = (weights @ v).transpose(1, 2).reshape(B, L, d)  # (B, L, d_model)
        return self.W_O(mixed), (weights if need_weights else None)


class FFN(nn.Module):
    """Linear(d_model → d_ff), ReLU, Linear(d_ff → d_model)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.up = nn.Linear(cfg.d_model, cfg.d_ff)
        self.down = nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.relu(self.up(x)))  # (B, L, d_ff) inside, (B, L, d_model) out


class Block(nn.Module):
    """Pre-LayerNorm decoder block: x + attn(LN(x)), then x + FFN(LN(x))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.ffn = FFN(cfg)

    def forward(self, x, mask, need_weights=False, keep=None, past=None):
        """x (B, L, d_model) → (B, L, d_model) and the attention weights (or None).

        With ``keep`` (B, L) bool, only the rows where keep is True go on after attention:
        the output is (N, d_model), N = keep.sum(). Attention is the one step that mixes rows;
        LayerNorm, FFN and the residual work on each row alone, so dropping rows there changes
        nothing for the rows that stay.
        """
        a, w = self.attn(self.ln1(x), mask, need_weights, past)
        x = x + a
        if keep is not None:
            x = x[keep]  # (N, d_model)
        x = x + self.ffn(self.ln2(x))
        return x, w


class Transformer(nn.Module):
    """The whole model. ``model(ids)`` gives logits (B, L, V)."""

    def __init__(self, cfg: ModelConfig | None = None):
        super().__init__()
        self.cfg = cfg = cfg or ModelConfig()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        nn.init.normal_(self.tok.weight, std=cfg.init_std)
        self.register_buffer("pos", sinusoidal_positions(cfg.max_len, cfg.d_model), persistent=False)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)
        causal = torch.ones(cfg.max_len, cfg.max_len, dtype=torch.bool)
        self.register_buffer("causal", torch.tril(causal) if cfg.causal else causal, persistent=False)

    def embed(self, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Token rows (× √d_model) + the position rows of positions start, start + 1, …"""
        x = self.tok(ids)  # (B, L, d_model)
        if self.cfg.scale_embedding:
            x = x * math.sqrt(self.cfg.d_model)
        return x + self.pos[start : start + ids.shape[1]]

    def mask(self, ids: torch.Tensor) -> torch.Tensor:
        """(B, 1, L, L) True where query row may look at key column: causal and not a PAD key."""
        L = ids.shape[1]
        return self.causal[:L, :L] & (ids != self.cfg.pad_id)[:, None, None, :]

    def forward(self, ids: torch.Tensor, return_attention: bool = False):
        """ids (B, L) → logits (B, L, V); with return_attention also a list of (B, h, L, L), one per block."""
        logits, attention = self._run(ids, return_attention)
        return (logits, attention) if return_attention else logits

    def logits_at(self, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The logits only where ``keep`` (B, L) is True: (N, V), the same numbers as ``model(ids)[keep]``.

        Training needs scores only at the positions whose targets count (about half of them), and
        after the last block's attention every step works row by row, so the other rows are
        dropped there: a training step does about a tenth less work.
        """
        if keep.shape != ids.shape or keep.dtype != torch.bool:
            raise ValueError(f"keep must be a bool tensor shaped like ids {tuple(ids.shape)}, got {keep.dtype} "
                             f"{tuple(keep.shape)}")
        return self._run(ids, False, keep)[0]

    @torch.no_grad()
    def extend(self, new_ids: torch.Tensor, cache: dict) -> torch.Tensor:
        """Fast decoding: run only the new tokens (B, T), reusing the earlier positions' keys and values.

        Start with ``cache = {}`` and the prompts, then give one column of next tokens per call;
        returns the logits of the new positions (B, T, V). The numbers are those of re-running
        the whole sequence (``model(ids)``, as the course does inference), up to float rounding:
        keys and values of earlier positions never change, because no position sees later ones.
        ``decode.read_numbers`` uses it; ``cache_rows`` keeps only some rows of a cache.
        """
        if not self.cfg.causal:
            raise ValueError("extend needs the causal mask: without it earlier positions see the new tokens")
        before = cache.get("ids")
        start = 0 if before is None else before.shape[1]
        ids = new_ids if before is None else torch.cat([before, new_ids], 1)  # (B, start + T)
        if ids.shape[1] > self.cfg.max_len:
            raise ValueError(f"input of {ids.shape[1]} tokens is longer than max_len={self.cfg.max_len}")
        mask = self.mask(ids)[:, :, start:]  # (B, 1, T, start + T) the new queries, all keys
        x = self.embed(new_ids, start)  # (B, T, d_model)
        pasts = cache.setdefault("blocks", [{} for _ in self.blocks])
        for block, past in zip(self.blocks, pasts, strict=True):
            x, _ = block(x, mask, past=past)
        cache["ids"] = ids
        return self.head(self.ln_f(x))  # (B, T, V)

    def _run(self, ids, need_weights, keep=None):
        if ids.dim() == 1:
            ids = ids[None]
        L = ids.shape[1]
        if L > self.cfg.max_len:
            raise ValueError(f"input of {L} tokens is longer than max_len={self.cfg.max_len}")
        mask = self.mask(ids)  # (B, 1, L, L)
        x = self.embed(ids)  # (B, L, d_model)
        attention = []
        last = len(self.blocks) - 1
        for i, block in enumerate(self.blocks):
            x, w = block(x, mask, need_weights, keep if i == last else None)
            attention.append(w)
        return self.head(self.ln_f(x)), attention  # (B, L, V), or (N, V) with keep


def cache_rows(cache: dict, rows: torch.Tensor) -> dict:
    """A decoding cache (see ``Transformer.extend``) with only the given rows (a bool mask or indices)."""
    return {
        "ids": cache["ids"][rows],
        "blocks": [{"k": past["k"][rows], "v": past["v"][rows]} for past in cache["blocks"]],
    }
