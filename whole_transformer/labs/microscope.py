"""The microscope lab (notebook 02): every number of a tiny model reading `8 9 =`.

``microscope_lab()`` opens the course's small trained model (one block with one head; rows of 6 numbers,
12 hidden units in its FFN; the same 42 tokens) and runs the prompt through it, keeping every intermediate
(``steps.trace``: forward hooks on the torch model). A stepper (slider, Previous, Next) walks through every
intermediate in order, from the ids to the word the model writes.
At every stop the lab draws four things: what the tensor looks like here (its sizes, each axis
named), a grid of its values, each cell tinted and printed, what that tensor would look like in
notebook 01's real model fed a whole batch (B 64, L 8, d_model 64, h 4, d_k 16, d_ff 128, V 42),
and a sentence explaining the step. A live line sums the stop up for a screen reader. Type
other digits into the prompt box (then Enter); a prompt it cannot read shows why, and the last
good one stays.

In the tiny model the sizes of the axes differ (L 3, d_model 6, d_ff 12, V 42), so the length of an axis
tells which axis it is; with its 1 head, d_k is d_model (6), and the axis's name tells them apart. An axis
named ``d_head`` is shown as ``d_k``, as the notebooks name it; the sentences write the projections as the
trace does (``LayerNorm 1 @ W_Q.T``).

Attributes: ``prompt`` (Text), ``step`` (IntSlider), ``prev`` / ``next`` (Buttons), ``title``,
``shape``, ``full``, ``heatmap``, ``sentence``, ``tokens``, ``error``, ``live`` (HTML widgets); read-only
``ids``, ``stages`` (the list of ``Intermediate`` shown, first "ids", last "next word"),
``current`` (the stage on screen), ``word`` (the word the model writes).

CSS classes: root ``wt-lab wt-microscope``; ``wt-microscope-prompt``, ``wt-microscope-step``,
``wt-microscope-prev``, ``wt-microscope-next``, ``wt-microscope-title``, ``wt-microscope-shape``
(the tiny model's shape), ``wt-microscope-full`` (the full model's shape),
``wt-microscope-heatmap`` (holds ``table.wt-heatmap`` in a focusable region, ``wt-scroll``),
``wt-microscope-sentence``, ``wt-microscope-tokens``, ``wt-microscope-error``, ``wt-microscope-live``.
"""

from __future__ import annotations

import html
import re

import ipywidgets as widgets
import numpy as np

from ..steps import Intermediate, trace
from ..task import VOCAB, decode, parse_prompt
from . import _compare, _html
from ._microscope import LEGEND, MAX_COLS, SHOWN_AXIS, masked_cells, sentence, stage_heatmap  # noqa: F401  (MAX_COLS: tests)
from ._widgets import LabBox

DEFAULT_PROMPT = "8 9 ="
#: The sizes of the full model of notebook 01, for the same tensor in a batch of 64 inputs of 8 tokens.
FULL_SIZES = {"B": 64, "L": 8, "L_q": 8, "L_k": 8, "d_model": 64, "h": 4, "d_k": 16, "d_ff": 128, "V": 42}


def shown_axes(axes) -> tuple[str, ...]:
    return tuple(SHOWN_AXIS.get(a, a) for a in axes)


def full_shape(axes) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """How big this tensor gets in notebook 01's model reading a batch: B in front, every axis at its real size."""
    names = ("B", *shown_axes(axes))
    return tuple(FULL_SIZES[a] for a in names), names


