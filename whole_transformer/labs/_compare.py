"""Your forward pass under the microscope: the steps your four functions of notebook 02 return, beside the
course's, and the first step where they differ.

``compare(stages, yours, weights, n_heads, ids)`` runs your ``layer_norm``, ``multi_head_attention``,
``decoder_block`` and ``forward`` on the course's own inputs of each step (so a wrong function shows where it
is, and its error does not spread to the steps after it) and gives, for every step of the trace, a
``Compared``: your array (or why there is none: a step inside one of your functions, a function not written
yet, an error), the largest difference from the course's array, and whether it differs. Which of your
functions makes each step:

    LayerNorm 1, LayerNorm 2, final LayerNorm    layer_norm(the step's input, its gamma, its beta)
    attention out                                multi_head_attention(LayerNorm 1, the block's weights, …)
    residual 2                                   decoder_block(the block's input, weights, block, n_heads, …)
    logits                                       forward(ids, weights, n_heads)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..steps import Intermediate
from ..task import PAD
from . import _html
from ._microscope import stage_heatmap

FUNCTIONS = ("layer_norm", "multi_head_attention", "decoder_block", "forward")
#: a step differs when its largest difference is above this, times (1 + the course's largest value)
REL = 1e-6
MADE_BY = {
    "LayerNorm 1": "layer_norm",
    "LayerNorm 2": "layer_norm",
    "final LayerNorm": "layer_norm",
    "attention out": "multi_head_attention",
    "residual 2": "decoder_block",
    "logits": "forward",
}


@dataclass(frozen=True)
class Compared:
    """One step, yours beside the course's."""

    label: str
    array: np.ndarray | None  # your array, None when your functions do not return this step
    note: str  # why there is no array, or what your function did
    largest: float | None = None  # the largest difference from the course's array
    differs: bool = False
    first: bool = False  # the first step (in the trace's order) that differs


def functions_of(namespace: Mapping) -> dict[str, Callable]:
    """Your four functions from a notebook's names (``globals()``), those that are defined."""
    return {name: namespace[name] for name in FUNCTIONS if callable(namespace.get(name))}


def _inputs(stages: Sequence[Intermediate]) -> dict[str, np.ndarray]:
    return {s.label: s.array for s in stages}


def _call(fn: Callable, *args) -> tuple[np.ndarray | None, str]:
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*args), dtype=np.float64)
    except NotImplementedError:
        return None, f"your {fn.__name__} is not written yet"
    except Exception as e:  # noqa: BLE001 - a student's function may raise anything
        return None, f"your {getattr(fn, '__name__', 'function')} raised {type(e).__name__}: {e}"
    return out, ""


def _yours(stage: Intermediate, by: dict, yours: dict, W: dict, n_heads: int, ids: np.ndarray):
    """Your array of one step, and a note (empty when your function returned it)."""
    fn_name = MADE_BY.get(stage.name)
    if fn_name is None:
        return None, "inside one of your functions: they do not return this step on its own"
    fn = yours.get(fn_name)
    if fn is None:
        return None, f"no {fn_name} defined yet: run its cell"
    if stage.name == "final LayerNorm":
        return _call(fn, by[f"block {n_blocks(W)} · residual 2"], W["ln_f.weight"], W["ln_f.bias"])
    if stage.block is None:  # the logits
        return _call(fn, ids, W, n_heads)
    b, p, pad = stage.block, f"blocks.{stage.block}.", ids == PAD
    x_in = by["+ positions"] if b == 0 else by[f"block {b} · residual 2"]  # the block's input
    if stage.name == "LayerNorm 1":
        return _call(fn, x_in, W[p + "ln1.weight"], W[p + "ln1.bias"])
    if stage.name == "LayerNorm 2":
        return _call(fn, by[f"block {b + 1} · residual 1"], W[p + "ln2.weight"], W[p + "ln2.bias"])
    if stage.name == "attention out":
        a = [W[p + f"attn.{n}"] for n in ("W_Q.weight", "W_K.weight", "W_V.weight", "W_O.weight", "W_O.bias")]
        return _call(fn, by[f"block {b + 1} · LayerNorm 1"], *a, n_heads, pad)
    return _call(fn, x_in, W, b, n_heads, pad)  # residual 2: the block's output


