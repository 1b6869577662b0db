"""The machine lab's picture of the stack (notebook 01): a button a part, from the ids to the logits, the shape
that flows out of each part under it, and the decoder blocks in a dashed box. ``machine.py`` holds the lab."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets

from ._machine import MAX_BLOCKS, SELECTED, Shape, flow_html, part_names


class StackPicture:
    """The stack's widgets: ``buttons`` ({part: Button}; a click calls ``select(part)``), ``box`` (the picture)
    and ``block_box`` (the dashed box of the blocks); ``draw`` shows the parts of the current sizes."""

    def __init__(self, select: Callable[[str], None]):
        self.buttons: dict[str, widgets.Button] = {}
        for name in part_names(MAX_BLOCKS):
            b = widgets.Button(description=name, layout=widgets.Layout(width="230px", height="30px", margin="0"))
            b.add_class("wt-part")
            b.on_click(lambda _b, name=name: select(name))
            self.buttons[name] = b
        self._flows = [widgets.HTML() for _ in range(len(self.buttons) + 1)]
        self.block_box = widgets.VBox(
            layout=widgets.Layout(
                border="1px dashed #767676", padding="2px 6px 6px 6px", margin="2px 0", align_items="center"
            )
        )
        self._block_title = widgets.HTML()
        self.box = widgets.VBox(layout=widgets.Layout(align_items="center", width="360px"))

    def draw(self, chosen: str, shapes: dict[str, tuple[Shape, Shape]], N: int) -> None:
        """ids, then each part's button with the shape that flows out of it; the blocks in a dashed box."""
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
        self.block_box.children = inside
        self.box.children = [
            self._flows[0],
            self.buttons["token table"],
            self._flows[1],
            self.buttons["+ positions"],
            self._flows[2],
            self.block_box,
            self._flows[2 + N],
            self.buttons["final LayerNorm"],
            self._flows[3 + N],
            self.buttons["output layer"],
            self._flows[4 + N],
        ]
