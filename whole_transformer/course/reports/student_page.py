"""One HTML page per student for the whole assignment, ready to upload to an LMS or to mail.

``make feedback`` writes ``feedback-pages/<student>.html`` after nbgrader's feedback (already
filtered: no hidden test). The page holds, in this order: the student's total, the late penalty if
any (on time, late by how much, an extension), the score of every notebook, the instructor's
comments, then every notebook's feedback as nbgrader wrote it. It is self-contained (one file, the
styles of nbgrader's feedback inlined once).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from whole_transformer.course.csp import with_policy
from whole_transformer.course.layout import ASSIGNMENT, Course

from .lms import _n
from .totals import StudentTotal, totals

FOLDER = "feedback-pages"
_BODY = re.compile(r"<body[^>]*>(?P<body>.*)</body>", re.S | re.I)
#: the score table's own spacing (after nbgrader's styles, which leave a table's cells touching)
SCORE_STYLE = (
    "<style>table.wt-scores{border-collapse:collapse;margin:0.5em 0 1em}"
    "table.wt-scores th,table.wt-scores td{padding:0.3em 1.2em 0.3em 0;text-align:left}"
    "table.wt-scores td+td,table.wt-scores th+th{text-align:right}"
    "body>h1,body>h2,body>p,body>ul,body>table{margin-left:1rem;margin-right:1rem}</style>"
)
#: what makes a feedback page readable at a glance, at any width and zoom: an output (the verdict and its hint
#: first) wraps within the page instead of standing on one line as wide as the text; code keeps its lines
READABLE = (
    '<style id="wt-readable">'
    "div.output_subarea pre,.jp-OutputArea-output pre,.wt-verdict pre"
    "{white-space:pre-wrap;overflow-wrap:anywhere;word-break:normal}"
    "div.output_subarea,div.output_area,.jp-OutputArea-output{max-width:100%;min-width:0}"
    "img,svg,table{max-width:100%}"
    "</style>"
)


def readable(page: str) -> str:
    """The page with ``READABLE`` at the end of its head (once)."""
    if 'id="wt-readable"' in page:
        return page
    at = page.lower().find("</head>")
    return page[:at] + READABLE + page[at:] if at != -1 else READABLE + page


_STYLES = re.compile(r"<style[^>]*>.*?</style>|<link[^>]+stylesheet[^>]*>", re.S | re.I)


def comments(course: Course, student: str) -> list[tuple[str, str, str]]:
    """(notebook, cell, comment) of every comment the instructor wrote in the Formgrader."""
    out = []
    with Gradebook(course.db_url) as gb:
        try:
            sub = gb.find_submission(ASSIGNMENT, student)
        except MissingEntry:
            return []
        for nb in sorted(sub.notebooks, key=lambda n: n.name):
            for c in nb.comments:
                if c.manual_comment and c.manual_comment.strip():
                    out.append((nb.name, c.name, c.manual_comment.strip()))
    return out


def page(course: Course, t: StudentTotal) -> str:
    esc = html.escape
    parts = [f"<h1>The whole Transformer: feedback for {esc(t.display_name)}</h1>"]
    shown = t.printed()  # rounded once, at the end: the parts printed add up to the total printed
    total = f"<p class='wt-total'><b>Total: {_n(shown.final)} / {_n(shown.max_score)}</b>"
    if shown.penalty:
        total += f" ({_n(shown.score)} from the tests, less {_n(shown.penalty)} for lateness)"
    parts.append(total + "</p>")
    if t.lateness is not None:
        parts.append(f"<p class='wt-late'>Handed in: {esc(t.lateness.describe())}.</p>")
        when = t.handed_in()  # the time the course used (term/handin_time.py), in the course's time zone
        if when:
            parts.append(f"<p class='wt-when'>{esc('H' + when[1:])}.</p>")
    rows = "".join(
        f"<tr><td>{esc(n)}</td><td>{_n(shown.notebooks[n])} / {_n(m)}</td></tr>" for n, (_, m) in t.notebooks.items()
    )
    parts.append(f"<table class='wt-scores'><tr><th>Notebook</th><th>Score</th></tr>{rows}</table>")
    said = comments(course, t.student)
    if said:
        items = "".join(f"<li><b>{esc(nb)}</b>, {esc(cell)}: {esc(text)}</li>" for nb, cell, text in said)
        parts.append(f"<h2>Your instructor's comments</h2><ul class='wt-comments'>{items}</ul>")
    styles = ""
    folder = course.feedback / t.student / ASSIGNMENT
    for name in t.notebooks:
        f = folder / f"{name}.html"
        if not f.is_file():
            parts.append(f"<h2>{esc(name)}</h2><p>No feedback: this notebook was not handed in or not graded.</p>")
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        if not styles:
            styles = "\n".join(_STYLES.findall(text))
        m = _BODY.search(text)
        parts.append(
            f"<section class='wt-notebook' id='{esc(name)}'><h2>{esc(name)}</h2>"
            f"{m.group('body') if m else text}</section>"
        )
    return with_policy(
        readable(
            "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>Feedback: {esc(t.display_name)}, The whole Transformer</title>{styles}{SCORE_STYLE}</head>"
            f"<body>{''.join(parts)}</body></html>\n"
        )
    )


def write_pages(course: Course, all_totals: list[StudentTotal] | None = None) -> list[Path]:
    """feedback-pages/<student>.html for every student who handed something in."""
    all_totals = totals(course) if all_totals is None else all_totals
    out_dir = course.root / FOLDER
    out_dir.mkdir(exist_ok=True)
    written = []
    for t in all_totals:
        if not (course.submitted / t.student).is_dir():
            continue
        path = out_dir / f"{t.student}.html"
        path.write_text(page(course, t), encoding="utf-8")
        written.append(path)
    return written
