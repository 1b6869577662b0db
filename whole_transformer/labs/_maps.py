"""The attention maps lab's data and drawing (notebook 03): every head of every block, each an L × L map.

``Maps`` holds one reading: the tokens that went in at the last step, what each row picked, and the attention
weights of every block and head, ``(n_layers, h, L, L)``; ``masked[q, k]`` is True where the causal mask hides key k
from query q (a later token). ``overview_html`` draws all maps small, a grid of blocks × heads, masked cells hatched
(a pattern, not a colour) and the hatch named in the legend; ``table_html`` is one map's table twin, every weight
written out and every masked cell saying "masked"; ``cell_text`` says what one cell means in words.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decode import MAX_NEW, greedy_trace
from ..model import Transformer
from ..task import VOCAB, parse_prompt
from ._html import cell_colour, esc

HATCH = "repeating-linear-gradient(45deg, #ffffff 0 3px, #8c8c8c 3px 4px)"  # the masked cells' pattern
STYLE = f"""
.wt-maps-grid {{ border-collapse: collapse; }}
.wt-maps-grid td {{ vertical-align: top; padding: 2px 8px 6px 0; }}
.wt-maps-small {{ border-collapse: collapse; }}
.wt-maps-small td {{ width: 11px; height: 11px; padding: 0; border: 1px solid #fff; }}
.wt-maps-small td.wt-maps-masked, .wt-lab .wt-maps-cell.wt-maps-masked {{ background-image: {HATCH}; }}
.wt-maps-chosen {{ outline: 3px solid #1e1e1e; outline-offset: 2px; }}
.wt-lab .wt-maps-cell {{ width: 62px; height: 28px; margin: 1px; padding: 0 2px; font-size: 12px; }}
.wt-lab .wt-maps-cell.wt-maps-masked {{ color: #1e1e1e; font-style: italic; }}
.wt-lab .wt-maps-cell.wt-maps-on {{ outline: 3px solid #1e1e1e; outline-offset: -3px; font-weight: bold; }}
.wt-maps-head {{ margin: 1px; text-align: center; font-family: ui-monospace, Menlo, monospace; font-size: 11px;
  white-space: nowrap; line-height: 28px; }}
.wt-maps-label {{ width: 118px; }}
.wt-maps-table td.wt-maps-masked {{ background-image: {HATCH}; font-style: italic; }}
"""


@dataclass(frozen=True)
class Maps:
    """One reading of a number: tokens in, what each row picked, every block's and head's weights."""

    tokens: list[str]  # the L tokens that went in at the last step
    picks: list[str]  # what each row's guess was; "" for the rows before '=' (the prompt is given, not picked)
    weights: np.ndarray  # (n_layers, h, L, L): row q, column k is how much query q looks at key k
    masked: np.ndarray  # (L, L) bool: True where the causal mask hides key k from query q

    @property
    def shape(self) -> tuple[int, int, int]:
        n_layers, n_heads, length, _ = self.weights.shape
        return n_layers, n_heads, length


def read(model: Transformer, n: int) -> Maps:
    """The model reads n aloud (greedy); the maps are those of its last step, which sees every token but the last
    one written. Thanks to the causal mask, row q of that step is row q of every step that had q."""
    prompt = parse_prompt(str(n))
    trace = greedy_trace(model, prompt, max_new=MAX_NEW)
    last = trace.steps[-1]
    tokens = [VOCAB[i] for i in last.ids_in]
    start = len(prompt) - 1  # the row of '=' picks the first word
    picks = ["" if q < start else VOCAB[trace.ids[q + 1]] for q in range(len(tokens))]
    length = len(tokens)
    masked = np.triu(np.ones((length, length), dtype=bool), 1) if model.cfg.causal else np.zeros((length,) * 2, bool)
    return Maps(tokens, picks, np.stack(last.attention), masked)


def cell_text(m: Maps, block: int, head: int, q: int, k: int) -> str:
    """One cell in words: block and head (from 1), the query's and the key's tokens and places, the weight."""
    where = f"Block {block}, head {head}: the query '{m.tokens[q]}' (row {q})"
    if m.picks[q]:
        where += f", the row that picks '{m.picks[q]}',"
    if m.masked[q, k]:
        return f"{where} may not look at the key '{m.tokens[k]}' (column {k}), a later token: masked, weight 0."
    return f"{where} gives the key '{m.tokens[k]}' (column {k}) the weight {m.weights[block - 1, head - 1, q, k]:.2f}."


def _small_map(m: Maps, block: int, head: int, chosen: bool) -> str:
    w = m.weights[block - 1, head - 1]
    rows = []
    for q in range(w.shape[0]):
        cells = []
        for k in range(w.shape[1]):
            if m.masked[q, k]:
                cells.append('<td class="wt-maps-masked"></td>')
            else:
                cells.append(f'<td style="background: {cell_colour(w[q, k], 1.0, "sequential")[0]};"></td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    top = [f"'{m.tokens[int(np.argmax(np.where(m.masked[q], -1, w[q])))]}'" for q in range(w.shape[0])]
    label = (
        f"block {block}, head {head}: the key each row looks at most, row by row: {', '.join(top)}; "
        f"the cells above the diagonal are masked"
    )
    return (
        f'<div class="wt-small wt-maps-label">block {block}, head {head}{" (large below)" if chosen else ""}</div>'
        f'<table class="wt-maps-small{" wt-maps-chosen" if chosen else ""}" role="img" aria-label="{esc(label)}" '
        f'data-block="{block}" data-head="{head}">{"".join(rows)}</table>'
    )


def overview_html(m: Maps, chosen: tuple[int, int]) -> str:
    """Every map small, one row of heads per block, the chosen one outlined; the legend says what the marks mean."""
    n_layers, n_heads, length = m.shape
    rows = "".join(
        "<tr>" + "".join(f"<td>{_small_map(m, b, h, (b, h) == chosen)}</td>" for h in range(1, n_heads + 1)) + "</tr>"
        for b in range(1, n_layers + 1)
    )
    return (
        f'<div class="wt-small">All {n_layers * n_heads} maps, {length} × {length} each: row = query (the token that '
        f"looks), column = key (the token looked at), darker blue = more weight. "
        f'<span style="display: inline-block; width: 12px; height: 12px; background-image: {HATCH}; '
        f'border: 1px solid #8c8c8c; vertical-align: middle;"></span> hatched = masked: a later token, which the '
        f"query may not see.</div>"
        f'<table class="wt-maps-grid">{rows}</table>'
    )


def table_html(m: Maps, block: int, head: int) -> str:
    """One map as a table: a row per query, a column per key, each weight written, masked cells saying so."""
    w = m.weights[block - 1, head - 1]
    head_row = "".join(f'<th scope="col">{k} {esc(t)}</th>' for k, t in enumerate(m.tokens))
    body = []
    for q, tok in enumerate(m.tokens):
        cells = "".join(
            '<td class="wt-maps-masked">masked</td>' if m.masked[q, k] else f"<td>{w[q, k]:.2f}</td>"
            for k in range(len(m.tokens))
        )
        body.append(f'<tr><th scope="row">{q} {esc(tok)}</th>{cells}<td>{esc(m.picks[q]) or "—"}</td></tr>')
    return (
        f'<div class="wt-scroll" tabindex="0" role="region" aria-label="table of block {block}, head {head}">'
        f'<table class="wt-table wt-maps-table"><caption style="text-align: left;">The same map as a table: block '
        f"{block}, head {head}; rows are queries, columns are keys; the last column is the word that row picks"
        f'</caption><tr><th scope="col">query ╲ key</th>{head_row}<th scope="col">picks</th></tr>'
        f"{''.join(body)}</table></div>"
    )
