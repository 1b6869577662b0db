"""The lecture edition as a lecturer uses it (`make lecture` builds notebooks/ and notebooks/html/):

- opened in JupyterLab, each notebook shows its labs from the saved widget state before anything runs;
  run top to bottom, no cell output is an error, and every lab shows again, live;
- each standalone HTML page, opened in Chromium with every network request blocked (a lecture hall without
  network), says at the top that its labs are pictures of a run, and renders the labs' saved views with the
  widget JavaScript shipped beside it; the decode and microscope labs are pictured at the end of their run.

Screenshots: artifacts/e2e/<notebook>-lecture-<lab>-saved.png (opened, not run), -live.png (after Run All),
<notebook>-html-<lab>.png (the offline HTML page).
"""

import json

import pytest
from e2e_lab import COURSE, LABS, LECTURE, NOTEBOOKS, require_built

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

HTML = LECTURE / "html"

# What each lab's saved view must show: something only the kernel could have computed.
SAVED_VIEW = {
    "machine": ".wt-machine-total[data-total]",
    "microscope": ".wt-microscope-heatmap table.wt-heatmap",
    "block": ".wt-block-image img, img.wt-block-image",
    "scale": ".wt-scale-lengths [data-ratio]",
    "decode": ".wt-decode-view .wt-decode-rows .wt-decode-token",
    "maps": ".wt-maps-overview table.wt-maps-small",
    "cache": ".wt-cache-view .wt-cache-rows table",
    "sampling": ".wt-sampling-table .wt-sampling-row",
    "batch": '.wt-batch-count[data-kind="counted"]',
    "training": ".wt-training-chart .wt-loss-line",
}


# The labs that step through a run show it finished (its last step) in a saved copy: a picture of the whole run.
FINISHED = {
    "microscope": (".wt-microscope-title", "next word"),
    "decode": (".wt-decode-status", "Done after"),
}


def check_saved_views(scope, name, shoot, suffix):
    """Every lab of notebook `name` is on the page with the content of its saved view."""
    for kind in LABS[name]:
        root = scope.locator(f".wt-lab.wt-{kind}").first
        try:
            root.wait_for(state="visible", timeout=30_000)
            root.locator(SAVED_VIEW[kind]).first.wait_for(state="attached", timeout=10_000)
        except Exception as err:  # noqa: BLE001 - any way the view fails to show is this failure
            pytest.fail(f"{name}: the {kind} lab's saved view does not show ({SAVED_VIEW[kind]}): {err}")
        if kind == "block":
            assert root.locator("img").first.evaluate("img => img.complete && img.naturalWidth > 200"), (
                f"{name}: the block picture did not load"
            )
        shoot(root, f"{name[:2]}-{suffix}-{kind}")


def lecture_test(lab, name):
    require_built(LECTURE, "make lecture", [name])
    meta = json.loads((LECTURE / name).read_text())["metadata"]
    state = meta.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    assert state, f"notebooks/{name} has no saved widget state: `make lecture` must save it"

    def saved(nb):  # opened, not run: the labs show from the saved widget state
        check_saved_views(nb.panel, name, lab.shot, "lecture-saved")

    # JupyterLab draws widgets only in trusted notebooks (else it shows their text repr), so the lecturer trusts
    # the lecture edition once, as `jupyter trust notebooks/*.ipynb` does.
    done = lab.run(LECTURE, name, "lecture", "make lecture", before_run=saved, trust=True)
    assert not done.not_run(), f"{name}: Run All stopped; these cells never ran: {done.not_run()[:5]}"
    errors = [(i, ename, evalue, line) for i, ename, evalue, line, _ in done.errors()]
    assert not errors, f"lecture {name}: cells raised errors: {errors}"
    check_saved_views(done.nb.panel, name, lab.shot, "lecture-live")
    assert not done.nb.widget_errors(), f"{name}: a widget failed to display: {done.nb.widget_errors()}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_lecture_notebook(lab, name):
    lecture_test(lab, name)


