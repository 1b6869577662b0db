"""The batch lab and the teacher-forcing table (notebook 04): what one training batch holds.

``shift_table(427)`` shows one number's x and y one under the other, position by position: the
input, the target, and whether the loss counts that target (and why, or why not).

``batch_lab()`` takes a batch of numbers (default 0…63, written like ``0-63`` or
``5, 17, 905`` or ``0-9, 100-109``) and shows x and y as a grid of tokens with every target
coloured by what happens to it in the loss: counted (a word or ``<eos>``), skipped because it
is part of the question (a digit or ``=``), or skipped because it is padding after a short
sequence. Beside it: the shapes of x, y and the logits, the number of targets of each kind
(0…63: (64, 5, 42), 320 targets, 167 counted, 118 digits or '=', 35 padding; the counts come
from ``task.batch_counts``), and the flattening to (B·L, V) for the loss.

Attributes tests and notebooks use: ``numbers`` (Text), ``summary``, ``grid``, ``flat`` (HTML),
and the read-only ``counts`` (the dict of ``task.batch_counts``, or None after bad input),
``chosen`` (the list of numbers), ``message``.

CSS classes: root ``wt-lab wt-batch``; ``wt-batch-numbers`` the text box; ``wt-batch-summary``
the shapes and counts (a legend: each kind's fill, border and hatch), with ``wt-batch-count`` on
each count (``data-kind`` = targets, counted, prompt, padding, and ``data-value``) and
``wt-shape`` on each shape (``data-name`` = x, y,
logits, flat logits, flat targets; ``data-shape`` like ``64x5x42``); ``wt-batch-grid`` the grid,
its target cells ``wt-target`` plus ``wt-counted`` / ``wt-prompt`` / ``wt-padding``;
``wt-batch-flat`` the flattening; ``wt-batch-error`` the message after bad input; ``wt-batch-live``
the summary line; the grid scrolls inside a focusable region (``wt-scroll``);
``wt-shift`` the teacher-forcing table of ``shift_table``.
"""

from __future__ import annotations

import re

import ipywidgets as widgets

from ..task import EQ, PAD, VOCAB, VOCAB_SIZE, BatchCounts, batch_counts, copy_sequence, sequence, xy_arrays
from ._html import esc, sr, styled
from ._widgets import LabBox

MAX_NUMBERS = 1000
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


def _xy_of(n: int, task: str = "read") -> tuple[list[int], list[int]]:
    """x and y of one number, as lists without padding (a row of ``xy_arrays``)."""
    x, y, lengths = xy_arrays([n], task)
    return x[0, : lengths[0]].tolist(), y[0, : lengths[0]].tolist()


