"""Accessibility checks the browser tests share (tests/e2e/test_e2e_release.py, test_e2e_lecture.py).

- `axe_page(page, name)` / `axe_outputs(nb, name)`: axe-core (tests/e2e/axe.py) with the WCAG 2.1 A/AA tags on a
  whole lecture page, or on the course's own output areas of a notebook open in JupyterLab; every count is written
  to artifacts/e2e/axe-counts.json (page or notebook and state → {rule: elements}), failures or not.
- `colour_vision_shots(lab, root, name)`: the lab screenshotted as it is and under deuteranopia, protanopia and
  tritanopia simulations (SVG colour matrices applied by a CSS filter on the page), to
  artifacts/e2e/cvd/<name>-<vision>.png.
- `images_and_alt(scope)`: every image a notebook's outputs show (<img>, and drawings with role="img") and its
  text alternative.
"""

import json

from axe import ARTIFACTS_NAME, counts, describe, run_axe, serious

# The course's own output areas: what the notebooks' cells display. A traceback (the unanswered stubs raise
# NotImplementedError on purpose) is drawn by JupyterLab and is not the course's content.
OUTPUTS = ".jp-Cell .jp-OutputArea-output:not([data-mime-type='application/vnd.jupyter.stderr'])"

# Colour-vision deficiencies as linear RGB matrices (Machado, Oliveira and Fernandes 2009, severity 1.0).
VISION = {
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def record(artifacts, key, found):
    path = artifacts / ARTIFACTS_NAME
    data = json.loads(path.read_text()) if path.is_file() else {}
    data[key] = {
        "axe": found["version"],
        "serious or critical": counts(serious(found)),
        "all": {v["rule"]: [v["impact"], len(v["nodes"])] for v in found["violations"]},
    }
    path.write_text(json.dumps(data, indent=1, sort_keys=True))


def axe_page(page, artifacts, key):
    found = run_axe(page)
    record(artifacts, key, found)
    return serious(found)


def axe_outputs(nb, artifacts, key):
    found = run_axe(nb.page, include=[f"#{nb.id} {OUTPUTS}"])
    record(artifacts, key, found)
    return serious(found)


def assert_no_serious(bad, where):
    assert not bad, f"{where}: axe-core finds serious or critical WCAG 2.1 A/AA violations:\n{describe(bad)}"


def _filter_svg(vision):
    rows = VISION[vision]
    values = " ".join(" ".join(f"{v:.6f}" for v in row) + " 0 0" for row in rows) + " 0 0 0 1 0"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" style="position:absolute;width:0;height:0" aria-hidden="true">'
        f'<filter id="wt-cvd-{vision}" color-interpolation-filters="linearRGB">'
        f'<feColorMatrix type="matrix" values="{values}"/></filter></svg>'
    )


def colour_vision_shots(lab, root, name):
    """Screenshots of `root` in normal colour vision and under each simulated deficiency; returns their paths."""
    page = lab.page
    out = lab.artifacts / "cvd"
    out.mkdir(exist_ok=True)
    paths = []
    root.scroll_into_view_if_needed()
    paths.append(out / f"{name}-normal.png")
    root.screenshot(path=str(paths[-1]), animations="disabled")
    for vision in VISION:
        page.evaluate(
            """([svg, vision]) => {
                const holder = document.createElement('div');
                holder.id = 'wt-cvd-holder'; holder.innerHTML = svg; document.body.appendChild(holder);
                document.documentElement.style.filter = `url(#wt-cvd-${vision})`;
            }""",
            [_filter_svg(vision), vision],
        )
        try:
            page.wait_for_timeout(100)
            paths.append(out / f"{name}-{vision}.png")
            root.screenshot(path=str(paths[-1]), animations="disabled")
        finally:
            page.evaluate("""() => { document.documentElement.style.filter = '';
                                     document.getElementById('wt-cvd-holder')?.remove(); }""")
    return paths


def images_and_alt(scope):
    """[{kind, alt, where}] for every <img> and every role="img" drawing inside `scope`'s output areas."""
    return scope.evaluate(
        """(root) => Array.from(root.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output [role=img]'))
            .map(el => ({kind: el.tagName.toLowerCase(),
                         alt: (el.tagName === 'IMG' ? el.getAttribute('alt') : el.getAttribute('aria-label')) || '',
                         where: String((el.closest('.wt-lab') || el).getAttribute('class'))}))"""
    )


