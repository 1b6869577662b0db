"""The model's sizes and switches, and where its parameters are: plain Python, no torch.

``parameter_table`` counts every part from the config alone; the machine lab redraws it on every
slider move, and a notebook shows it without waiting for torch to load. ``model.py`` builds the
torch model from the same config (and re-exports these names).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from .task import PAD, VOCAB_SIZE


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the model and the switches the course's ablations flip."""

    vocab_size: int = VOCAB_SIZE
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128
    max_len: int = 16
    emb_std: float | None = None  # None: 1/√d_model, so token and position rows start alike
    scale_embedding: bool = True  # multiply token rows by √d_model before adding positions
    causal: bool = True  # the causal mask; switched off only for the ablation
    pad_id: int = PAD

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
        if self.d_model % self.n_heads:
            ok = [h for h in range(1, self.d_model + 1) if self.d_model % h == 0]
            raise ValueError(
                f"n_heads={self.n_heads} does not divide d_model={self.d_model}: each head takes "
                f"d_model / n_heads columns; choose one of {ok}"
            )
        if self.emb_std is not None and not (isinstance(self.emb_std, (int, float)) and self.emb_std > 0):
            raise ValueError(f"emb_std must be a positive number or None (meaning 1/√d_model), got {self.emb_std!r}")
        if not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"pad_id must be a token id from 0 to {self.vocab_size - 1}, got {self.pad_id}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def init_std(self) -> float:
        return self.emb_std if self.emb_std is not None else 1 / math.sqrt(self.d_model)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown config fields {sorted(unknown)}; known fields are {sorted(known)}")
        return cls(**d)


def parameter_table(cfg: ModelConfig | None = None) -> list[tuple[str, int, str]]:
    """Rows (part, parameters, formula), from the config alone. A count counts weights and biases.

    At the defaults the total is 72,106. Notebook 01 asks for some of these counts before its machine lab
    shows them, and imports this table only after those questions.
    """
    cfg = cfg or ModelConfig()
    d, f, V, N = cfg.d_model, cfg.d_ff, cfg.vocab_size, cfg.n_layers
    tok = V * d
    attn = 4 * d * d + d
    ffn = d * f + f + f * d + d
    ln = 2 * d
    block = attn + ffn + 2 * ln
    out = d * V + V
    total = tok + N * block + ln + out
    return [
        ("token table", tok, f"{V} × {d}"),
        ("positions", 0, "fixed sinusoids, nothing learned"),
        ("one attention", attn, f"W_Q, W_K, W_V {d}×{d} + W_O {d}×{d} + {d}"),
        ("one FFN", ffn, f"{d}×{f} + {f} + {f}×{d} + {d}"),
        ("one LayerNorm", ln, f"{d} scales + {d} shifts"),
        ("one block", block, "attention + FFN + 2 LayerNorms"),
        (f"{N} blocks", N * block, f"{N} × {block:,}"),
        ("final LayerNorm", ln, f"{d} + {d}"),
        ("output layer", out, f"{d} × {V} + {V}"),
        ("total", total, f"{tok:,} + {N} × {block:,} + {ln} + {out:,}"),
    ]


def parameter_counts(cfg: ModelConfig | None = None) -> dict[str, int]:
    """parameter_table as {part: count}."""
    return {part: n for part, n, _ in parameter_table(cfg)}
