"""The whole decoder-only Transformer, small enough to read every number of it.

ids (B, L) → token table × √d_model + sinusoidal positions → n_layers pre-LayerNorm blocks
(x + attention(LN(x)), then x + FFN(LN(x))) → final LayerNorm → output layer → logits (B, L, V).

At the defaults (d_model 64, 4 heads, 2 blocks, d_ff 128, 42 tokens) it has 72,106 parameters;
``parameter_table`` says where they are, from the config alone.

This file is the one forward path: everything the course shows goes through ``forward``.
Training and batched decoding run the same modules through shortcuts that give the same numbers
for less work; they live in ``fast.py``.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ModelConfig, parameter_counts, parameter_table  # noqa: F401  (re-exported)


def count_parameters(model: nn.Module) -> int:
    """Counted by torch: every trainable number of the model."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def sinusoidal_positions(max_len: int, d_model: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """(max_len, d_model): column 2i is sin(pos / 10000^(2i/d)), column 2i+1 its cos; worked out in float64,
    kept as ``dtype`` (the model's buffer: float32)."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (L, 1)
    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d/2,)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)[:, : d_model // 2]
    return pe.to(dtype)


def softmax_rows(scores: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis, written out: exp(s - row max) / row sum.

    The same numbers as ``torch.softmax(scores, -1)`` up to rounding; on CPU torch's own kernel is
    several times slower on rows as short as ours (up to 16 keys). Subtracting the row max keeps
    exp from overflowing and does not change the result, so no gradient needs to flow through it.
    """
    e = (scores - scores.amax(-1, keepdim=True).detach()).exp()
    return e / e.sum(-1, keepdim=True)


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

    def forward(self, x: torch.Tensor, mask: torch.Tensor, need_weights: bool = False):
        """x (B, L, d_model) → (B, L, d_model); mask (B, 1, L, L) is True where a query may look at a key."""
        q, k, v = self.split_heads(x)  # (B, h, L, d_k) each
        out, weights = self.attend(q, k, v, mask)
        return out, (weights if need_weights else None)

    def split_heads(self, x: torch.Tensor):
        """x (B, L, d_model) → queries, keys and values, each cut into heads: (B, h, L, d_k)."""
        B, L, d = x.shape
        h = self.n_heads
        q = self.W_Q(x).view(B, L, h, d // h).transpose(1, 2)  # (B, h, L, d_k)
        k = self.W_K(x).view(B, L, h, d // h).transpose(1, 2)  # (B, h, L, d_k)
        v = self.W_V(x).view(B, L, h, d // h).transpose(1, 2)  # (B, h, L, d_k)
        return q, k, v

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor):
        """Each query row mixes the value rows of the keys it may look at: → (B, L, d_model), weights."""
        B, h, L, d_k = q.shape
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, L, L)
        scores = scores.masked_fill(~mask, -1e9)
        weights = softmax_rows(scores)  # (B, h, L, L) each row sums to 1
        mixed = (weights @ v).transpose(1, 2).reshape(B, L, h * d_k)  # (B, L, d_model) heads side by side
        return self.W_O(mixed), weights


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

    def forward(self, x, mask, need_weights=False):
        """x (B, L, d_model) → (B, L, d_model) and the attention weights (or None)."""
        a, w = self.attn(self.ln1(x), mask, need_weights)
        x = x + a
        x = x + self.ffn(self.ln2(x))
        return x, w


class Transformer(nn.Module):
    """The whole model. ``model(ids)`` gives logits (B, L, V)."""

    pos: torch.Tensor  # buffers registered in __init__, typed here (register_buffer leaves them Tensor | Module)
    causal: torch.Tensor

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

    def check_length(self, L: int) -> None:
        if L > self.cfg.max_len:
            raise ValueError(f"input of {L} tokens is longer than max_len={self.cfg.max_len}")

    def forward(self, ids: torch.Tensor, return_attention: bool = False):
        """ids (B, L) → logits (B, L, V); with return_attention also a list of (B, h, L, L), one per block."""
        if ids.dim() == 1:
            ids = ids[None]
        self.check_length(ids.shape[1])
        mask = self.mask(ids)  # (B, 1, L, L)
        x = self.embed(ids)  # (B, L, d_model)
        attention = []
        for block in self.blocks:
            x, w = block(x, mask, return_attention)
            attention.append(w)
        logits = self.head(self.ln_f(x))  # (B, L, V)
        return (logits, attention) if return_attention else logits
