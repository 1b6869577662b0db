"""The release notebooks as a student gets them: each runs top to bottom in JupyterLab, only the unanswered stubs
raise (NotImplementedError), and every lab answers a student's clicks, slides and typing on screen.

The tests of one notebook follow each other and share one run of it (see Lab.run). Screenshots of every lab
before and after the interaction go to artifacts/e2e/<notebook>-release-<lab>-{before,after}.png.

Every lab, in its widest state (the microscope at each of its steps, the batch lab with "5, 17, 905", the
decode lab at the end of a long reading, the training lab after a run), fits a 1000 px wide notebook: no
element in it, nor the output area around it, is wider than its box (scrollWidth ≤ clientWidth). Those
states are screenshotted to artifacts/e2e/<notebook>-release-<lab>-widest.png.
The `exercise_*` functions are used by the lecture tests too.
"""

import functools
import re

import pytest
from a11y_checks import assert_no_serious, axe_outputs, colour_vision_shots, default_keys, images_and_alt, keyboard_walk
from e2e_lab import (
    LABS,
    NOTEBOOKS,
    RELEASE,
    assert_fits,
    by_description,
    overflow,
    set_notebook_width,
    set_slider,
    slider_value,
    type_into,
    wait_text,
)

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

N01, N02, N03, N04 = NOTEBOOKS


def run(lab, name):
    return lab.run(RELEASE, name, "release", "make release")


def check_labs_shown(nb, name):
    for kind in LABS[name]:
        nb.lab_widget(kind)
    assert not nb.widget_errors(), f"{name}: a widget failed to display: {nb.widget_errors()}"


def check_release_run(lab, name):
    done = run(lab, name)
    wrong = [(i, ename, evalue, line) for i, ename, evalue, line, _ in done.errors() if ename != "NotImplementedError"]
    not_run = done.not_run()
    assert not not_run, f"{name}: Run All stopped at an error {done.errors()[-1][:4]}; never ran: {not_run[:3]}…"
    assert not wrong, f"{name}: cells raised something other than an unanswered stub's NotImplementedError: {wrong}"
    for i, _, _, line, cell in done.errors():
        assert "raises-exception" in cell["tags"], (
            f"{name}: cell {i} ({line!r}) raises NotImplementedError without the raises-exception tag"
        )
    check_labs_shown(done.nb, name)
    return done


# ---------------------------------------------------------------------------------------------- 01
def machine_total(machine):
    return int(machine.locator(".wt-machine-total").get_attribute("data-total"))


def machine_config(machine):
    from whole_transformer.model import ModelConfig

    read = {k: int(slider_value(by_description(machine, "slider", k))) for k in ("d_model", "heads", "blocks", "d_ff")}
    return ModelConfig(d_model=read["d_model"], n_heads=read["heads"], n_layers=read["blocks"], d_ff=read["d_ff"])


def exercise_machine(lab, nb, prefix):
    """Heads change nothing in the total; d_model changes it to the model's own count."""
    from whole_transformer.model import parameter_counts

    machine = nb.lab_widget("machine").first
    lab.shot(machine, f"{prefix}-machine-before")
    total = machine_total(machine)
    assert total == parameter_counts(machine_config(machine))["total"], "the shown total is not the model's count"

    heads = by_description(machine, "slider", "heads")
    h_before = slider_value(heads)
    h_after = "8" if h_before != "8" else "2"
    set_slider(heads, h_after)
    change = machine.locator(".wt-machine-change")
    wait_text(change, f"heads {h_before} → {h_after}")
    assert "unchanged" in change.inner_text()
    assert machine_total(machine) == total, "moving heads changed the total parameter count"

    d_model = by_description(machine, "slider", "d_model")
    d_before = slider_value(d_model)
    d_after = "128" if d_before != "128" else "32"
    set_slider(d_model, d_after)
    expected = parameter_counts(machine_config(machine))["total"]
    assert expected != total
    machine.locator(f'.wt-machine-total[data-total="{expected}"]').wait_for()
    assert f"{expected:,}" in machine.locator(".wt-machine-total").inner_text()
    lab.shot(machine, f"{prefix}-machine-after")
    lab.page.wait_for_timeout(300)  # let a late message from the page arrive before reading the sliders again
    assert slider_value(heads) == h_after, (
        f"heads changed from {h_after} to {slider_value(heads)} when only d_model moved ({d_before} → {d_after}), "
        f"though {h_after} divides every d_model on the way; the lab says: {change.inner_text()!r}"
    )
    wait_text(change, f"→ {d_after}: total")
    assert machine_total(machine) == parameter_counts(machine_config(machine))["total"]
    assert_fits(lab, nb, machine, f"{prefix}-machine-widest")


