"""Light HTML for the labs: heatmap tables with the numbers written in, CSS bar charts, shape labels.

Every function returns an HTML string (inline styles, no JavaScript, no external CSS), so a lab
can put it in an ``ipywidgets.HTML`` and redraw it in well under a millisecond per cell; the same
string also survives an HTML export with saved widget state. Any lab may import these.

    >>> from whole_transformer.labs import _html
    >>> _html.shape_text((3, 6), ("L", "d_model"))  # shape_label: the same, as HTML with CSS classes
    '(L 3, d_model 6)'
    >>> grid = _html.heatmap(np.eye(2), row_labels=["a", "b"])  # each cell coloured, its value written in
    >>> grid.count('class="wt-cell"'), ">1.00</td>" in grid
    (4, True)
    >>> bars = _html.bar_chart([("token table", 2688), ("output layer", 2730)], fmt="{:,}")
    >>> bars.count("data-label="), "2,688" in bars
    (2, True)

CSS classes (for browser tests and for styling):
    ``wt-heatmap``      the <table> of a heatmap (``data-shape="3x6"`` gives its shape)
    ``wt-cell``         each numeric cell (``data-value`` holds the unrounded value)
    ``wt-bars``         the <div> of a bar chart; ``wt-bar`` each row, ``wt-bar-on`` the highlighted one
    ``wt-shape``        a shape label; ``wt-axis`` each named axis inside it
    ``wt-table``        a plain table made by ``table``
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np

FONT = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; line-height: 1.3;"
# ipywidgets' HTML sets a tall line height (28 px) for one-line labels; every block here sets its own.
TEXT = "line-height: 1.4;"
BLUE = (33, 102, 172)  # negative, and the sequential scale
RED = (178, 24, 43)  # positive on the diverging scale
GREY = (150, 150, 150)
MASKED = -1e8  # values at or below this are shown as −∞ (a masked attention score)


def esc(text) -> str:
    """HTML-escape anything (turned into a string first)."""
    return html.escape(str(text), quote=True)


def number(x: float, digits: int = 2) -> str:
    """A short, readable number for a cell: −∞ for masked scores, a true minus sign, no '-0.00'."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if x <= MASKED or x == -math.inf:
        return "−∞"
    if x == math.inf:
        return "∞"
    text = f"{x:.{digits}f}"
    if float(text) == 0:
        text = f"{0:.{digits}f}"
    return text.replace("-", "−")


