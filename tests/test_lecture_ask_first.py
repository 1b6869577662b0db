"""The lecture edition asks first: every question's and Predict's answer waits behind "Show answer".

In the lecture notebooks each question's answer cell has its input folded away, with a "Show answer" control
(a closed ``<details>``) right above it holding the answer; the offline HTML page leaves the answer cell's input
out, so the answer appears only inside that control; the worked page, for reading, shows every answer in place.
The browser test (tests/e2e/test_e2e_maps.py) opens them and checks the answers are hidden until shown.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from notebook_helpers import SOURCE

from whole_transformer.course.cells import grade_id, is_test
from whole_transformer.course.publish.ask_first import ANSWER_TAG, SHOW_TAG, SUMMARY, answer_lines, worked
from whole_transformer.course.publish.lecture import export_html, lecture_notebook
from whole_transformer.exercise_checks import EXERCISES
from whole_transformer.questions import QUESTIONS

NAMES = sorted(p.name for p in SOURCE.glob("*.ipynb"))


def questions(name):
    """qid (a question's, or an exercise's) → its answer lines, from the source notebook's solution cells."""
    nb = nbformat.read(SOURCE / name, as_version=4)
    asked = set(QUESTIONS) | set(EXERCISES)
    return {grade_id(c): answer_lines(c.source) for c in nb.cells if grade_id(c) in asked and not is_test(c)}


def outside_the_controls(html: str) -> str:
    return re.sub(r'<details class="wt-answer">.*?</details>', "", html, flags=re.S)


def plain(html: str) -> str:
    import html as html_text

    return " ".join(html_text.unescape(re.sub(r"<[^>]+>", "", html)).split())


@pytest.mark.parametrize("name", NAMES)
def test_each_answer_waits_behind_a_show_answer_control(name):
    asked = questions(name)
    assert asked, f"{name} has no question"
    nb = lecture_notebook(nbformat.read(SOURCE / name, as_version=4))
    shows = [i for i, c in enumerate(nb.cells) if SHOW_TAG in c.metadata.get("tags", [])]
    assert len(shows) == len(asked)
    for i in shows:
        show, answer = nb.cells[i], nb.cells[i + 1]
        assert show.source.startswith(f'<details class="wt-answer"><summary>{SUMMARY}</summary>')
        assert ANSWER_TAG in answer.metadata["tags"] and answer.metadata["jupyter"]["source_hidden"] is True
        assert answer_lines(answer.source) in show.source
    back = worked(nb)
    assert len(back.cells) == len(nb.cells) - len(shows)
    assert not any(ANSWER_TAG in c.metadata.get("tags", []) or "jupyter" in c.metadata for c in back.cells)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_html_page_shows_the_answers_only_inside_the_control_and_the_worked_page_in_place(name, tmp_path):
    nb = lecture_notebook(nbformat.read(SOURCE / name, as_version=4))
    asking = export_html(nb, tmp_path / "ask.html").read_text(encoding="utf-8")
    reading = export_html(worked(nb), tmp_path / "worked.html").read_text(encoding="utf-8")
    assert asking.count(f"<summary>{SUMMARY}</summary>") == len(questions(name))
    assert "<summary>" not in reading
    for qid, lines in questions(name).items():
        line = " ".join(lines.split())  # an exercise's solution has several lines; the page's text is one run
        assert line in plain(asking), f"{qid}: the answer is not behind its control"
        assert line not in plain(outside_the_controls(asking)), f"{qid}: the answer shows without asking"
        assert line in plain(reading), f"{qid}: the worked page lacks the answer"