@pytest.fixture(scope="module")
def offline_page(browser):
    """A page that can read local files and nothing else: every request to a network address is aborted."""
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    blocked = []

    def block(route):
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    context.route("**/*", block)
    page = context.new_page()
    page.blocked = blocked
    page.errors, page.missing = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("requestfailed", lambda r: r.url.startswith("file://") and page.missing.append(r.url))
    yield page
    context.close()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_lecture_html_offline(offline_page, lab, name):
    require_built(LECTURE, "make lecture", [name])
    html = HTML / name.replace(".ipynb", ".html")
    if not html.is_file():
        pytest.fail(f"{html.relative_to(COURSE)} does not exist: run `make lecture` to export the HTML", pytrace=False)
    page = offline_page
    page.blocked.clear()
    page.errors.clear()
    page.missing.clear()
    page.goto(html.as_uri())
    top = page.locator(".jp-MarkdownCell").first.inner_text()
    assert "as it looked after one run" in top and "nothing is computed again" in " ".join(top.split()), (
        f"{html.name} does not say at the top that its labs are pictures of a run: {top[:200]!r}"
    )
    check_saved_views(page, name, lab.shot, "html")
    for kind in LABS[name]:
        if kind in FINISHED:
            where, text = FINISHED[kind]
            shown = page.locator(f".wt-lab.wt-{kind} {where}").first.inner_text()
            assert text in shown, f"{html.name}: the {kind} lab is not pictured at the end of its run: {shown!r}"
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)  # fonts and images the widgets asked for
    errors = page.locator(".jupyter-widgets-error-widget, .jp-OutputArea-output:has-text('Error displaying widget')")
    assert errors.count() == 0, f"{html.name}: {errors.all_inner_texts()}"
    assert not page.blocked, f"{html.name} asked the network (blocked; it must work offline): {page.blocked}"
    assert not page.errors, f"{html.name}: JavaScript errors: {page.errors}"
    base = html.parent.as_uri() + "/"
    missing = sorted({url.replace(base, "") for url in page.missing})
    assert not missing, f"{html.name} asked for files that are not beside it (e.g. the widgets' icon font): {missing}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_lecture_html_meets_wcag_21_aa(offline_page, artifacts, name):
    """axe-core with the WCAG 2.1 A/AA tags finds nothing serious or critical on the whole page (the template's
    syntax colours and prompts, and the labs' saved views); colour-vision screenshots of each lab go to
    artifacts/e2e/cvd/<notebook>-html-<lab>-<vision>.png."""
    from a11y_checks import VISION, _filter_svg, assert_no_serious, axe_page

    require_built(LECTURE, "make lecture", [name])
    page = offline_page
    page.goto((HTML / name.replace(".ipynb", ".html")).as_uri())
    for kind in LABS[name]:
        page.locator(f".wt-lab.wt-{kind}").first.wait_for(state="visible", timeout=30_000)
    page.wait_for_timeout(500)  # the labs' script names the sliders once they are drawn
    assert page.locator(".wt-lab .noUi-handle:not([aria-label])").count() == 0, "a slider handle has no name"
    bad = axe_page(page, artifacts, f"lecture html/{name.replace('.ipynb', '.html')}")
    assert_no_serious(bad, f"notebooks/html/{name.replace('.ipynb', '.html')}")
    out = artifacts / "cvd"
    out.mkdir(exist_ok=True)
    for kind in LABS[name]:
        root = page.locator(f".wt-lab.wt-{kind}").first
        for vision in VISION:
            page.evaluate(
                """([svg, vision]) => { const d = document.createElement('div'); d.id = 'wt-cvd';
                d.innerHTML = svg; document.body.appendChild(d);
                document.documentElement.style.filter = `url(#wt-cvd-${vision})`; }""",
                [_filter_svg(vision), vision],
            )
            root.screenshot(path=str(out / f"{name[:2]}-html-{kind}-{vision}.png"), animations="disabled")
            page.evaluate(
                "() => { document.documentElement.style.filter = ''; document.getElementById('wt-cvd').remove(); }"
            )
