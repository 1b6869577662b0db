"""JupyterLab as the instructor uses it: nbgrader's extension is enabled, its menu opens the formgrader,
and the formgrader finds the course's assignment (the server runs in a copy of the course folder)."""

import pytest
from e2e_lab import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


def test_nbgrader_menu_opens_formgrader(clean_lab):
    lab = clean_lab
    page = lab.page
    page.locator("#jp-menu-panel .lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    menu = page.locator("#jp-mainmenu-nbgrader")
    menu.wait_for()
    items = [t.strip() for t in menu.locator(".lm-Menu-itemLabel").all_inner_texts() if t.strip()]
    for wanted in ("Assignment List", "Course List", "Formgrader"):
        assert wanted in items, f"nbgrader's menu lacks {wanted!r}: {items}"
    lab.shot(None, "00-jupyterlab-nbgrader-menu")

    menu.locator(".lm-Menu-item", has=page.locator(".lm-Menu-itemLabel", has_text="Formgrader")).first.click()
    frame = page.frame_locator("#formgrader iframe")
    frame.locator("body", has_text="Manage Assignments").first.wait_for()
    if not (REPO / "nbgrader_config.py").is_file():
        pytest.fail("nbgrader_config.py does not exist at the top of the course, so the formgrader finds no course")
    frame.locator("#main_table, table", has_text="whole-transformer").first.wait_for()
    lab.shot(None, "00-jupyterlab-formgrader")
