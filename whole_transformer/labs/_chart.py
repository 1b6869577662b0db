"""The training lab's chart (notebook 04): training loss (solid, log scale), held-out loss (dotted, same scale)
and held-out accuracy (dashed) per epoch, one colour and one marker shape per run, with the chart in words as its
alt text (``role="img"``, ``aria-label``); the per-epoch table beside the chart is its twin in numbers, and the
numbers a finished run reads aloud are drawn under it (``table_html``, ``reads_html``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..decode import read_numbers
from ..task import expected_answer, split
from ..train import EpochLog, Run
from ._html import esc
from ._runs import RUNS

SAMPLE = 8  # held-out numbers read aloud after a run
ACC_INSET = 6  # px between the frame and the 0 % and 100 % of the accuracy axis


def marker_svg(shape: str, cx: float, cy: float, colour: str, r: float = 3.5) -> str:
    """One point's marker: circle, square, triangle, triangle-down or diamond (the accuracy's: a white centre)."""
    if shape == "circle":
        return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{colour}"/>'
    if shape == "square":
        return f'<rect x="{cx - r:.1f}" y="{cy - r:.1f}" width="{2 * r}" height="{2 * r}" fill="{colour}"/>'
    pts = {
        "triangle": [(0, -1.2), (1.1, 0.8), (-1.1, 0.8)],
        "triangle-down": [(0, 1.2), (1.1, -0.8), (-1.1, -0.8)],
        "diamond": [(0, -1.3), (1.1, 0), (0, 1.3), (-1.1, 0)],
    }
    return (
        f'<polygon points="{" ".join(f"{cx + r * dx:.1f},{cy + r * dy:.1f}" for dx, dy in pts[shape])}" '
        f'fill="{colour}"/>'
    )


def chart_text(histories: dict[str, list[EpochLog]]) -> str:
    """The chart in words (its alt text): each run's last epoch, its loss and its held-out accuracy."""
    if not any(histories.values()):
        return "Chart of training loss and held-out accuracy per epoch: no run yet; press Train."
    runs = []
    for key, hist in histories.items():
        if hist:
            last = hist[-1]
            label = RUNS[key].label if key in RUNS else key
            marker = RUNS[key].marker if key in RUNS else "line"
            held = f", held-out loss {last.held_out_loss:.4f}" if math.isfinite(last.held_out_loss) else ""
            runs.append(
                f"{label} ({marker}): after epoch {last.epoch}, training loss "
                f"{last.loss:.4f}{held}, held out {100 * last.held_out:.0f} % right"
            )
    return (
        "Chart of training loss (solid lines), held-out loss (dotted lines), both on a log scale, and held-out "
        "accuracy (dashed lines) per epoch. " + "; ".join(runs) + "."
    )


@dataclass(frozen=True)
class _Frame:
    """Where the chart's frame is (px) and what its axes span: epochs 1…max_epoch, losses lo…hi (log)."""

    left: int
    top: int
    w: int
    h: int
    max_epoch: int
    lo: float
    hi: float

    def x(self, epoch: float) -> float:
        return self.left + self.w * (epoch - 1) / max(self.max_epoch - 1, 1)

    def y_loss(self, v: float) -> float:
        lo, hi = self.lo, self.hi
        v = min(max(v, lo), hi)
        return self.top + self.h * (math.log10(hi) - math.log10(v)) / (math.log10(hi) - math.log10(lo))

    def y_acc(self, a: float) -> float:  # 0 % sits a little above the frame, so a line at 0 % stays visible
        return self.top + ACC_INSET + (self.h - 2 * ACC_INSET) * (1 - a)


