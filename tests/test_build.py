"""The builds (``build/``): release/ and notebooks/ are up to date with source/, hold what each edition
should (no solution or hidden test in release/; solutions but no tests in the lecture edition), and
the lecture HTML stands alone offline."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from whole_transformer.course.cells import SOLUTION, nbgrader_meta, split_hidden, split_region
from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.publish import lecture as build
from whole_transformer.course.publish.lecture import lecture_is_current

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------ release/ and notebooks/
def _solution_lines(source: str) -> list[str]:
    return [line.strip() for line in split_region(source, SOLUTION)[1].split("\n") if line.strip()]


def test_release_is_up_to_date_with_source(released_course):
    fresh = Course(released_course).release  # source/ released afresh, once per run (tests/simclass/built.py)
    committed = REPO / "release" / ASSIGNMENT
    names = sorted(p.name for p in (REPO / "source" / ASSIGNMENT).glob("*.ipynb"))
    assert sorted(p.name for p in committed.glob("*.ipynb")) == names, "run make release"
    for name in names:
        want = json.loads((fresh / name).read_text())
        have = json.loads((committed / name).read_text())
        assert have == want, f"release/{ASSIGNMENT}/{name} is stale: run make release"


def test_release_holds_no_solution_and_no_hidden_test():
    for src in sorted((REPO / "source" / ASSIGNMENT).glob("*.ipynb")):
        released = REPO / "release" / ASSIGNMENT / src.name
        text = released.read_text()
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text and "END HIDDEN" not in text
        rel = nbformat.read(released, as_version=4)
        code_lines = {ln.strip() for c in rel.cells for ln in c.source.split("\n")}
        all_text = "\n".join(c.source for c in rel.cells)
        source = nbformat.read(src, as_version=4)
        visible = "\n".join(split_hidden(c.source)[0] for c in source.cells)
        for c in source.cells:
            for line in _solution_lines(c.source):
                assert line not in code_lines, f"{src.name}: solution line in the release: {line!r}"
            _, hidden = split_hidden(c.source)
            for line in hidden.split("\n"):
                line = line.strip()
                if len(line) >= 12 and line not in visible:  # a line also in a visible cell is no secret
                    assert line not in all_text, f"{src.name}: hidden test line in the release: {line!r}"
        for c in rel.cells:
            meta = nbgrader_meta(c)
            if meta.get("solution") and c.cell_type == "code":
                assert "raise NotImplementedError()" in c.source, (src.name, meta.get("grade_id"))


def test_lecture_edition_is_up_to_date_with_source():
    problems = lecture_is_current(Course(REPO))
    assert not problems, "run make lecture:\n" + "\n".join(problems)


def test_lecture_edition_keeps_solutions_and_drops_tests_and_metadata():
    for nb_path in sorted((REPO / "notebooks").glob("*.ipynb")):
        text = nb_path.read_text()
        nb = nbformat.read(nb_path, as_version=4)
        assert "HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text and "_hidden_" not in text
        assert all("nbgrader" not in c.metadata for c in nb.cells)
        state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
        views = [
            o
            for c in nb.cells
            if c.cell_type == "code"
            for o in c.outputs
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        ]
        assert views and all(
            o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] in state for o in views
        ), nb_path.name
    src = nbformat.read(REPO / "source" / ASSIGNMENT / "03-one-word-at-a-time.ipynb", as_version=4)
    lec = nbformat.read(REPO / "notebooks" / "03-one-word-at-a-time.ipynb", as_version=4)
    sol = [ln for c in src.cells for ln in _solution_lines(c.source)]
    lec_text = "\n".join(c.source for c in lec.cells)
    assert sol and all(line in lec_text for line in sol)


def test_lecture_html_is_standalone_and_offline():
    import hashlib
    import re

    html_dir = REPO / "notebooks" / "html"
    static = html_dir / build.STATIC
    for f in (build.VENDOR / "html-manager").iterdir():
        assert hashlib.sha256((static / f.name).read_bytes()).digest() == hashlib.sha256(f.read_bytes()).digest()
    for page in sorted(html_dir.glob("*.html")):
        text = page.read_text()
        urls = re.findall(r"""(?:src|href)=["']([^"'#]+)["']""", text)
        remote = [u for u in urls if re.match(r"(?:https?:)?//", u)]
        assert not remote, f"{page.name} loads {remote[:3]} from the network"
        assert f"'{build.WIDGET_JS}'" in text and build.REQUIRE_JS in text
        assert "application/vnd.jupyter.widget-state+json" in text
        for u in urls:
            if not u.startswith(("data:", "mailto:")):
                assert (page.parent / u).exists(), f"{page.name}: {u} is missing"
