"""Issue 33 in JupyterLab, in Chromium, by mouse and by keyboard: the attention maps, your own model, the lecture
edition that asks first.

- The attention maps lab for 427 on the 60- and on the 2-epoch model: every small map drawn, masked cells
  hatched and saying "masked", a cell selected by a click and another by Tab then Enter, the live line naming the
  query and key tokens each time, axe-core clean; the two labs shot side by side
  (artifacts/e2e/maps-427-60-and-2.png).
- Your model: a model trained in a training lab (Train clicked), then a fresh kernel in another notebook beside
  it: the decode lab, the attention maps and the held-out table offer "your model" and read with it
  (artifacts/e2e/yours-*.png); before the training, the labs say how to get one.
- The lecture edition (notebooks/, `make lecture`): in JupyterLab and in the offline page, every answer is hidden
  behind "Show answer" until it is clicked or opened from the keyboard (artifacts/e2e/ask-first-*.png).
"""

import pytest
from a11y_checks import assert_no_serious, axe_outputs
from e2e_lab import LECTURE, copy_into, require_built, set_slider, wait_text

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


def notebook(server, path, *cells):
    """A notebook of code cells written under the server's root (tests never run the repository's notebooks)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    target = server.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return path


def opened_and_run(lab, path):
    lab.close_everything()
    nb = lab.open(path)
    nb.run_all()
    return nb


def choose(select, label):
    """Choose the option whose text is ``label`` (ipywidgets writes its spaces as no-break spaces)."""
    texts = [" ".join(t.replace("\xa0", " ").split()) for t in select.locator("option").all_inner_texts()]
    assert label in texts, f"{label!r} is not offered: {texts}"
    select.select_option(index=texts.index(label))


def live(root):
    return " ".join(root.locator(".wt-live").first.inner_text().split())


def test_attention_maps_by_mouse_and_keyboard(lab, artifacts):
    from PIL import Image

    path = notebook(
        lab.server,
        "maps/maps.ipynb",
        "from whole_transformer.labs import attention_maps_lab",
        'attention_maps_lab(427, "60")',
        'attention_maps_lab(427, "2")',
    )
    nb = opened_and_run(lab, path)
    labs = nb.lab_widget("maps")
    assert labs.count() == 2
    sixty, two = labs.nth(0), labs.nth(1)
    for root in (sixty, two):
        assert root.locator("table.wt-maps-small").count() == 8
        assert root.locator("table.wt-maps-chosen").count() == 1
    masked = sixty.locator("button.wt-maps-cell.wt-maps-masked")
    assert masked.count() == 28 and masked.first.inner_text().strip() == "masked"
    assert "repeating-linear-gradient" in masked.first.evaluate("b => getComputedStyle(b).backgroundImage")
    assert sixty.locator(".wt-maps-table td.wt-maps-masked").count() == 28
    # mouse: the row of 'hundred' (5), the key '2' (1)
    cells = sixty.locator("button.wt-maps-cell")
    cells.nth(5 * 8 + 1).click()
    wait_text(sixty.locator(".wt-live"), "the query 'hundred' (row 5)")
    assert "gives the key '2' (column 1) the weight" in live(sixty)
    # keyboard: from the cell just clicked, Tab to the next cell and press Enter
    cells.nth(5 * 8 + 1).focus()
    lab.page.keyboard.press("Tab")
    assert lab.page.evaluate("() => document.activeElement.classList.contains('wt-maps-cell')")
    lab.page.keyboard.press("Enter")
    wait_text(sixty.locator(".wt-live"), "key '7' (column 2)")
    cells.nth(3 * 8 + 6).focus()
    lab.page.keyboard.press("Space")
    wait_text(sixty.locator(".wt-live"), "may not look at the key 'twenty' (column 6), a later token: masked")
    assert_no_serious(axe_outputs(nb, artifacts, "maps 427, 60 and 2 epochs"), "the attention maps lab")
    shots = [lab.shot(root, f"maps-427-{name}") for root, name in ((sixty, "60"), (two, "2"))]
    images = [Image.open(p) for p in shots]
    side = Image.new("RGB", (sum(i.width for i in images) + 24, max(i.height for i in images)), "white")
    side.paste(images[0], (0, 0))
    side.paste(images[1], (images[0].width + 24, 0))
    side.save(artifacts / "maps-427-60-and-2.png")


MINE = "mine (the course's model, seed 7, 2 epochs)"


def test_your_model_trained_in_one_notebook_is_offered_in_a_fresh_kernel_of_another(lab, artifacts):
    folder = "yours"
    reading = notebook(
        lab.server,
        f"{folder}/03-reading.ipynb",
        "from whole_transformer import task\nfrom whole_transformer.labs import attention_maps_lab, decode_lab, "
        "held_out_table",
        "decode_lab(number=14)",
        "attention_maps_lab(427)",
        "held_out_table(task.split()[1][:6])",
    )
    training = notebook(
        lab.server,
        f"{folder}/04-training.ipynb",
        "from whole_transformer.labs import training_lab\nlab = training_lab()\nlab",
    )
    kept = lab.server.root / folder / "your-models" / "mine.pt"
    assert not kept.exists()
    nb = opened_and_run(lab, reading)
    decode = nb.lab_widget("decode").first
    assert "No model of your own yet: train one in notebook 04" in decode.inner_text()
    assert "mine" not in decode.locator("select").first.inner_text().replace("\xa0", " ")
    nb = opened_and_run(lab, training)
    root = nb.lab_widget("training").first
    set_slider(root.locator(".wt-training-epochs"), "2")
    seed = root.locator(".wt-training-seed input")
    seed.fill("7")
    seed.press("Enter")
    root.get_by_role("button", name="Train").click()
    wait_text(root.locator(".wt-training-status"), "keep it under a name", timeout=120)
    assert "held-out loss" in root.locator(".wt-training-table").inner_text()
    name = root.locator(".wt-training-keep-name input")
    name.fill("mine")
    name.press("Enter")
    root.get_by_role("button", name="Keep this run").click()
    wait_text(root.locator(".wt-training-status"), "Kept as", timeout=60)
    lab.shot(root, "yours-trained")
    assert kept.is_file()
    nb = opened_and_run(lab, reading)  # a fresh kernel
    decode = nb.lab_widget("decode").first
    choose(decode.locator(".wt-decode-checkpoint select"), MINE)
    wait_text(decode.locator(".wt-live"), "your run “mine”")
    next_step = decode.get_by_role("button", name="Next step")
    for _ in range(7):
        if next_step.is_disabled():
            break
        next_step.focus()
        lab.page.keyboard.press("Enter")
        lab.page.wait_for_timeout(300)
    wait_text(decode.locator(".wt-decode-status"), "Done after")
    lab.shot(decode, "yours-decode")
    maps = nb.lab_widget("maps").first
    choose(maps.locator(".wt-maps-checkpoint select"), MINE)
    wait_text(maps.locator(".wt-live"), "Your run “mine” (the course's model, seed 7, 2 epochs) read 427")
    lab.shot(maps, "yours-maps")
    table = nb.panel.locator(".wt-heldout").first
    assert f"{MINE}:" in table.inner_text().replace("\xa0", " ")
    lab.shot(table, "yours-heldout")
    assert_no_serious(axe_outputs(nb, artifacts, "your model in 03's labs"), "03's labs with your model")


def test_the_lecture_edition_hides_each_answer_until_shown_in_jupyterlab(lab):
    require_built(LECTURE, "make lecture", ["01-whole-machine.ipynb"])
    copy_into(lab.server, LECTURE / "01-whole-machine.ipynb", "lecture-ask/01-whole-machine.ipynb")
    lab.close_everything()
    nb = lab.open("lecture-ask/01-whole-machine.ipynb")
    shows = nb.panel.locator("details.wt-answer")
    shows.first.wait_for(state="visible")
    assert shows.count() == 4
    answer = nb.panel.get_by_text("tokens_905 = 8")
    assert all(not answer.nth(i).is_visible() for i in range(answer.count())), "an answer shows without asking"
    lab.shot(shows.first, "ask-first-jupyterlab-closed")
    shows.first.locator("summary").click()
    nb.panel.locator("details.wt-answer[open]").first.get_by_text("tokens_905 = 8").wait_for(state="visible")
    lab.shot(shows.first, "ask-first-jupyterlab-open")
    shows.nth(1).locator("summary").focus()
    lab.page.keyboard.press("Space")
    assert shows.nth(1).evaluate("d => d.open"), "Space on 'Show answer' did not open it"


def test_the_offline_page_hides_each_answer_until_shown(browser, artifacts):
    page_path = LECTURE / "html" / "01-whole-machine.html"
    require_built(LECTURE / "html", "make lecture", ["01-whole-machine.html", "01-whole-machine-worked.html"])
    context = browser.new_context(viewport={"width": 1200, "height": 1600})
    context.route("http*://**", lambda route: route.abort())  # a lecture hall without network
    page = context.new_page()
    page.goto(page_path.as_uri())
    shows = page.locator("details.wt-answer")
    assert shows.count() == 4
    assert not page.get_by_text("tokens_905 = 8").first.is_visible()
    summary = shows.first.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    assert shows.first.evaluate("d => d.open") and page.get_by_text("tokens_905 = 8").first.is_visible()
    summary.screenshot(path=str(artifacts / "ask-first-html-summary.png"))
    shows.first.screenshot(path=str(artifacts / "ask-first-html-open.png"))
    shows.nth(1).locator("summary").click()
    assert shows.nth(1).evaluate("d => d.open")
    worked = context.new_page()
    worked.goto((LECTURE / "html" / "01-whole-machine-worked.html").as_uri())
    assert worked.locator("details.wt-answer").count() == 0
    assert worked.get_by_text("tokens_905 = 8").first.is_visible()
    context.close()
