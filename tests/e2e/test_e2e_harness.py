"""The harness itself: JupyterLab runs a generated notebook with an ipywidgets slider, the browser moves the
slider, the kernel answers, the error of a tagged cell is read back, and the widget state is saved."""

import json

import nbformat
import pytest
from e2e_lab import by_description, copy_into, set_slider, slider_value

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

DEMO = [
    """import ipywidgets as w
slider = w.IntSlider(value=3, min=1, max=10, description="n")
shown = w.HTML()
def show(change=None):
    shown.value = f"<b class='demo-square'>n² = {slider.value ** 2}</b>"
show()
slider.observe(show, names="value")
demo = w.VBox([slider, shown])
demo.add_class("wt-lab"); demo.add_class("wt-demo")
demo""",
    "raise NotImplementedError('a stub nobody answered')",
    "print('still running after the stub')",
]


@pytest.fixture
def demo_notebook(jupyter_server, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in DEMO]
    nb.cells[1].metadata["tags"] = ["raises-exception"]
    path = tmp_path / "demo.ipynb"
    nbformat.write(nb, path)
    copy_into(jupyter_server, path, "harness/demo.ipynb")
    return "harness/demo.ipynb"


def test_slider_round_trip(clean_lab, demo_notebook, jupyter_server):
    lab = clean_lab
    nb = lab.open(demo_notebook)
    # open() waited until the status bar said Idle; the kernel may be Busy again a moment later (widgets starting,
    # a loaded machine), so the status bar is waited for once more rather than read once
    assert nb.wait_kernel("Idle").strip().endswith("| Idle")
    nb.run_all()

    cells = nb.code_cells()
    assert [c["count"] is not None for c in cells] == [True, True, True], cells
    assert [o["ename"] for o in cells[1]["outputs"] if o["output_type"] == "error"] == ["NotImplementedError"]
    assert "still running after the stub" in cells[2]["outputs"][0]["text"]

    demo = nb.lab_widget("demo")
    square = demo.locator(".demo-square")
    assert square.inner_text() == "n² = 9"
    lab.shot(demo, "00-harness-before")
    slider = by_description(demo, "slider", "n")
    set_slider(slider, 7)
    assert slider_value(slider) == "7"
    square.filter(has_text="n² = 49").wait_for()  # the kernel's callback answered
    lab.shot(demo, "00-harness-after")
    assert not nb.widget_errors()

    nb.save()
    saved = json.loads((jupyter_server.root / demo_notebook).read_text())
    state = saved["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    values = [m["state"].get("value") for m in state.values() if m["model_name"] == "IntSliderModel"]
    assert values == [7], "JupyterLab did not save the widget state with the notebook"
    assert not [e for e in lab.console if "widget" in e.lower()], lab.console
