"""The attention maps lab (notebook 03), driven from Python, and its question checked on the shipped checkpoint.

For 427 read by the 60-epoch model: 8 tokens in, 2 blocks × 4 heads of 8 × 8 maps; the 28 cells above each
diagonal are masked and say so (hatched, the word "masked", in the buttons and the table twin), the others hold
the weights (each row sums to 1); a click on a cell names its query and key; the map shown large follows the
chooser; bad input is answered in words. The question under the lab asks where the row of "hundred" looks in
block 2, head 1: its answer, read from the source notebook's solution cell, is what the shipped model does.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from notebook_helpers import load

from whole_transformer.labs import attention_maps_lab
from whole_transformer.labs._maps import read


def test_every_head_of_every_block_is_drawn_with_the_masked_cells_named():
    lab = attention_maps_lab(427, "60")
    m = lab.maps
    assert m.tokens == ["4", "2", "7", "=", "four", "hundred", "twenty", "seven"]
    assert m.picks[3:] == ["four", "hundred", "twenty", "seven", "<eos>"]
    assert m.weights.shape == (2, 4, 8, 8) and np.allclose(m.weights.sum(-1), 1, atol=1e-5)
    assert np.all(m.weights[:, :, m.masked] == 0) and m.masked.sum() == 28
    assert lab.overview.value.count('class="wt-maps-small') == 8 and lab.overview.value.count("wt-maps-chosen") == 1
    assert lab.overview.value.count('class="wt-maps-masked"') == 8 * 28 and "hatched = masked" in lab.overview.value
    assert len(lab.cells) == 64
    masked = [b for b in lab.cells if "wt-maps-masked" in b._dom_classes]
    assert len(masked) == 28 and all(b.description == "masked" for b in masked)
    weights = [float(b.description) for b in lab.cells if b not in masked]
    assert len(weights) == 36 and all(0 <= w <= 1 for w in weights)
    assert lab.table.value.count('<td class="wt-maps-masked">masked</td>') == 28
    assert len(re.findall(r"<td>\d\.\d\d</td>", lab.table.value)) == 36
    assert 'role="region"' in lab.table.value and 'tabindex="0"' in lab.table.value


def test_a_cell_clicked_names_its_query_and_key_and_the_map_follows_the_chooser():
    lab = attention_maps_lab(427, "60")
    lab.cells[5 * 8 + 1].click()
    assert lab.selected == (5, 1) and "wt-maps-on" in lab.cells[5 * 8 + 1]._dom_classes
    assert lab.message.startswith("Block 2, head 1: the query 'hundred' (row 5), the row that picks 'twenty',")
    assert "gives the key '2' (column 1) the weight" in lab.message
    lab.cells[3 * 8 + 6].click()
    assert "may not look at the key 'twenty' (column 6), a later token: masked" in lab.message
    assert sum("wt-maps-on" in b._dom_classes for b in lab.cells) == 1
    lab.map_choice.value = (1, 3)
    assert re.search(r'class="wt-maps-small wt-maps-chosen"[^>]*data-block="1" data-head="3"', lab.overview.value)
    assert lab.message.startswith("Block 1, head 3:") and "block 1, head 3" in lab.table.value
    lab.checkpoint.value = "2"
    assert lab.selected is None and "after 2 epochs read 427" in lab.message


def test_bad_input_is_answered_in_words():
    lab = attention_maps_lab()
    lab.number.value = "4271"
    assert lab.maps is None and lab.cells == [] and "type a whole number from 0 to 999" in lab.message
    with pytest.raises(ValueError, match="type a number first"):
        lab.select(0, 0)
    lab.number.value = "905"
    with pytest.raises(ValueError, match="query and key must be 0 to 6"):
        lab.select(8, 0)
    with pytest.raises(ValueError, match="no map for block 3"):
        lab.show(3, 1)
    with pytest.raises(ValueError, match="block must be 1 to 2"):
        attention_maps_lab(block=5)


def test_the_question_under_the_maps_is_answered_by_the_shipped_model(model60):
    (question,) = [c.source for c in load("03-one-word-at-a-time.ipynb").cells if "maps_hundred_427 =" in c.source]
    letter = re.search(r'^maps_hundred_427 = "([ABC])"$', question, re.M)[1]
    (ask,) = [c.source for c in load("03-one-word-at-a-time.ipynb").cells if "the row of\n`hundred`" in c.source]
    option = re.search(rf"- {letter}\. `([^`]+)`", ask)[1]
    m = read(model60, 427)
    row = m.tokens.index("hundred")
    assert m.picks[row] == "twenty"
    looked = m.tokens[int(np.argmax(m.weights[1, 0, row]))]
    assert option == looked, f"the question's answer is {option!r}, the shipped model looks most at {looked!r}"
