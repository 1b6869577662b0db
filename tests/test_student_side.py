"""What a student meets first (issue 31): a reopened notebook says how to bring its labs back.

A notebook reopened after its kernel stopped shows "Error displaying widget: model not found" where
each lab was, until it is run again; the first cell of every notebook names that message and says
what to run, before any lab.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "source" / "whole-transformer"
NOTEBOOKS = sorted(p.name for p in SOURCE.glob("*.ipynb"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_first_cell_says_what_brings_the_labs_back(name):
    nb = nbformat.read(SOURCE / name, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    text = " ".join(first.source.split())
    assert '"Error displaying widget: model not found"' in text, text[:400]
    assert "*Run ▸ Run All Cells*" in text and "every lab comes back" in text, text[:600]
    labs = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "_lab(" in c.source]
    assert not labs or labs[0] > 0