# ---------------------------------------------------------------------------------------------- 02
def microscope_view(micro):
    return (
        micro.locator(".wt-microscope-title").inner_text(),
        micro.locator(".wt-microscope-shape").inner_text(),
        micro.locator(".wt-microscope-heatmap table.wt-heatmap").first.get_attribute("data-shape"),
        micro.locator(".wt-microscope-heatmap").inner_text(),
    )


def exercise_microscope(lab, nb, prefix):
    """Next steps through the intermediates (shape label and heatmap change); Previous goes back."""
    micro = nb.lab_widget("microscope").first
    lab.shot(micro, f"{prefix}-microscope-before")
    step = by_description(micro, "slider", "step")
    assert micro.locator(".wt-microscope-next").is_disabled(), "the microscope does not open at its last step"
    set_slider(step, "0")  # it opens at the last step, the word; the first steps are the ids
    micro.locator(".wt-microscope-title", has_text="step 0 (0–").wait_for()
    views = [microscope_view(micro)]
    start = int(slider_value(step))
    nxt, prev = micro.locator("button.wt-microscope-next"), micro.locator("button.wt-microscope-prev")
    # Step forward (at least 4 steps) until the shape label and the heatmap's shape have both changed.
    for k in range(1, 9):
        nxt.click()
        step.locator(".widget-readout", has_text=str(start + k)).wait_for()
        micro.locator(".wt-microscope-title", has_text=f"step {start + k} (0–").wait_for()
        views.append(microscope_view(micro))
        if k >= 4 and views[-1][1] != views[0][1] and views[-1][2] != views[0][2]:
            break
    first, last = views[0], views[-1]
    assert last[1] != first[1], f"the shape label never changed in {len(views) - 1} steps: {first[1]!r}"
    assert last[2] != first[2], f"the heatmap kept its shape {first[2]} for {len(views) - 1} steps"
    assert all(a[3] != b[3] for a, b in zip(views, views[1:], strict=False)), "a step left the heatmap as it was"
    lab.shot(micro, f"{prefix}-microscope-after")
    prev.click()
    micro.locator(".wt-microscope-title", has_text=f"step {start + len(views) - 2} (0–").wait_for()
    assert microscope_view(micro) == views[-2], "Previous did not bring back the step before"
    assert "block 0" not in micro.inner_text(), "the microscope numbers blocks from 0; 01 and 03 say block 1 and 2"


def microscope_every_step_fits(lab, nb, prefix):
    """Step through every step of the microscope: each fits a 1000 px notebook; the widest is screenshotted."""
    micro = nb.lab_widget("microscope").first
    set_notebook_width(nb)
    step = by_description(micro, "slider", "step")
    nxt = micro.locator("button.wt-microscope-next")
    set_slider(step, "0")
    micro.locator(".wt-microscope-title", has_text="step 0 (0–").wait_for()
    last = int(re.search(r"step 0 \(0–(\d+)\)", micro.locator(".wt-microscope-title").inner_text())[1])
    widest, problems = (0, -1), []
    for k in range(last + 1):
        if k:
            nxt.click()
            micro.locator(".wt-microscope-title", has_text=f"step {k} (0–").wait_for()
        assert slider_value(step) == str(k)
        found = overflow(micro)
        problems += [f"step {k}: {b}" for b in found["bad"]]
        widest = max(widest, (found["content"], k))
    assert nxt.is_disabled(), "Next is still active at the last step"
    set_slider(step, str(widest[1]))
    micro.locator(".wt-microscope-title", has_text=f"step {widest[1]} (0–").wait_for()
    assert_fits(lab, nb, micro, f"{prefix}-microscope-widest")
    assert not problems, f"microscope steps that do not fit a 1000 px notebook: {problems[:6]}"


def exercise_block(lab, nb, prefix):
    """The block picture is a static drawing: it is shown, as an image that loaded."""
    block = nb.lab_widget("block").first
    image = block.locator(".wt-block-image img, img.wt-block-image").first
    image.wait_for()
    assert image.evaluate("img => img.complete && img.naturalWidth > 200"), "the block picture did not load"
    lab.shot(block, f"{prefix}-block")
    assert_fits(lab, nb, block, f"{prefix}-block-widest")


