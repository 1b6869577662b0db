"""The held-out table (notebook 03): numbers read aloud by several models, each answer marked in words.

``held_out_table(numbers, {label: model})`` reads numbers with several models and shows what each
says, as words, with "✓ right" / "✗ wrong" and a count. Without ``models`` it reads them with every
model the labs' chooser offers (``_decode.CHECKPOINTS``): after 60 and after 2 epochs, and every run kept
in notebook 04; a line under the table names the kept runs with their settings, or says how to keep one.
Notebook 03 shows the 100 held-out numbers. The table scrolls inside a region that the keyboard can reach (Tab,
then the arrow keys) and that a screen reader names. CSS classes: ``wt-heldout``; each answer
``wt-heldout-right`` / ``wt-heldout-wrong``.
"""

from __future__ import annotations

import torch

from ..decode import read_numbers
from ..task import expected_answer
from . import _yours
from ._decode import CHECKPOINTS, model_for
from ._html import esc, styled


class HeldOutTable:
    """Numbers read aloud by several models, as an HTML table with ✓ and ✗ (shown by Jupyter)."""

    def __init__(self, numbers, models: dict[str, torch.nn.Module] | None = None):
        self.numbers = [int(n) for n in numbers]
        if not self.numbers:
            raise ValueError("give at least one number to read")
        self.note = ""
        if models is None:  # every model the labs offer, every kept run too
            models = {label: model_for(key) for key, label in CHECKPOINTS.items()}
            self.note = _yours.note()
        self.said = {label: read_numbers(m, self.numbers) for label, m in models.items()}
        self.right = {
            label: sum(said[n] == expected_answer(n) for n in self.numbers) for label, said in self.said.items()
        }

    def summary(self) -> str:
        return " · ".join(f"{label}: {self.right[label]}/{len(self.numbers)} right" for label in self.said)

    def __repr__(self) -> str:
        lines = [self.summary()]
        for n in self.numbers:
            lines.append(
                f"{n:>3}  "
                + "  |  ".join(
                    f"{'✓ right' if said[n] == expected_answer(n) else '✗ wrong'}: {said[n]}"
                    for said in self.said.values()
                )
            )
        return "\n".join(lines)

    def _note_html(self) -> str:
        return f'<div class="wt-yours-note" style="margin-bottom: 4px;">{esc(self.note)}</div>' if self.note else ""

    def _repr_html_(self) -> str:
        th = (
            "padding: 2px 8px; text-align: left; border-bottom: 1px solid #888; position: sticky; top: 0; "
            "background: white;"
        )
        head = "".join(f'<th style="{th}">{esc(label)}</th>' for label in self.said)
        rows = []
        for n in self.numbers:
            cells = []
            for said in self.said.values():
                ok = said[n] == expected_answer(n)
                colour = "rgb(46,125,50)" if ok else "rgb(178,24,43)"
                cells.append(
                    f'<td class="wt-heldout-{"right" if ok else "wrong"}" style="padding: 1px 8px;">'
                    f'<span style="color: {colour};">{"✓ right" if ok else "✗ wrong"}:</span> '
                    f"{esc(said[n]) or '(nothing)'}</td>"
                )
            rows.append(f'<tr><td style="padding: 1px 8px; text-align: right;">{n}</td>{"".join(cells)}</tr>')
        return styled(
            f'<div class="wt-heldout" style="font-family: ui-monospace, Menlo, monospace; font-size: 12px;">'
            f'<div style="margin-bottom: 4px;"><b>{esc(self.summary())}</b></div>'
            f'<div class="wt-heldout-note" style="margin-bottom: 4px; color: #595959;">all {len(self.numbers)} '
            f"numbers are in the table{'; scroll inside it to see them all' if len(self.numbers) > 15 else ''}"
            f"</div>{self._note_html()}"
            f'<div class="wt-scroll" tabindex="0" role="region" aria-label="the table of all '
            f'{len(self.numbers)} numbers" style="max-height: 360px; display: inline-block;">'
            f'<table style="border-collapse: collapse;"><tr><th scope="col" style="{th}">number</th>{head}</tr>'
            f"{''.join(rows)}</table></div></div>"
        )


def held_out_table(numbers, models: dict[str, torch.nn.Module] | None = None) -> HeldOutTable:
    """What each model says for each number, as words, with ✓/✗ and a count of the right ones (by default, every
    model the labs offer)."""
    return HeldOutTable(numbers, models)