class MicroscopeLab(LabBox):
    """A stepper through every intermediate of the tiny model's forward pass."""

    def __init__(self, text: str = DEFAULT_PROMPT, model=None, step: int = 0, yours=None):
        if model is None:
            from ..train import load_model  # lazy: torch loads only to read the shipped model

            model = load_model("microscope")
        self.model = model
        self.d_model = model.cfg.d_model
        self.yours = _compare.functions_of(yours) if yours is not None else None
        self.compared: dict[str, _compare.Compared] = {}
        self._make_controls(text)
        self._make_views()
        rows = [
            widgets.HBox([self.prompt, self.tokens], layout=widgets.Layout(align_items="center")),
            self.error,
            widgets.HBox([self.prev, self.step, self.next], layout=widgets.Layout(align_items="center")),
            *([self.whose] if self.yours is not None else []),
            self.title,
            widgets.VBox([self.shape, self.full]),
            self.heatmap,
            *([self.mine] if self.yours is not None else []),
            self.legend,
            self.sentence,
            *([self.table] if self.yours is not None else []),
        ]
        super().__init__(rows, "microscope")
        self.ids: list[int] = []
        self.stages: list[Intermediate] = []
        self.word = ""
        self._labels: list[str] = []
        if not self._read(text):
            raise ValueError(self._last_error)
        n = len(self.stages)
        if isinstance(step, bool) or not isinstance(step, int) or not -n <= step < n:
            raise ValueError(f"step must be 0…{n - 1} (or counted from the end: -1 is the last), got {step!r}")
        self.step.max = n - 1
        self.step.value = step % n
        self._show()
        self.prompt.observe(self._on_prompt, "value")
        self.step.observe(lambda _c: self._show(), "value")
        self.prev.on_click(lambda _b: self.go(-1))
        self.next.on_click(lambda _b: self.go(+1))
        self.whose.observe(lambda _c: self._show(), "value")

    def _make_controls(self, text: str) -> None:
        """The prompt box, the step slider, Previous and Next."""
        self.prompt = widgets.Text(
            value=text,
            description="prompt",
            continuous_update=False,
            placeholder="digits, then =",
            layout=widgets.Layout(width="240px", margin="0 12px 0 0"),
        )
        self.prompt.add_class("wt-microscope-prompt")
        self.step = widgets.IntSlider(
            value=0, min=0, max=1, description="step", continuous_update=True, layout=widgets.Layout(width="420px")
        )
        self.step.add_class("wt-microscope-step")
        self.prev = widgets.Button(description="◀ Previous", layout=widgets.Layout(width="110px"))
        self.prev.add_class("wt-microscope-prev")
        self.next = widgets.Button(description="Next ▶", layout=widgets.Layout(width="110px"))
        self.next.add_class("wt-microscope-next")
        self.whose = widgets.ToggleButtons(
            options=[("the course's forward pass", "course"), ("yours beside it", "yours")],
            value="course",
            description="show",
            tooltips=["the course's numbers only", "your functions' numbers beside the course's, step by step"],
            style={"button_width": "190px"},
        )
        self.whose.add_class("wt-microscope-whose")

    def _make_views(self) -> None:
        """The HTML widgets a step is drawn in."""
        self.error, self.tokens, self.title = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.shape, self.full = widgets.HTML(), widgets.HTML()
        self.heatmap, self.sentence = widgets.HTML(), widgets.HTML()
        for w, c in (
            (self.error, "error"),
            (self.tokens, "tokens"),
            (self.title, "title"),
            (self.shape, "shape"),
            (self.full, "full"),
            (self.heatmap, "heatmap"),
            (self.sentence, "sentence"),
        ):
            w.add_class(f"wt-microscope-{c}")
        self.heatmap.layout = widgets.Layout(max_width="100%")
        self.legend = widgets.HTML(f'<div class="wt-small wt-muted">{_html.esc(LEGEND)}</div>')
        self.legend.add_class("wt-microscope-legend")
        self.mine, self.table = widgets.HTML(), widgets.HTML()
        self.mine.add_class("wt-microscope-yours")
        self.table.add_class("wt-microscope-compare")

    @property
    def current(self) -> Intermediate:
        return self.stages[self.step.value]

    def go(self, delta: int) -> None:
        """Move the stepper by delta steps (what Previous and Next do), staying inside the steps."""
        self.step.value = min(max(self.step.value + delta, 0), len(self.stages) - 1)

    def _read(self, text: str) -> bool:
        try:
            ids = parse_prompt(text)
        except ValueError as e:
            self._last_error = str(e)
            return False
        steps = trace(self.model, ids)
        if self.yours is not None:
            from ..weights import weights_of  # lazy: only a comparison needs the weights as arrays

            W = weights_of(self.model)
            self.compared = _compare.compare(steps, self.yours, W, self.model.cfg.n_heads, ids)
        logits = steps[-1].array
        ids_stage = Intermediate("ids", np.asarray(ids, dtype=np.int64), ("L",), None, "the prompt's token ids")
        last = Intermediate("next word", logits[-1].copy(), ("V",), None, "argmax of the last row of the logits")
        self.ids, self.stages = list(ids), [ids_stage, *steps, last]
        self.word = VOCAB[int(np.argmax(logits[-1]))]
        self._labels = decode(ids)
        self._last_error = ""
        return True

    def _on_prompt(self, change) -> None:
        if self._read(change["new"]):
            self.error.value = ""
            keep = self.step.value
            self.step.max = len(self.stages) - 1
            if self.step.value == keep:
                self._show()  # same step, new numbers: the slider did not fire
        else:  # said on screen and to a screen reader: the box's text is not read, the last good one stays
            kept = f"{self._last_error}. Still showing '{' '.join(self._labels)}'."
            self.error.value = _html.note(_html.esc(kept), kind="error")
            self.say(f"Cannot read that: {kept}")

    def _show(self) -> None:
        n = len(self.stages)
        if self.step.max != n - 1:
            self.step.max = n - 1
        i = self.step.value
        stage = self.stages[i]
        labels = self._labels
        self.prev.disabled = i == 0
        self.next.disabled = i == n - 1
        cells = "".join(f'<span class="wt-token">{_html.esc(t)}</span>' for t in labels)
        out = (
            f'<span class="wt-token wt-token-new">{_html.esc(self.word)}</span>'
            if stage.name == "next word"
            else '<span class="wt-muted wt-mono" aria-label="not yet written">?</span>'
        )
        self.tokens.value = f'<span class="wt-mono">{cells} → {out}</span>'
        # blocks are numbered from 1, as in notebooks 01 and 03 (the trace counts from 0, like blocks.0 in torch)
        where = "" if stage.block is None else f'<span class="wt-muted"> in block {stage.block + 1}</span>'
        self.title.value = (
            f'<div class="wt-text" style="font-size: 15px; margin-top: 4px;"><b>step {i} (0–{n - 1}): '
            f"{_html.esc(stage.name)}</b>{where}"
            f'<span class="wt-muted"> = {_html.esc(stage.formula)}</span></div>'
        )
        axes = shown_axes(stage.axes)
        renamed = " · d_k is what trace() calls d_head" if "d_head" in stage.axes else ""
        self.shape.value = (
            f"tiny model (one sequence): {_html.shape_label(stage.array.shape, axes)}"
            f'<span class="wt-small wt-muted">{renamed}</span>'
        )
        fshape, faxes = full_shape(stage.axes)
        extra = " → one next id per sequence, (B 64)" if stage.name == "next word" else ""
        self.full.value = (
            f'<span class="wt-muted">full model (batch of 64):</span> {_html.shape_label(fshape, faxes)}{extra}'
        )
        self.heatmap.value = (
            f'<div class="wt-scroll" tabindex="0" role="region" '
            f'aria-label="the numbers of step {i}, {_html.esc(stage.name)}">'
            f"{stage_heatmap(stage, labels, masked_cells(stage, self.stages))}</div>"
        )
        yours = self._show_yours(stage, i) if self.yours is not None else ""
        said = sentence(stage, self.stages, labels, self.d_model)
        self.sentence.value = f'<div class="wt-text" style="max-width: 720px; margin-top: 4px;">{said}</div>'
        shape = _html.shape_text(stage.array.shape, axes)
        self.say(
            f"Reading '{' '.join(labels)}', step {i} of steps 0–{n - 1}: {stage.name}, shape {shape}. "
            + html.unescape(re.sub(r"<[^>]+>", "", said))  # plain text: say() escapes it once
            + yours
        )

    def _show_yours(self, stage: Intermediate, i: int) -> str:
        """Your array of this step beside the course's (when 'yours beside it' is chosen), and the table twin;
        returns what the live line adds (yours against the course's at this step, and the first difference)."""
        first = _compare.first_difference(self.compared)
        self.table.value = _compare.table_html(self.compared, self.stages, first)
        if self.whose.value != "yours":
            self.mine.value = ""
            self.mine.layout.display = self.table.layout.display = "none"
            return ""
        self.mine.layout.display = self.table.layout.display = None
        where = (
            " Every step your functions make agrees with the course's."
            if first is None
            else f" The first step that differs: {first.label}."
        )
        c = self.compared.get(stage.label)
        if c is None:
            self.mine.value = '<div class="wt-small wt-muted">no function of yours makes this step</div>'
            return " Yours: no function of yours makes this step." + where
        self.mine.value = _compare.yours_html(c, stage, i, self._labels, first)
        return f" Yours: {_compare.verdict_words(c)}." + where


def microscope_lab(text: str = DEFAULT_PROMPT, model=None, step: int = 0, yours=None) -> MicroscopeLab:
    """The tiny model under the microscope, reading ``text`` (default '8 9 ='), starting at ``step``
    (``step=-1``: at the last step, the word it writes, so a saved copy of the notebook pictures a whole run).

    ``yours``: your notebook's names (``globals()``): your ``layer_norm``, ``multi_head_attention``,
    ``decoder_block`` and ``forward`` then show their numbers beside the course's, step by step, and the first
    step where they differ is named."""
    return MicroscopeLab(text, model, step, yours)