# ------------------------------------------------------------------------------------------------- keyboard
# how the walk knows a control: a key it keeps while its element lives, its kind and its name as a screen reader says it
_DESCRIBE = """function describe(el) {
    const kind = el.getAttribute('role') === 'slider' ? 'slider' : el.tagName === 'SELECT' ? 'select'
        : el.tagName === 'BUTTON' ? 'button' : el.tagName === 'INPUT' ? (el.type === 'checkbox' ? 'checkbox' : 'text')
        : el.isContentEditable ? 'text' : el.getAttribute('tabindex') === '0' ? 'region' : el.tagName.toLowerCase();
    if (!el.dataset.wtKey) el.dataset.wtKey = String(Math.random()).slice(2);
    const name = el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].textContent)
        || el.textContent || el.title || '';
    return {key: el.dataset.wtKey, kind, name: name.trim().slice(0, 60)};
}"""

_FOCUSED = (
    "root => { "
    + _DESCRIBE
    + """
    const el = document.activeElement;
    if (!el || !root.contains(el)) return null;
    const style = getComputedStyle(el);
    return {...describe(el),
            outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0 || style.boxShadow !== 'none',
            at_min: el.getAttribute('role') === 'slider'
                && el.getAttribute('aria-valuenow') === el.getAttribute('aria-valuemin')};
}"""
)

_LIVE = """root => {
    const live = root.querySelector('.wt-live [aria-live]');
    return live ? {text: live.textContent.trim(), polite: live.getAttribute('aria-live')} : null;
}"""

# the controls on screen now (a disabled control, Next step after <eos>, is none)
_CONTROLS = (
    "root => { "
    + _DESCRIBE
    + """
    return Array.from(root.querySelectorAll('button, select, input, [role=slider], [contenteditable=true]'))
        .filter(el => !el.disabled && el.offsetParent !== null && el.closest('.wt-style') === null
                && el.tabIndex >= 0).map(describe);  // a slider's read-out is taken out of the Tab order
}"""
)


def keyboard_walk(root, keys_for, settle=150, max_tabs=80):
    """From the lab's first control, Tab through it; at each control press `keys_for(kind, name)`'s keys (only arrows,
    Space, Enter) and see whether the lab's text and its live line change. Returns
    {reached: [(kind, name)], unchanged: [(kind, name, keys)], live_changes: n, outlines,
    missed: controls on screen both when the walk started and when it ended that Tab never reached (a control a
    key press hid, such as the scale lab's Show button once the lab shows the runs, or one a key press enabled
    after Tab had passed it, such as Next step after Reset, is not missed)}."""
    page = root.page
    at_start = root.evaluate(_CONTROLS)
    first = root.locator("button, select, input, [role=slider]").first
    first.focus()
    seen, reached, unchanged, outlines = set(), [], [], []
    live_changes = 0
    for _ in range(max_tabs):
        here = root.evaluate(_FOCUSED)
        if here is None:
            break
        if here["key"] not in seen:
            seen.add(here["key"])
            reached.append((here["kind"], here["name"]))
            outlines.append(here["outline"])
            keys = keys_for(here["kind"], here["name"])
            if here["at_min"] and keys == ["ArrowLeft"]:  # a slider at its lowest (an earlier test left it there)
                keys = ["ArrowRight"]
            if keys:
                before, live_before = root.inner_text(), root.evaluate(_LIVE)
                for key in keys:
                    page.keyboard.press(key)
                    page.wait_for_timeout(settle)
                for _ in range(30):  # the kernel answers within a few seconds even on a busy machine
                    after, live_after = root.inner_text(), root.evaluate(_LIVE)
                    if after != before and live_after != live_before:
                        break
                    page.wait_for_timeout(100)
                if after == before:
                    unchanged.append((here["kind"], here["name"], keys))
                if live_after and live_before and live_after["text"] != live_before["text"]:
                    live_changes += 1
        now = root.evaluate(_FOCUSED)
        if now is not None and now["key"] not in seen:  # the key disabled its control and the focus moved on
            continue
        page.keyboard.press("Tab")
        page.wait_for_timeout(60)
    at_end = root.evaluate(_CONTROLS)

    def known(c, keys, names) -> bool:  # a lab may draw a control again (the machine lab redraws its stack)
        return c["key"] in keys or (c["kind"], c["name"]) in names

    start = ({c["key"] for c in at_start}, {(c["kind"], c["name"]) for c in at_start})
    missed = [(c["kind"], c["name"]) for c in at_end if known(c, *start) and not known(c, seen, set(reached))]
    return {
        "reached": reached,
        "unchanged": unchanged,
        "live_changes": live_changes,
        "outlines": outlines,
        "missed": missed,
        "controls": len(at_start),
    }


def default_keys(kind, name):
    """What a keyboard user presses on each kind of control to change it."""
    # A <select> is reached but not pressed: inside JupyterLab's notebook its arrow keys go to the notebook, which
    # selects another cell and takes the focus out of the lab (docs/accessibility.md, "Known not to work")
    return {"slider": ["ArrowLeft"], "checkbox": ["Space"], "button": ["Enter"]}.get(kind, [])
