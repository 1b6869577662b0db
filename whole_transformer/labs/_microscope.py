"""The microscope lab's words and grids (notebook 02): the sentence on each step of the tiny model's forward
pass, with numbers of this run, and the grid of a step's values. ``microscope.py`` holds the widget."""

from __future__ import annotations

import math

import numpy as np

from ..steps import Intermediate
from ..task import VOCAB
from . import _html

#: What the grids' colours and marks mean, on every step (``_html.cell_colour``'s diverging scale; a masked cell is
#: hatched, ``_html.HATCH``, and says its value: the mask is told by a pattern and a number, not by a grey alone).
LEGEND = (
    "Colours: red above 0, blue below 0, white at 0, the deeper the larger. Hatched grey: masked, a later "
    "token the query may not see: its score is −∞, so its weight is exactly 0 (written 0, where a weight "
    "that only rounds to 0 is written 0.00)."
)
SHOWN_AXIS = {"d_head": "d_k"}  # the trace's axis name → the name the notebooks use
MAX_COLS = 14  # the 42 scores of a row are drawn as three tables of 14 columns, so they fit a 1000 px notebook


def _row_len(a: np.ndarray) -> float:
    return float(np.linalg.norm(a, axis=-1).mean())


#: What a step says when its sentence needs only sizes: {d} is d_model, {V} the vocabulary's size,
#: {tokens} the prompt's length, {width} the step's last axis, {row_len} its mean row length.
SAID = {
    "ids": "The prompt is {tokens} tokens, and each token is only a number: its row in the vocabulary of {V}. "
    "Nothing has been computed yet.",
    "token rows": "Each id picks its row of {d} learned numbers from the token table ({V} × {d}). The mean row "
    "length is {row_len:.2f}.",
    "LayerNorm 1": "Each row is shifted to mean 0 and scaled to variance 1, then multiplied and shifted by two "
    "learned rows of {d}. The block reads this copy; x itself is kept for the residual.",
    "mixed values": "Each row is a weighted mix of the rows of V, with that row's weights: information has now "
    "moved between positions, and only here.",
    "attention out": "W_O ({d} × {d} and a bias) mixes the heads' columns back into one row of {d} per position. "
    "Its mean row length is {row_len:.2f}.",
    "residual 1": "The attention's result is added to x, the block's input (the residual path), so nothing "
    "from before is lost.",
    "LayerNorm 2": "A second LayerNorm makes a normalised copy for the FFN; x again stays as it is.",
    "FFN hidden": "The FFN widens each row on its own from {d} to {width} numbers (Linear {d} → {width}). "
    "No position looks at another here.",
    "residual 2": "The FFN's result is added to x. This is the block's output: the same shape as its input, "
    "so blocks can be stacked.",
    "final LayerNorm": "One last LayerNorm (with its own learned scale and shift) before the output layer.",
}

_ROLE = {
    "Q": "what each position looks for",
    "K": "what each position offers to be found by",
    "V": "what each position hands over when it is looked at",
}


def sentence(stage: Intermediate, stages: list[Intermediate], tokens: list[str], d_model: int) -> str:
    """One sentence (HTML) on what this step did, with numbers of this run."""
    a, name = stage.array, stage.name
    by = {s.label: s for s in stages}
    in_block = "" if stage.block is None else f"block {stage.block + 1} · "  # the labels of this block's steps
    if name in SAID:
        return SAID[name].format(d=d_model, V=len(VOCAB), tokens=len(tokens), width=a.shape[-1], row_len=_row_len(a))
    for said in (_input_said, _attention_said, _output_said):
        text = said(stage, by, in_block, tokens, d_model)
        if text is not None:
            return text
    return stage.formula


def _input_said(stage: Intermediate, by: dict, in_block: str, tokens: list[str], d_model: int) -> str | None:
    """The steps before the block: the token rows scaled, the positions added."""
    a, name = stage.array, stage.name
    if name == "scaled":
        before = _row_len(by["token rows"].array)
        return (
            f"Every number is multiplied by √{d_model} ≈ {math.sqrt(d_model):.2f}, so a row's length goes "
            f"from {before:.2f} to {_row_len(a):.2f}: the token now speaks about as loudly as its position."
        )
    if name == "+ positions":
        pos = a - by["scaled"].array
        return (
            f"The fixed sinusoid row of each position is added (each such row is {_row_len(pos):.2f} long "
            f"and nothing learned in it). From here on, the same digit at another place gives another row."
        )
    return None