def chart_svg(
    histories: dict[str, list[EpochLog]], width: int = 620, height: int = 250, borrowed: frozenset = frozenset()
) -> str:
    """Loss (solid, log scale, left axis) and held-out accuracy (dashed, right axis) per epoch, per run.

    ``borrowed``: the keys of runs made by another lab, drawn for comparison and named so in the legend."""
    left, right, top, bottom = 52, 52, 14, 34
    w, h = width - left - right, height - top - bottom
    logs = [lg for hist in histories.values() for lg in hist]
    max_epoch = max([lg.epoch for lg in logs] + [10])
    losses = [v for lg in logs for v in (lg.loss, lg.held_out_loss) if v > 0 and math.isfinite(v)]
    lo = 10 ** math.floor(math.log10(min(losses))) if losses else 0.01
    hi = 10 ** math.ceil(math.log10(max(losses))) if losses else 10.0
    frame = _Frame(left, top, w, h, max_epoch, lo, max(hi, lo * 10))
    out = [
        f'<svg class="wt-training-svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{esc(chart_text(histories))}" '
        'style="font-family: sans-serif; font-size: 11px;">',
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="white" stroke="#767676"/>',
        *_scales_svg(frame),
        _titles(left, w, top, h, width, height),
    ]
    for key, hist in histories.items():
        out.extend(_run_svg(frame, key, hist))
    out.append("</svg>")
    return "".join(out) + legend_html(histories, borrowed)


def _scales_svg(f: _Frame) -> list[str]:
    """The loss's decades (left, with grid lines), the accuracy's 0, 50 and 100 % (right), the epochs (below)."""
    out = []
    decade = f.lo
    while decade <= f.hi * 1.0001:
        yy = f.y_loss(decade)
        out.append(
            f'<line x1="{f.left}" x2="{f.left + f.w}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#eee"/>'
            f'<text x="{f.left - 4}" y="{yy + 4:.1f}" text-anchor="end" fill="#333">{decade:g}</text>'
        )
        decade *= 10
    for a in (0, 0.5, 1.0):
        out.append(f'<text x="{f.left + f.w + 4}" y="{f.y_acc(a) + 4:.1f}" fill="#333">{100 * a:.0f} %</text>')
    max_epoch = f.max_epoch
    step = max(1, round(max_epoch / 6 / 5) * 5) if max_epoch > 12 else (2 if max_epoch > 6 else 1)
    for e in range(1, max_epoch + 1):
        if e == 1 or e % step == 0:
            out.append(f'<text x="{f.x(e):.1f}" y="{f.top + f.h + 14}" text-anchor="middle" fill="#333">{e}</text>')
    return out