def exercise_scale(lab, nb, prefix):
    """Switching the √d_model factor off shrinks the token rows against the position rows (the ratio drops 8×)."""
    scale = nb.lab_widget("scale").first
    lab.shot(scale, f"{prefix}-scale-before")
    shown = scale.locator(".wt-scale-lengths [data-ratio]").first.get_attribute("data-ratio")
    ratio = float(shown)
    box = scale.locator(".wt-scale-factor input[type=checkbox]")
    on = box.is_checked()
    box.click()
    scale.locator(f'.wt-scale-lengths [data-ratio]:not([data-ratio="{shown}"])').wait_for()
    new = float(scale.locator(".wt-scale-lengths [data-ratio]").first.get_attribute("data-ratio"))
    factor = ratio / new if on else new / ratio
    assert factor == pytest.approx(8, rel=0.01), f"the factor √64 = 8 should scale the ratio 8×: {ratio} → {new}"
    lab.shot(scale, f"{prefix}-scale-after")
    assert_fits(lab, nb, scale, f"{prefix}-scale-widest")


# ---------------------------------------------------------------------------------------------- 03
@functools.cache
def greedy_words(checkpoint, number):
    """What the shipped model says, computed here (outside the browser) to compare with the page."""
    from whole_transformer.decode import greedy_trace
    from whole_transformer.task import VOCAB, prompt
    from whole_transformer.train import load_model

    trace = greedy_trace(load_model(checkpoint), prompt(number), max_new=6)
    return [VOCAB[i] for i in trace.ids[len(trace.prompt) :]]


def read_aloud(lab, decode, checkpoint_label, number):
    """Pick the model, type the number, press Next step until the lab says the reading ended; the picked words."""
    decode.locator(".wt-decode-checkpoint select").select_option(label=checkpoint_label)
    type_into(decode.locator(".wt-decode-number input"), str(number))
    status = decode.locator(".wt-decode-status")
    wait_text(status, f"The prompt of {number} has")
    words = []
    for k in range(1, 9):
        decode.locator("button.wt-decode-next").click()
        wait_text(status, re.compile(rf"Step {k}:|Done after {k} steps"))
        assert not re.search(r"Step \d+ of", status.inner_text()), "the status tells the answer's length"
        wait_text(decode.locator(".wt-decode-view"), f"step {k}:")
        words.append(decode.locator(".wt-decode-picked").inner_text().strip())
        bars = decode.locator(".wt-decode-att")
        tokens = decode.locator(".wt-decode-rows .wt-decode-token")
        assert bars.count() == tokens.count() == len(str(number)) + k, (  # the prompt (digits, =) and the words
            f"step {k}: {bars.count()} attention bars for {tokens.count()} input tokens"
        )
        heights = [b.bounding_box()["height"] for b in bars.all()]
        assert sum(heights) > 20, f"step {k}: the attention bars are not drawn (heights {heights})"
        if status.locator(".wt-decode-right, .wt-decode-wrong").count():
            assert decode.locator("button.wt-decode-next").is_disabled(), "Next step is still active after the end"
            return words
    pytest.fail(f"reading {number} never ended; the words so far: {words}")


def exercise_decode(lab, nb, prefix):
    decode = nb.lab_widget("decode").first
    lab.shot(decode, f"{prefix}-decode-before")
    words = read_aloud(lab, decode, "after 60 epochs", 427)
    assert words == ["four", "hundred", "twenty", "seven", "<eos>"] == greedy_words("60", 427)
    assert decode.locator(".wt-decode-status .wt-decode-right").count() == 1
    assert "four hundred twenty seven" in decode.locator(".wt-decode-status").inner_text()
    lab.shot(decode, f"{prefix}-decode-after-427")

    words = read_aloud(lab, decode, "after 2 epochs", 14)
    assert words == greedy_words("2", 14), "the page does not show what the 2-epoch model says"
    assert decode.locator(".wt-decode-status .wt-decode-wrong").count() == 1, "the 2-epoch model read 14 right?"
    lab.shot(decode, f"{prefix}-decode-after-14")

    # ▶ Play, then ■ Stop: the reading stops where it is (Reset goes back to the prompt)
    decode.locator("button.wt-decode-playpause").click()
    wait_text(decode.locator(".wt-decode-status"), "Step 2:", timeout=20)
    decode.locator("button.wt-decode-stop").click()
    stopped = decode.locator(".wt-decode-status").inner_text()
    lab.page.wait_for_timeout(1500)
    assert decode.locator(".wt-decode-status").inner_text() == stopped, "■ Stop did not stop the reading"
    assert "The prompt of" not in stopped, f"■ Stop went back to the prompt: {stopped!r}"
    assert decode.locator("button.wt-decode-playpause").inner_text().strip() == "▶ Play"
    words = read_aloud(lab, decode, "after 60 epochs", 777)  # the longest answer: 4 + 5 tokens at its last step
    assert words == greedy_words("60", 777)
    assert_fits(lab, nb, decode, f"{prefix}-decode-widest")


