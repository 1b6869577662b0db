"""The block picture (notebook 02): one decoder block of the tiny model, drawn with matplotlib.

x → LayerNorm 1 → attention → add, then → LayerNorm 2 → FFN → add. Along the bottom runs x itself
(the residual path); the two sublayers branch off it, work on a LayerNorm of it, and their output
is summed into it.
Every arrow carries the shape the microscope shows for the same prompt (L 3, d_model 6, d_ff 12,
1 head for `8 9 =`), every box its parameter count from ``model.parameter_table``, and under the
residual path are the numbers of the last row (the `=` row) as the block changes it.

``block_picture()`` returns a widget holding the drawing as a PNG (so it also shows in an HTML
export) with alt text that says what it shows (``.alt``), and under it a table of the numbers the
picture writes; ``.figure`` is the matplotlib Figure, ``.shapes`` the labels drawn, ``.rows`` the
last row at the three points of the residual path. Its smallest text is 10.5 pt (about 12 px when
the picture is drawn 1000 px wide).

CSS classes: root ``wt-lab wt-block``; ``wt-block-image`` the picture's widget (``img.wt-block-img``
inside); ``wt-block-caption`` the caption and ``wt-block-numbers`` its table.
"""

from __future__ import annotations

import base64
import io

import ipywidgets as widgets
import numpy as np

from ..model import parameter_table
from ..steps import find, trace
from ..task import decode, parse_prompt
from ..train import load_model
from . import _html
from ._widgets import LabBox
from .microscope import DEFAULT_PROMPT

BLUE, RED, GREY, INK = "#2166ac", "#b2182b", "#595959", "#222222"  # every text colour 4.5:1 or more on white


def _row(a: np.ndarray) -> str:
    return "[" + " ".join(f"{v:+.2f}".replace("-", "−") for v in a) + "]"


def _pen(ax, top, base):
    """The four drawing helpers of the picture, bound to its axes."""
    from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

    def box(x0, x1, title, sub, colour):
        ax.add_patch(
            FancyBboxPatch(
                (x0, top - 0.42),
                x1 - x0,
                0.84,
                boxstyle="round,pad=0.02,rounding_size=0.12",
                facecolor=colour + "18",
                edgecolor=colour,
                linewidth=1.6,
            )
        )
        ax.text((x0 + x1) / 2, top + 0.13, title, ha="center", va="center", fontsize=12.5, color=INK, fontweight="bold")
        ax.text((x0 + x1) / 2, top - 0.2, sub, ha="center", va="center", fontsize=10.5, color=GREY)

    def arrow(p, q, colour=INK, lw=1.4):
        ax.add_patch(
            FancyArrowPatch(p, q, arrowstyle="-|>", mutation_scale=12, color=colour, linewidth=lw, shrinkA=0, shrinkB=0)
        )

    def label(x, y, text, colour=GREY, size=10.5, ha="center"):
        ax.text(x, y, text, ha=ha, va="center", fontsize=size, color=colour, family="monospace")

    def add(xc):
        ax.add_patch(Circle((xc, base), 0.22, facecolor="white", edgecolor=INK, linewidth=1.4, zorder=3))
        ax.text(xc, base - 0.01, "+", ha="center", va="center", fontsize=14, zorder=4)

    return box, arrow, label, add


def _block_data(model, ids):
    """The counts, the shape labels and the last row at x, after the first add and after the second."""
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
    return counts, shapes, rows, d


def draw_block(model, ids):
    """The figure, the shape labels and the `=` row at x, after the first add and after the second."""
    from matplotlib.figure import Figure

    cfg = model.cfg
    counts, shapes, rows, d = _block_data(model, ids)

    fig = Figure(figsize=(11.5, 4.1), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.3, 14.6)
    ax.set_ylim(-1.75, 3.05)
    ax.axis("off")
    base, top = 0.0, 1.75  # the residual path, and the row of sublayers

    pen = _pen(ax, top, base)
    _draw_path(ax, pen, shapes, base)
    _draw_sublayers(ax, pen, cfg, counts, shapes, d, top, base)
    _draw_words(ax, pen, ids, counts, shapes, rows)
    return fig, shapes, rows


