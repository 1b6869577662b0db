"""The batch lab's drawing (notebook 04): the look of each kind of target (counted, the question's, padding),
the summary of shapes and counts, the grid of x and y, and the flattening for the loss. ``batch.py`` holds the
widget and the teacher-forcing table."""

from __future__ import annotations

from ..task import PAD, VOCAB, VOCAB_SIZE, BatchCounts, xy_arrays
from ._html import esc, plural, sr

SHOWN_ROWS = 64  # rows of the grid drawn; the counts always cover the whole batch
#: Each kind of target differs by more than its fill: border (solid, dotted, dashed), weight and a hatch, and a
#: screen reader reads its name (the words of WHAT).
LOOK = {
    "counted": "background: rgb(200,235,200); border: 2px solid #1b5e20; font-weight: bold;",
    "prompt": "background: rgb(225,225,225); border: 2px dotted #424242;",
    "padding": "background: repeating-linear-gradient(135deg, #fff 0 3px, #d6d6d6 3px 5px); "
    "border: 2px dashed #757575;",
}
WHAT = {"counted": "counted", "prompt": "skipped, question", "padding": "skipped, padding"}
FONT = "font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px;"


def xy_of(n: int, task: str = "read") -> tuple[list[int], list[int]]:
    """x and y of one number, as lists without padding (a row of ``xy_arrays``)."""
    x, y, lengths = xy_arrays([n], task)
    return x[0, : lengths[0]].tolist(), y[0, : lengths[0]].tolist()


def target_kinds(y_row: list[int], length: int) -> list[str]:
    """For each target of a padded y row: 'counted', 'prompt' (a digit or '=') or 'padding'."""
    return ["padding" if t >= length else ("prompt" if tok == PAD else "counted") for t, tok in enumerate(y_row)]


def _tok(i: int) -> str:
    return "·" if i == PAD else VOCAB[i]


def shape_html(name: str, shape: tuple[int, ...]) -> str:
    return (
        f'<span class="wt-shape" data-name="{esc(name)}" data-shape="{"x".join(map(str, shape))}">'
        f"({', '.join(str(s) for s in shape)}{',' if len(shape) == 1 else ''})</span>"
    )


def count_html(kind: str, value: int, label: str, look: str | None = None) -> str:
    swatch = (
        (
            f'<span aria-hidden="true" style="display: inline-block; width: 14px; height: 12px; {look} '
            f'margin-right: 4px; vertical-align: middle;"></span>'
        )
        if look
        else ""
    )
    return (
        f'<tr><td style="padding: 1px 8px;">{swatch}{esc(label)}</td><td class="wt-batch-count" '
        f'data-kind="{kind}" data-value="{value}" style="padding: 1px 8px; text-align: right;"><b>{value:,}</b>'
        f"</td></tr>"
    )


def summary_html(c: BatchCounts) -> str:
    """The shapes of x, y and the logits, and the count of each kind of target, with its look."""
    B, L = c["x_shape"]
    return (
        f'<div style="{FONT} padding: 0 12px;">'
        f'<div>x {shape_html("x", c["x_shape"])} · y {shape_html("y", c["x_shape"])} · "·" is &lt;pad&gt;</div>'
        f"<div>logits {shape_html('logits', c['logits_shape'])}: B {plural(B, 'number')}, L {plural(L, 'position')} "
        f"(the longest x), n_vocab {VOCAB_SIZE} logits</div>"
        f'<table style="border-collapse: collapse; margin-top: 6px; {FONT}">'
        + count_html("targets", c["targets"], f"targets (B × L = {B} × {L})")
        + count_html("counted", c["counted"], "count: words and <eos> (solid border, bold)", LOOK["counted"])
        + count_html("prompt", c["prompt"], "skipped: digits or '=' (dotted border)", LOOK["prompt"])
        + count_html("padding", c["padding"], "skipped: padding (hatched, dashed border)", LOOK["padding"])
        + "</table></div>"
    )


