"""The release notebooks as a student gets them: each runs top to bottom in JupyterLab, only the unanswered stubs
raise (NotImplementedError), and every lab answers a student's clicks and slides on screen.

The tests of one notebook follow each other and share one run of it (see Lab.run). Screenshots of every lab
before and after the interaction go to artifacts/e2e/.
"""

import pytest
from e2e_lab import NOTEBOOKS, RELEASE, by_description, set_slider, slider_value, wait_text

from whole_transformer.model import ModelConfig, parameter_counts

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

LABS = {  # the labs each notebook shows (the wt-<name> class of each lab's root)
    "01-whole-machine.ipynb": ["machine"],
    "02-microscope.ipynb": ["microscope", "block", "scale"],
    "03-one-word-at-a-time.ipynb": ["decode"],
    "04-how-it-learned.ipynb": ["batch", "training"],
}


def run(lab, name):
    return lab.run(RELEASE, name, "release", "make release")


def check_release_run(lab, name):
    done = run(lab, name)
    not_run = done.not_run()
    assert not not_run, f"{name}: Run All stopped; these cells never ran: {not_run[:5]}"
    wrong = [(i, ename, evalue, line) for i, ename, evalue, line, _ in done.errors() if ename != "NotImplementedError"]
    assert not wrong, f"{name}: cells raised something other than an unanswered stub's NotImplementedError: {wrong}"
    for i, _, _, line, cell in done.errors():
        assert "raises-exception" in cell["tags"], (
            f"{name}: cell {i} ({line!r}) raises NotImplementedError without the raises-exception tag"
        )
    for kind in LABS[name]:
        done.nb.lab_widget(kind)
    assert not done.nb.widget_errors(), f"{name}: a widget failed to display: {done.nb.widget_errors()}"
    return done


# ---------------------------------------------------------------------------------------------- 01
def machine_total(machine):
    return int(machine.locator(".wt-machine-total").get_attribute("data-total"))


def machine_sizes(machine):
    read = {k: slider_value(by_description(machine, "slider", k)) for k in ("d_model", "heads", "blocks", "d_ff")}
    return ModelConfig(
        d_model=int(read["d_model"]), n_heads=int(read["heads"]), n_layers=int(read["blocks"]), d_ff=int(read["d_ff"])
    )


def exercise_machine(lab, nb, prefix):
    machine = nb.lab_widget("machine").first
    machine.scroll_into_view_if_needed()
    lab.shot(machine, f"{prefix}-machine-before")
    total = machine_total(machine)
    assert total == parameter_counts(machine_sizes(machine))["total"], "the shown total is not the model's count"

    # heads: the picture says how the work is split, the total stays exactly the same
    heads = by_description(machine, "slider", "heads")
    h_before = slider_value(heads)
    h_after = "8" if h_before != "8" else "2"
    set_slider(heads, h_after)
    change = machine.locator(".wt-machine-change")
    wait_text(change, f"heads {h_before} → {h_after}")
    assert "unchanged" in change.inner_text()
    assert machine_total(machine) == total, "moving heads changed the total parameter count"

    # d_model: the total follows at once, and heads keep their value where it still divides d_model
    d_model = by_description(machine, "slider", "d_model")
    d_before = slider_value(d_model)
    d_after = "128" if d_before != "128" else "32"
    set_slider(d_model, d_after)
    expected = parameter_counts(machine_sizes(machine))["total"]
    assert expected != total
    machine.locator(f'.wt-machine-total[data-total="{expected}"]').wait_for()
    assert f"{expected:,}" in machine.locator(".wt-machine-total").inner_text()
    lab.page.wait_for_timeout(300)  # let any late message from the page arrive before reading the sliders again
    assert slider_value(heads) == h_after, (
        f"heads changed from {h_after} to {slider_value(heads)} when only d_model moved ({d_before} → {d_after}), "
        f"though {h_after} divides every d_model on the way; the lab says: {change.inner_text()!r}"
    )
    wait_text(change, f"→ {d_after}: total")
    assert machine_total(machine) == parameter_counts(machine_sizes(machine))["total"]
    lab.shot(machine, f"{prefix}-machine-after")


@pytest.mark.parametrize("name", NOTEBOOKS[:1])
def test_release_runs_01(lab, name):
    check_release_run(lab, name)


def test_machine_lab(lab):
    exercise_machine(lab, run(lab, NOTEBOOKS[0]).nb, "01-release")
