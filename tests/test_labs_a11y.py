"""Accessibility of the labs, without a browser (tests/e2e/test_e2e_release.py and test_e2e_lecture.py drive the
labs in Chromium with axe-core, the keyboard and colour-vision simulations):

- every control has a name (a description, or a button's text), and every lab has a live summary line that a
  change of any control changes;
- no text colour of a lab is below 4.5:1 on white, and a heatmap cell's text never below 4.5:1 on its fill;
- every lab figure has alt text (the block picture's <img alt>, the training chart's aria-label) that says what
  it shows, and no two are the same;
- no lab text repeats a run of 10 words of the public lesson (tests/data/reference-10-word-runs.txt).

labs/ keeps to the package's size limits like every module (tests/test_codebase.py).
"""

import hashlib
import re
import sys
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import pytest

from whole_transformer.labs import (
    _colour,
    _html,
    batch_lab,
    block_picture,
    cache_lab,
    decode_lab,
    machine_lab,
    microscope_lab,
    sampling_lab,
    scale_lab,
    training_lab,
)
from whole_transformer.labs._chart import chart_svg, chart_text
from whole_transformer.train import EpochLog

LABS_DIR = Path(__file__).resolve().parents[1] / "whole_transformer" / "labs"
FINGERPRINTS = Path(__file__).resolve().parent / "data" / "reference-10-word-runs.txt"
NAMED = (
    widgets.IntSlider,
    widgets.FloatSlider,
    widgets.BoundedIntText,
    widgets.SelectionSlider,
    widgets.Dropdown,
    widgets.Text,
    widgets.Checkbox,
    widgets.ToggleButtons,
)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower())


def fingerprints(text: str) -> set[str]:
    w = words(text)
    return {hashlib.sha256(" ".join(w[i : i + 10]).encode()).hexdigest()[:16] for i in range(len(w) - 9)}


def widgets_in(root, keep):
    """The widgets inside root (every Box opened, down to its leaves) for which keep(widget) is true."""
    out, todo = [], [root]
    while todo:
        w = todo.pop()
        if isinstance(w, widgets.Box):
            todo.extend(w.children)
        elif keep(w):
            out.append(w)
    return out


def controls(root):
    return widgets_in(root, lambda w: isinstance(w, (*NAMED, widgets.Button)) and w.layout.display != "none")


@pytest.fixture(scope="module")
def labs():
    return {
        "machine": machine_lab(),
        "microscope": microscope_lab(),
        "block": block_picture(),
        "scale": scale_lab(),
        "decode": decode_lab(),
        "cache": cache_lab(),
        "sampling": sampling_lab(),
        "batch": batch_lab(),
        "training": training_lab(),
    }


def test_every_control_has_a_name(labs):
    for name, lab in labs.items():
        for w in controls(lab):
            label = w.description if not isinstance(w, widgets.Button) else (w.description or w.tooltip)
            assert label and label.strip(), f"{name}: a {type(w).__name__} has no name"
            if isinstance(w, widgets.Button):
                assert re.search(r"[A-Za-z]", w.description), f"{name}: button {w.description!r} is an icon only"


# one change per control kind, for each lab: (what to do, a control it changes)
CHANGES = {
    "machine": [
        lambda lab: setattr(lab.d_model, "value", 32),
        lambda lab: setattr(lab.heads, "value", 8),
        lambda lab: setattr(lab.blocks, "value", 3),
        lambda lab: setattr(lab.d_ff, "value", 64),
        lambda lab: setattr(lab.batch, "value", 2),
        lambda lab: setattr(lab.length, "value", 5),
        lambda lab: setattr(lab.part, "value", "output layer"),
        lambda lab: lab.buttons["block 2"].click(),
        lambda lab: setattr(lab.inside, "value", "FFN"),
    ],
    "microscope": [
        lambda lab: lab.next.click(),
        lambda lab: lab.prev.click(),
        lambda lab: setattr(lab.step, "value", 5),
        lambda lab: setattr(lab.prompt, "value", "4 2 ="),
    ],
    "scale": [
        lambda lab: lab.show.click(),
        lambda lab: setattr(lab.factor, "value", False),
        lambda lab: setattr(lab.std, "value", 1.0),
    ],
    "decode": [
        lambda lab: lab.next_button.click(),
        lambda lab: setattr(lab.head, "value", 1),
        lambda lab: setattr(lab.block, "value", 1),
        lambda lab: lab.reset_button.click(),
        lambda lab: setattr(lab.number, "value", "14"),
        lambda lab: setattr(lab.checkpoint, "value", "2"),
    ],
    "batch": [lambda lab: setattr(lab.numbers, "value", "5, 17, 905"), lambda lab: setattr(lab.numbers, "value", "x")],
    "sampling": [
        lambda lab: setattr(lab.temperature, "value", 2.5),
        lambda lab: setattr(lab.top_k, "value", 4),
        lambda lab: setattr(lab.top_p, "value", 0.5),
        lambda lab: lab.read_button.click(),
        lambda lab: setattr(lab.seed, "value", 7),
        lambda lab: setattr(lab.step, "value", 2),
        lambda lab: setattr(lab.checkpoint, "value", "2"),
        lambda lab: setattr(lab.number, "value", "x"),
    ],
    "cache": [
        lambda lab: lab.next_button.click(),
        lambda lab: setattr(lab.head, "value", 3),
        lambda lab: setattr(lab.block, "value", 1),
        lambda lab: lab.reset_button.click(),
        lambda lab: setattr(lab.number, "value", "777"),
        lambda lab: setattr(lab.checkpoint, "value", "2"),
        lambda lab: setattr(lab.number, "value", "x"),
    ],
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_every_change_changes_the_live_line(labs, name):
    lab = labs[name]
    assert "wt-live" in lab.live._dom_classes and lab.said.strip(), f"{name}: no live summary line"
    for k, change in enumerate(CHANGES[name]):
        before = lab.said
        change(lab)
        assert lab.said != before, f"{name}: change {k} left the live line as it was: {before!r}"


def test_the_training_lab_says_what_it_does():
    lab = training_lab(epochs=1)
    assert "Press Train" in lab.said and "wt-training-status" in lab.status._dom_classes


def _colours(html_text: str) -> list[str]:
    return re.findall(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{3,6}|rgb\([^)]*\))", html_text)


