"""The machine lab's drawing pieces (notebook 01): sizes it offers, what each part does, the HTML of its
parameter table, bar charts, shape arrows and the selected part's card, and the words of its live line.
``machine.py`` holds the widget, ``_stack.py`` its picture of the stack; every count comes from
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


def card_html(chosen: str, kind: str, counts: dict, formulas: dict, shape: tuple[Shape, Shape], sizes: dict) -> str:
    """The selected part's card: what it does, its shapes, its count and formula. sizes: B, L, d_model, heads,
    d_ff as the sliders have them."""
    about, row = _ABOUT[kind]
    (in_shape, in_axes), (out_shape, out_axes) = shape
    B, L, d, h = sizes["B"], sizes["L"], sizes["d_model"], sizes["heads"]
    title = chosen if kind == chosen or kind == "block" else f"{chosen} · {kind}"
    middle = ""
    if kind == "FFN":
        middle = f"hidden {_html.shape_label((B, L, sizes['d_ff']), ('B', 'L', 'd_ff'))}<br>"
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


def selected_text(chosen: str, kind: str, counts: dict) -> str:
    """The live line's words on the selected part: its name and parameter count."""
    _, row = _ABOUT[kind]
    name = chosen if kind in (chosen, "block") else f"{chosen}, {kind}"
    return f"{name}, {counts[row]:,} parameters"


def change_text(name: str, old, new, before: int, total: int, sizes: dict) -> str:
    """The live line's words on a slider's change: the total before and after, and why when it did not move."""
    what = f"{name} {old} → {new}: total {before:,} → {total:,}"
    if total == before:
        why = {
            "heads": "unchanged: the heads only cut the same d_model columns into "
            f"{_html.plural(sizes['heads'], 'slice')} of {sizes['d_model'] // sizes['heads']}.",
            "batch B": "unchanged: B changes the shapes, never the weights.",
            "length L": "unchanged: L changes the shapes, never the weights.",
        }.get(name, "unchanged.")
        return f"{what} ({why})"
    sign = "+" if total > before else "−"
    return f"{what} ({sign}{abs(total - before):,})."