def exercise_cache(lab, nb, prefix):
    """Read 742 with the cache by mouse: each step one row more in K and V, the new row named, both ways equal."""
    cache = nb.lab_widget("cache").first
    lab.shot(cache, f"{prefix}-cache-before")
    cache.locator(".wt-cache-checkpoint select").select_option(label="after 60 epochs")
    status = cache.locator(".wt-cache-live")  # the live line says what each step did
    type_into(cache.locator(".wt-cache-number input"), "777")  # another number: read, timed both ways
    wait_text(status, "The prompt of 777 has 4 tokens")
    type_into(cache.locator(".wt-cache-number input"), "742")
    wait_text(status, "The prompt of 742 has 4 tokens")  # a new number starts at its prompt
    for k in range(1, 6):
        cache.locator("button.wt-cache-next").click()
        wait_text(status, f"Step {k}:")
        rows = cache.locator(".wt-cache-K tr th.wt-row")
        assert rows.count() == 3 + k, f"step {k}: {rows.count()} cached key rows"
        new = [t for t in rows.all_inner_texts() if t.startswith("new →")]
        assert len(new) == (4 if k == 1 else 1), f"step {k}: the rows marked new: {new}"
        assert "agree to the last printed digit" in cache.locator(".wt-cache-verdict").inner_text()
        assert "multiply-adds" in cache.locator(".wt-cache-cost").inner_text()
    assert "seven hundred forty two <eos>" in cache.locator(".wt-cache-status").inner_text()
    assert cache.locator("button.wt-cache-next").is_disabled(), "Next step is still active after the end"
    cache.locator(".wt-cache-block select").select_option(label="block 1")
    cache.locator(".wt-cache-head select").select_option(label="head 3")
    wait_text(cache.locator(".wt-cache-view"), "block 1, head 3")
    lab.shot(cache, f"{prefix}-cache-after-742")
    cache.locator("button.wt-cache-reset").click()
    wait_text(status, "the cache is empty")
    for k in range(1, 6):  # the whole reading again: left at its widest, for the shots and checks that follow
        cache.locator("button.wt-cache-next").click()
        wait_text(status, f"Step {k}:")
    assert_fits(lab, nb, cache, f"{prefix}-cache-widest")


# ---------------------------------------------------------------------------------------------- 04
def exercise_batch(lab, nb, prefix):
    """Typing other numbers changes the shapes and the target counts to those of task.batch_counts."""
    from whole_transformer.task import batch_counts

    batch = nb.lab_widget("batch").first
    lab.shot(batch, f"{prefix}-batch-before")
    numbers = [5, 17, 905]
    type_into(batch.locator(".wt-batch-numbers input"), ", ".join(map(str, numbers)))
    want = batch_counts(numbers)
    B, L = want["x_shape"]
    batch.locator(f'.wt-batch-summary [data-name="x"][data-shape="{B}x{L}"]').wait_for()
    for kind in ("targets", "counted", "prompt", "padding"):
        shown = batch.locator(f'.wt-batch-count[data-kind="{kind}"]').get_attribute("data-value")
        assert int(shown) == want[kind], f"{kind}: the lab shows {shown}, batch_counts says {want[kind]}"
    assert batch.locator(".wt-batch-grid .wt-target").count() == want["targets"]
    lab.shot(batch, f"{prefix}-batch-after")
    assert_fits(lab, nb, batch, f"{prefix}-batch-widest")
    type_into(batch.locator(".wt-batch-numbers input"), "777, 117, 373")  # the longest sequences, 8 tokens of x
    batch.locator('.wt-batch-summary [data-name="x"][data-shape="3x8"]').wait_for()
    assert_fits(lab, nb, batch, f"{prefix}-batch-longest")