def _run_svg(f: _Frame, key: str, hist: list[EpochLog]) -> list[str]:
    """One run: its training loss (solid), held-out loss (dotted) and accuracy (dashed), marked by the run's shape."""
    colour = RUNS[key].colour if key in RUNS else "#333"
    pts = " ".join(f"{f.x(lg.epoch):.1f},{f.y_loss(lg.loss):.1f}" for lg in hist)
    acc = [lg for lg in hist if not math.isnan(lg.held_out)]
    apts = " ".join(f"{f.x(lg.epoch):.1f},{f.y_acc(lg.held_out):.1f}" for lg in acc)
    held = [lg for lg in hist if math.isfinite(lg.held_out_loss) and lg.held_out_loss > 0]
    hpts = " ".join(f"{f.x(lg.epoch):.1f},{f.y_loss(lg.held_out_loss):.1f}" for lg in held)
    out = [
        f'<polyline class="wt-heldloss-line" data-run="{key}" data-points="{len(held)}" points="{hpts}" '
        f'fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="1,3" stroke-linecap="round"/>',
        f'<polyline class="wt-loss-line" data-run="{key}" data-points="{len(hist)}" points="{pts}" '
        f'fill="none" stroke="{colour}" stroke-width="2"/>',
        f'<polyline class="wt-acc-line" data-run="{key}" data-points="{len(acc)}" points="{apts}" '
        f'fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="5,3"/>',
    ]
    shape = RUNS[key].marker if key in RUNS else "circle"
    every = max(1, len(hist) // 10)  # at most about ten markers a line
    for lg in hist[::every]:
        out.append(marker_svg(shape, f.x(lg.epoch), f.y_loss(lg.loss), colour))
    for lg in acc[::every]:
        out.append(
            marker_svg(shape, f.x(lg.epoch), f.y_acc(lg.held_out), "white", 2.5).replace(
                "/>", f' stroke="{colour}" stroke-width="1.5"/>'
            )
        )
    return out


def legend_html(histories: dict[str, list[EpochLog]], borrowed: frozenset = frozenset()) -> str:
    """One entry per run: its line with its marker, its label and the marker's name."""
    legend = " ".join(
        f'<span style="margin-right: 12px;"><svg width="22" height="12" aria-hidden="true">'
        f'<line x1="0" x2="22" y1="6" y2="6" stroke="{RUNS[k].colour}" stroke-width="2"/>'
        f"{marker_svg(RUNS[k].marker, 11, 6, RUNS[k].colour)}</svg> {esc(RUNS[k].label)} "
        f"({RUNS[k].marker.replace('-', ' ')})"
        f"{' (trained in the lab above)' if k in borrowed else ''}</span>"
        for k in histories
        if k in RUNS
    )
    return f'<div style="font-size: 12px;">{legend}</div>'


def _titles(left: float, w: float, top: float, h: float, width: int, height: int) -> str:
    """The three axis titles: epoch below, the loss on the left, the accuracy on the right."""
    return (
        f'<text x="{left + w / 2}" y="{height - 4}" text-anchor="middle" fill="#333">epoch</text>'
        f'<text x="12" y="{top + h / 2}" transform="rotate(-90 12 {top + h / 2})" text-anchor="middle" '
        f'fill="#333">loss: training solid, held out dotted</text>'
        f'<text x="{width - 10}" y="{top + h / 2}" transform="rotate(90 {width - 10} {top + h / 2})" '
        f'text-anchor="middle" fill="#333">held out right (dashed)</text>'
    )


def table_html(hist: list[EpochLog]) -> str:
    """The training table: the last 8 epochs' losses, held-out share and seconds."""
    th = "padding: 1px 8px; text-align: right; border-bottom: 1px solid #888;"
    rows = "".join(
        f'<tr><td style="padding: 1px 8px; text-align: right;">{lg.epoch}</td>'
        f'<td style="padding: 1px 8px; text-align: right;">{lg.loss:.4f}</td>'
        f'<td style="padding: 1px 8px; text-align: right;">{lg.held_out_loss:.4f}</td>'
        f'<td style="padding: 1px 8px; text-align: right;">{100 * lg.held_out:.0f} %</td>'
        f'<td style="padding: 1px 8px; text-align: right;">{lg.seconds:.2f}</td></tr>'
        for lg in hist[-8:]
    )
    return (
        f'<table style="border-collapse: collapse; font-family: ui-monospace, Menlo, monospace; '
        f'font-size: 12px; margin-right: 24px;"><tr><th style="{th}">epoch</th>'
        f'<th style="{th}">training loss</th><th style="{th}">held-out loss</th>'
        f'<th style="{th}">held out right</th><th style="{th}">s</th></tr>{rows}</table>'
    )


def reads_html(result: Run, task: str) -> str:
    """A few held-out numbers read by a finished run, each marked right or wrong in words."""
    _, held_out = split()
    sample = held_out[:: max(1, len(held_out) // SAMPLE)][:SAMPLE]
    said = read_numbers(result.model, sample)  # for the copy task too: whatever the model writes
    rows = []
    for n in sample:
        ok = said[n] == expected_answer(n, task)
        rows.append(
            f'<tr class="wt-read" data-right="{int(ok)}"><td style="padding: 1px 8px; '
            f'text-align: right;">{n}</td><td style="padding: 1px 8px;">{esc(said[n]) or "(nothing)"}'
            f'</td><td style="padding: 1px 8px; color: {"rgb(46,125,50)" if ok else "rgb(178,24,43)"};">'
            f"{'✓ right' if ok else '✗ wrong, it is ' + esc(expected_answer(n, task))}</td></tr>"
        )
    th = "padding: 1px 8px; text-align: left; border-bottom: 1px solid #888;"
    return (
        f'<div style="font-size: 12px;">held-out numbers, read by this model:</div>'
        f'<table style="border-collapse: collapse; font-family: ui-monospace, Menlo, monospace; '
        f'font-size: 12px;"><tr><th style="{th}">number</th><th style="{th}">it says</th>'
        f'<th style="{th}">right?</th></tr>{"".join(rows)}</table>'
    )
