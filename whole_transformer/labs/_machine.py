"""The machine lab's drawing pieces (notebook 01): sizes it offers, what each part does, and the HTML of its
parameter table, bar charts and shape arrows. ``machine.py`` holds the widget; every count comes from
``config.parameter_table``."""

from __future__ import annotations

from . import _html

D_MODELS = (8, 16, 24, 32, 48, 64, 96, 128)
D_FFS = (16, 32, 64, 128, 256, 512)
MAX_HEADS = 16
MAX_BLOCKS = 8
MAX_LENGTH = 8  # the longest input x of the task
INSIDE = ("whole block", "attention", "FFN")
SELECTED = ("#1d4f7c", "white")  # the selected part's button: 8.6:1, and its label starts with ▶
Shape = tuple[tuple[int, ...], tuple[str, ...]]  # (sizes, axis names)
DEFAULTS = dict(d_model=64, n_heads=4, n_layers=2, d_ff=128, B=64, L=8)

# What each part does, in one sentence, and which row of parameter_table counts it.
_ABOUT = {
    "token table": ("Looks up one row of d_model numbers for each token id (then × √d_model).", "token table"),
    "+ positions": (
        "Adds the fixed sinusoid row of each position, so the blocks can tell 4 2 7 from 7 2 4.",
        "positions",
    ),
    "block": (
        "Mixes information across positions (attention), then works on each position alone (FFN); "
        "each adds its result to x.",
        "one block",
    ),
    "attention": (
        "Each row looks at the rows up to its own place and takes in a weighted mix of them "
        "(W_Q, W_K, W_V cut into the heads' columns, then W_O).",
        "one attention",
    ),
    "FFN": ("Widens each row to d_ff numbers, ReLU, and back to d_model: every position on its own.", "one FFN"),
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
    return [
        "token table",
        "+ positions",
        *[f"block {i}" for i in range(1, n_blocks + 1)],
        "final LayerNorm",
        "output layer",
    ]


def check_sizes(d_model, n_heads, n_layers, d_ff, B, L, part) -> None:
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


def flow_html(label: str, shape, axes, first: bool = False) -> str:
    arrow = "" if first else '<div class="wt-muted" style="line-height: 10px;" aria-hidden="true">↓</div>'
    name = f"<b>{_html.esc(label)}</b> " if label else ""
    return (
        f'<div class="wt-small" style="text-align: center; line-height: 16px;">{arrow}{name}'
        f"{_html.shape_label(shape, axes)}</div>"
    )


def table_html(rows, kind: str) -> str:
    """The parameter table, the selected part's row shaded."""
    highlight = {
        "token table": 0,
        "+ positions": 1,
        "attention": 2,
        "FFN": 3,
        "block": 5,
        "final LayerNorm": 7,
        "output layer": 8,
    }[kind]
    total = rows[-1][1]
    return (
        '<div class="wt-h">Parameters by part</div>'
        + _html.table(
            ["part", "parameters", "formula"],
            [[n, c, f] for n, c, f in rows],
            bold_last=True,
            highlight=highlight,
            align=["left", "right", "left"],
        )
        + f'<div class="wt-machine-total" data-total="{total}" style="font-size: 15px; margin-top: 4px;">'
        f"total <b>{total:,}</b> parameters</div>"
    )


def bars_html(counts: dict, kind: str, N: int) -> str:
    """Where the parameters are: the four rows that add up to the total, then the pieces of one block."""
    total, block = counts["total"], counts["one block"]
    top = [
        ("token table", counts["token table"]),
        (f"{N} blocks", counts[f"{N} blocks"]),
        ("final LayerNorm", counts["final LayerNorm"]),
        ("output layer", counts["output layer"]),
    ]
    pieces = [
        ("LayerNorm 1", counts["one LayerNorm"]),
        ("attention", counts["one attention"]),
        ("LayerNorm 2", counts["one LayerNorm"]),
        ("FFN", counts["one FFN"]),
    ]
    on = {
        "token table": "token table",
        "+ positions": None,
        "block": f"{N} blocks",
        "attention": "attention",
        "FFN": "FFN",
        "final LayerNorm": "final LayerNorm",
        "output layer": "output layer",
    }[kind]
    return (
        '<div class="wt-h">Where the parameters are (bar: share of the total)</div>'
        + _html.bar_chart(
            top,
            max_value=total,
            highlight=on,
            show_share=True,
            share_of=" of the total",
            css_class="wt-bars wt-bars-model",
        )
        + f'<div class="wt-h" style="margin-top: 8px;">Inside one block ({block:,}; bar: share of the '
        "block)</div>"
        + _html.bar_chart(
            pieces,
            max_value=block,
            highlight=on,
            show_share=True,
            share_of=" of the block",
            colour="rgb(178,24,43)",
            css_class="wt-bars wt-bars-block",
        )
        + '<div class="wt-small wt-muted" style="max-width: 460px;">Each chart is drawn to its own whole: '
        "the first to the total, the second to one block. The positions add no parameters: they are "
        "fixed sinusoids.</div>"
    )