def _attention_said(stage: Intermediate, by: dict, in_block: str, tokens: list[str], d_model: int) -> str | None:
    """The attention's steps: Q, K and V, the scores, the mask, the weights."""
    a, name = stage.array, stage.name
    if name in ("Q", "K", "V"):
        return (
            f"{name} = LayerNorm 1 @ W_{name}.T: {_ROLE[name]}. With 1 head, the head's d_k is all {a.shape[-1]} "
            "columns; with 4 heads each would get a quarter."
        )
    if name == "scores":
        q, k = np.unravel_index(int(np.argmax(a[0])), a[0].shape)
        d_k = by[f"{in_block}K"].array.shape[-1]
        return (
            f"Every query row meets every key column: Q @ Kᵀ / √{d_k}. "
            f"The largest score, {a[0, q, k]:.2f}, is '{tokens[q]}' looking at '{tokens[k]}'."
        )
    if name == "masked scores":
        hidden = int(np.isneginf(a).sum())
        return (
            f"{hidden} scores become −∞: a position may not look at a later one, since when the model "
            "writes, the later tokens do not exist yet."
        )
    if name == "weights":
        row = a[0, -1]
        j = int(np.argmax(row))
        return (
            f"Softmax turns each row into weights that sum to 1 (−∞ gives 0). The row of '{tokens[-1]}', which "
            f"will choose the next word, puts {row[j]:.2f} on '{tokens[j]}'."
        )
    return None


def _output_said(stage: Intermediate, by: dict, in_block: str, tokens: list[str], d_model: int) -> str | None:
    """The FFN's steps, the logits and the word picked."""
    a, name = stage.array, stage.name
    if name == "ReLU":
        zeros = int((a == 0).sum())
        return f"Every negative number becomes 0: {zeros} of the {a.size} are now 0."
    if name == "FFN out":
        wide = by[f"{in_block}FFN hidden"].array.shape[-1]
        return f"Linear {wide} → {a.shape[-1]} brings each row back to d_model = {a.shape[-1]} numbers."
    if name == "logits":
        row = a[-1]
        j = int(np.argmax(row))
        return (
            f"The output layer gives every position one score per token: {a.shape[-1]} scores. The next word is "
            f"chosen from the row of the newest token, '{tokens[-1]}': its top score is {row[j]:.2f}, for '{VOCAB[j]}'."
        )
    if name == "next word":
        j = int(np.argmax(a))
        second = int(np.argsort(-a, kind="stable")[1])
        then = (
            "It ends the answer: after <eos> the model does not run again."
            if VOCAB[j] == "<eos>"
            else "It is appended, and the model runs again."
        )
        return (
            f"Greedy decoding picks the highest score: <b>{_html.esc(VOCAB[j])}</b> ({a[j]:.2f}; next best "
            f"'{_html.esc(VOCAB[second])}' at {a[second]:.2f}). {_html.esc(then)}"
        )
    return None


def masked_cells(stage: Intermediate, stages: list[Intermediate]) -> np.ndarray | None:
    """(h, L_q, L_k) True where the mask hid a key, for the masked scores and the weights (from the masked
    scores of the same block: a masked weight is 0 because its score was −∞); None for any other step."""
    if stage.name not in ("masked scores", "weights"):
        return None
    scores = next((s for s in stages if s.name == "masked scores" and s.block == stage.block), None)
    return None if scores is None else np.isneginf(scores.array)


def stage_heatmap(stage: Intermediate, labels: list[str], masked: np.ndarray | None = None) -> str:
    """The grid of a step's values: one table, or one a head for the attention's (h, rows, cols); ``masked``
    (``masked_cells``) hatches the cells the mask hid."""
    a, axes = stage.array, stage.axes
    if stage.name == "ids":
        return _html.heatmap(a, row_labels=["id"], col_labels=labels, col_title="L", digits=0, scale=len(VOCAB))
    if stage.name == "next word":
        j = int(np.argmax(a))
        return _html.heatmap(
            a,
            row_labels=[labels[-1]],
            col_labels=VOCAB,
            col_title="V",
            digits=1,
            highlight=(0, j),
            cell_width=34,
            max_cols=MAX_COLS,
        )
    if len(axes) == 2:
        cols = labels if axes[1] == "L_k" else (VOCAB if axes[1] == "V" else None)
        hl = (None, int(np.argmax(a[-1]))) if stage.name == "logits" else None
        return _html.heatmap(
            a,
            row_labels=labels,
            col_labels=cols,
            row_title=axes[0],
            col_title=SHOWN_AXIS.get(axes[1], axes[1]),
            digits=1 if axes[1] == "V" else 2,
            highlight=(len(labels) - 1, hl[1]) if hl else None,
            cell_width=34 if axes[1] == "V" else 44,
            max_cols=MAX_COLS,
        )
    return _heads_heatmap(stage, labels, masked)


def _heads_heatmap(stage: Intermediate, labels: list[str], masked: np.ndarray | None = None) -> str:
    """(h, rows, cols): one table per head."""
    a, axes = stage.array, stage.axes
    parts = []
    # one legend for every step (LEGEND): red above 0, so the weights (0 … 1) are red too, full at 1
    scale = 1.0 if stage.name == "weights" else None
    for head in range(a.shape[0]):
        cols = labels if axes[2] == "L_k" else None
        parts.append(f'<div class="wt-small wt-muted">head {head + 1}</div>')
        parts.append(
            _html.heatmap(
                a[head],
                row_labels=labels,
                col_labels=cols,
                row_title=axes[1],
                col_title=SHOWN_AXIS.get(axes[2], axes[2]),
                scale=scale,
                masked=None if masked is None else masked[head],
            )
        )
    return "".join(parts)
