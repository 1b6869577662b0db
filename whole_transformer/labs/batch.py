"""The batch lab and the teacher-forcing table (notebook 04): what one training batch holds.

``shift_table(427)`` shows one number's x and y one under the other, position by position: the
input, the target, and whether the loss counts that target (and why, or why not).

``batch_lab()`` takes a batch of numbers (default 0…63, written like ``0-63`` or
``5, 17, 905`` or ``0-9, 100-109``) and shows x and y as a grid of tokens with every target
coloured by what happens to it in the loss: counted (a word or ``<eos>``), skipped because it
is part of the question (a digit or ``=``), or skipped because it is padding after a short
sequence. Beside it: the shapes of x, y and the logits, the number of targets of each kind
(from ``task.batch_counts``), and the flattening to (B·L, n_vocab) for the loss.

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

from ..task import EQ, PAD, VOCAB, BatchCounts, batch_counts, copy_sequence, sequence
from ._batch import FONT, LOOK, flat_html, grid_html, summary_html, target_kinds, xy_of  # noqa: F401  (target_kinds: tests)
from ._html import esc, plural, styled
from ._widgets import LabBox

MAX_NUMBERS = 1000


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


def shift_table(n: int, task: str = "read"):
    """x over y for one number, with what the loss does with each target and why (an HTML object)."""
    from IPython.display import HTML

    return HTML(styled(shift_table_html(n, task)))


def shift_table_html(n: int, task: str = "read") -> str:
    seq = {"read": sequence, "copy": copy_sequence}[task](n) if task in ("read", "copy") else None
    if seq is None:
        raise ValueError(f"unknown task {task!r}: use 'read' or 'copy'")
    x, y = xy_of(n, task)
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
        f'<div style="margin-bottom: 4px;">{esc(" ".join(VOCAB[i] for i in seq))} · x drops the last token, '
        f"y drops the first · {counted} of {len(y)} targets count</div>"
        f'<table style="border-collapse: collapse; {FONT}"><tr><th style="{th}">position</th>'
        f'<th style="{th}">input x</th>'
        f'<th style="{th}">next token</th><th style="{th}">target y</th><th style="{th}">loss</th>'
        f'<th style="{th}">why</th></tr>{"".join(rows)}</table></div>'
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
        counted, prompt, padding = counts["counted"], counts["prompt"], counts["padding"]
        self._message = (
            f"{plural(B, 'number')}: x {counts['x_shape']}, logits {counts['logits_shape']}; "
            f"{plural(counts['targets'], 'target')}: {counted:,} {'counts' if counted == 1 else 'count'}, "
            f"{prompt:,} {'is a digit' if prompt == 1 else 'are digits'} or '=', "
            f"{padding:,} {'is' if padding == 1 else 'are'} padding"
        )
        self.summary.value = summary_html(counts)
        self.grid.value = grid_html(chosen, L)
        self.flat.value = flat_html(chosen, counts)
        self.say(self._message[0].upper() + self._message[1:] + ".")


def batch_lab(numbers: str = "0-63") -> BatchLab:
    """The batch lab: type the numbers of a batch (default 0-63) and see what the loss sees."""
    return BatchLab(numbers)
