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


# ------------------------------------------------------------------------------------------ the scale lab
def _plain(html_text: str) -> str:
    import html

    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html_text)).split())


@pytest.mark.parametrize("std, factor", [(1 / 8, True), (1.0, True), (1.0, False), (1 / 64, False), (8.0, False)])
def test_the_scale_labs_bars_table_box_and_line_say_one_number(std, factor):
    """A token row's length and the ratio: the bars, the sentence under them, the stored runs' table, the
    verdict box and the live line all say the same (two decimals), for every stored setting."""
    from whole_transformer.labs import scale_lab

    lab = scale_lab(std, factor, revealed=True)
    mine = lab.stored
    assert mine is not None
    tok, ratio = f"{mine.token_length:.2f}", f"{mine.ratio:.2f}"
    assert (f"{lab.token_length:.2f}", f"{lab.ratio:.2f}") == (tok, ratio)
    lengths = _plain(lab.lengths.value)
    assert f"{tok} long" in lengths and f"Token ÷ position: {ratio}" in lengths, lengths
    table_row = next(r for r in re.findall(r"<tr.*?</tr>", lab.runs.value, re.S) if mine.setting.label in _plain(r))
    assert f" {tok} {ratio} " in f" {_plain(table_row)} ", _plain(table_row)
    assert f"a token row starts {tok} long" in lab.said and f"ratio {ratio}" in lab.said
    for twin_ratio in re.findall(r"same ratio \(([\d.]+)\)", _plain(lab.verdict.value)):
        assert twin_ratio == ratio


def test_02_quotes_the_stored_length_as_the_table_shows_it():
    from whole_transformer.scale_study import Setting, summarize

    cells = nbformat.read(SOURCE / "02-microscope.ipynb", as_version=4).cells
    text = " ".join(next(c for c in cells if c.get("id") == "825c8a9e").source.split())  # "What the runs show"
    big = next(s for s in summarize() if s.setting == Setting(1.0, True))
    assert f"{big.token_length:.2f} measured" in text, text[:400]


# ------------------------------------------------------------------------------------------ polish
def test_one_of_a_thing_is_said_in_the_singular():
    from whole_transformer.labs import batch_lab, machine_lab

    one = batch_lab("5")
    assert one.said.startswith("1 number: ") and "1 is a digit or '='" in one.said, one.said
    assert "B 1 number," in _plain(one.summary.value)
    two = batch_lab("5, 17")
    assert two.said.startswith("2 numbers: ") and "3 are digits" in two.said and "1 is padding" in two.said
    machine = machine_lab()
    machine.heads.value = 1
    assert "into 1 slice of" in machine.said, machine.said
    machine.heads.value = 2
    assert "into 2 slices of" in machine.said, machine.said
    for lab in (one, two, machine):
        assert not re.search(r"\b1 (numbers|slices|targets|positions|are)\b", lab.said)
    assert not re.search(r"\b1 (numbers|positions)\b", _plain(one.summary.value))


def test_an_empty_prompt_is_said_not_silently_kept():
    from whole_transformer.labs import microscope_lab

    lab = microscope_lab()
    lab.prompt.value = ""
    assert "the prompt is empty" in _plain(lab.error.value)
    assert lab.said.startswith("Cannot read that: the prompt is empty") and "Still showing '8 9 ='" in lab.said
    lab.prompt.value = "4 2 7"
    assert lab.error.value == "" and lab.said.startswith("Reading '4 2 7 ='")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_notebook_opens_without_an_unsaved_changes_mark(name):
    """JupyterLab writes the kernel's language_info into a notebook when its kernel starts and marks the
    notebook changed unless it is already exactly that: the notebooks carry what the course's kernel reports
    (its Python's version included: another patch version of 3.11 still marks them, as docs/student.md says)."""
    import sys

    from ipykernel.ipkernel import IPythonKernel

    info = nbformat.read(SOURCE / name, as_version=4).metadata.language_info
    kernel = dict(IPythonKernel.language_info)
    assert {k: v for k, v in info.items() if k != "version"} == {k: v for k, v in kernel.items() if k != "version"}
    assert info["version"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}."), info
    if sys.version.split()[0] == info["version"]:  # the course's own Python: exactly what the kernel says
        assert info == kernel


# ------------------------------------------------------------------------------------------ named hints
ISSUE_31_BUGS = {  # (exercise, catalogue id): words the check's hint must say
    ("next_token", "argmax_of_W"): "np.argmax of W, the whole weight table",
    ("next_token", "float_id"): "returns its id as a float",
    ("masked_loss", "raw_target_score"): "minus the target's raw score",
    ("masked_loss", "largest_probability"): "each row's largest probability",
    ("make_xy", "pads_x_not_y"): "pads the question in x and leaves y whole",
    ("make_xy", "y_unshifted"): "y is not shifted",
}


@pytest.mark.parametrize("exercise, mid", sorted(ISSUE_31_BUGS))
def test_each_common_bug_gets_a_hint_that_names_it(exercise, mid, capsys):
    from whole_transformer import checks
    from whole_transformer.course.answers.mistakes import MISTAKES

    (m,) = [m for m in MISTAKES[exercise] if m.id == mid]
    assert m.name and m.hint and ISSUE_31_BUGS[exercise, mid] in m.hint  # named in grading and the class report
    assert checks.check(exercise, m.code) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ Not yet. ") and ISSUE_31_BUGS[exercise, mid] in out, out
    assert "which is not right" not in out and "returns a score" not in out, out


def test_a_right_id_as_any_float_is_told_so_not_called_a_score(capsys):
    import numpy as np

    from whole_transformer import checks

    def next_token(h, W, b):
        return np.float32(np.argmax(h @ W + b))

    assert checks.check("next_token", next_token) is False
    out = capsys.readouterr().out
    assert "float" in out and "returns a score" not in out, out
