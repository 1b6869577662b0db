"""The decode lab's pieces (notebook 03): the models it offers and the number it reads; its drawing, the input
tokens under their attention bars, the picked token, the top scores as bars; the words of each step; and
``step_seconds``, the timing tests and benchmarks use. Every bar has its number written beside it, so nothing
is told by a bar's length or colour alone. ``decode.py`` holds the widget."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping

import ipywidgets as widgets
import numpy as np
import torch

from ..decode import MAX_NEW, Trace
from ..model import Transformer
from ..task import VOCAB, expected_answer, parse_prompt
from ..train import load_model
from . import _yours
from ._html import esc, plural

TOP = 5  # how many of the last row's scores are drawn
SHIPPED = {"60": "after 60 epochs", "2": "after 2 epochs"}
_MODELS: dict[str, Transformer] = {}


class Checkpoints(Mapping[str, str]):
    """The models a lab offers, key → label: the shipped ones, then each run the student kept in notebook 04
    (``"yours:<name>"``, labelled with its name and settings, see ``_yours``). Looked up afresh each time, so a run
    kept after the kernel started is offered by the next lab made. ``"yours"`` alone is the run kept last: it can
    be asked for, though the choosers list each run by its own key."""

    def _now(self) -> dict[str, str]:
        return {**SHIPPED, **{_yours.key(n): _yours.label(n) for n in _yours.names()}}

    def __getitem__(self, key: str) -> str:
        if key == _yours.KEY:
            return _yours.label(_yours.name_of(key) or "")
        return self._now()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())


CHECKPOINTS = Checkpoints()


def model_for(name: str) -> Transformer:
    """The shipped model after 60 or after 2 epochs (loaded once per kernel), or a run the student kept."""
    yours = _yours.name_of(name)  # says how to get one if there is none
    if yours is not None:
        return _yours.load(yours)[0]
    if name not in SHIPPED:
        raise ValueError(f"unknown checkpoint {name!r}: use one of {sorted(CHECKPOINTS)}")
    if name not in _MODELS:
        _MODELS[name] = load_model(name)
    return _MODELS[name]


def parse_number(text: str) -> int:
    """'896', '8 9 6', '896 =' → 896; anything else raises ValueError saying what to type."""
    try:
        ids = parse_prompt(text)
    except ValueError:
        raise ValueError(f"cannot read {text!r}: type a whole number from 0 to 999, like 896") from None
    return int("".join(VOCAB[i] for i in ids[:-1]))


def resolve(checkpoint) -> str:
    """A chooser's key checked: a shipped model, a kept run ("yours:<name>"), or "yours", the run kept last."""
    checkpoint = str(checkpoint)
    yours = _yours.name_of(checkpoint)  # "yours" with none kept: how to keep one
    if yours is not None:
        _yours.load(yours)  # a name not kept, or a broken file: says which, and what to do
        checkpoint = _yours.key(yours)  # "yours" is the run kept last, by its own key
    if checkpoint not in CHECKPOINTS:
        raise ValueError(f"checkpoint must be one of {sorted(CHECKPOINTS)}, got {checkpoint!r}")
    return checkpoint


def check_args(checkpoint, block, head) -> tuple[str, int, int, int]:
    """The lab's checkpoint, block and head checked: (checkpoint, block, the model's blocks, its heads)."""
    checkpoint = resolve(checkpoint)
    n_layers, n_heads = model_for(checkpoint).cfg.n_layers, model_for(checkpoint).cfg.n_heads
    block = n_layers if block is None else block
    if block not in range(1, n_layers + 1):
        raise ValueError(f"block must be 1 to {n_layers}, got {block!r}")
    if head != "mean" and head not in range(1, n_heads + 1):
        raise ValueError(f"head must be 'mean' or 1 to {n_heads}, got {head!r}")
    return checkpoint, block, n_layers, n_heads


