"""The block picture (notebook 02): one decoder block of the tiny model, drawn with matplotlib.

x → LayerNorm 1 → attention → add, then → LayerNorm 2 → FFN → add. The residual path runs along
the bottom: each sublayer reads a normalised copy of x from it and adds its result back to it.
Every arrow carries the shape the microscope shows for the same prompt (L 3, d_model 6, d_ff 12,
1 head for `8 9 =`), every box its parameter count from ``model.parameter_table``, and under the
residual path are the numbers of the last row (the `=` row) as the block changes it.

``block_picture()`` returns a widget holding the drawing as a PNG (so it also shows in an HTML
export); ``.figure`` is the matplotlib Figure, ``.shapes`` the labels drawn, ``.rows`` the last
row at the three points of the residual path.

CSS classes: root ``wt-lab wt-block``; ``wt-block-image`` the picture; ``wt-block-caption``.
"""

from __future__ import annotations

import io

import ipywidgets as widgets
import numpy as np

from ..model import parameter_table
from ..numpy_model import find, trace
from ..task import decode, parse_prompt
from . import _html
from .microscope import DEFAULT_PROMPT

BLUE, RED, GREY, INK = "#2166ac", "#b2182b", "#777777", "#222222"


def _row(a: np.ndarray) -> str:
    return "[" + " ".join(f"{v:+.2f}".replace("-", "−") for v in a) + "]"


