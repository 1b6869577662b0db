"""The attention maps lab (notebook 03): where every head of every block looks, for a number you type.

``attention_maps_lab()`` lets the chosen model (after 60 or 2 epochs, or a run kept in notebook 04) read the
typed number aloud, then shows the attention weights of its last step: every query row against every key column,
for each of the 2 blocks × 4 heads, all small at once, and one of them large. In the large map each cell is a
button: click it, or Tab to it and press Enter or Space, and the line under the lab says which query token looks
at which key token, and with what weight. Cells above the diagonal are masked (a query may not look at a later
token): they are hatched and say "masked", so no colour alone tells them. Under the map, its table twin gives every
weight as a number; the map shown large is chosen in "map".

Attributes tests and notebooks use: ``number`` (Text), ``checkpoint`` (Dropdown: the keys of ``_decode.CHECKPOINTS``),
``map_choice`` (Dropdown of (block, head), both from 1), ``overview``, ``table``, ``yours`` (HTML), ``cells``
(the large map's buttons, row by row), ``maps`` (the ``_maps.Maps`` of the reading, None after bad input),
``selected`` ((query, key) or None), ``message``. Methods: ``select(query, key)``, ``show(block, head)``.

CSS classes: root ``wt-lab wt-maps``; ``wt-maps-number``, ``wt-maps-checkpoint``, ``wt-maps-choice`` (controls);
``wt-maps-overview`` the small maps (each a ``wt-maps-small`` table with ``data-block``/``data-head``; the one
shown large also ``wt-maps-chosen``); ``wt-maps-large`` the grid of ``wt-maps-cell`` buttons (``wt-maps-masked``
for a masked cell, ``wt-maps-on`` for the selected one); ``wt-maps-table`` the table twin.
"""

from __future__ import annotations

import ipywidgets as widgets

from . import _maps, _yours
from ._decode import check_args, chooser_layout, model_for, model_options, model_phrase, parse_number
from ._html import cell_colour, esc
from ._widgets import LIVE, LabBox