def _rgb(c: str) -> tuple[int, int, int]:
    if c.startswith("rgb"):
        return tuple(int(v) for v in re.findall(r"\d+", c)[:3])
    c = c.lstrip("#")
    c = "".join(ch * 2 for ch in c) if len(c) == 3 else c
    return tuple(int(c[i : i + 2], 16) for i in (0, 2, 4))


def test_text_colours_keep_4_5_to_1_on_white(labs):
    sources = [p.read_text() for p in LABS_DIR.glob("*.py")]
    sources += [w.value for lab in labs.values() for w in _html_widgets(lab)]
    low = {
        c
        for text in sources
        for c in _colours(text)
        if "white" not in c and _colour.contrast(_rgb(c), (255, 255, 255)) < 4.5
    }
    assert not low, f"text colours below 4.5:1 on white: {sorted(low)}"


def _html_widgets(root):
    return widgets_in(root, lambda w: isinstance(w, widgets.HTML))


@pytest.mark.parametrize("mode", ["diverging", "sequential"])
def test_heatmap_text_keeps_4_5_to_1_on_every_fill(mode):
    for x in np.linspace(-1 if mode == "diverging" else 0, 1, 201):
        bg, fg = _html.cell_colour(x, 1.0, mode)
        text = (255, 255, 255) if fg == "white" else (0, 0, 0)
        assert _colour.contrast(_rgb(bg), text) >= 4.5, (x, bg, fg)
    bg, fg = _html.cell_colour(-1e9, 1.0)
    assert _colour.contrast(_rgb(bg), _rgb(fg)) >= 4.5


def test_every_lab_figure_has_its_own_alt_text(labs):
    block = labs["block"]
    alt = re.search(r'alt="([^"]*)"', block.image.value)[1]
    assert alt == _html.esc(block.alt) and "decoder block" in alt and "(L 3, d_model 6)" in alt
    other = block_picture("4 2 =")
    runs = {"main": [EpochLog(1, 2.0, 0.1, 0.5)], "copy": [EpochLog(1, 1.0, 0.5, 0.5), EpochLog(2, 0.5, 0.9, 0.5)]}
    charts = [chart_svg({}), chart_svg(runs), chart_svg({"main": runs["main"]})]
    alts = [block.alt, other.alt] + [re.search(r'aria-label="([^"]*)"', c)[1] for c in charts]
    assert all(a.strip() and "figure" not in a.lower().split() for a in alts)
    assert len(set(alts)) == len(alts), f"two figures share their alt text: {alts}"
    assert all('role="img"' in c for c in charts)
    assert "copy task (diamond): after epoch 2, training loss 0.5000, held out 90 % right" in chart_text(runs)
    runs["copy"][-1].held_out_loss = 0.75
    assert "after epoch 2, training loss 0.5000, held-out loss 0.7500, held out 90 % right" in chart_text(runs)


def test_lab_text_shares_no_run_of_10_words_with_the_public_lesson():
    known = {line for line in FINGERPRINTS.read_text().splitlines() if line and not line.startswith("#")}
    assert len(known) > 2000, "the fingerprint file is empty or cut"
    for path in sorted(LABS_DIR.glob("*.py")):
        shared = fingerprints(path.read_text()) & known
        assert not shared, f"{path.name} repeats {len(shared)} runs of 10 words of the public lesson: rewrite them"


if __name__ == "__main__":  # remake the fingerprint file from the lesson's text: python tests/test_labs_a11y.py PAGE
    lines = [line for line in FINGERPRINTS.read_text().splitlines() if line.startswith("#")]
    FINGERPRINTS.write_text("\n".join(lines + sorted(fingerprints(Path(sys.argv[1]).read_text()))) + "\n")