def parse_numbers(text: str) -> list[int]:
    """'0-63' → [0 … 63]; '5, 17, 905' → [5, 17, 905]; ranges and numbers may be mixed.

    Accepts '-', '–', '…' or '..' in a range. Raises ValueError that says what to type.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("type some numbers from 0 to 999, like 0-63 or 5, 17, 905")
    text = re.sub(r"\s*(?:-|–|—|…|\.\.)\s*", "-", text.strip())
    out: list[int] = []
    for part in (p for p in re.split(r"[,;\s]+", text) if p):
        m = re.fullmatch(r"(\d{1,3})-(\d{1,3})", part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise ValueError(f"the range {part!r} runs backwards: write the smaller number first")
            out.extend(range(lo, hi + 1))
        elif re.fullmatch(r"\d{1,3}", part):
            out.append(int(part))
        elif re.fullmatch(r"\d+(?:-\d+)?", part):
            raise ValueError(f"{part} is out of range: the numbers run from 0 to 999")
        else:
            raise ValueError(f"cannot read {part!r}: type numbers from 0 to 999, like 0-63 or 5, 17, 905")
    if len(out) > MAX_NUMBERS:
        raise ValueError(f"that is {len(out)} numbers; a batch here holds at most {MAX_NUMBERS}")
    return out


def target_kinds(y_row: list[int], length: int) -> list[str]:
    """For each target of a padded y row: 'counted', 'prompt' (a digit or '=') or 'padding'."""
    return ["padding" if t >= length else ("prompt" if tok == PAD else "counted") for t, tok in enumerate(y_row)]


def _tok(i: int) -> str:
    return "·" if i == PAD else VOCAB[i]


def shift_table(n: int, task: str = "read"):
    """x over y for one number, with what the loss does with each target and why (an HTML object)."""
    from IPython.display import HTML

    return HTML(styled(shift_table_html(n, task)))


def shift_table_html(n: int, task: str = "read") -> str:
    seq = {"read": sequence, "copy": copy_sequence}[task](n) if task in ("read", "copy") else None
    if seq is None:
        raise ValueError(f"unknown task {task!r}: use 'read' or 'copy'")
    x, y = _xy_of(n, task)
    k = seq.index(EQ)
    rows = []
    for t in range(len(x)):
        true_target = seq[t + 1]
        if y[t] != PAD:
            what, why, kind = (
                "counts",
                ("the end of the answer" if true_target == 1 else "a word of the answer"),
                "counted",
            )
        elif t + 1 < k:
            what, why, kind = "skipped", "the next digit: part of the question", "prompt"
        else:
            what, why, kind = "skipped", "'=' is part of the question", "prompt"
        rows.append(
            f'<tr style="{LOOK[kind]}"><td style="padding: 2px 8px; text-align: right;">{t}</td>'
            f'<td style="padding: 2px 8px;">{esc(VOCAB[x[t]])}</td>'
            f'<td style="padding: 2px 8px;">{esc(VOCAB[true_target])}</td>'
            f'<td style="padding: 2px 8px;">{esc(VOCAB[y[t]])}</td>'
            f'<td style="padding: 2px 8px;"><b>{what}</b></td>'
            f'<td style="padding: 2px 8px;">{esc(why)}</td></tr>'
        )
    counted = sum(1 for v in y if v != PAD)
    th = "padding: 2px 8px; text-align: left; border-bottom: 1px solid #767676;"
    return (
        f'<div class="wt-shift" data-counted="{counted}" data-targets="{len(y)}" style="{FONT}">'
        f'<div style="margin-bottom: 4px;">{esc(" ".join(VOCAB[i] for i in seq))} · x = the sequence without '
        f"its last token, y = without its first · {counted} of {len(y)} targets count</div>"
        f'<table style="border-collapse: collapse; {FONT}"><tr><th style="{th}">position</th>'
        f'<th style="{th}">input x</th>'
        f'<th style="{th}">next token</th><th style="{th}">target y</th><th style="{th}">loss</th>'
        f'<th style="{th}">why</th></tr>{"".join(rows)}</table></div>'
    )


def _shape(name: str, shape: tuple[int, ...]) -> str:
    return (
        f'<span class="wt-shape" data-name="{esc(name)}" data-shape="{"x".join(map(str, shape))}">'
        f"({', '.join(str(s) for s in shape)}{',' if len(shape) == 1 else ''})</span>"
    )


def _count(kind: str, value: int, label: str, look: str | None = None) -> str:
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


class BatchLab(LabBox):
    """A batch of numbers as x and y, what each target does in the loss, and the shapes."""

    def __init__(self, numbers: str = "0-63"):
        self._counts: BatchCounts | None = None
        self._chosen: list[int] = []
        self._message = ""
        self.numbers = widgets.Text(
            value=str(numbers),
            description="numbers",
            continuous_update=False,
            placeholder="0-63  or  5, 17, 905",
            layout=widgets.Layout(width="360px"),
        )
        self.numbers.add_class("wt-batch-numbers")
        self.summary, self.grid, self.flat = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.summary.add_class("wt-batch-summary")
        self.grid.add_class("wt-batch-grid")
        self.flat.add_class("wt-batch-flat")
        # The grid keeps its whole width (it scrolls up and down); when the summary does not fit beside
        # it, the summary goes below it rather than squeezing it.
        grid_box = widgets.Box(
            [self.grid],
            layout=widgets.Layout(flex="0 0 auto", max_width="100%", border="1px solid #ddd", margin="0 12px 8px 0"),
        )
        super().__init__(
            [
                self.numbers,
                widgets.HBox([grid_box, self.summary], layout=widgets.Layout(flex_flow="row wrap")),
                self.flat,
            ],
            "batch",
        )
        self.numbers.observe(lambda _: self._update(), names="value")
        self._update()

    @property
    def counts(self) -> BatchCounts | None:
        return self._counts

    @property
    def chosen(self) -> list[int]:
        return list(self._chosen)

    @property
    def message(self) -> str:
        return self._message

    def _update(self) -> None:
        try:
            chosen = parse_numbers(self.numbers.value)
            if not chosen:
                raise ValueError("type some numbers from 0 to 999, like 0-63 or 5, 17, 905")
            counts = batch_counts(chosen)
        except ValueError as e:
            self._counts, self._chosen, self._message = None, [], str(e)
            self.summary.value = (
                f'<div class="wt-batch-error" style="color: rgb(178,24,43); padding: 6px;">✗ {esc(e)}.</div>'
            )
            self.grid.value = self.flat.value = ""
            self.say(f"Cannot read that: {e}.")
            return
        self._counts, self._chosen = counts, chosen
        B, L = counts["x_shape"]
        self._message = (
            f"{B} numbers: x {counts['x_shape']}, logits {counts['logits_shape']}; "
            f"{counts['targets']} targets: {counts['counted']} count, {counts['prompt']} are digits "
            f"or '=', {counts['padding']} are padding"
        )
        self.summary.value = self._summary_html(counts)
        self.grid.value = self._grid_html(chosen, L)
        self.flat.value = self._flat_html(chosen, counts)
        self.say(self._message[0].upper() + self._message[1:] + ".")

    def _summary_html(self, c: BatchCounts) -> str:
        B, L = c["x_shape"]
        return (
            f'<div style="{FONT} padding: 0 12px;">'
            f'<div>x {_shape("x", c["x_shape"])} · y {_shape("y", c["x_shape"])} · "·" is &lt;pad&gt;</div>'
            f"<div>logits {_shape('logits', c['logits_shape'])}: B {B} numbers, L {L} positions "
            f"(the longest x), V {VOCAB_SIZE} scores</div>"
            f'<table style="border-collapse: collapse; margin-top: 6px; {FONT}">'
            + _count("targets", c["targets"], f"targets (B × L = {B} × {L})")
            + _count("counted", c["counted"], "count: words and <eos> (solid border, bold)", LOOK["counted"])
            + _count("prompt", c["prompt"], "skipped: digits or '=' (dotted border)", LOOK["prompt"])
            + _count("padding", c["padding"], "skipped: padding (hatched, dashed border)", LOOK["padding"])
            + "</table></div>"
        )

    def _grid_html(self, chosen: list[int], L: int) -> str:
        th = "padding: 1px 4px; color: #595959; font-weight: normal;"
        head = "".join(f'<th style="{th}">{t}</th>' for t in range(L))
        out = [
            f'<table style="border-collapse: collapse; {FONT}"><tr><th style="{th}">number</th>'
            f'<th style="{th}" colspan="{L}">x (input)</th><th style="{th}; width: 12px;"></th>'
            f'<th style="{th}" colspan="{L}">y (targets)</th></tr>'
            f"<tr><th></th>{head}<th></th>{head}</tr>"
        ]
        for n in chosen[:SHOWN_ROWS]:
            x, y = _xy_of(n)
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

    def _flat_html(self, chosen: list[int], c: BatchCounts) -> str:
        B, L = c["x_shape"]
        rows = []
        for r in range(min(2 * L, B * L)):
            b, t = divmod(r, L)
            x, y = _xy_of(chosen[b])
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
            f'<div style="{FONT} margin-top: 8px;">For the loss, logits {_shape("logits", c["logits_shape"])} '
            f"become {_shape('flat logits', c['flat_shape'])} and y {_shape('y', c['x_shape'])} becomes "
            f"{_shape('flat targets', (c['targets'],))}: row r is number r // {L}, position r % {L}. "
            f"Each row is one guess with its right answer; cross-entropy with ignore_index=PAD averages over "
            f"the {c['counted']} rows whose target is not PAD. The first rows:"
            f'<table style="border-collapse: collapse; margin-top: 4px; {FONT}"><tr><th style="{th}">row</th>'
            f'<th style="{th}">from</th><th style="{th}">target</th><th style="{th}">loss</th></tr>'
            f"{''.join(rows)}</table></div>"
        )


def batch_lab(numbers: str = "0-63") -> BatchLab:
    """The batch lab: type the numbers of a batch (default 0-63) and see what the loss sees."""
    return BatchLab(numbers)
