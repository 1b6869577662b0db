"""The cache lab's pieces (notebook 03): one number read with a KV cache, each step measured both ways, and
its drawing. ``cache.py`` holds the widget.

``read_with_cache`` takes the steps of ``decode.greedy_trace`` reading a number and does each again with
``fast.extend`` (the course's KV cache) and by re-reading the whole sequence with the plain forward pass: it
keeps both ways' scores, their times and the cache after the step. Both run in float64, so the two ways'
scores agree to about 1e-13 and every printed digit is the same. ``multiply_adds`` counts the products of a
forward pass from the model's shapes.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np
import torch

from ..decode import MAX_NEW, greedy_trace
from ..fast import extend, single_thread
from ..model import Transformer
from ..task import VOCAB, prompt
from ._html import esc, heatmap, sr, table

REPEATS = 2  # each step is timed this many times both ways; the fastest counts (the least disturbed by others)
DIGITS = 4  # the scores are printed with this many decimals
_DOUBLE: dict[int, tuple[Transformer, Transformer]] = {}


def in_float64(model: Transformer) -> Transformer:
    """A float64 copy of ``model`` (made once per model): the lab compares two ways of computing the same scores."""
    key = id(model)
    if key not in _DOUBLE or _DOUBLE[key][0] is not model:
        _DOUBLE[key] = (model, copy.deepcopy(model).double().eval())
    return _DOUBLE[key][1]


def multiply_adds(model: Transformer, rows: int, keys: int) -> int:
    """The multiply-adds of one forward pass on ``rows`` new rows whose queries each meet ``keys`` keys.

    Per block and row: Q, K, V and W_O (4 · d_model²), the FFN (2 · d_model · d_ff), scores and the mix of the
    values (2 · keys · d_model over all heads); then the output layer (d_model · V) per row. LayerNorm and the
    softmax do a few operations per number, left out. Without a cache, rows = keys = all tokens so far.
    """
    c = model.cfg
    per_row = c.n_layers * (4 * c.d_model**2 + 2 * c.d_model * c.d_ff + 2 * keys * c.d_model)
    return rows * (per_row + c.d_model * c.vocab_size)


@dataclass
class CachedStep:
    ids_in: list[int]  # every token read so far, after this step (the cache's rows)
    new_rows: int  # how many of them went through the blocks at this step
    picked: int
    cached: np.ndarray  # (V,) the scores of the step with the cache
    full: np.ndarray  # (V,) the same scores, re-reading every row
    seconds: tuple[float, float]  # (with the cache, re-reading every row), the fastest of REPEATS
    macs: tuple[int, int]  # (with the cache, re-reading every row)
    keys: list[np.ndarray]  # per block: (h, L, d_k) the cached key rows after the step
    values: list[np.ndarray]  # per block: (h, L, d_k)

    @property
    def same_printed(self) -> bool:
        """Every score the same to DIGITS decimals both ways."""
        return bool(np.array_equal(np.round(self.cached, DIGITS), np.round(self.full, DIGITS)))


def _fastest(fn, repeats: int = REPEATS):
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _extended(m: Transformer, new: list[int], cache: dict):
    """``extend`` on a copy of ``cache`` (it grows the cache it is given; the timing repeats the same step)."""
    trial = {**cache, "blocks": [dict(p) for p in cache["blocks"]]} if cache else {}
    return trial, extend(m, torch.tensor([new]), trial)[0, -1]


@torch.no_grad()
def read_with_cache(model: Transformer, n: int, max_new: int = MAX_NEW) -> list[CachedStep]:
    """The steps of ``decode.greedy_trace`` reading ``n``, each done again with a KV cache and by re-reading every
    row, both timed (see the module)."""
    m = in_float64(model)
    steps: list[CachedStep] = []
    cache: dict = {}
    with single_thread():
        for i, step in enumerate(greedy_trace(m, prompt(n), max_new).steps):
            ids = step.ids_in
            new = ids if i == 0 else ids[-1:]  # the first step reads the prompt; each later one only its new token
            t_cached, (cache, scores) = _fastest(lambda: _extended(m, new, cache))  # noqa: B023 - run at once
            t_full, full = _fastest(lambda: m(torch.tensor([ids]))[0, -1])  # noqa: B023
            L = len(ids)
            steps.append(
                CachedStep(
                    list(ids),
                    len(new),
                    step.picked,
                    scores.numpy(),
                    full.numpy(),
                    (t_cached, t_full),
                    (multiply_adds(m, len(new), L), multiply_adds(m, L, L)),
                    [p["k"][0].numpy() for p in cache["blocks"]],
                    [p["v"][0].numpy() for p in cache["blocks"]],
                )
            )
    return steps


def rows_html(step: CachedStep, block: int, head: int) -> str:
    """The cached key and value rows of one block and head, the row the step added marked in words and by an
    outline (its label starts with "new")."""
    L = len(step.ids_in)
    first_new = L - step.new_rows
    labels = [("new → " if i >= first_new else "") + f"{i} {VOCAB[t]}" for i, t in enumerate(step.ids_in)]
    hi = (L - 1, None) if step.new_rows == 1 else None
    parts = []
    for name, rows in (("K", step.keys), ("V", step.values)):
        grid = rows[block - 1][head - 1]  # (L, d_k)
        parts.append(
            f'<div class="wt-h">cached {name} rows, block {block}, head {head}: shape ({L}, {grid.shape[1]}) '
            f"{sr(f'{step.new_rows} row(s) marked new were added by this step')}</div>"
            + heatmap(
                grid,
                labels,
                row_title="token",
                col_title="d_k",
                highlight=hi,
                css_class=f"wt-cache-{name}",
                cell_width=36,
            )
        )
    region = 'class="wt-cache-rows wt-scroll" tabindex="0" role="region" aria-label="the cached rows"'
    return f"<div {region}>{''.join(parts)}</div>"


def cost_html(step: CachedStep) -> str:
    """The step's multiply-adds and time, with the cache and re-reading everything, as a table."""
    (mc, mf), (tc, tf) = step.macs, step.seconds
    rows = [
        ["with the cache", step.new_rows, len(step.ids_in), f"{mc:,}", f"{1000 * tc:.3f} ms"],
        ["re-reading every row", len(step.ids_in), len(step.ids_in), f"{mf:,}", f"{1000 * tf:.3f} ms"],
    ]
    header = ["this step", "rows through the blocks", "keys per query", "multiply-adds", "measured time"]
    return table(header, rows, align=["left", "right", "right", "right", "right"], css_class="wt-table wt-cache-cost")


def same_html(step: CachedStep) -> str:
    """The highest scores both ways, printed to DIGITS decimals, and whether every score agrees."""
    order = np.argsort(-step.cached, kind="stable")[:3]
    rows = [[VOCAB[i], f"{step.cached[i]:.{DIGITS}f}", f"{step.full[i]:.{DIGITS}f}"] for i in order]
    diff = float(np.abs(step.cached - step.full).max())
    verdict = (
        f"all {len(step.cached)} scores agree to the last printed digit (largest difference {diff:.1e})"
        if step.same_printed
        else f"the scores differ (largest difference {diff:.1e})"
    )
    head = ["token", "score with the cache", "score re-reading every row"]
    return (
        table(head, rows, align=["left", "right", "right"], css_class="wt-table wt-cache-same")
        + f'<div class="wt-cache-verdict wt-small">{"✓" if step.same_printed else "✗"} {esc(verdict)}</div>'
    )
