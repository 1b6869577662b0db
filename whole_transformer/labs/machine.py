"""The machine lab (notebook 01): the whole stack, its shapes and where its parameters are.

``machine_lab()`` draws the model from input to output (ids → token table → + positions →
N decoder blocks → final LayerNorm → output layer → logits), with the shape of the tensor that
flows between the parts. Click a part (or pick it in the selector) to see its input and output
shape with named axes, its parameter count and the formula behind it. Sliders change d_model,
heads (only values that divide d_model), blocks, d_ff, the batch B and the length L; the
parameter table, its total and the bar chart follow at once. Every count comes from
``model.parameter_table``; the lab computes none itself.

Attributes tests and notebooks use: ``d_model``, ``heads``, ``blocks``, ``d_ff``, ``batch``,
``length`` (sliders), ``part`` (the selector), ``buttons`` ({part: Button}), ``detail``,
``table``, ``bars``, ``change`` (HTML widgets), and the read-only ``config``, ``counts``,
``total``, ``shapes`` (part → (input, output) as (shape, axes)).

CSS classes: root ``wt-lab wt-machine``; ``wt-machine-stack`` the picture; ``wt-part`` every part
button, ``wt-part-on`` the selected one; ``wt-machine-detail`` the selected part's card;
``wt-machine-params`` the parameter table; ``wt-machine-bars`` the bar chart; ``wt-machine-total``
the total; ``wt-machine-change`` the line that says what the last change did to the total;
``wt-shape`` / ``wt-axis`` the shape labels (see ``_html``).
"""

from __future__ import annotations

import ipywidgets as widgets

from ..config import ModelConfig, parameter_table
from ..task import VOCAB_SIZE
from . import _html

D_MODELS = (8, 16, 24, 32, 48, 64, 96, 128)
D_FFS = (16, 32, 64, 128, 256, 512)
MAX_HEADS = 16
MAX_BLOCKS = 8
MAX_LENGTH = 8  # the longest input x of the task
Shape = tuple[tuple[int, ...], tuple[str, ...]]  # (sizes, axis names)
DEFAULTS = dict(d_model=64, n_heads=4, n_layers=2, d_ff=128, B=64, L=8)

# What each part does, in one sentence, and which row of parameter_table counts it.
_ABOUT = {
    "token table": ("Looks up one row of d_model numbers for each token id (then × √d_model).", "token table"),
    "+ positions": ("Adds the fixed sinusoid row of each position, so the blocks can tell 4 2 7 from 7 2 4.",
                    "positions"),
    "block": ("Mixes information across positions (attention), then works on each position alone (FFN); "
              "each adds its result to x.", "one block"),
    "final LayerNorm": ("Rescales each row once more before the output layer.", "final LayerNorm"),
    "output layer": ("Turns each row of d_model numbers into one score per token of the vocabulary.", "output layer"),
}


def head_options(d_model: int, max_heads: int = MAX_HEADS) -> tuple[int, ...]:
    """The head counts that divide d_model (each head takes d_model / heads columns), up to max_heads."""
    return tuple(h for h in range(1, min(d_model, max_heads) + 1) if d_model % h == 0)


def nearest_heads(d_model: int, heads: int) -> int:
    """heads if it divides d_model, else the largest valid head count below it (1 at worst)."""
    options = head_options(d_model)
    return max((h for h in options if h <= heads), default=options[0])


def part_names(n_blocks: int) -> list[str]:
    """The parts of the stack in order, from input to output."""
    return ["token table", "+ positions", *[f"block {i}" for i in range(1, n_blocks + 1)], "final LayerNorm",
            "output layer"]