def exercise_training(lab, nb, prefix):
    """One epoch of the copy task: the progress bar fills, its loss curve appears, the model reads numbers."""
    train = nb.lab_widget("training").first
    lab.shot(train, f"{prefix}-training-before")
    train.locator(".wt-training-run select").select_option(label="copy task")
    epochs = by_description(train, "slider", "epochs")
    type_into(epochs.locator(".widget-readout"), "1")
    epochs.locator(".widget-readout", has_text="1").wait_for()
    line = train.locator('.wt-training-chart .wt-loss-line[data-run="copy"][data-points="1"]')
    assert line.count() == 0, "a one-epoch copy-task curve is on the chart before training it"
    train.locator("button.wt-training-train").click()
    line.wait_for(state="attached", timeout=60_000)
    status = train.locator(".wt-training-status")
    wait_text(status, "after 1 epochs", timeout=60)
    progress = train.locator(".wt-training-progress")
    assert "epoch 1" in progress.inner_text()
    fill = progress.locator(".progress-bar").first.bounding_box()["width"]
    track = progress.locator(".progress").first.bounding_box()["width"]
    assert fill == pytest.approx(track, abs=2), f"the progress bar is {fill:.0f} of {track:.0f} px after the run"
    train.locator(".wt-training-reads .wt-read").first.wait_for()
    lab.shot(train, f"{prefix}-training-after")
    assert_fits(lab, nb, train, f"{prefix}-training-widest")


# ---------------------------------------------------------------------------------------------- accessibility
def check_axe(lab, artifacts, name, state):
    """axe-core (WCAG 2.1 A/AA) finds nothing serious or critical in the notebook's own output areas."""
    done = run(lab, name)
    bad = axe_outputs(done.nb, artifacts, f"release/{name} {state}")
    assert_no_serious(bad, f"release/{name}, labs {state}")


def check_keyboard(lab, nb, kind, keys_for=default_keys, typed=()):
    """Keyboard only, from the lab's first control: Tab reaches every control, each key changes the lab, the live line
    (an aria-live region) follows, and focus is visible. `typed`: controls changed by typing (text boxes), reached
    but not pressed."""
    root = nb.lab_widget(kind).first
    root.scroll_into_view_if_needed()
    walk = keyboard_walk(root, keys_for)
    print(kind, walk)
    controls = [r for r in walk["reached"] if r[0] != "region"]
    assert not walk["missed"], f"{kind}: Tab never reached these controls on screen: {walk['missed']}"
    assert not walk["unchanged"], f"{kind}: these keys changed nothing on screen: {walk['unchanged']}"
    changed = sum(1 for r in walk["reached"] if keys_for(*r)) - len(walk["unchanged"])
    live_changes = walk["live_changes"]
    for name, text in dict(typed).items():  # a text box: reached by Tab above, changed by typing and Enter
        assert ("text", name) in walk["reached"], f"{kind}: Tab never reached the text box {name!r}: {walk['reached']}"
        box = root.get_by_role("textbox", name=name)
        before, live_before = root.inner_text(), root.locator(".wt-live [aria-live]").inner_text()
        box.focus()
        box.fill(text)
        box.press("Enter")
        for _ in range(50):
            if root.inner_text() != before and root.locator(".wt-live [aria-live]").inner_text() != live_before:
                break
            root.page.wait_for_timeout(100)
        assert root.inner_text() != before, f"{kind}: typing {text!r} into {name!r} changed nothing on screen"
        changed += 1
        live_changes += root.locator(".wt-live [aria-live]").inner_text() != live_before
    assert changed >= 1 and live_changes >= changed - 1, (
        f"{kind}: the live line changed after {live_changes} of {changed} changes"
    )
    outlines = [o for (k, _), o in zip(walk["reached"], walk["outlines"], strict=True) if k != "select"]
    assert all(outlines), f"{kind}: focus is not visible on some controls: {walk['reached']}"
    assert all(name for _, name in controls), f"{kind}: a control without a name: {walk['reached']}"
    lab.shot(root, f"{nb.path.split('/')[-1][:2]}-release-{kind}-keyboard")