def draw_block(model, ids):
    """The figure, the shape labels and the `=` row at x, after the first add and after the second."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

    cfg = model.cfg
    counts = {name: n for name, n, _ in parameter_table(cfg)}
    steps = trace(model, ids)
    x_in = find(steps, "+ positions")
    res1, res2 = find(steps, "residual 1", block=0), find(steps, "residual 2", block=0)
    weights, hidden = find(steps, "weights", block=0), find(steps, "FFN hidden", block=0)
    L, d = x_in.array.shape
    shapes = {
        "x": _html.shape_text((L, d), ("L", "d_model")),
        "weights": _html.shape_text(weights.array.shape, ("h", "L_q", "L_k")),
        "hidden": _html.shape_text(hidden.array.shape, ("L", "d_ff")),
    }
    rows = {"x": x_in.array[-1], "residual 1": res1.array[-1], "residual 2": res2.array[-1]}

    fig = Figure(figsize=(11.5, 4.1), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.3, 14.6)
    ax.set_ylim(-1.75, 3.05)
    ax.axis("off")
    base, top = 0.0, 1.75  # the residual path, and the row of sublayers

    def box(x0, x1, title, sub, colour):
        ax.add_patch(FancyBboxPatch((x0, top - 0.42), x1 - x0, 0.84, boxstyle="round,pad=0.02,rounding_size=0.12",
                                    facecolor=colour + "18", edgecolor=colour, linewidth=1.6))
        ax.text((x0 + x1) / 2, top + 0.13, title, ha="center", va="center", fontsize=11.5, color=INK,
                fontweight="bold")
        ax.text((x0 + x1) / 2, top - 0.2, sub, ha="center", va="center", fontsize=8.5, color=GREY)

    def arrow(p, q, colour=INK, lw=1.4):
        ax.add_patch(FancyArrowPatch(p, q, arrowstyle="-|>", mutation_scale=12, color=colour, linewidth=lw,
                                     shrinkA=0, shrinkB=0))

    def label(x, y, text, colour=GREY, size=8.5, ha="center"):
        ax.text(x, y, text, ha=ha, va="center", fontsize=size, color=colour, family="monospace")

    def add(xc):
        ax.add_patch(Circle((xc, base), 0.22, facecolor="white", edgecolor=INK, linewidth=1.4, zorder=3))
        ax.text(xc, base - 0.01, "+", ha="center", va="center", fontsize=14, zorder=4)

    # the residual path, drawn first so everything else sits on it
    arrow((0.0, base), (6.08, base), BLUE, 2.4)
    arrow((6.52, base), (12.53, base), BLUE, 2.4)
    arrow((12.97, base), (14.45, base), BLUE, 2.4)
    ax.text(0.0, base + 0.22, "x", fontsize=13, color=BLUE, fontweight="bold", ha="left")
    label(1.05, base + 0.25, shapes["x"], BLUE, 8, ha="left")
    ax.text(14.45, base + 0.22, "out", fontsize=12, color=BLUE, fontweight="bold", ha="right")
    label(3.2, base - 0.28, "residual path: x is carried along unchanged and only added to", BLUE, 8.5)
    add(6.3)
    add(12.75)
    two_lines = shapes["x"].replace(", ", ",\n")

    # sublayer 1: LayerNorm 1 → attention → back into the path
    arrow((0.9, base), (0.9, top - 0.42))
    box(0.45, 2.45, "LayerNorm 1", f"{counts['one LayerNorm']} parameters", GREY)
    arrow((2.45, top), (3.35, top))
    label(2.9, top + 0.22, two_lines, size=7.5)
    heads = f"{cfg.n_heads} head{'s' if cfg.n_heads > 1 else ''}"
    box(3.35, 5.75, f"attention, {heads}", f"{counts['one attention']} parameters", RED)
    label(4.55, top + 0.62, "weights " + shapes["weights"], RED, 8)
    ax.plot([5.75, 6.3], [top, top], color=INK, linewidth=1.4)
    arrow((6.3, top), (6.3, base + 0.22))
    label(6.42, (top + base) / 2, two_lines, size=7.5, ha="left")

    # sublayer 2: LayerNorm 2 → FFN → back into the path
    arrow((7.75, base), (7.75, top - 0.42))
    box(7.35, 9.3, "LayerNorm 2", f"{counts['one LayerNorm']} parameters", GREY)
    arrow((9.3, top), (10.2, top))
    label(9.75, top + 0.22, two_lines, size=7.5)
    box(10.2, 12.4, f"FFN {d} → {cfg.d_ff} → {d}", f"{counts['one FFN']} parameters", BLUE)
    label(11.3, top + 0.62, "hidden " + shapes["hidden"], BLUE, 8)
    ax.plot([12.4, 12.75], [top, top], color=INK, linewidth=1.4)
    arrow((12.75, top), (12.75, base + 0.22))
    label(12.87, (top + base) / 2, two_lines, size=7.5, ha="left")

    # the numbers of the last row ('=') where the path changes
    last = decode(ids)[-1]
    label(2.2, -0.78, f"row '{last}' of x", BLUE, 8.5)
    label(2.2, -1.08, _row(rows["x"]), INK, 8)
    label(7.6, -0.78, "after the first add (x + attention)", BLUE, 8.5)
    label(7.6, -1.08, _row(rows["residual 1"]), INK, 8)
    label(12.45, -0.78, "after the second add (x + FFN)", BLUE, 8.5)
    label(12.45, -1.08, _row(rows["residual 2"]), INK, 8)
    ax.text(7.2, 2.85, f"One block of the tiny model reading '{' '.join(decode(ids))}'  ·  "
            f"{counts['one block']} parameters in all", ha="center", va="center", fontsize=11.5, color=INK)
    ax.text(7.2, -1.5, "Each sublayer reads a normalised copy of x and adds its result to x; "
            "the block's output has the shape of its input.", ha="center", va="center", fontsize=9, color=GREY)
    return fig, shapes, rows


class BlockPicture(widgets.VBox):
    """One block drawn once, as a PNG inside a widget."""

    def __init__(self, text: str = DEFAULT_PROMPT, model=None):
        if model is None:
            from ..train import load_model

            model = load_model("microscope")
        ids = parse_prompt(text)
        self.figure, self.shapes, self.rows = draw_block(model, ids)
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=100)
        self.png = buf.getvalue()
        self.image = widgets.Image(value=self.png, format="png", layout=widgets.Layout(max_width="1150px",
                                                                                    width="100%", margin="0"))
        # (no margin: ipywidgets' default 2 px on each side would make 100 % wider than the page)
        self.image.add_class("wt-block-image")
        self.caption = widgets.HTML(
            f'<div style="font-size: 13px; color: #444;">Shapes for {_html.esc(" ".join(decode(ids)))}: '
            f"x {_html.esc(self.shapes['x'])}, attention weights {_html.esc(self.shapes['weights'])}, "
            f"FFN hidden {_html.esc(self.shapes['hidden'])}: the same as in the microscope.</div>")
        self.caption.add_class("wt-block-caption")
        super().__init__([self.image, self.caption])
        self.add_class("wt-lab")
        self.add_class("wt-block")

    def save(self, path) -> None:
        """Write the picture as a PNG file."""
        with open(path, "wb") as f:
            f.write(self.png)


def block_picture(text: str = DEFAULT_PROMPT, model=None) -> BlockPicture:
    """One decoder block of the tiny model as a picture, labelled with the microscope's shapes."""
    return BlockPicture(text, model)
