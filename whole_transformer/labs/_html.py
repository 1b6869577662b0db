"""Light HTML for the labs: heatmap tables with the numbers written in, CSS bar charts, shape labels.

Every function returns an HTML string styled by the classes of ``STYLESHEET`` (each lab carries
that stylesheet, see ``_widgets.LabBox``; only per-value sizes and fills are inline), so a lab can
put it in an ``ipywidgets.HTML`` and redraw it in well under a millisecond per cell; the same
string also survives an HTML export with saved widget state. Any lab may import these. Text
colours keep 4.5:1 contrast (``_colour.contrast``), headers have scopes, bar charts are lists, and ``sr``
adds words a screen reader reads where the page shows only a colour or a mark.

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

from ._colour import BLUE, RED, contrast, mix
from ._style import STYLESHEET

MASKED = -1e8  # values at or below this are shown as −∞ (a masked attention score)
#: the pattern of a cell a mask hid (``heatmap(masked=...)``): hatched, so it is told by more than its grey
HATCH = "repeating-linear-gradient(45deg, rgb(235,235,235) 0 4px, rgb(150,150,150) 4px 5px)"


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


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 number', '2 numbers': n and the word that goes with it (``many`` when adding s will not do)."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def cell_colour(x: float, scale: float, mode: str = "diverging") -> tuple[str, str]:
    """(background, text colour) for a value. ``diverging``: blue below 0, red above, white at 0,
    full colour at ±scale. ``sequential``: white at 0 to blue at scale (for weights in [0, 1]).
    The text is black or white, whichever stands out more (never below 4.5:1)."""
    x = float(x)
    if math.isnan(x) or x <= MASKED or math.isinf(x):
        return "rgb(235,235,235)", "rgb(80,80,80)"
    scale = scale if scale > 0 else 1.0
    if mode not in ("diverging", "sequential"):
        raise ValueError(f"unknown colour mode {mode!r}: use 'diverging' or 'sequential'")
    t = abs(x) / scale
    rgb = mix(BLUE if mode == "sequential" or x < 0 else RED, t)
    text = "white" if contrast(rgb, (255, 255, 255)) >= contrast(rgb, (0, 0, 0)) else "black"
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
    masked=None,
) -> str:
    """A table with one coloured cell per number, the value written in each cell.

    ``array`` is 0-, 1- or 2-D (a 1-D array is one row). ``row_labels`` / ``col_labels`` name the
    rows and columns (default: their indices); ``row_title`` / ``col_title`` name the axes (e.g.
    "L", "d_model") in the corner cell. The colour scale is ±``scale`` (default: the largest
    finite |value|). ``highlight=(row, col)`` outlines one row, one column (either may be None) or
    one cell. Masked values (≤ −1e8 or −inf) show as a grey "−∞". With ``max_cols`` a wide array
    is drawn as several tables of at most that many columns, one under the other, on one colour
    scale (each table has ``data-cols="first-last"``); cells come table by table, row by row.
    ``masked`` (booleans of the array's shape) marks the cells a mask hid: hatched grey, ``data-masked``,
    their value written (−∞, or 0 for a weight) and "masked" said to a screen reader.
    """
    a, rows, cols = _grid(array, row_labels, col_labels)
    hidden = np.zeros(a.shape, dtype=bool) if masked is None else np.asarray(masked, dtype=bool)
    if hidden.size != a.size:
        raise ValueError(f"masked has shape {hidden.shape}, but the array drawn has {a.shape}: give one flag a value")
    hidden = hidden.reshape(a.shape)
    n_cols = a.shape[1]
    finite = a[np.isfinite(a) & (a > MASKED)]
    if scale is None:
        scale = float(np.abs(finite).max()) if finite.size else 1.0
    hr, hc = highlight if highlight is not None else (None, None)
    corner = esc(f"{row_title} ╲ {col_title}" if (row_title or col_title) else "")
    classes = esc(css_class if css_class.split()[0] == "wt-heatmap" else f"wt-heatmap {css_class}")
    width = max_cols if max_cols else n_cols
    out = []
    for first in range(0, n_cols, width):
        out.append(
            _heatmap_table(
                a,
                rows,
                cols,
                range(first, min(first + width, n_cols)),
                classes,
                corner,
                (hr, hc, highlight is not None),
                scale,
                mode,
                digits,
                cell_width,
                hidden,
            )
        )
    return "".join(out)


def _grid(array, row_labels: Sequence | None, col_labels: Sequence | None) -> tuple[np.ndarray, list, list]:
    """A heatmap's array as 2-D floats, and its row and column labels (default: the indices), checked."""
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
            f"labels do not fit the array: {len(rows)} row labels and {len(cols)} column labels for shape {a.shape}"
        )
    return a, rows, cols


