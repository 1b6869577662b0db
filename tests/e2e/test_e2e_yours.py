"""Your code under the microscope in Chromium (issue 41): the microscope lab with a student's four functions.

A notebook defines the four functions of 02 as a student writes them (right versions of
tests/implementations/correct.toml), then shows ``microscope_lab(yours=globals())`` twice: with them as they
are, and with a planted catalogued mistake (multi_head_attention without its output bias, mistakes.toml).

- By mouse, in the first lab: "yours beside it" clicked, Next clicked to the weights, where every masked weight is
  hatched and reads 0 as the legend says (the legend and the picture agree), then on to the attention's output:
  no step of the right code differs, in the lab, its table twin and its live line.
- By keyboard, in the second: Tab reaches every control of the lab (the two choices among them) and each key
  changes it, "yours beside it" chosen with Enter, then Next pressed with Enter until the attention's output,
  where the first difference is named in words ("≠ first difference", the largest difference), in the table twin
  and on the live line a screen reader reads.

axe-core finds nothing serious; screenshots of the three states go to artifacts/e2e/ (41-microscope-*.png).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import nbformat
import pytest
from a11y_checks import assert_no_serious, axe_outputs, default_keys, keyboard_walk
from e2e_lab import copy_into

from whole_transformer.course.answers.mistakes import CATALOGUE

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

CORRECT = tomllib.loads((Path(__file__).parents[1] / "implementations" / "correct.toml").read_text(encoding="utf-8"))
PLANTED = next(m for m in CATALOGUE["multi_head_attention"] if m.id == "no_output_bias")


def _right(exercise: str) -> str:
    return CORRECT[exercise][0]["code"]


@pytest.fixture
def yours_notebook(jupyter_server, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    cells = [
        "import numpy as np\nfrom whole_transformer.labs import microscope_lab\n\n\ndef softmax(x):\n"
        "    e = np.exp(x - x.max(axis=-1, keepdims=True))\n    return e / e.sum(axis=-1, keepdims=True)",
        *(_right(ex) for ex in ("layer_norm", "multi_head_attention", "decoder_block", "forward")),
        "microscope_lab(step=0, yours=globals())",
        PLANTED.code_text,  # the catalogued mistake, as a student would write it in the cell
        "microscope_lab(step=0, yours=globals())",
    ]
    nb.cells = [nbformat.v4.new_code_cell(src.strip("\n")) for src in cells]
    path = tmp_path / "yours.ipynb"
    nbformat.write(nb, path)
    copy_into(jupyter_server, path, "yours41/yours.ipynb")
    return "yours41/yours.ipynb"


def _title(lab) -> str:
    return lab.locator(".wt-microscope-title").inner_text()


def _to(page, lab, name: str, press) -> None:
    """Next ▶ pressed (``press()``: a click, or Enter on the focused button) until the title names the step."""
    for _ in range(30):
        if f": {name}" in _title(lab):
            return
        press()
        page.wait_for_timeout(200)
    raise AssertionError(f"never reached {name}: {_title(lab)}")


def _back_to_the_first_step(page, lab) -> None:
    """◀ Previous clicked until the lab shows step 0."""
    for _ in range(40):
        if _title(lab).startswith("step 0 "):
            return
        lab.locator("button.wt-microscope-prev").click()
        page.wait_for_timeout(100)
    raise AssertionError(f"never back at step 0: {_title(lab)}")


def _live(lab) -> str:
    return lab.locator(".wt-live [aria-live]").inner_text()


def test_your_code_under_the_microscope_by_mouse_and_by_keyboard(clean_lab, yours_notebook, artifacts):
    nb = clean_lab.open(yours_notebook)
    nb.run_all()
    page = clean_lab.page
    right, planted = nb.lab_widget("microscope").all()

    # by mouse: the right code; the weights step, masked cells as the legend says
    right.locator(".wt-microscope-whose button", has_text="yours beside it").click()
    nxt = right.locator("button.wt-microscope-next")
    _to(page, right, "weights", nxt.click)
    legend = right.locator(".wt-microscope-legend").inner_text()
    assert "Hatched grey: masked" in legend and "its weight is exactly 0" in legend, legend
    masked = right.locator('.wt-microscope-heatmap td[data-masked="true"]')
    assert masked.count() == 3  # '8 9 =': the three later keys of the first two queries
    for k in range(masked.count()):
        cell = masked.nth(k)
        assert cell.inner_text().strip().startswith("0"), cell.inner_text()
        assert "repeating-linear-gradient" in cell.evaluate("el => getComputedStyle(el).backgroundImage")
    kept = right.locator(".wt-microscope-heatmap td.wt-cell:not([data-masked])")
    assert all("." in kept.nth(k).inner_text() for k in range(kept.count()))  # a kept weight: two decimals
    clean_lab.shot(right, "41-microscope-masked-weights")
    _to(page, right, "attention out", nxt.click)
    assert "= same as the course" in right.locator(".wt-microscope-yours").inner_text()
    table = right.locator(".wt-microscope-compare").inner_text()
    assert "every step your functions make agrees" in table and "≠" not in table
    assert "Every step your functions make agrees with the course's." in _live(right)
    clean_lab.shot(right, "41-microscope-yours-right")

    # by keyboard: Tab reaches every control and each key changes the lab; "yours beside it" chosen with Enter
    def keys_for(kind, name):
        if kind == "button" and "course's forward pass" in name:
            return []  # chosen already: reached, not pressed (yours is chosen next, by its own button)
        return default_keys(kind, name)

    planted.scroll_into_view_if_needed()
    walk = keyboard_walk(planted, keys_for)
    buttons = [name for kind, name in walk["reached"] if kind == "button"]
    assert any("yours beside it" in b for b in buttons) and any("course's forward pass" in b for b in buttons), walk
    assert not walk["missed"] and not walk["unchanged"], walk
    assert walk["live_changes"] >= 2 and all(walk["outlines"]), walk
    assert planted.locator(".wt-microscope-yours").is_visible()  # Enter chose "yours beside it"
    _back_to_the_first_step(page, planted)  # the walk leaves the lab at a step of its own: Next ▶ only goes on
    planted.locator("button.wt-microscope-next").focus()
    _to(page, planted, "attention out", lambda: page.keyboard.press("Enter"))
    said = planted.locator(".wt-microscope-yours").inner_text()
    assert "≠ first difference, largest difference" in said and "attention out" in said, said
    twin = planted.locator(".wt-microscope-compare").inner_text()
    assert "the first step that differs is block 1 · attention out" in twin, twin
    live = _live(planted)
    assert "Yours: ≠ first difference, largest difference" in live, live
    assert "The first step that differs: block 1 · attention out." in live, live
    shot = clean_lab.shot(planted, "41-microscope-yours-planted")
    assert shot.stat().st_size > 10_000
    assert_no_serious(axe_outputs(nb, artifacts, "microscope, yours beside it"), "your code under the microscope")