def _mix(colour: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    """White mixed with colour by t in [0, 1]."""
    t = min(max(t, 0.0), 1.0)
    return tuple(round(255 + (c - 255) * t) for c in colour)


def cell_colour(x: float, scale: float, mode: str = "diverging") -> tuple[str, str]:
    """(background, text colour) for a value. ``diverging``: blue below 0, red above, white at 0,
    full colour at ±scale. ``sequential``: white at 0 to blue at scale (for weights in [0, 1])."""
    x = float(x)
    if math.isnan(x) or x <= MASKED or math.isinf(x):
        return "rgb(235,235,235)", "rgb(120,120,120)"
    scale = scale if scale > 0 else 1.0
    if mode == "sequential":
        t = abs(x) / scale
        rgb = _mix(BLUE, t)
    elif mode == "diverging":
        t = abs(x) / scale
        rgb = _mix(RED if x > 0 else BLUE, t)
    else:
        raise ValueError(f"unknown colour mode {mode!r}: use 'diverging' or 'sequential'")
    text = "white" if t > 0.55 else "rgb(30,30,30)"
    return f"rgb{rgb}", text


def heatmap(
    array,
    row_labels: Sequence | None = None,
    col_labels: Sequence | None = None,
    *,
    row_title: str = "",
    col_title: str = "",
    digits: int = 2,
    mode: str = "diverging",
    scale: float | None = None,
    highlight: tuple[int | None, int | None] | None = None,
    css_class: str = "wt-heatmap",
    cell_width: int = 44,
    max_cols: int | None = None,
) -> str:
    """A table with one coloured cell per number, the value written in each cell.

    ``array`` is 0-, 1- or 2-D (a 1-D array is one row). ``row_labels`` / ``col_labels`` name the
    rows and columns (default: their indices); ``row_title`` / ``col_title`` name the axes (e.g.
    "L", "d_model") in the corner cell. The colour scale is ±``scale`` (default: the largest
    finite |value|). ``highlight=(row, col)`` outlines one row, one column (either may be None) or
    one cell. Masked values (≤ −1e8 or −inf) show as a grey "−∞". With ``max_cols`` a wide array
    is drawn as several tables of at most that many columns, one under the other, on one colour
    scale (each table has ``data-cols="first-last"``); cells come table by table, row by row.
    """
    a = np.asarray(array, dtype=float)
    if a.ndim == 0:
        a = a.reshape(1, 1)
    elif a.ndim == 1:
        a = a[None, :]
    elif a.ndim != 2:
        raise ValueError(f"heatmap draws 0-, 1- or 2-D arrays, got shape {a.shape}; draw one 2-D slice at a time")
    n_rows, n_cols = a.shape
    rows = list(row_labels) if row_labels is not None else list(range(n_rows))
    cols = list(col_labels) if col_labels is not None else list(range(n_cols))
    if len(rows) != n_rows or len(cols) != n_cols:
        raise ValueError(
            f"labels do not fit the array: {len(rows)} row labels and {len(cols)} column labels "
            f"for shape {a.shape}"
        )
    finite = a[np.isfinite(a) & (a > MASKED)]
    if scale is None:
        scale = float(np.abs(finite).max()) if finite.size else 1.0
    hr, hc = highlight if highlight is not None else (None, None)
    th = "padding: 1px 4px; color: #555; font-weight: normal; text-align: center; white-space: nowrap;"
    corner = esc(f"{row_title} ╲ {col_title}" if (row_title or col_title) else "")
    width = max_cols if max_cols else n_cols
    out = []
    for first in range(0, n_cols, width):
        chunk = range(first, min(first + width, n_cols))
        out.append(
            f'<table class="{esc(css_class)}" data-shape="{n_rows}x{n_cols}" data-cols="{chunk[0]}-{chunk[-1]}" '
            f'style="border-collapse: collapse; {FONT} margin: 2px 0;">'
            f'<tr><th style="{th} font-style: italic;">{corner}</th>'
        )
        for j in chunk:
            mark = " border-bottom: 2px solid #222;" if hc == j and hr is None else ""
            out.append(f'<th style="{th}{mark}">{esc(cols[j])}</th>')
        out.append("</tr>")
        for i, r in enumerate(rows):
            mark = " font-weight: bold; color: #000;" if hr == i else ""
            out.append(f'<tr><th style="{th} text-align: right;{mark}">{esc(r)}</th>')
            for j in chunk:
                x = a[i, j]
                bg, fg = cell_colour(x, scale, mode)
                on = (hr is None or hr == i) and (hc is None or hc == j) and highlight is not None
                border = "2px solid #222" if on else "1px solid white"
                out.append(
                    f'<td class="wt-cell" data-value="{x:.6g}" style="background: {bg}; color: {fg}; '
                    f'border: {border}; min-width: {cell_width}px; padding: 2px 3px; text-align: right;">'
                    f"{number(x, digits)}</td>"
                )
            out.append("</tr>")
        out.append("</table>")
    return "".join(out)


def bar_chart(
    items: Sequence[tuple[str, float]],
    *,
    fmt: str = "{:,.0f}",
    max_value: float | None = None,
    highlight: str | None = None,
    width: int = 220,
    label_width: int = 120,
    colour: str = "rgb(33,102,172)",
    show_share: bool = False,
    css_class: str = "wt-bars",
) -> str:
    """Horizontal CSS bars, one per (label, value), the value written after each bar.

    Bars are scaled to ``max_value`` (default: the largest value). ``highlight`` is the label of a
    bar to draw darker with a bold label. With ``show_share`` each value is followed by its share
    of the sum of all values, in percent.
    """
    values = [float(v) for _, v in items]
    if any(v < 0 or not math.isfinite(v) for v in values):
        raise ValueError("bar_chart draws finite values of 0 or more")
    top = max_value if max_value is not None else max(values, default=0.0)
    total = sum(values)
    out = [f'<div class="{esc(css_class)}" style="{FONT} margin: 2px 0;">']
    for (label, _), v in zip(items, values, strict=True):
        on = label == highlight
        px = 0 if top <= 0 else round(width * v / top)
        share = f" ({100 * v / total:.1f} %)" if show_share and total > 0 else ""
        out.append(
            f'<div class="wt-bar{" wt-bar-on" if on else ""}" data-label="{esc(label)}" data-value="{v:g}" '
            f'style="display: flex; align-items: center; gap: 6px; margin: 1px 0; line-height: 16px;">'
            f'<span style="width: {label_width}px; text-align: right;{" font-weight: bold;" if on else ""}">'
            f"{esc(label)}</span>"
            f'<span style="display: inline-block; width: {width}px; background: #f1f1f1;">'
            f'<span style="display: block; width: {px}px; height: 14px; background: {colour};'
            f'{" opacity: 1;" if on else " opacity: 0.75;"}"></span></span>'
            f"<span>{esc(fmt.format(v))}{share}</span></div>"
        )
    out.append("</div>")
    return "".join(out)


def shape_label(shape: Sequence[int], axes: Sequence[str], *, css_class: str = "wt-shape") -> str:
    """A shape with named axes, e.g. (3, 6) with ("L", "d_model") → "(L 3, d_model 6)"."""
    shape, axes = tuple(int(s) for s in shape), tuple(axes)
    text = esc(shape_text(shape, axes))  # also checks that every axis has a name
    parts = ", ".join(
        f'<span class="wt-axis" data-axis="{esc(a)}"><i>{esc(a)}</i>&nbsp;<b>{n}</b></span>'
        for n, a in zip(shape, axes, strict=True)
    )
    return f'<span class="{esc(css_class)}" title="{text}" style="{FONT} font-size: 13px;">({parts})</span>'


def shape_text(shape: Sequence[int], axes: Sequence[str]) -> str:
    """The plain-text twin of ``shape_label``: "(L 3, d_model 6)"."""
    shape, axes = tuple(int(s) for s in shape), tuple(axes)
    if len(shape) != len(axes):
        raise ValueError(f"shape {shape} has {len(shape)} axes but {len(axes)} names were given: {axes}")
    return "(" + ", ".join(f"{a} {n}" for a, n in zip(axes, shape, strict=True)) + ")"


def table(header: Sequence[str], rows: Sequence[Sequence], *, bold_last: bool = False, highlight: int | None = None,
          align: Sequence[str] | None = None, css_class: str = "wt-table") -> str:
    """A plain table; ``bold_last`` sets the last row in bold (a total), ``highlight`` shades one row.

    ``align`` gives each column's alignment ("left" / "right"); default left, numbers right.
    """
    align = list(align) if align is not None else None
    td = "padding: 2px 8px; border-bottom: 1px solid #e4e4e4;"
    out = [f'<table class="{esc(css_class)}" style="border-collapse: collapse; {FONT}">', "<tr>"]
    for k, h in enumerate(header):
        a = align[k] if align else "left"
        out.append(f'<th style="{td} text-align: {a}; border-bottom: 1px solid #888;">{esc(h)}</th>')
    out.append("</tr>")
    for i, row in enumerate(rows):
        style = ""
        if bold_last and i == len(rows) - 1:
            style += " font-weight: bold;"
        if highlight == i:
            style += " background: #fff3c4;"
        out.append(f'<tr style="{style}">')
        for k, v in enumerate(row):
            a = align[k] if align else ("right" if isinstance(v, (int, float)) else "left")
            text = f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
            out.append(f'<td style="{td} text-align: {a};">{esc(text)}</td>')
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def note(text_html: str, *, kind: str = "info", css_class: str = "wt-note") -> str:
    """A one-line boxed note; kind 'info', 'ok' (green) or 'error' (red). text_html is not escaped."""
    colours = {"info": ("#eef4fb", "#2166ac"), "ok": ("#edf7ed", "#2e7d32"), "error": ("#fdecea", "#b2182b")}
    if kind not in colours:
        raise ValueError(f"unknown note kind {kind!r}: use one of {sorted(colours)}")
    bg, line = colours[kind]
    return (
        f'<div class="{esc(css_class)} wt-note-{kind}" style="background: {bg}; border-left: 4px solid {line}; '
        f'padding: 4px 8px; margin: 4px 0; font-size: 13px; {TEXT}">{text_html}</div>'
    )
