"""The sanitizer on its own (``plugins/inert.py``), fast: the browser tests are tests/e2e/test_e2e_safe_to_open.py.

The hostile notebook of ``simclass/payloads.py`` is rendered as the Formgrader and the feedback render a
notebook (nbconvert's HTML exporter). Made inert first, the page holds no active piece of any payload;
rendered as it is, it holds them all (the check can fail). Ordinary formatting survives.
"""

from __future__ import annotations

import base64
import re

import nbformat.v4 as nbf
from simclass.minicourse import mini_notebook
from simclass.payloads import CATALOGUE, hostile

from whole_transformer.course.csp import policy, with_policy
from whole_transformer.course.plugins.inert import clean_file, clean_notebook

#: an element that runs or loads something, or any tag with an event handler or a javascript:/data: page link
ACTIVE = re.compile(
    r"<(script|iframe|object|embed|base|form|style|math|meta)\b[^>]*>"
    r"|<[a-z][^>]*\son[a-z]+\s*=[^>]*>|<[a-z][^>]*(href|src)=\"?(javascript|data:text)[^>]*>",
    re.I,
)


def _body(nb) -> str:
    from nbconvert import HTMLExporter

    page, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    return page.split("<body", 1)[1]


def _student_part(body: str) -> str:
    """The body after the mini notebook's own last cell: what the hostile student added."""
    return body.split("the end", 1)[1]


def test_a_hostile_notebook_made_inert_holds_nothing_active():
    raw = _student_part(_body(hostile(mini_notebook())))
    found = {m.group(0).split()[0].lower() for m in ACTIVE.finditer(raw)}
    assert {"<script>", "<iframe", "<object", "<embed", "<base", "<form", "<style>", "<math>"} <= found, found
    clean = _student_part(_body(clean_notebook(hostile(mini_notebook()))))
    assert [m.group(0) for m in ACTIVE.finditer(clean)] == []
    assert "Here is my answer." in clean and "All grades saved." in clean and "see my plot" in clean
    assert "student-wt-form-payload" not in clean and "position:fixed" not in clean


def test_every_payload_is_tried_somewhere():
    assert len(CATALOGUE) >= 15
    assert {p.where for p in CATALOGUE} == {"markdown", "attachment", "output", "raw", "answer", "folder"}


def test_formatting_survives():
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
    cell = nbf.new_markdown_cell(
        "# Heading\n\n**bold** *it* `code` and $x^2 < y$\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        '![plot](attachment:p.png)\n\n<span style="color:red;position:fixed">red</span>'
    )
    cell["attachments"] = {"p.png": {"image/png": png}}
    html_out = nbf.new_output("display_data", data={"text/html": "<table><tr><td>7</td></tr></table>"})
    nb = nbf.new_notebook(cells=[cell, nbf.new_code_cell("x", outputs=[html_out])])
    body = _body(clean_notebook(nb))
    for piece in ("<h1", "<strong>bold</strong>", "<em>it</em>", "<code>code</code>", "$x^2 &lt; y$", "<td>7</td>"):
        assert piece in body, piece
    assert f'src="data:image/png;base64,{png}"' in body and "<td>1</td>" in body
    assert 'style="color:red"' in body  # a colour stays; a position does not


def test_a_graded_hand_in_keeps_its_notebooks_inert_and_no_page_a_browser_would_run():
    assert clean_file("notes.html", b"<script>x</script>") is None and clean_file("a.svg", b"<svg/>") is None
    assert clean_file("timestamp.txt", b"2026-12-02 10:00:00 UTC") == b"2026-12-02 10:00:00 UTC"
    nb = nbf.new_notebook(cells=[nbf.new_markdown_cell("<img src=x onerror=alert(1)>")])
    assert b"onerror" not in clean_file("01.ipynb", nbf.writes(nb).encode())


def test_a_written_page_allows_only_its_own_head_scripts():
    page = (
        '<html><head><script src="https://cdn.example/lib/2.0/a.js"></script><script>var ok=1;</script></head>'
        "<body><script>evil()</script></body></html>"
    )
    said = policy(page)
    assert "script-src https://cdn.example/lib/2.0/ 'sha256-" in said and "default-src 'none'" in said
    assert said.count("sha256-") == 1  # the body's script has no hash
    assert with_policy(with_policy(page)).count("Content-Security-Policy") == 1