def _draw_path(ax, pen, shapes: dict, base: float) -> None:
    """The residual path, drawn first so everything else sits on it, with its two adds."""
    _box, arrow, label, add = pen
    arrow((0.0, base), (6.08, base), BLUE, 2.4)
    arrow((6.52, base), (12.53, base), BLUE, 2.4)
    arrow((12.97, base), (14.45, base), BLUE, 2.4)
    ax.text(0.0, base + 0.22, "x", fontsize=13, color=BLUE, fontweight="bold", ha="left")
    label(1.05, base + 0.25, shapes["x"], BLUE, 10.5, ha="left")
    ax.text(14.45, base + 0.22, "out", fontsize=12, color=BLUE, fontweight="bold", ha="right")
    label(3.3, base - 0.3, "residual path: x is carried along and only added to", BLUE, 10.5)
    add(6.3)
    add(12.75)


def _draw_sublayers(ax, pen, cfg, counts: dict, shapes: dict, d: int, top: float, base: float) -> None:
    """Sublayer 1 (LayerNorm 1 → attention) and sublayer 2 (LayerNorm 2 → FFN), each back into the path."""
    box, arrow, label, _add = pen
    # sublayer 1: LayerNorm 1 → attention → back into the path
    arrow((0.9, base), (0.9, top - 0.42))
    box(0.45, 2.45, "LayerNorm 1", f"{counts['one LayerNorm']} parameters", GREY)
    arrow((2.45, top), (3.35, top))
    heads = f"{cfg.n_heads} head{'s' if cfg.n_heads > 1 else ''}"
    box(3.35, 5.75, f"attention, {heads}", f"{counts['one attention']} parameters", RED)
    label(4.55, top + 0.62, "weights " + shapes["weights"], RED, 10.5)
    ax.plot([5.75, 6.3], [top, top], color=INK, linewidth=1.4)
    arrow((6.3, top), (6.3, base + 0.22))

    # sublayer 2: LayerNorm 2 → FFN → back into the path
    arrow((7.75, base), (7.75, top - 0.42))
    box(7.35, 9.3, "LayerNorm 2", f"{counts['one LayerNorm']} parameters", GREY)
    arrow((9.3, top), (10.2, top))
    box(10.2, 12.4, f"FFN {d} → {cfg.d_ff} → {d}", f"{counts['one FFN']} parameters", BLUE)
    label(11.3, top + 0.62, "hidden " + shapes["hidden"], BLUE, 10.5)
    ax.plot([12.4, 12.75], [top, top], color=INK, linewidth=1.4)
    arrow((12.75, top), (12.75, base + 0.22))


def _draw_words(ax, pen, ids, counts: dict, shapes: dict, rows: dict) -> None:
    """The numbers of the last row where the path changes, the title and the note under the picture."""
    _box, _arrow, label, _add = pen
    # the numbers of the last row ('=') where the path changes
    last = decode(ids)[-1]
    label(2.4, -0.78, f"row '{last}' of x", BLUE, 10.5)
    label(2.4, -1.08, _row(rows["x"]), INK, 10.5)
    label(7.6, -0.78, "after the first add (x + attention)", BLUE, 10.5)
    label(7.6, -1.08, _row(rows["residual 1"]), INK, 10.5)
    label(12.2, -0.78, "after the second add (x + FFN)", BLUE, 10.5)
    label(12.2, -1.08, _row(rows["residual 2"]), INK, 10.5)
    ax.text(
        7.2,
        2.85,
        f"One block of the tiny model reading '{' '.join(decode(ids))}'  ·  {counts['one block']} parameters in all",
        ha="center",
        va="center",
        fontsize=13,
        color=INK,
    )
    ax.text(
        7.2,
        -1.5,
        f"Each arrow without a label carries {shapes['x']}. Both branches start from LN(x) and end in a +: "
        "x itself is never replaced.",
        ha="center",
        va="center",
        fontsize=11,
        color=GREY,
    )


