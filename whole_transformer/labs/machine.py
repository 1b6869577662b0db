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
from . import _html
from ._machine import (  # noqa: F401  (D_FFS, MAX_HEADS, nearest_heads: the lab's public names, used by tests)
    _ABOUT,
    D_FFS,
    D_MODELS,
    INSIDE,
    MAX_BLOCKS,
    MAX_HEADS,
    MAX_LENGTH,
    SELECTED,
    Shape,
    bars_html,
    check_sizes,
    flow_html,
    head_options,
    nearest_heads,
    part_names,
    table_html,
)
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
        self.buttons: dict[str, widgets.Button] = {}
        for name in part_names(MAX_BLOCKS):
            b = widgets.Button(description=name, layout=widgets.Layout(width="230px", height="30px", margin="0"))
            b.add_class("wt-part")
            b.on_click(lambda _b, name=name: self.select(name))
            self.buttons[name] = b
        self._flows = [widgets.HTML() for _ in range(len(self.buttons) + 1)]
        self._block_box = widgets.VBox(
            layout=widgets.Layout(
                border="1px dashed #767676", padding="2px 6px 6px 6px", margin="2px 0", align_items="center"
            )
        )
        self._block_title = widgets.HTML()
        self.stack = widgets.VBox(layout=widgets.Layout(align_items="center", width="360px"))
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
    def shapes(self) -> dict[str, tuple[Shape, Shape]]:
        """part → ((input shape, axes), (output shape, axes)) for the current sizes."""
        B, L, d = self.batch.value, self.length.value, self.d_model.value
        ids = ((B, L), ("B", "L"))
        rows = ((B, L, d), ("B", "L", "d_model"))
        out: dict[str, tuple[Shape, Shape]] = {"token table": (ids, rows), "+ positions": (rows, rows)}
        for i in range(1, self.blocks.value + 1):
            out[f"block {i}"] = (rows, rows)
        out["final LayerNorm"] = (rows, rows)
        out["output layer"] = (rows, ((B, L, VOCAB_SIZE), ("B", "L", "V")))
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
        self._draw_stack(chosen)
        self.detail.value = self._card(chosen, kind, counts, formulas)
        self.table.value = table_html(rows, kind)
        self.bars.value = bars_html(counts, kind, self.blocks.value)
        total = counts["total"]
        self.say(self._change_text(change, total) + f" Selected: {self._selected_text(chosen, kind, counts)}.")
        self._last_total = total

    def _draw_stack(self, chosen: str) -> None:
        """ids, then each part's button with the shape that flows out of it; the blocks in a dashed box."""
        shapes, N = self.shapes, self.blocks.value
        names = part_names(N)
        for name in names:
            b, on = self.buttons[name], name == chosen
            b.description = f"▶ {name}" if on else name
            b.style.button_color, b.style.text_color = SELECTED if on else (None, None)
            (b.add_class if on else b.remove_class)("wt-part-on")
        (ids_shape, ids_axes), _ = shapes["token table"]
        flows = [flow_html("ids", ids_shape, ids_axes, first=True)]
        flows += [flow_html("logits" if name == "output layer" else "", *shapes[name][1]) for name in names]
        for w, text in zip(self._flows, flows, strict=False):
            if w.value != text:
                w.value = text
        self._block_title.value = (
            f'<div class="wt-small wt-muted" style="text-align: center;">'
            f"{N} decoder block{'s' if N > 1 else ''}, one after another</div>"
        )
        inside = [self._block_title]
        for i in range(1, N + 1):
            inside.append(self.buttons[f"block {i}"])
            if i < N:
                inside.append(self._flows[2 + i])
        self._block_box.children = inside
        self.stack.children = [
            self._flows[0],
            self.buttons["token table"],
            self._flows[1],
            self.buttons["+ positions"],
            self._flows[2],
            self._block_box,
            self._flows[2 + N],
            self.buttons["final LayerNorm"],
            self._flows[3 + N],
            self.buttons["output layer"],
            self._flows[4 + N],
        ]

    def _card(self, chosen: str, kind: str, counts: dict, formulas: dict) -> str:
        """The selected part's card: what it does, its shapes, its count and formula."""
        about, row = _ABOUT[kind]
        (in_shape, in_axes), (out_shape, out_axes) = self.shapes[chosen]
        B, L, d, h = self.batch.value, self.length.value, self.d_model.value, self.heads.value
        title = chosen if kind == chosen or kind == "block" else f"{chosen} · {kind}"
        middle = ""
        if kind == "FFN":
            middle = f"hidden {_html.shape_label((B, L, self.d_ff.value), ('B', 'L', 'd_ff'))}<br>"
        card = [
            f'<div class="wt-title">{_html.esc(title)}</div>',
            f'<div class="wt-text" style="margin-bottom: 4px;">{_html.esc(about)}</div>',
            f'<div class="wt-text">input&nbsp; {_html.shape_label(in_shape, in_axes)}<br>{middle}'
            f"output {_html.shape_label(out_shape, out_axes)}</div>",
            _html.table(
                ["", ""],
                [["parameters", f"{counts[row]:,}"], ["formula", formulas[row]]],
                align=["left", "left"],
                css_class="wt-table wt-machine-card",
            ),
        ]
        if kind == "block":
            card.append('<div class="wt-h">inside the block</div>')
            card.append(
                _html.table(
                    ["piece", "parameters"],
                    [
                        ["LayerNorm 1", f"{counts['one LayerNorm']:,}"],
                        ["attention", f"{counts['one attention']:,}"],
                        ["LayerNorm 2", f"{counts['one LayerNorm']:,}"],
                        ["FFN", f"{counts['one FFN']:,}"],
                    ],
                    align=["left", "right"],
                )
            )
        if kind in ("block", "attention"):
            card.append(
                f'<div class="wt-small wt-muted">{h} head{"s" if h > 1 else ""} of d_k = {d} / {h} = '
                f"{d // h} columns each: the heads cut W_Q, W_K, W_V into slices, they add no numbers.</div>"
            )
        return "".join(card)

    def _selected_text(self, chosen: str, kind: str, counts: dict) -> str:
        _, row = _ABOUT[kind]
        name = chosen if kind in (chosen, "block") else f"{chosen}, {kind}"
        return f"{name}, {counts[row]:,} parameters"

    def _change_text(self, change, total: int) -> str:
        if change is None:
            return f"Total: {total:,} parameters." + (
                " Move a slider: the total follows at once." if self._last_total is None else ""
            )
        owner = change["owner"]
        name = {
            id(self.d_model): "d_model",
            id(self.heads): "heads",
            id(self.blocks): "blocks",
            id(self.d_ff): "d_ff",
            id(self.batch): "batch B",
            id(self.length): "length L",
        }[id(owner)]
        before = self._last_total
        assert before is not None, "a change comes only after __init__'s _render(None) set _last_total"
        what = f"{name} {change['old']} → {change['new']}: total {before:,} → {total:,}"
        if total == before:
            why = {
                "heads": "unchanged: the heads only cut the same d_model columns into "
                f"{self.heads.value} slices of {self.d_model.value // self.heads.value}.",
                "batch B": "unchanged: B changes the shapes, never the weights.",
                "length L": "unchanged: L changes the shapes, never the weights.",
            }.get(name, "unchanged.")
            return f"{what} ({why})"
        sign = "+" if total > before else "−"
        return f"{what} ({sign}{abs(total - before):,})."


def machine_lab(**sizes) -> MachineLab:
    """The whole machine: pick a part, move the sizes, watch the shapes and the parameter count.

    Keyword arguments set the starting values: d_model, n_heads, n_layers, d_ff, B, L, part.
    """
    return MachineLab(**sizes)