def model_phrase(checkpoint: str, start: bool = False) -> str:
    """A model named inside a sentence: "the model after 60 epochs", or "your run “no-mask-3” (no causal mask, …)"
    (with a capital first letter when it ``start``s the sentence)."""
    yours = _yours.name_of(checkpoint)
    if yours is None:
        text = f"the model {CHECKPOINTS[checkpoint]}"
    else:
        text = f"your run “{yours}” {_yours.label(yours)[len(yours) + 1 :]}"
    return text[0].upper() + text[1:] if start else text


def prompt_message(t: Trace, n: int, model_name: str) -> str:
    """What the lab says before the first step."""
    return (
        f"The prompt of {n} has {len(t.prompt)} tokens; {model_name} reads it. "
        f"Press Next step: the model reads "
        f"all {len(t.prompt)} rows and its last row picks the first word."
    )


def written_text(t: Trace, k: int) -> str:
    """The tokens written by step k."""
    return " ".join(VOCAB[i] for i in t.ids[len(t.prompt) : len(t.prompt) + k])


def step_status(t: Trace, k: int, n: int) -> tuple[str, str]:
    """Step k (1 or more) of reading n: its message (the live line's start) and the status line above the
    picture (HTML); at the last step, whether the answer is right."""
    s = t.steps[k - 1]
    # not "Step k of n": that would tell the answer's length
    line = f"Step {k}: {len(s.ids_in)} rows in, the last row picks '{VOCAB[s.picked]}'."
    verdict = ""
    done = k == len(t.steps)
    right = done and t.finished and t.answer == expected_answer(n)
    if done:
        want = expected_answer(n)
        if right:
            line = f"Done after {plural(k, 'step')}: {n} reads '{t.answer}'."
            verdict = (
                '<span class="wt-decode-right" style="color: rgb(46,125,50); font-weight: bold;">'
                "✓ Right.</span>"
            )  # the words say it; the colour only repeats them
        else:
            ended = "wrote <eos>" if t.finished else f"stopped after {MAX_NEW} new tokens without <eos>"
            line = f"Done after {plural(k, 'step')} ({ended}): it says '{t.answer}'."
            verdict = (
                f'<span class="wt-decode-wrong" style="color: rgb(178,24,43); font-weight: bold;">'
                f"✗ Wrong: {n} is '{esc(want)}'.</span>"
            )
    message = line + (" ✓ Right." if right else (f" ✗ Wrong: {n} is '{expected_answer(n)}'." if done else ""))
    status = (
        f'<div style="padding: 4px 0;">{esc(line)} {verdict}</div>'
        f'<div style="font-size: 12px; color: #595959;">written so far: '
        f"<b>{esc(written_text(t, k))}</b></div>"
    )
    return message, status


def _token_box(tok: str, extra_class: str = "", style: str = "") -> str:
    return (
        f'<span class="wt-decode-box {extra_class}" style="display: inline-block; min-width: 34px; '
        f"padding: 3px 5px; border: 1px solid #999; border-radius: 3px; text-align: center; "
        f'background: white; {style}">{esc(tok)}</span>'
    )


