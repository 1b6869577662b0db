"""The sampling lab (issue 32) in JupyterLab, in Chromium, by mouse and by keyboard.

742 on the 60-epoch model: at temperature 1 every one of the 20 readings is right (the button clicked with the
mouse); the temperature slider moved to 3 and the top-k slider to 5 with the arrow keys; the table then keeps 5
rows, each dropped row saying "dropped (top-k)" and hatched; the button pressed with Enter gives readings with
wrong ones and names the most common; the table is a Tab stop; the live line follows each change; the seed
repeats the same readings; axe-core finds nothing serious; the lab fits a laptop's notebook and is shot to
artifacts/e2e/sampling-742.png.
"""

import re

import pytest
from a11y_checks import assert_no_serious, axe_outputs
from e2e_lab import assert_fits, set_slider, wait_text

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


def notebook(server, path, *cells):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    target = server.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return path


def test_sampling_lab_by_mouse_and_keyboard(lab, artifacts):
    path = notebook(
        lab.server, "sampling/sampling.ipynb", "from whole_transformer.labs import sampling_lab", "sampling_lab(742)"
    )
    lab.close_everything()
    nb = lab.open(path)
    nb.run_all()
    root = nb.lab_widget("sampling").first
    wait_text(root.locator(".wt-live"), "Step 3 of reading 742")
    assert root.locator("tr.wt-sampling-row").count() == 42 and root.locator("tr.wt-dropped").count() == 0
    # mouse: read it 20 times at temperature 1
    root.get_by_role("button", name="Read it 20 times").click()
    wait_text(root.locator(".wt-sampling-readings"), "20 of 20 readings of 742 are right")
    # the live line is the lab's next message after the readings: it may reach the page a moment later
    wait_text(root.locator(".wt-live"), "20 of 20 readings of 742 are right")
    # keyboard: temperature 3, top-k 5
    set_slider(root.locator(".wt-sampling-temperature"), "3.00")
    wait_text(root.locator(".wt-live"), "temperature 3, top-k off")
    set_slider(root.locator(".wt-sampling-topk"), "5")
    wait_text(root.locator(".wt-live"), "5 of 42 tokens kept")
    assert root.locator("tr.wt-kept").count() == 5 and root.locator("tr.wt-dropped").count() == 37
    dropped = root.locator("tr.wt-dropped").first
    assert "dropped (top-k)" in dropped.inner_text()
    assert "repeating-linear-gradient" in dropped.evaluate("r => getComputedStyle(r).backgroundImage")
    button = root.get_by_role("button", name="Read it 20 times")
    button.focus()
    lab.page.keyboard.press("Enter")
    shown = wait_text(root.locator(".wt-sampling-readings"), "of 20 readings of 742 are right (temperature 3")
    right = int(re.search(r"(\d+) of 20 readings", shown).group(1))
    assert right < 20 and "The most common wrong ones" in shown
    said = wait_text(root.locator(".wt-live"), "The most common wrong one:")
    assert f"{right} of 20 readings of 742 are right" in said
    lab.page.keyboard.press("Enter")  # the same seed: the same twenty readings
    lab.page.wait_for_timeout(500)
    assert root.locator(".wt-sampling-readings").inner_text() == shown
    # the table scrolls inside a region that takes the focus
    region = root.locator(".wt-sampling-table")
    region.focus()
    assert lab.page.evaluate("() => document.activeElement.classList.contains('wt-sampling-table')")
    assert region.get_attribute("aria-label")
    assert_no_serious(axe_outputs(nb, artifacts, "sampling 742, temperature 3, top-k 5"), "the sampling lab")
    assert_fits(lab, nb, root, "sampling-742")
