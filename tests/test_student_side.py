"""What a student meets first (issue 31): a reopened notebook says how to bring its labs back.

A notebook reopened after its kernel stopped shows "Error displaying widget: model not found" where
each lab was, until it is run again; the first cell of every notebook names that message and says
what to run, before any lab.
"""

from __future__ import annotations

import re
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


# ------------------------------------------------------------------------------------------ the microscope
def _microscope(eos_first: bool = False):
    import copy

    import torch

    from whole_transformer.labs import microscope_lab
    from whole_transformer.train import load_model

    model = load_model("microscope")
    if eos_first:  # a model that ends at once, as the old tiny model did on '0 ='
        model = copy.deepcopy(model)
        with torch.no_grad():
            model.head.bias[1] += 100.0
    return microscope_lab("0 =", model=model, step=-1)


def test_the_microscope_tells_eos_as_the_end_and_shows_no_html_escape():
    lab = _microscope(eos_first=True)
    assert lab.word == "<eos>"
    said = lab.said
    assert "<eos>" in said and "&lt;" not in said and "&gt;" not in said and "&amp;" not in said, said
    assert "after <eos> the model does not run again" in said and "runs again." not in said.split("<eos>")[-1]
    ordinary = _microscope()
    assert ordinary.word == "zero" and "It is appended, and the model runs again." in ordinary.said
    for i in range(len(ordinary.stages)):
        ordinary.step.value = i
        assert not re.search(r"&(lt|gt|amp|quot|#\d+);", ordinary.said), ordinary.said


def _rgb(style: str) -> tuple[int, int, int]:
    r, g, b = re.search(r"background: rgb\((\d+), ?(\d+), ?(\d+)\)", style).groups()
    return int(r), int(g), int(b)


def test_the_microscopes_colours_are_its_legend_on_every_step():
    """Red above 0, blue below, white at 0, grey for −∞: every cell of every step, the weights included."""
    lab = _microscope()
    assert "red above 0, blue below 0" in lab.legend.value
    seen = set()
    for i, stage in enumerate(lab.stages):
        lab.step.value = i
        cells = re.findall(r'<td class="wt-cell" data-value="([^"]+)" style="([^"]+)"', lab.heatmap.value)
        assert cells, stage.name
        for value, style in cells:
            x, (r, g, b) = float(value), _rgb(style)
            if x == float("-inf"):
                assert r == g == b != 255, (stage.name, value, style)
                seen.add("grey")
            elif x > 0:
                assert r >= b, (stage.name, value, style)
                seen.add("red" if r > b else "near white")
            elif x < 0:
                assert b >= r, (stage.name, value, style)
                seen.add("blue" if b > r else "near white")
    assert {"red", "blue", "grey"} <= seen
    weights = next(i for i, s in enumerate(lab.stages) if s.name == "weights")
    lab.step.value = weights
    assert "rgb(178, 24, 43)" in lab.heatmap.value  # a weight of 1 is full red
