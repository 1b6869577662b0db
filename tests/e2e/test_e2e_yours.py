"""Your code under the microscope in Chromium (issue 41): the microscope lab with a student's four functions.

A notebook defines the four functions of 02 as a student writes them (right versions of
tests/implementations/correct.toml), then shows ``microscope_lab(yours=globals())`` twice: with them as they
are, and with a planted mistake (multi_head_attention without its output bias). Chosen by mouse and walked by
keyboard: "yours beside it" shows no difference anywhere with the right code; with the mistake the first
difference is named at "attention out", in words ("≠ first difference", the largest difference) and in the
table twin. axe-core finds nothing serious; screenshots of both go to artifacts/e2e/.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import nbformat
import pytest
from a11y_checks import assert_no_serious, axe_outputs
from e2e_lab import copy_into

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

CORRECT = tomllib.loads((Path(__file__).parents[1] / "implementations" / "correct.toml").read_text(encoding="utf-8"))


def _right(exercise: str) -> str:
    return CORRECT[exercise][0]["code"]


PLANTED = """
_right_mha = multi_head_attention


def multi_head_attention(x, w_q, w_k, w_v, w_o, b_o, n_heads, key_pad=None):
    return _right_mha(x, w_q, w_k, w_v, w_o, 0 * b_o, n_heads, key_pad)  # the output bias forgotten
"""


@pytest.fixture
def yours_notebook(jupyter_server, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    cells = [
        "import numpy as np\nfrom whole_transformer.labs import microscope_lab\n\n\ndef softmax(x):\n"
        "    e = np.exp(x - x.max(axis=-1, keepdims=True))\n    return e / e.sum(axis=-1, keepdims=True)",
        *(_right(ex) for ex in ("layer_norm", "multi_head_attention", "decoder_block", "forward")),
        "microscope_lab(step=0, yours=globals())",
        PLANTED,
        "microscope_lab(step=0, yours=globals())",
    ]
    nb.cells = [nbformat.v4.new_code_cell(src.strip("\n")) for src in cells]
    path = tmp_path / "yours.ipynb"
    nbformat.write(nb, path)
    copy_into(jupyter_server, path, "yours41/yours.ipynb")
    return "yours41/yours.ipynb"


def _walk_to(page, lab, label: str) -> None:
    """Next ▶ pressed with the keyboard until the step's title names ``label``'s step."""
    name = label.split(" · ")[-1]
    lab.locator("button", has_text="Next").first.focus()
    for _ in range(30):
        if f": {name}" in lab.locator(".wt-microscope-title").inner_text():
            return
        page.keyboard.press("Enter")
        page.wait_for_timeout(200)
    raise AssertionError(f"never reached {label}")


def test_your_code_under_the_microscope(clean_lab, yours_notebook, artifacts):
    nb = clean_lab.open(yours_notebook)
    nb.run_all()
    page = clean_lab.page
    right, planted = nb.lab_widget("microscope").all()
    for lab in (right, planted):
        lab.locator(".wt-microscope-whose button", has_text="yours beside it").click()  # by mouse
    page.wait_for_timeout(500)
    # the right code: no step differs
    _walk_to(page, right, "block 1 · attention out")
    assert "= same as the course" in right.locator(".wt-microscope-yours").inner_text()
    table = right.locator(".wt-microscope-compare").inner_text()
    assert "every step your functions make agrees" in table and "≠" not in table
    clean_lab.shot(right, "41-microscope-yours-right")
    # the planted mistake: the first difference named at attention out, in words, in the lab and its table
    _walk_to(page, planted, "block 1 · attention out")
    said = planted.locator(".wt-microscope-yours").inner_text()
    assert "≠ first difference, largest difference" in said and "attention out" in said
    assert (
        "the first step that differs is block 1 · attention out"
        in planted.locator(".wt-microscope-compare").inner_text()
    )
    shot = clean_lab.shot(planted, "41-microscope-yours-planted")
    assert shot.stat().st_size > 10_000
    assert_no_serious(axe_outputs(nb, artifacts, "microscope, yours beside it"), "your code under the microscope")
