"""The microscope's masked cells (issue 41's known gap): the legend and the picture agree, and the mask is told by
a pattern and a written value, never by a grey alone.

At the masked scores and at the weights, every cell the causal mask hides (a key later than its query) is hatched
(``data-masked``), reads −∞ (a score) or 0 (a weight: exactly 0, where a kept weight that rounds to 0 reads
0.00), and says "masked" to a screen reader; no other cell is marked. The legend says the same.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from whole_transformer.labs import _html
from whole_transformer.labs.microscope import LEGEND, MicroscopeLab

CELL = re.compile(r'<td class="wt-cell[^"]*" data-value="([^"]+)" style="([^"]*)"( data-masked="true")?>(.*?)</td>')


@pytest.fixture(scope="module")
def lab():
    return MicroscopeLab("8 9 =")


def _grids(lab, name: str) -> list[list[tuple[str, str, bool, str]]]:
    """The step's tables (one a head), each its cells in order: (value, style, masked, text)."""
    lab.step.value = next(i for i, s in enumerate(lab.stages) if s.name == name)
    tables = lab.heatmap.value.split("<table")[1:]
    return [[(v, st, bool(m), t) for v, st, m, t in CELL.findall(t)] for t in tables]


@pytest.mark.parametrize("prompt", ["8 9 =", "4 2 7 ="])
@pytest.mark.parametrize("name, text", [("masked scores", "−∞"), ("weights", "0")])
def test_every_masked_cell_is_hatched_and_says_so_and_no_other(lab, prompt, name, text):
    lab.prompt.value = prompt
    L = len(lab.ids)
    later = np.triu(np.ones((L, L), dtype=bool), 1)  # key k after query q: what the causal mask hides
    (grid,) = _grids(lab, name)  # the tiny model has one head
    assert len(grid) == L * L
    for (value, style, masked, said), hidden in zip(grid, later.ravel(), strict=True):
        assert masked == hidden, (name, value, style)
        if hidden:
            assert _html.HATCH in style and said == f'{text}<span class="wt-sr"> masked</span>', (value, said)
        else:
            assert "background-image" not in style and "masked" not in said, (value, said)
            assert name != "weights" or re.fullmatch(r"[01]\.\d\d", said), said  # a weight kept: two decimals
    lab.prompt.value = "8 9 ="


def test_the_legend_says_what_the_picture_draws(lab):
    assert "grey: −∞ (masked)" not in LEGEND  # the old legend: the weights were white 0.00 beside it
    assert "Hatched grey: masked" in LEGEND and "score is −∞" in LEGEND and "weight is exactly 0" in LEGEND
    assert "written 0," in LEGEND and "0.00" in LEGEND
    assert _html.esc(LEGEND) in lab.legend.value


def test_no_other_step_marks_a_cell_masked(lab):
    for i, stage in enumerate(lab.stages):
        lab.step.value = i
        if stage.name not in ("masked scores", "weights"):
            assert "data-masked" not in lab.heatmap.value, stage.name


def test_a_mask_of_another_shape_is_refused_with_the_shapes():
    with pytest.raises(ValueError, match=r"masked has shape \(2, 2\), but the array drawn has \(3, 3\)"):
        _html.heatmap(np.eye(3), masked=np.eye(2, dtype=bool))