def check_figures(nb, name):
    """Every image the notebook shows, and every lab drawing (role="img"), has its own non-empty text alternative."""
    found = images_and_alt(nb.panel)
    empty = [f for f in found if not f["alt"].strip()]
    assert not empty, f"{name}: images without alt text: {empty}"
    alts = [f["alt"] for f in found]
    assert len(set(alts)) == len(alts), f"{name}: figures share their alt text: {alts}"
    return found


def check_colour_vision(lab, nb, name):
    for kind in LABS[name]:
        colour_vision_shots(lab, nb.lab_widget(kind).first, f"{name[:2]}-{kind}")


# ---------------------------------------------------------------------------------------------- tests
def machine_keys(kind, name):
    """Enter on every part of the stack but the last two, so that a block is chosen when Tab reaches the
    block's "inside" buttons (choosing the output layer hides them); of those, Enter on the two not chosen."""
    return [] if name in ("final LayerNorm", "output layer", "whole block") else default_keys(kind, name)


def exercise_block_and_scale(lab, nb, prefix):
    exercise_block(lab, nb, prefix)
    exercise_scale(lab, nb, prefix)


def pytest_generate_tests(metafunc):
    """A notebook's ``test_lab``: one test per entry of its class's ``labs``, in that order."""
    if metafunc.function.__name__ == "test_lab":
        labs = metafunc.cls.labs
        metafunc.parametrize("exercise", labs, ids=[f.__name__.removeprefix("exercise_") for f in labs])


class ReleaseNotebook:
    """What every release notebook is checked for; a class per notebook adds its labs. pytest runs a class's
    tests in order, these first, so the tests of one notebook follow each other and share one run of it."""

    name = ""
    labs = ()  # exercise_*(lab, nb, prefix) functions: what a student does with the notebook's labs

    def test_runs(self, lab):
        check_release_run(lab, self.name)

    def test_axe_default(self, lab, artifacts):
        check_axe(lab, artifacts, self.name, "default")

    def test_lab(self, lab, exercise):
        exercise(lab, run(lab, self.name).nb, f"{self.name[:2]}-release")

    def keyboard_colour_vision_and_axe_widest(self, lab, artifacts, *walks):
        """The keyboard walk of each lab (kind, then check_keyboard's options), the figures' alt text, the colour
        vision shots and axe at the labs' widest; returns the figures found."""
        nb = run(lab, self.name).nb
        for kind, *options in walks:
            check_keyboard(lab, nb, kind, *options)
        found = check_figures(nb, self.name)
        check_colour_vision(lab, nb, self.name)
        check_axe(lab, artifacts, self.name, "widest")
        return found


class TestRelease01(ReleaseNotebook):
    name, labs = N01, (exercise_machine,)

    def test_keyboard_colour_vision_and_axe_widest(self, lab, artifacts):
        self.keyboard_colour_vision_and_axe_widest(lab, artifacts, ("machine", machine_keys))


class TestRelease02(ReleaseNotebook):
    name, labs = N02, (exercise_microscope, microscope_every_step_fits, exercise_block_and_scale)

    def test_keyboard_colour_vision_and_axe_widest(self, lab, artifacts):
        found = self.keyboard_colour_vision_and_axe_widest(lab, artifacts, ("microscope",), ("scale",))
        assert any("decoder block" in f["alt"] for f in found), f"the block picture has no alt text: {found}"


class TestRelease03(ReleaseNotebook):
    name, labs = N03, (exercise_decode, exercise_cache)

    def test_keyboard_colour_vision_and_axe_widest(self, lab, artifacts):
        self.keyboard_colour_vision_and_axe_widest(lab, artifacts, ("decode",), ("cache",))


class TestRelease04(ReleaseNotebook):
    name, labs = N04, (exercise_batch, exercise_training)

    def test_keyboard_colour_vision_and_axe_widest(self, lab, artifacts):
        # Train with 59 epochs would take a minute: the keyboard test moves the run and the epochs, not Train
        found = self.keyboard_colour_vision_and_axe_widest(
            lab,
            artifacts,
            ("batch", default_keys, {"numbers": "5, 14, 427"}),
            ("training", lambda kind, name: [] if name == "Train" else default_keys(kind, name)),
        )
        assert any("Chart of training loss" in f["alt"] for f in found), f"the training chart has no alt text: {found}"
