"""The decode lab's drawing (notebook 03): the input tokens under their attention bars, the picked token, the
top scores as bars; and ``step_seconds``, the timing tests and benchmarks use. Every bar has its number written
beside it, so nothing is told by a bar's length or colour alone."""

from __future__ import annotations

import time

import numpy as np

from ..numpy_model import softmax_rows
from ..task import VOCAB
from ._html import esc

TOP = 5  # how many of the last row's scores are drawn


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
    probs = softmax_rows(scores.astype(np.float64))
    order = np.argsort(-scores, kind="stable")[:top]
    out = [
        '<div class="wt-decode-top" style="font-family: ui-monospace, Menlo, Consolas, monospace; '
        'font-size: 12px; margin-top: 6px;">'
        '<div style="color: #444; margin-bottom: 2px;">the last row\'s highest scores (logits); '
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