def _heatmap_table(a, rows, cols, chunk, classes, corner, marks, scale, mode, digits, cell_width, hidden) -> str:
    """One table of a heatmap: the columns of ``chunk``, every row (``hidden``: the cells a mask hid)."""
    hr, hc, marked = marks
    n_rows, n_cols = a.shape
    out = [
        f'<table class="{classes}" data-shape="{n_rows}x{n_cols}" data-cols="{chunk[0]}-{chunk[-1]}">'
        f'<tr><th class="wt-corner" scope="col">{corner}</th>'
    ]
    for j in chunk:
        mark = ' class="wt-col-on"' if hc == j and hr is None else ""
        out.append(f'<th scope="col"{mark}>{esc(cols[j])}</th>')
    out.append("</tr>")
    for i, r in enumerate(rows):
        out.append(f'<tr><th scope="row" class="wt-row{" wt-on" if hr == i else ""}">{esc(r)}</th>')
        for j in chunk:
            x = a[i, j]
            bg, fg = cell_colour(x, scale, mode)
            on = marked and (hr is None or hr == i) and (hc is None or hc == j)
            colours, text, extra = f"background: {bg}; color: {fg};", number(x, digits), ""
            if hidden[i, j]:  # a pattern and words, not only a grey: masked weights are 0, not white 0.00
                colours = f"background: rgb(235,235,235); background-image: {HATCH}; color: rgb(30,30,30);"
                text, extra = number(x, 0 if x == 0 else digits) + sr(" masked"), ' data-masked="true"'
            out.append(
                f'<td class="wt-cell{" wt-cell-on" if on else ""}" data-value="{x:.6g}" '
                f'style="{colours} min-width: {cell_width}px;"{extra}>{text}</td>'
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
    share_of: str = "",
    css_class: str = "wt-bars",
) -> str:
    """Horizontal CSS bars, one per (label, value), the value written after each bar.

    Bars are scaled to ``max_value`` (default: the largest value). ``highlight`` is the label of a
    bar to draw darker with a bold label. With ``show_share`` each value is followed by its share
    of the sum of all values, in percent, and ``share_of`` (e.g. " of one block") says of what.
    The bars are a list for a screen reader: each item reads "label value (share)".
    """
    values = [float(v) for _, v in items]
    if any(v < 0 or not math.isfinite(v) for v in values):
        raise ValueError("bar_chart draws finite values of 0 or more")
    top = max_value if max_value is not None else max(values, default=0.0)
    total = sum(values)
    classes = esc(css_class if css_class.split()[0] == "wt-bars" else f"wt-bars {css_class}")
    out = [f'<div class="{classes}" role="list">']
    for (label, _), v in zip(items, values, strict=True):
        on = label == highlight
        px = 0 if top <= 0 else round(width * v / top)
        share = f" ({100 * v / total:.1f} %{share_of})" if show_share and total > 0 else ""
        out.append(
            f'<div class="wt-bar{" wt-bar-on" if on else ""}" role="listitem" data-label="{esc(label)}" '
            f'data-value="{v:g}"><span class="wt-bar-label" style="width: {label_width}px;">{esc(label)}</span>'
            f'<span class="wt-bar-track" style="width: {width}px;" aria-hidden="true">'
            f'<span class="wt-bar-fill" style="width: {px}px; background: {colour};{"" if on else " opacity: 0.8;"}">'
            f"</span></span><span>{esc(fmt.format(v))}{esc(share)}</span></div>"
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
    return f'<span class="{esc(css_class)}" title="{text}">({parts})</span>'


def shape_text(shape: Sequence[int], axes: Sequence[str]) -> str:
    """The plain-text twin of ``shape_label``: "(L 3, d_model 6)"."""
    shape, axes = tuple(int(s) for s in shape), tuple(axes)
    if len(shape) != len(axes):
        raise ValueError(f"shape {shape} has {len(shape)} axes but {len(axes)} names were given: {axes}")
    return "(" + ", ".join(f"{a} {n}" for a, n in zip(axes, shape, strict=True)) + ")"


def table(
    header: Sequence[str],
    rows: Sequence[Sequence],
    *,
    bold_last: bool = False,
    highlight: int | None = None,
    align: Sequence[str] | None = None,
    css_class: str = "wt-table",
) -> str:
    """A plain table; ``bold_last`` sets the last row in bold (a total), ``highlight`` shades one row.

    ``align`` gives each column's alignment ("left" / "right"); default left, numbers right.
    """
    align = list(align) if align is not None else None
    classes = esc(css_class if css_class.split()[0] == "wt-table" else f"wt-table {css_class}")
    out = [f'<table class="{classes}">', "<tr>"]
    for k, h in enumerate(header):
        a = align[k] if align else "left"
        out.append(f'<th scope="col" style="text-align: {a};">{esc(h)}</th>')
    out.append("</tr>")
    for i, row in enumerate(rows):
        kind = " ".join(
            c for c, on in (("wt-total", bold_last and i == len(rows) - 1), ("wt-row-on", highlight == i)) if on
        )
        out.append(f'<tr class="{kind}">' if kind else "<tr>")
        for k, v in enumerate(row):
            a = align[k] if align else ("right" if isinstance(v, (int, float)) else "left")
            text = f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
            out.append(f'<td style="text-align: {a};">{esc(text)}</td>')
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def note(text_html: str, *, kind: str = "info", css_class: str = "wt-note") -> str:
    """A one-line boxed note; kind 'info', 'ok' (green) or 'error' (red). text_html is not escaped."""
    if kind not in ("info", "ok", "error"):
        raise ValueError(f"unknown note kind {kind!r}: use one of ['error', 'info', 'ok']")
    return f'<div class="{esc(css_class)} wt-note-{kind}">{text_html}</div>'


def sr(text: str) -> str:
    """Text for a screen reader only (visually hidden, read aloud): e.g. what a colour or a mark means."""
    return f'<span class="wt-sr">{esc(text)}</span>'


def styled(html_text: str) -> str:
    """An HTML output that is not inside a lab (a table shown by Jupyter) with the labs' stylesheet in front."""
    return f'<style>{STYLESHEET}</style><div class="wt-lab">{html_text}</div>'