def grid_html(chosen: list[int], L: int) -> str:
    """x and y of the first SHOWN_ROWS numbers, a row each, every target with the look of its kind."""
    th = "padding: 1px 4px; color: #595959; font-weight: normal;"
    head = "".join(f'<th style="{th}">{t}</th>' for t in range(L))
    out = [
        f'<table style="border-collapse: collapse; {FONT}"><tr><th style="{th}">number</th>'
        f'<th style="{th}" colspan="{L}">x (input)</th><th style="{th}; width: 12px;"></th>'
        f'<th style="{th}" colspan="{L}">y (targets)</th></tr>'
        f"<tr><th></th>{head}<th></th>{head}</tr>"
    ]
    for n in chosen[:SHOWN_ROWS]:
        x, y = xy_of(n)
        length = len(y)
        x = x + [PAD] * (L - length)
        y = y + [PAD] * (L - length)
        cells = [
            f'<th scope="row" style="padding: 1px 5px; text-align: right; color: #595959; '
            f'font-weight: normal;">{n}</th>'
        ]
        for t in range(L):
            faint = " color: #595959;" if t >= length else ""
            cells.append(f'<td style="padding: 1px 5px; border: 1px solid #eee;{faint}">{esc(_tok(x[t]))}</td>')
        cells.append("<td></td>")
        for t, kind in enumerate(target_kinds(y, length)):
            cells.append(
                f'<td class="wt-target wt-{kind}" title="{WHAT[kind]}" style="padding: 1px 5px; '
                f'{LOOK[kind]}">{esc(_tok(y[t]))}{sr(" " + WHAT[kind])}</td>'
            )
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append("</table>")
    out = [
        '<div class="wt-scroll" tabindex="0" role="region" aria-label="x and y of the batch, one row per '
        'number" style="max-height: 360px;">',
        *out,
        "</div>",
    ]
    if len(chosen) > SHOWN_ROWS:
        out.append(
            f'<div style="{FONT} color: #595959; padding: 4px;">showing the first {SHOWN_ROWS} of '
            f"{len(chosen)} rows; the counts cover all of them</div>"
        )
    return "".join(out)


def flat_html(chosen: list[int], c: BatchCounts) -> str:
    """The flattening of the logits and y for the loss, and the first rows of it."""
    B, L = c["x_shape"]
    rows = []
    for r in range(min(2 * L, B * L)):
        b, t = divmod(r, L)
        x, y = xy_of(chosen[b])
        target = y[t] if t < len(y) else PAD
        kind = target_kinds(y + [PAD] * (L - len(y)), len(y))[t]
        rows.append(
            f'<tr style="{LOOK[kind]}"><td style="padding: 1px 6px; text-align: right;">'
            f'{r}</td><td style="padding: 1px 6px;">number {chosen[b]}, position {t}</td>'
            f'<td style="padding: 1px 6px;">{esc(_tok(target))}</td>'
            f'<td style="padding: 1px 6px;">{"counts" if kind == "counted" else "skipped"}</td></tr>'
        )
    th = "padding: 1px 6px; text-align: left; border-bottom: 1px solid #767676;"
    return (
        f'<div style="{FONT} margin-top: 8px;">For the loss, logits {shape_html("logits", c["logits_shape"])} '
        f"become {shape_html('flat logits', c['flat_shape'])} and y {shape_html('y', c['x_shape'])} becomes "
        f"{shape_html('flat targets', (c['targets'],))}: row r is number r // {L}, position r % {L}. "
        f"Each row is one guess with its right answer; cross-entropy with ignore_index=PAD averages over "
        f"the {c['counted']} rows with a target other than PAD. The first rows:"
        f'<table style="border-collapse: collapse; margin-top: 4px; {FONT}"><tr><th style="{th}">row</th>'
        f'<th style="{th}">from</th><th style="{th}">target</th><th style="{th}">loss</th></tr>'
        f"{''.join(rows)}</table></div>"
    )