def n_blocks(W: dict) -> int:
    return len({k.split(".")[1] for k in W if k.startswith("blocks.")})


def compare(
    stages: Sequence[Intermediate], yours: Mapping, W: dict, n_heads: int, ids: Sequence[int]
) -> dict[str, Compared]:
    """Every step of ``stages`` (a trace), yours beside the course's: label → ``Compared``."""
    by, mine = _inputs(stages), functions_of(yours)
    ids_arr = np.asarray(ids, dtype=np.int64)
    out: dict[str, Compared] = {}
    first_seen = False
    for stage in stages:
        if stage.name in ("ids", "next word"):
            continue
        array, note = _yours(stage, by, mine, W, n_heads, ids_arr)
        if array is None:  # a step inside your functions (no verdict), or your function failed (it differs)
            failed = note.startswith("your")
            out[stage.label] = Compared(stage.label, None, note, differs=failed, first=failed and not first_seen)
            first_seen = first_seen or failed
            continue
        if array.shape != stage.array.shape:
            c = Compared(
                stage.label,
                array,
                f"your array has shape {array.shape}, the course's {stage.array.shape}",
                None,
                True,
                not first_seen,
            )
        else:
            largest = float(np.nanmax(np.abs(array - stage.array))) if array.size else 0.0
            if not np.isfinite(largest):
                largest = float("inf")
            differs = largest > REL * (1.0 + float(np.abs(stage.array).max()))
            c = Compared(stage.label, array, "", largest, differs, differs and not first_seen)
        first_seen = first_seen or c.first
        out[stage.label] = c
    return out


def first_difference(compared: Mapping[str, Compared]) -> Compared | None:
    """The first step that differs, or None when every step your functions return agrees."""
    return next((c for c in compared.values() if c.first), None)


def verdict_words(c: Compared) -> str:
    """'≠ first difference', '≠ differs' or '= same', and the largest difference (text, never colour alone)."""
    if c.array is None:
        return ("≠ first difference: " if c.first else "≠ ") + c.note if c.differs else c.note
    size = "" if c.largest is None else f", largest difference {c.largest:.3g}"
    if c.first:
        return f"≠ first difference{size}"
    return f"≠ differs{size}" if c.differs else f"= same as the course's{size}"


def yours_html(c: Compared, stage: Intermediate, i: int, labels, first) -> str:
    words = _html.esc(verdict_words(c))
    where = "" if first is None else f" · the first step that differs: {_html.esc(first.label)}"
    head = f'<div class="wt-text"><b>yours, step {i}: {words}</b><span class="wt-muted">{where}</span></div>'
    if c.array is None or c.array.shape != stage.array.shape:
        return head + (f'<div class="wt-small">{_html.esc(c.note)}</div>' if c.note and c.array is not None else "")
    mine = Intermediate(stage.name, c.array, stage.axes, stage.block, stage.formula)
    return head + (
        f'<div class="wt-scroll" tabindex="0" role="region" aria-label="your numbers of step {i}, '
        f'{_html.esc(stage.name)}">{stage_heatmap(mine, labels)}</div>'
    )


def table_html(compared: dict, stages, first) -> str:
    """The table twin: every step your functions make, yours against the course's, in words."""
    rows = []
    for i, s in enumerate(stages):
        c = compared.get(s.label)
        if c is None or (c.array is None and not c.differs):
            continue
        mark = "≠ first difference" if c.first else ("≠" if c.differs else "=")
        largest = "" if c.largest is None else f"{c.largest:.3g}"
        rows.append(
            f"<tr><td>{i}</td><th scope='row'>{_html.esc(s.label)}</th><td>{mark}</td><td>{largest}</td>"
            f"<td>{_html.esc(c.note)}</td></tr>"
        )
    said = (
        "every step your functions make agrees with the course's"
        if first is None
        else (f"the first step that differs is {first.label}")
    )
    return (
        f'<table class="wt-table"><caption style="text-align: left;">Your steps against the course\'s: '
        f"{_html.esc(said)}</caption>"
        "<thead><tr><th scope='col'>step</th><th scope='col'>name</th><th scope='col'>yours</th>"
        "<th scope='col'>largest difference</th><th scope='col'>note</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
