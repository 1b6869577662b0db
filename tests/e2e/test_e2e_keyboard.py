"""Keyboard and screen reader in Chromium (issue 31): what a slider says, where Tab goes, where the focus goes.

A notebook with the microscope, the machine, the scale and the training labs, run in the shared JupyterLab:

- every slider's handle says its value as its read-out shows it (``aria-valuetext``): d_model 64 is "64",
  not the index "5"; the scale lab's std says "1/8 = 1/√64";
- no read-out is a Tab stop: Tab from a slider's handle goes to the next control;
- End on the training lab's epochs slider gives 60, the number its text asks for; Home gives 1;
- a focused button that is disabled hands the focus on within its lab: Next ▶ at the microscope's last step,
  Next step at the end of the decode lab's reading, Train while the model trains; it never falls to the page.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from e2e_lab import by_description, copy_into

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

CELLS = [
    "from whole_transformer.labs import decode_lab, machine_lab, microscope_lab, scale_lab, training_lab",
    "microscope_lab()",
    "decode_lab()",
    "machine_lab()",
    "scale_lab()",
    "training_lab(epochs=20)",
]

# the focused element: in which lab, and what it is
FOCUS = """() => {
    const el = document.activeElement;
    const lab = el && el.closest ? el.closest('.wt-lab') : null;
    return {tag: el ? el.tagName : null, role: el ? el.getAttribute('role') : null,
            text: el ? (el.getAttribute('aria-label') || el.textContent || '').trim() : '',
            lab: lab ? Array.from(lab.classList).filter(c => c !== 'wt-lab' && c.startsWith('wt-'))[0] : null,
            readout: !!(el && el.classList && el.classList.contains('widget-readout'))};
}"""


def _notebook(jupyter_server, tmp_path, cells: list[str], where: str) -> str:
    """A notebook of ``cells`` copied into the shared JupyterLab's folder at ``where``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    path = tmp_path / Path(where).name
    nbformat.write(nb, path)
    copy_into(jupyter_server, path, where)
    return where


@pytest.fixture
def labs_notebook(jupyter_server, tmp_path):
    return _notebook(jupyter_server, tmp_path, CELLS, "keyboard31/keyboard.ipynb")


def _until(page, fn, what, timeout_ms=15_000):
    for _ in range(timeout_ms // 100):
        if fn():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"{what} did not happen within {timeout_ms / 1000:.0f} s")


def test_sliders_say_their_values_tab_skips_read_outs_and_focus_moves_on(clean_lab, labs_notebook):
    nb = clean_lab.open(labs_notebook)
    nb.run_all()
    page = clean_lab.page
    micro, machine, scale, training = (nb.lab_widget(n) for n in ("microscope", "machine", "scale", "training"))
    page.wait_for_timeout(500)  # the naming script runs on the next frame

    # every slider says its value, as its read-out shows it
    for lab in (micro, machine, scale, training):
        for slider in lab.locator(".widget-slider").all():
            readout = slider.locator(".widget-readout").inner_text().strip()
            handle = slider.locator(".noUi-handle")
            assert handle.get_attribute("aria-valuetext") == readout, (readout, handle.get_attribute("aria-valuetext"))
            assert slider.locator(".widget-readout").get_attribute("tabindex") == "-1"
    d_model = by_description(machine, "slider", "d_model").locator(".noUi-handle")
    assert d_model.get_attribute("aria-valuetext") == "64" and d_model.get_attribute("aria-valuenow") != "64"
    std = by_description(scale, "slider", "token-table std").locator(".noUi-handle")
    assert std.get_attribute("aria-valuetext") == "1/8 = 1/√64"
    d_model_slider = by_description(machine, "slider", "d_model")
    d_model.focus()
    page.keyboard.press("ArrowLeft")
    _until(page, lambda: d_model_slider.locator(".widget-readout").inner_text().strip() != "64", "d_model moved")
    moved = d_model_slider.locator(".widget-readout").inner_text().strip()
    _until(page, lambda: d_model.get_attribute("aria-valuetext") == moved, f"d_model {moved} said as {moved}")

    # Tab from a slider goes to the next control, never to its read-out
    step = by_description(micro, "slider", "step").locator(".noUi-handle")
    step.focus()
    page.keyboard.press("Tab")
    here = page.evaluate(FOCUS)
    assert not here["readout"] and here["tag"] == "BUTTON" and "Next" in here["text"], here

    # Next ▶ pressed to the last step: the focus stays in the lab, on a control
    for _ in range(40):
        if micro.locator("button", has_text="Next").is_disabled():
            break
        page.keyboard.press("Enter")
        page.wait_for_timeout(150)
    _until(page, lambda: micro.locator("button", has_text="Next").is_disabled(), "the last step")
    _until(page, lambda: page.evaluate(FOCUS)["lab"] == "wt-microscope", "focus handed on in the microscope")
    here = page.evaluate(FOCUS)
    assert here["tag"] != "BODY" and (here["role"] == "slider" or here["tag"] == "BUTTON"), here

    # Next step to the end of a reading (<eos>): the focus stays in the decode lab
    decode = nb.lab_widget("decode")
    next_step = by_description(decode, "button", "Next step")
    next_step.focus()
    for _ in range(12):
        if next_step.is_disabled():
            break
        page.keyboard.press("Enter")
        page.wait_for_timeout(300)
    _until(page, next_step.is_disabled, "the end of the reading")
    _until(page, lambda: page.evaluate(FOCUS)["lab"] == "wt-decode", "focus handed on in the decode lab")
    assert page.evaluate(FOCUS)["tag"] != "BODY"

    # End and Home on the epochs slider: 60, the number the text asks for, and 1
    epochs = by_description(training, "slider", "epochs").locator(".noUi-handle")
    epochs.focus()
    page.keyboard.press("End")
    _until(page, lambda: epochs.get_attribute("aria-valuetext") == "60", "End → 60")
    page.keyboard.press("Home")
    _until(page, lambda: epochs.get_attribute("aria-valuetext") == "1", "Home → 1")
    page.keyboard.press("ArrowRight")
    _until(page, lambda: epochs.get_attribute("aria-valuetext") == "2", "→ 2")

    # Train while it trains: the focus moves on to the lab's other controls, not to the page
    train = by_description(training, "button", "Train")
    train.focus()
    page.keyboard.press("Enter")
    _until(page, train.is_disabled, "Train disabled while training")
    here = page.evaluate(FOCUS)
    assert here["lab"] == "wt-training" and here["tag"] != "BODY", here
    _until(page, train.is_enabled, "the training done", timeout_ms=120_000)
    assert not nb.widget_errors()


