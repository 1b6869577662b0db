"""Issue 40's lab items, measured in JupyterLab in Chromium: every label shown in full, on one row.

- the model choosers of the decode lab, the cache lab and the attention maps show the whole label of the chosen
  model, a kept run with a long name and its settings included (the cache lab's cut "your model (60 epoch");
- "■ Stop" and "▶ Play" / "❚❚ Pause" sit on one row each (Stop wrapped);
- after Play reaches the end of a reading the button reads "▶ Play" at once ("❚❚ Pause" flashed);
- the decode lab names a kept run as "your run “name” (…)", never "the model your model (…)";
- the batch lab's counts use one thousands separator ("8,000 targets: 4,511 count").

Screenshots: artifacts/e2e/text-fits-*.png.
"""

import re

import pytest
from e2e_lab import wait_text
from test_e2e_maps import notebook, opened_and_run

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

NAME = "a-long-name-for-my-own-run-seed-3"
LABEL = f"{NAME} (the course's model, seed 3, 1 epoch)"

# For a <select>, the chosen option's text against the room inside the box (its arrow and padding aside); for any
# other element, whether its text runs onto a second line or past its box.
_FITS_JS = """el => {
    const style = getComputedStyle(el);
    const canvas = document.createElement('canvas').getContext('2d');
    canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    if (el.tagName === 'SELECT') {
        const text = el.options[el.selectedIndex].text;
        const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 16;
        return {text, need: canvas.measureText(text).width, room, lines: 1};
    }
    const range = document.createRange();
    range.selectNodeContents(el);
    const tops = new Set(Array.from(range.getClientRects(), r => Math.round(r.top)));
    return {text: el.innerText, need: el.scrollWidth, room: el.clientWidth, lines: tops.size};
}"""


def fits(locator):
    found = locator.evaluate(_FITS_JS)
    assert found["lines"] == 1, f"{found['text']!r} wraps onto {found['lines']} rows"
    assert found["need"] <= found["room"] + 1, f"{found['text']!r} needs {found['need']:.0f} px in {found['room']} px"
    return found


def test_the_labs_show_every_label_whole_and_on_one_row(lab):
    path = notebook(
        lab.server,
        "text-fits/03-labs.ipynb",
        "from whole_transformer.labs import attention_maps_lab, batch_lab, cache_lab, decode_lab, training_lab\n"
        f"t = training_lab()\nt.train('main', epochs=1, seed=3)\nt.keep({NAME!r}, replace=True)",
        f"decode_lab(number=14, checkpoint='yours:{NAME}', interval_ms=150)",
        f"cache_lab(number=742, checkpoint='yours:{NAME}')",
        f"attention_maps_lab(427, checkpoint='yours:{NAME}')",
        "batch_lab('0-999')",
    )
    nb = opened_and_run(lab, path)
    decode, cache = nb.lab_widget("decode").first, nb.lab_widget("cache").first
    maps = nb.lab_widget("maps").first
    for root, cls in ((decode, "wt-decode-checkpoint"), (cache, "wt-cache-checkpoint"), (maps, "wt-maps-checkpoint")):
        select = root.locator(f".{cls} select")
        assert " ".join(select.evaluate("s => s.options[s.selectedIndex].text").replace("\xa0", " ").split()) == LABEL
        fits(select)
        lab.shot(root, f"text-fits-{cls}")
    for cls in ("wt-decode-stop", "wt-decode-playpause"):
        fits(decode.locator(f"button.{cls}"))
    decode.get_by_role("button", name="Reset").click()
    wait_text(decode.locator(".wt-live"), f"your run “{NAME}” (the course's model, seed 3, 1 epoch) reads it")
    assert "the model your model" not in decode.locator(".wt-live").inner_text()
    decode.locator("button.wt-decode-playpause").click()
    wait_text(decode.locator(".wt-decode-status"), "Done after", timeout=30)
    texts = []
    for _ in range(10):  # the moment the reading ends, and a few ticks after: never "Pause"
        texts.append(decode.locator("button.wt-decode-playpause").inner_text())
        lab.page.wait_for_timeout(40)
    assert all("Play" in t for t in texts), texts
    lab.shot(decode, "text-fits-decode-after-play")
    batch = nb.lab_widget("batch").first
    wait_text(batch.locator(".wt-live"), "8,000 targets:")
    said = batch.locator(".wt-live").inner_text()
    numbers = re.findall(r"\d[\d,]*\d|\d", said.split("targets:")[1])
    assert numbers and all("," in n for n in numbers if len(n.replace(",", "")) > 3), said  # 4,511, not 4511