class MachineLab(widgets.VBox):
    """The whole stack as a picture, a part card, sliders, a live parameter table and bar chart."""

    def __init__(self, d_model: int = 64, n_heads: int = 4, n_layers: int = 2, d_ff: int = 128, B: int = 64,
                 L: int = 8, part: str = "block 1"):
        if d_model not in D_MODELS:
            raise ValueError(f"d_model must be one of {D_MODELS}, got {d_model!r}")
        if d_ff not in D_FFS:
            raise ValueError(f"d_ff must be one of {D_FFS}, got {d_ff!r}")
        if n_heads not in head_options(d_model):
            raise ValueError(f"heads must divide d_model={d_model}: choose one of {head_options(d_model)}")
        if not 1 <= n_layers <= MAX_BLOCKS or not 1 <= L <= MAX_LENGTH or not 1 <= B <= 128:
            raise ValueError(f"blocks must be 1…{MAX_BLOCKS}, L 1…{MAX_LENGTH} and B 1…128")
        if part not in part_names(n_layers):
            raise ValueError(f"unknown part {part!r}: choose one of {part_names(n_layers)}")
        self._busy = False
        self._last_total: int | None = None
        slider = dict(continuous_update=True, style={"description_width": "70px"},
                      layout=widgets.Layout(width="330px"))
        self.d_model = widgets.SelectionSlider(options=D_MODELS, value=d_model, description="d_model", **slider)
        # heads: its options change with d_model; a continuously updating slider in the browser then
        # sends back a stale index (8 heads became 16 when d_model went 96 → 128), so it syncs on release
        self.heads = widgets.SelectionSlider(options=head_options(d_model), value=n_heads, description="heads",
                                             **{**slider, "continuous_update": False})
        self.blocks = widgets.IntSlider(value=n_layers, min=1, max=MAX_BLOCKS, description="blocks", **slider)
        self.d_ff = widgets.SelectionSlider(options=D_FFS, value=d_ff, description="d_ff", **slider)
        self.batch = widgets.IntSlider(value=B, min=1, max=128, description="batch B", **slider)
        self.length = widgets.IntSlider(value=L, min=1, max=MAX_LENGTH, description="length L", **slider)
        self.part = widgets.Dropdown(options=part_names(n_layers), value=part, description="part",
                                     style={"description_width": "70px"}, layout=widgets.Layout(width="330px"))
        self.buttons: dict[str, widgets.Button] = {}
        for name in part_names(MAX_BLOCKS):
            b = widgets.Button(description=name, layout=widgets.Layout(width="230px", height="30px", margin="0"))
            b.add_class("wt-part")
            b.on_click(lambda _b, name=name: self.select(name))
            self.buttons[name] = b
        self._flows = [widgets.HTML() for _ in range(len(self.buttons) + 1)]
        self._block_box = widgets.VBox(layout=widgets.Layout(border="1px dashed #999", padding="2px 6px 6px 6px",
                                                             margin="2px 0", align_items="center"))
        self._block_title = widgets.HTML()
        self.stack = widgets.VBox(layout=widgets.Layout(align_items="center", width="360px"))
        self.stack.add_class("wt-machine-stack")
        self.detail = widgets.HTML()
        self.detail.add_class("wt-machine-detail")
        self.table = widgets.HTML(layout=widgets.Layout(margin="0 28px 0 0"))
        self.table.add_class("wt-machine-params")
        self.bars = widgets.HTML()
        self.bars.add_class("wt-machine-bars")
        self.change = widgets.HTML()
        self.change.add_class("wt-machine-change")
        sliders = widgets.VBox([widgets.HTML("<b>Sizes</b>"), self.d_model, self.heads, self.blocks, self.d_ff,
                                widgets.HTML("<b>Input</b>"), self.batch, self.length, self.part])
        right = widgets.VBox([sliders, self.detail], layout=widgets.Layout(width="470px"))
        super().__init__([
            widgets.HBox([self.stack, right]),
            self.change,
            widgets.HBox([self.table, self.bars], layout=widgets.Layout(flex_flow="row wrap")),
        ])
        self.add_class("wt-lab")
        self.add_class("wt-machine")
        self.d_model.observe(self._on_d_model, "value")
        for w in (self.heads, self.blocks, self.d_ff, self.batch, self.length):
            w.observe(self._on_change, "value")
        self.part.observe(self._on_part, "value")
        self._render(None)

    # ------------------------------------------------------------------ state
    @property
    def config(self) -> ModelConfig:
        return ModelConfig(d_model=self.d_model.value, n_heads=self.heads.value, n_layers=self.blocks.value,
                           d_ff=self.d_ff.value)

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
        out = {"token table": (ids, rows), "+ positions": (rows, rows)}
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
        total = counts["total"]
        shapes = self.shapes
        chosen = self.part.value
        N = self.blocks.value

        # the stack: ids, then each part with the shape that flows out of it
        names = part_names(N)
        for name in names:
            b = self.buttons[name]
            on = name == chosen
            b.button_style = "info" if on else ""
            (b.add_class if on else b.remove_class)("wt-part-on")
        flow_html = []
        (ids_shape, ids_axes), _ = shapes["token table"]
        flow_html.append(_flow("ids", ids_shape, ids_axes, first=True))
        for name in names:
            _, (shape, axes) = shapes[name]
            label = "logits" if name == "output layer" else ""
            flow_html.append(_flow(label, shape, axes))
        for w, text in zip(self._flows, flow_html, strict=False):
            if w.value != text:
                w.value = text
        self._block_title.value = (f'<div style="font-size: 12px; color: #555; text-align: center; {_html.TEXT}">'
                                   f"{N} decoder block{'s' if N > 1 else ''}, one after another</div>")
        children = [self._flows[0], self.buttons["token table"], self._flows[1], self.buttons["+ positions"],
                    self._flows[2]]
        inside = [self._block_title]
        for i in range(1, N + 1):
            inside.append(self.buttons[f"block {i}"])
            if i < N:
                inside.append(self._flows[2 + i])
        self._block_box.children = inside
        children.append(self._block_box)
        children += [self._flows[2 + N], self.buttons["final LayerNorm"], self._flows[3 + N],
                     self.buttons["output layer"], self._flows[4 + N]]
        self.stack.children = children

        # the selected part's card
        kind = "block" if chosen.startswith("block ") else chosen
        about, row = _ABOUT[kind]
        (in_shape, in_axes), (out_shape, out_axes) = shapes[chosen]
        card = [f'<div style="font-size: 15px; font-weight: bold; margin: 6px 0 2px 0;">{_html.esc(chosen)}</div>',
                f'<div style="margin-bottom: 4px; {_html.TEXT}">{_html.esc(about)}</div>',
                f'<div style="{_html.TEXT}">input&nbsp; {_html.shape_label(in_shape, in_axes)}<br>'
                f"output {_html.shape_label(out_shape, out_axes)}</div>",
                _html.table(["", ""], [["parameters", f"{counts[row]:,}"], ["formula", formulas[row]]],
                            align=["left", "left"], css_class="wt-table wt-machine-card")]
        if kind == "block":
            B, L, d, h = self.batch.value, self.length.value, self.d_model.value, self.heads.value
            card.append('<div style="margin-top: 6px; font-weight: bold;">inside the block</div>')
            card.append(_html.table(["piece", "parameters", "shape inside"], [
                ["LayerNorm 1", f"{counts['one LayerNorm']:,}", _html.shape_text((B, L, d), ("B", "L", "d_model"))],
                ["attention", f"{counts['one attention']:,}",
                 "Q, K, V " + _html.shape_text((B, h, L, d // h), ("B", "h", "L", "d_k"))],
                ["", "", "scores " + _html.shape_text((B, h, L, L), ("B", "h", "L_q", "L_k"))],
                ["LayerNorm 2", f"{counts['one LayerNorm']:,}", _html.shape_text((B, L, d), ("B", "L", "d_model"))],
                ["FFN", f"{counts['one FFN']:,}", "hidden " + _html.shape_text((B, L, self.d_ff.value),
                                                                              ("B", "L", "d_ff"))],
            ], align=["left", "right", "left"]))
            card.append(f'<div style="font-size: 12px; color: #555; {_html.TEXT}">'
                        f'{h} head{"s" if h > 1 else ""} of d_k = '
                        f"{d} / {h} = {d // h} columns each: the heads cut W_Q, W_K, W_V into slices, they add "
                        "no numbers.</div>")
        self.detail.value = "".join(card)

        # the parameter table, the selected part's row shaded
        highlight = {"token table": 0, "+ positions": 1, "block": 5, "final LayerNorm": 7, "output layer": 8}[kind]
        self.table.value = (
            '<div style="font-weight: bold; margin: 6px 0 2px 0;">Parameters by part</div>'
            + _html.table(["part", "parameters", "formula"], [[n, c, f] for n, c, f in rows], bold_last=True,
                          highlight=highlight, align=["left", "right", "left"])
            + f'<div class="wt-machine-total" data-total="{total}" style="font-size: 15px; margin-top: 4px;">'
              f"total <b>{total:,}</b> parameters</div>"
        )

        # where the parameters are: these four rows add up to the total
        top = [("token table", counts["token table"]), (f"{N} blocks", counts[f"{N} blocks"]),
               ("final LayerNorm", counts["final LayerNorm"]), ("output layer", counts["output layer"])]
        block = [("LayerNorm 1", counts["one LayerNorm"]), ("attention", counts["one attention"]),
                 ("LayerNorm 2", counts["one LayerNorm"]), ("FFN", counts["one FFN"])]
        on = {"token table": "token table", "+ positions": None, "block": f"{N} blocks",
              "final LayerNorm": "final LayerNorm", "output layer": "output layer"}[kind]
        self.bars.value = (
            '<div style="font-weight: bold; margin: 6px 0 2px 0;">Where the parameters are</div>'
            + _html.bar_chart(top, max_value=total, highlight=on, show_share=True, css_class="wt-bars wt-bars-model")
            + f'<div style="font-weight: bold; margin: 8px 0 2px 0;">Inside one block ({counts["one block"]:,})</div>'
            + _html.bar_chart(block, max_value=total, show_share=True, colour="rgb(178,24,43)",
                              css_class="wt-bars wt-bars-block")
            + f'<div style="font-size: 12px; color: #555; max-width: 460px; {_html.TEXT}">'
              "Both charts use the same scale: the whole bar is the "
              "total. The positions add no parameters: they are fixed sinusoids.</div>"
        )

        # what the last change did to the total
        self.change.value = self._change_text(change, total)
        self._last_total = total

    def _change_text(self, change, total: int) -> str:
        if change is None or self._last_total is None:
            return _html.note(f'Total: <b>{total:,}</b> parameters. Move a slider: the total follows at once.')
        owner = change["owner"]
        name = {id(self.d_model): "d_model", id(self.heads): "heads", id(self.blocks): "blocks",
                id(self.d_ff): "d_ff", id(self.batch): "batch B", id(self.length): "length L"}[id(owner)]
        before = self._last_total
        what = f"{name} {change['old']} → {change['new']}: total {before:,} → <b>{total:,}</b>"
        if total == before:
            why = {
                "heads": "unchanged: the heads only cut the same d_model columns into "
                         f"{self.heads.value} slices of {self.d_model.value // self.heads.value}.",
                "batch B": "unchanged: B changes the shapes, never the weights.",
                "length L": "unchanged: L changes the shapes, never the weights.",
            }.get(name, "unchanged.")
            return _html.note(f"{what} ({why})", kind="ok")
        sign = "+" if total > before else "−"
        return _html.note(f"{what} ({sign}{abs(total - before):,})")


def _flow(label: str, shape, axes, first: bool = False) -> str:
    arrow = "" if first else '<div style="line-height: 10px; color: #777;">↓</div>'
    name = f"<b>{_html.esc(label)}</b> " if label else ""
    return (f'<div style="text-align: center; font-size: 12px; line-height: 16px;">{arrow}{name}'
            f"{_html.shape_label(shape, axes)}</div>")


def machine_lab(**sizes) -> MachineLab:
    """The whole machine: pick a part, move the sizes, watch the shapes and the parameter count.

    Keyword arguments set the starting values: d_model, n_heads, n_layers, d_ff, B, L, part.
    """
    return MachineLab(**sizes)