#: every lab with a dropdown (a model, a block, a head, a map, a part)
DROPDOWN_CELLS = [
    "from whole_transformer.labs import attention_maps_lab, cache_lab, decode_lab, machine_lab, sampling_lab",
    "machine_lab()",
    "decode_lab()",
    "sampling_lab()",
    "cache_lab()",
    "attention_maps_lab()",
]


@pytest.fixture
def dropdowns_notebook(jupyter_server, tmp_path):
    return _notebook(jupyter_server, tmp_path, DROPDOWN_CELLS, "keyboard40/dropdowns.ipynb")


def _index(select) -> int:
    return select.evaluate("e => e.selectedIndex")


def test_every_dropdown_answers_the_arrow_keys_and_keeps_the_focus(clean_lab, dropdowns_notebook):
    """Issue 40: JupyterLab's notebook shortcuts took a closed dropdown's arrow keys (the focus went to another
    cell). The labs mark their dropdowns so the keys are the dropdown's own, as docs/student.md says: on every
    dropdown of every lab, ArrowDown and ArrowUp move one choice, End goes to the last, the focus stays."""
    nb = clean_lab.open(dropdowns_notebook)
    nb.run_all()
    page = clean_lab.page
    page.wait_for_timeout(500)  # the naming script runs on the next frame
    walked = []
    for select in page.locator(".wt-lab select").all():
        options = select.locator("option").all_inner_texts()
        if len(options) < 2 or select.is_disabled():
            continue
        assert select.get_attribute("data-lm-suppress-shortcuts") == "true", options
        select.focus()
        lab = page.evaluate(FOCUS)["lab"]
        select.select_option(index=0)
        page.keyboard.press("ArrowDown")
        _until(page, lambda s=select: _index(s) == 1, f"{lab}: ArrowDown to {options[1]!r}")
        assert page.evaluate(FOCUS) | {"text": ""} == {
            "tag": "SELECT",
            "role": None,
            "text": "",
            "lab": lab,
            "readout": False,
        }
        page.keyboard.press("ArrowUp")
        _until(page, lambda s=select: _index(s) == 0, f"{lab}: ArrowUp to {options[0]!r}")
        last = len(options) - 1
        page.keyboard.press("End")
        _until(page, lambda s=select, n=last: _index(s) == n, f"{lab}: End to {options[-1]!r}")
        assert page.evaluate(FOCUS)["tag"] == "SELECT", lab
        walked.append(lab)
    assert {"wt-machine", "wt-decode", "wt-cache", "wt-maps"} <= set(walked), walked
