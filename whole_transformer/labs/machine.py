"""The machine lab (notebook 01): the whole stack, its shapes and where its parameters are.

``machine_lab()`` draws the model from input to output (ids → token table → + positions →
N decoder blocks → final LayerNorm → output layer → logits), with the shape of the tensor that
flows between the parts. Click a part (or pick it in the selector) to see its input and output
shape with named axes, its parameter count and the formula behind it; inside a block, the
*inside* buttons pick its attention or its FFN. Sliders change d_model,
heads (only values that divide d_model), blocks, d_ff, the batch B and the length L; the
parameter table, its total and the bar chart follow at once. Every count comes from
``model.parameter_table``; the lab computes none itself.

The lab shows no shape of the attention scores: notebook 02 asks for it.

Attributes tests and notebooks use: ``d_model``, ``heads``, ``blocks``, ``d_ff``, ``batch``,
``length`` (sliders), ``part`` (the selector), ``inside`` (ToggleButtons: "whole block",
"attention", "FFN"; shown while a block is chosen), ``buttons`` ({part: Button}), ``detail``,
``table``, ``bars``, ``change`` (HTML widgets; ``change`` is also the lab's live summary line,
``live``), and the read-only ``config``, ``counts``, ``total``, ``shapes`` (part → (input,
output) as (shape, axes)).

CSS classes: root ``wt-lab wt-machine``; ``wt-machine-stack`` the picture; ``wt-part`` every part
button, ``wt-part-on`` the selected one (its label starts with "▶ ");
``wt-machine-inside`` the inside buttons; ``wt-machine-detail`` the selected part's card;
``wt-machine-params`` the parameter table; ``wt-machine-bars`` the bar chart; ``wt-machine-total``
the total; ``wt-machine-change`` the live line: what the last change did to the total;
``wt-shape`` / ``wt-axis`` the shape labels (see ``_html``).
"""

from __future__ import annotations

import ipywidgets as widgets

from ..config import ModelConfig, parameter_table
from ..task import VOCAB_SIZE
from ._machine import (  # noqa: F401  (D_FFS, MAX_HEADS, nearest_heads: the lab's public names, used by tests)
    D_FFS,
    D_MODELS,
    INSIDE,
    MAX_BLOCKS,
    MAX_HEADS,
    MAX_LENGTH,
    Shape,
    bars_html,
    card_html,
    change_text,
    check_sizes,
    head_options,
    nearest_heads,
    part_names,
    selected_text,
    table_html,
)
from ._stack import StackPicture
from ._widgets import LIVE, LabBox