class AttentionMapsLab(LabBox):
    """Every head of every block as an L × L map, one of them large with cells to select, and its table twin."""

    def __init__(self, number: int | str = 427, checkpoint: str = "60", block: int = 2, head: int = 1):
        checkpoint, block, n_layers, n_heads = check_args(checkpoint, block, head)
        self.maps: _maps.Maps | None = None
        self.selected: tuple[int, int] | None = None
        self._message, self._n = "", 0
        self.number = widgets.Text(
            value=str(number), description="number", continuous_update=False, layout=widgets.Layout(width="170px")
        )
        models = model_options()
        self.checkpoint = widgets.Dropdown(
            options=models, value=checkpoint, description="model", **chooser_layout(models)
        )
        self.map_choice = widgets.Dropdown(
            options=[(f"block {b}, head {h}", (b, h)) for b in range(1, n_layers + 1) for h in range(1, n_heads + 1)],
            value=(block, head),
            description="map",
        )
        self.overview, self.table = widgets.HTML(), widgets.HTML()
        self.yours = widgets.HTML(f'<div class="wt-yours-note wt-small">{esc(_yours.note())}</div>')
        self.large = widgets.GridBox()
        self.cells: list[widgets.Button] = []
        for w, cls in [
            (self.number, "wt-maps-number"),
            (self.checkpoint, "wt-maps-checkpoint"),
            (self.map_choice, "wt-maps-choice"),
            (self.overview, "wt-maps-overview"),
            (self.large, "wt-maps-large"),
            (self.table, "wt-maps-table"),
        ]:
            w.add_class(cls)
        controls = widgets.HBox([self.number, self.checkpoint, self.map_choice], layout={"flex_flow": "row wrap"})
        style = widgets.HTML(f"<style>{_maps.STYLE}</style>", layout=widgets.Layout(display="none"))
        super().__init__([style, controls, self.yours, self.overview, self.large, LIVE, self.table], "maps")
        self.number.observe(lambda _: self._recompute(), names="value")
        self.checkpoint.observe(lambda _: self._recompute(), names="value")
        self.map_choice.observe(lambda _: self._draw(), names="value")
        self._recompute()

    @property
    def message(self) -> str:
        return self._message

    def _say(self, text: str) -> None:
        self._message = text
        self.say(text)

    def show(self, block: int, head: int) -> None:
        """Show block ``block``'s head ``head`` large (both from 1)."""
        if (block, head) not in [v for _, v in self.map_choice.options]:
            raise ValueError(f"no map for block {block!r}, head {head!r}: choose one of the options of 'map'")
        self.map_choice.value = (block, head)

    def select(self, query: int, key: int) -> str:
        """Select one cell of the large map (row ``query``, column ``key``, from 0); returns what it says."""
        if self.maps is None:
            raise ValueError("type a number first: the lab has no reading to select from")
        length = len(self.maps.tokens)
        if query not in range(length) or key not in range(length):
            raise ValueError(f"query and key must be 0 to {length - 1}, got {query!r} and {key!r}")
        self.selected = (query, key)
        for i, b in enumerate(self.cells):
            (b.add_class if i == query * length + key else b.remove_class)("wt-maps-on")
        block, head = self.map_choice.value
        self._say(_maps.cell_text(self.maps, block, head, query, key))
        return self._message

    def _recompute(self) -> None:
        try:
            n = parse_number(self.number.value)
        except ValueError as e:
            self.maps, self.selected = None, None
            self.overview.value = self.table.value = ""
            self.large.children, self.cells = (), []
            self._say(f"Cannot read that: {e}.")
            return
        self.maps, self._n = _maps.read(model_for(self.checkpoint.value), n), n
        self.selected = None
        self._draw()

    def _draw(self) -> None:
        m = self.maps
        if m is None:
            return
        block, head = self.map_choice.value
        self.overview.value = _maps.overview_html(m, (block, head))
        self.table.value = _maps.table_html(m, block, head)
        self._draw_large(m, block, head)
        if self.selected is not None:
            self.select(*self.selected)
        else:
            self._say(
                f"{model_phrase(self.checkpoint.value, start=True)} read {self._n}; at its last step {len(m.tokens)} "
                f"tokens went in. Block {block}, head {head} is shown large: select a cell (click it, or Tab to it "
                f"and press Enter) to hear what it means."
            )

    def _draw_large(self, m: _maps.Maps, block: int, head: int) -> None:
        """The large map: a header row of keys, then per query its token and one button per key."""
        length = len(m.tokens)
        heads = [widgets.HTML('<div class="wt-maps-head">query ╲ key</div>')]
        heads += [widgets.HTML(f'<div class="wt-maps-head">{k} {esc(t)}</div>') for k, t in enumerate(m.tokens)]
        rows, self.cells = [], []
        w = m.weights[block - 1, head - 1]
        for q, tok in enumerate(m.tokens):
            rows.append(widgets.HTML(f'<div class="wt-maps-head">{q} {esc(tok)}</div>'))
            for k in range(length):
                self.cells.append(self._cell(m, w, q, k))
            rows.extend(self.cells[-length:])
        self.large.children = heads + rows
        self.large.layout.grid_template_columns = f"84px repeat({length}, 66px)"  # the queries' names, the keys

    def _cell(self, m: _maps.Maps, w, q: int, k: int) -> widgets.Button:
        masked = bool(m.masked[q, k])
        bg, fg = ("white", "#1e1e1e") if masked else cell_colour(w[q, k], 1.0, "sequential")
        b = widgets.Button(
            description="masked" if masked else f"{w[q, k]:.2f}",
            tooltip=f"query {q} '{m.tokens[q]}', key {k} '{m.tokens[k]}'",
            layout=widgets.Layout(width="62px", height="28px"),
        )
        b.style.button_color, b.style.text_color = bg, fg
        b.add_class("wt-maps-cell")
        if masked:
            b.add_class("wt-maps-masked")
        b.on_click(lambda _, q=q, k=k: self.select(q, k))
        return b


def attention_maps_lab(number: int | str = 427, checkpoint: str = "60", block: int = 2, head: int = 1):
    """The attention maps lab: type a number, choose the model; every head of every block, one of them large."""
    return AttentionMapsLab(number, checkpoint, block, head)