def alt_text(prompt: str, shapes: dict, counts: dict, n_heads: int, d_ff: int) -> str:
    """What the picture shows, in words, for a screen reader (the <img>'s alt)."""
    d = shapes["x"]
    return (
        f"Diagram of one decoder block of the tiny model reading '{prompt}', {counts['one block']} parameters. "
        f"x {d} runs left to right along the residual path. Above it, LayerNorm 1 "
        f"({counts['one LayerNorm']} parameters) feeds attention with {n_heads} head"
        f"{'s' if n_heads > 1 else ''} ({counts['one attention']} parameters, weights {shapes['weights']}), "
        f"whose result is added to x; then LayerNorm 2 feeds the FFN "
        f"({counts['one FFN']} parameters, hidden {shapes['hidden']}, d_ff {d_ff}), whose result is added "
        f"again. The output has the input's shape, {d}. The table under the picture lists the last row's "
        "numbers at the three points of the path."
    )


class BlockPicture(LabBox):
    """One block drawn once, as a PNG inside a widget, with alt text and a table of its numbers."""

    def __init__(self, text: str = DEFAULT_PROMPT, model=None):
        if model is None:
            model = load_model("microscope")
        ids = parse_prompt(text)
        self.figure, self.shapes, self.rows = draw_block(model, ids)
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=100)
        self.png = buf.getvalue()
        prompt = " ".join(decode(ids))
        counts = {name: n for name, n, _ in parameter_table(model.cfg)}
        self.alt = alt_text(prompt, self.shapes, counts, model.cfg.n_heads, model.cfg.d_ff)
        src = "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")
        # an <img> in an HTML widget rather than widgets.Image, which cannot carry alt text
        self.image = widgets.HTML(
            f'<img class="wt-block-img" src="{src}" alt="{_html.esc(self.alt)}" '
            'style="width: 100%; max-width: 1150px; height: auto; display: block;">',
            layout=widgets.Layout(width="100%", max_width="1150px", margin="0"),
        )
        # (no margin: ipywidgets' default 2 px on each side would make 100 % wider than the page)
        self.image.add_class("wt-block-image")
        last = decode(ids)[-1]
        self.caption = widgets.HTML(
            f'<div class="wt-text" style="font-size: 13px;">Shapes for {_html.esc(prompt)}: '
            f"x {_html.esc(self.shapes['x'])}, attention weights {_html.esc(self.shapes['weights'])}, "
            f"FFN hidden {_html.esc(self.shapes['hidden'])}: the same as in the microscope.</div>"
            + _html.table(
                ["row '" + last + "' of x", *(f"d_model {j}" for j in range(len(self.rows["x"])))],
                [
                    [where, *(f"{v:+.2f}".replace("-", "−") for v in self.rows[key])]
                    for where, key in (
                        ("at the block's input", "x"),
                        ("after the first add", "residual 1"),
                        ("after the second add", "residual 2"),
                    )
                ],
                align=["left", *["right"] * len(self.rows["x"])],
                css_class="wt-table wt-block-numbers",
            )
        )
        self.caption.add_class("wt-block-caption")
        super().__init__([self.image, self.caption], "block")
        self.say(f"A picture of one block of the tiny model reading '{prompt}'; its description and numbers follow.")

    def save(self, path) -> None:
        """Write the picture as a PNG file."""
        with open(path, "wb") as f:
            f.write(self.png)


def block_picture(text: str = DEFAULT_PROMPT, model=None) -> BlockPicture:
    """One decoder block of the tiny model as a picture, labelled with the microscope's shapes."""
    return BlockPicture(text, model)