class MachineLab(LabBox):
    """The whole stack as a picture, a part card, sliders, a live parameter table and bar chart."""

    def __init__(
        self,
        d_model: int = 64,
        n_heads: int = 4,
        n_layers: int = 2,
        d_ff: int = 128,
        B: int = 64,
        L: int = 8,
        part: str = "block 1",
    ):
        check_sizes(d_model, n_heads, n_layers, d_ff, B, L, part)
        self._busy = False
        self._last_total: int | None = None
        self._make_sliders(d_model, n_heads, n_layers, d_ff, B, L, part)
        self._picture = StackPicture(self.select)
        self.buttons, self.stack = self._picture.buttons, self._picture.box
        self.detail, self.table, self.bars = (
            widgets.HTML(),
            widgets.HTML(layout=widgets.Layout(margin="0 28px 0 0")),
            widgets.HTML(),
        )
        for w, c in ((self.stack, "stack"), (self.detail, "detail"), (self.table, "params"), (self.bars, "bars")):
            w.add_class(f"wt-machine-{c}")
        sliders = widgets.VBox(
            [
                widgets.HTML("<b>Sizes</b>"),
                self.d_model,
                self.heads,
                self.blocks,
                self.d_ff,
                widgets.HTML("<b>Input</b>"),
                self.batch,
                self.length,
                self.part,
                self.inside,
            ]
        )
        right = widgets.VBox([sliders, self.detail], layout=widgets.Layout(width="470px"))
        wide = widgets.HBox([self.table, self.bars], layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__([widgets.HBox([self.stack, right]), LIVE, wide], "machine")
        self.change = self.live
        self.change.add_class("wt-machine-change")
        self.d_model.observe(self._on_d_model, "value")
        for w in (self.heads, self.blocks, self.d_ff, self.batch, self.length):
            w.observe(self._on_change, "value")
        self.part.observe(self._on_part, "value")
        self.inside.observe(self._on_part, "value")
        self._render(None)

    def _make_sliders(self, d_model: int, n_heads: int, n_layers: int, d_ff: int, B: int, L: int, part: str) -> None:
        """The sizes' and the input's sliders, the part selector and the inside buttons, at their first values."""
        slider = dict(continuous_update=True, style={"description_width": "70px"}, layout=widgets.Layout(width="330px"))
        self.d_model = widgets.SelectionSlider(options=D_MODELS, value=d_model, description="d_model", **slider)
        # heads: its options change with d_model; a continuously updating slider in the browser then
        # sends back a stale index (8 heads became 16 when d_model went 96 → 128), so it syncs on release
        self.heads = widgets.SelectionSlider(
            options=head_options(d_model), value=n_heads, description="heads", **{**slider, "continuous_update": False}
        )
        self.blocks = widgets.IntSlider(value=n_layers, min=1, max=MAX_BLOCKS, description="blocks", **slider)
        self.d_ff = widgets.SelectionSlider(options=D_FFS, value=d_ff, description="d_ff", **slider)
        self.batch = widgets.IntSlider(value=B, min=1, max=128, description="batch B", **slider)
        self.length = widgets.IntSlider(value=L, min=1, max=MAX_LENGTH, description="length L", **slider)
        self.part = widgets.Dropdown(
            options=part_names(n_layers),
            value=part,
            description="part",
            style={"description_width": "70px"},
            layout=widgets.Layout(width="330px"),
        )
        self.inside = widgets.ToggleButtons(
            options=INSIDE,
            value="whole block",
            description="inside",
            style={"description_width": "70px", "button_width": "100px"},
        )
        self.inside.add_class("wt-machine-inside")

    # ------------------------------------------------------------------ state
    @property
    def config(self) -> ModelConfig:
        return ModelConfig(
            d_model=self.d_model.value, n_heads=self.heads.value, n_layers=self.blocks.value, d_ff=self.d_ff.value
        )

    @property
    def rows(self) -> list[tuple[str, int, str]]:
        return parameter_table(self.config)

    @property
    def counts(self) -> dict[str, int]:
        return {name: n for name, n, _ in self.rows}

    @property
    def total(self) -> int:
        return self.counts["total"]

    @property
    def sizes(self) -> dict[str, int]:
        """The sliders' sizes: B, L, d_model, heads, d_ff."""
        return {
            "B": self.batch.value,
            "L": self.length.value,
            "d_model": self.d_model.value,
            "heads": self.heads.value,
            "d_ff": self.d_ff.value,
        }

    @property
    def shapes(self) -> dict[str, tuple[Shape, Shape]]:
        """part → ((input shape, axes), (output shape, axes)) for the current sizes."""
        B, L, d = self.batch.value, self.length.value, self.d_model.value
        ids = ((B, L), ("B", "L"))
        rows = ((B, L, d), ("B", "L", "d_model"))
        out: dict[str, tuple[Shape, Shape]] = {"token table": (ids, rows), "+ positions": (rows, rows)}
        for i in range(1, self.blocks.value + 1):
            out[f"block {i}"] = (rows, rows)
        out["final LayerNorm"] = (rows, rows)
        out["output layer"] = (rows, ((B, L, VOCAB_SIZE), ("B", "L", "n_vocab")))
        return out

    def select(self, name: str) -> None:
        """Select a part of the stack (what a click on its box does)."""
        if name not in self.part.options:
            raise ValueError(f"unknown part {name!r}: choose one of {list(self.part.options)}")
        self.part.value = name

    # ------------------------------------------------------------------ events
    def _on_d_model(self, change) -> None:
        # keep heads valid: same value if it still divides d_model, else the nearest smaller divisor
        self._busy = True
        try:
            keep = nearest_heads(change["new"], self.heads.value)
            self.heads.options = head_options(change["new"])
            self.heads.value = keep
        finally:
            self._busy = False
        self._render(change)

    def _on_change(self, change) -> None:
        if self._busy:
            return
        if change["owner"] is self.blocks:
            self._busy = True
            try:
                chosen = self.part.value
                names = part_names(self.blocks.value)
                if chosen.startswith("block ") and chosen not in names:
                    chosen = f"block {self.blocks.value}"
                self.part.options = names
                self.part.value = chosen
            finally:
                self._busy = False
        self._render(change)

    def _on_part(self, change) -> None:
        if not self._busy:
            self._render(None)

    # ------------------------------------------------------------------ drawing
    def _render(self, change) -> None:
        rows = self.rows
        counts = {name: n for name, n, _ in rows}
        formulas = {name: f for name, _, f in rows}
        chosen = self.part.value
        is_block = chosen.startswith("block ")
        self.inside.layout.display = None if is_block else "none"
        kind = (self.inside.value if self.inside.value != "whole block" else "block") if is_block else chosen
        self._picture.draw(chosen, self.shapes, self.blocks.value)
        self.detail.value = card_html(chosen, kind, counts, formulas, self.shapes[chosen], self.sizes)
        self.table.value = table_html(rows, kind)
        self.bars.value = bars_html(counts, kind, self.blocks.value)
        total = counts["total"]
        self.say(self._change_text(change, total) + f" Selected: {selected_text(chosen, kind, counts)}.")
        self._last_total = total

    def _change_text(self, change, total: int) -> str:
        if change is None:
            return f"Total: {total:,} parameters." + (
                " Move a slider: the total follows at once." if self._last_total is None else ""
            )
        name = {
            id(self.d_model): "d_model",
            id(self.heads): "heads",
            id(self.blocks): "blocks",
            id(self.d_ff): "d_ff",
            id(self.batch): "batch B",
            id(self.length): "length L",
        }[id(change["owner"])]
        before = self._last_total
        assert before is not None, "a change comes only after __init__'s _render(None) set _last_total"
        return change_text(name, change["old"], change["new"], before, total, self.sizes)


def machine_lab(**sizes) -> MachineLab:
    """The whole machine: pick a part, move the sizes, watch the shapes and the parameter count.

    Keyword arguments set the starting values: d_model, n_heads, n_layers, d_ff, B, L, part.
    """
    return MachineLab(**sizes)