def rows_html(tokens: list[str], weights: np.ndarray | None, picked: str | None, caption: str) -> str:
    """The input tokens with attention bars above them, then an arrow and the picked token."""
    cols = []
    bar_h = 56
    for i, tok in enumerate(tokens):
        w = float(weights[i]) if weights is not None else None
        if w is None:
            bar = f'<div style="height: {bar_h + 14}px;"></div>'
        else:
            px = max(1, round(bar_h * w)) if w > 0.005 else 0
            bar = (
                f'<div style="height: {bar_h + 14}px; display: flex; flex-direction: column; '
                f'justify-content: flex-end; align-items: center;">'
                f'<span style="font-size: 10px; color: #595959;">{w:.2f}</span>'
                f'<div class="wt-decode-att" data-weight="{w:.4f}" style="width: 22px; height: {px}px; '
                f'background: rgb(230,120,30);"></div></div>'
            )
        weight_attr = f' data-weight="{w:.4f}"' if w is not None else ""
        cols.append(
            f'<div class="wt-decode-token" data-token="{esc(tok)}"{weight_attr} '
            f'style="display: flex; flex-direction: column; align-items: center; gap: 2px;">'
            f'{bar}{_token_box(tok)}<span style="font-size: 10px; color: #595959;">{i}</span></div>'
        )
    if picked is not None:
        cols.append('<div style="align-self: flex-end; padding: 0 6px 20px; font-size: 18px;">→</div>')
        cols.append(
            '<div style="display: flex; flex-direction: column; align-items: center; gap: 2px;">'
            f'<div style="height: {bar_h + 14}px;"></div>'
            + _token_box(
                picked,
                "wt-decode-picked",
                "background: rgb(255,236,179); border: 2px solid rgb(200,120,0); font-weight: bold;",
            )
            + '<span style="font-size: 10px; color: #595959;">new</span></div>'
        )
    return (
        f'<div style="font-size: 12px; color: #444; margin: 2px 0;">{caption}</div>'
        f'<div class="wt-decode-rows" style="display: flex; align-items: flex-end; gap: 3px; '
        f'font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px;">{"".join(cols)}</div>'
    )


def top_scores_html(scores: np.ndarray, top: int = TOP) -> str:
    """The highest scores of the last row as bars (length: probability after softmax)."""
    probs = torch.softmax(torch.from_numpy(scores.astype(np.float64)), dim=-1).numpy()  # (V,)
    order = np.argsort(-scores, kind="stable")[:top]
    out = [
        '<div class="wt-decode-top" style="font-family: ui-monospace, Menlo, Consolas, monospace; '
        'font-size: 12px; margin-top: 6px;">'
        '<div style="color: #444; margin-bottom: 2px;">the last row\'s largest logits; '
        "bar = probability after softmax</div>"
    ]
    for rank, i in enumerate(order):
        p = float(probs[i])
        on = rank == 0
        out.append(
            f'<div class="wt-decode-score{" wt-bar-on" if on else ""}" data-token="{esc(VOCAB[i])}" '
            f'data-score="{float(scores[i]):.4f}" style="display: flex; align-items: center; gap: 6px;">'
            f'<span style="width: 64px; text-align: right;{" font-weight: bold;" if on else ""}">'
            f"{esc(VOCAB[i])}</span>"
            f'<span style="display: inline-block; width: 220px; background: #f1f1f1;">'
            f'<span style="display: block; width: {round(220 * p)}px; height: 13px; '
            f'background: {"rgb(33,102,172)" if on else "rgb(140,170,210)"};"></span></span>'
            f"<span>{float(scores[i]):6.2f} &nbsp; p = {p:.2f}</span></div>"
        )
    out.append("</div>")
    return "".join(out)


def step_seconds(lab, repeats: int = 20) -> list[float]:
    """Time one step (Next step after Reset … to the end) in seconds, for tests and benchmarks."""
    times = []
    for _ in range(repeats):
        lab.reset()
        while not lab.done:
            start = time.perf_counter()
            lab.next_step()
            times.append(time.perf_counter() - start)
    return times


def model_options() -> list[tuple[str, str]]:
    """The choosers' options, (label, key): the shipped models, then each run kept in notebook 04."""
    return [(label, key) for key, label in CHECKPOINTS.items()]


def chooser_layout(options: list[tuple[str, str]], description_px: int = 50) -> dict:
    """A model chooser's layout and style: wide enough for its longest label on one line (about 7.6 px a
    character of the 13 px interface font, plus the arrow), so "no-mask-seed-3 (no causal mask, …)" is never cut."""
    longest = max((len(label) for label, _ in options), default=10)
    width = min(760, description_px + 44 + round(7.6 * longest))
    return {"layout": widgets.Layout(width=f"{width}px"), "style": {"description_width": f"{description_px}px"}}
