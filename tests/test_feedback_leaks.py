"""The feedback check finds everything a student must not see, whatever of it got into a feedback file.

A course is built from source/ (nbgrader's release and gradebook, as ``make release`` makes them).
Then feedback files are written as nbgrader's generate_feedback writes them (nbconvert's HTML, code
highlighted) with one thing planted in each: a line of a hidden test, the EXPECTED part's JSON line,
an expected value on its own (a list of ids, a float), a line of a reference solution. Each file
must be caught and removed, and an honest feedback file, or one showing a solution line the
student wrote themselves, must be kept.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import nbformat.v4 as nbf
import pytest
from simclass.minicourse import make_course, mini_notebook

from whole_transformer.course.cells import SOLUTION, grade_id, is_test, nbgrader_meta, split_region
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.plugins.hide_tests import HideHiddenTests, split_hidden
from whole_transformer.course.publish.release import release
from whole_transformer.course.reports.feedback import (
    EXPECTED,
    HIDDEN,
    INPUT,
    remove_leaks,
    secrets,
)
from whole_transformer.course.reports.feedback import (
    SOLUTION as SOLUTION_KIND,
)

pytestmark = pytest.mark.xdist_group("feedback-leaks")
NB = "04-how-it-learned"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A released course (about 5 s to build: the tests that take it are marked slow, out of make quick)."""
    root = make_course(tmp_path_factory.mktemp("leaks") / "course", real_source=True)
    c = Course(root)
    release(c, log=lambda *a: None)
    return c


def source_cells(course: Course, notebook: str = NB):
    return nbformat.read(course.root / "source" / ASSIGNMENT / f"{notebook}.ipynb", as_version=4).cells


def a_test_cell(course: Course, exercise: str):
    return next(c for c in source_cells(course) if is_test(c) and grade_id(c).startswith(f"test_{exercise}"))


def planted(course: Course):
    """One text of each kind, taken from the source of notebook 04: (kind, what, text)."""
    loss = a_test_cell(course, "masked_loss")
    xy = a_test_cell(course, "make_xy")
    _, hidden = split_hidden(loss.source)
    kernel_part, payload = split_expected(hidden)
    line = next(ln.strip() for ln in kernel_part.splitlines() if "g.random_array(" in ln or "g.array(" in ln)
    json_line = next(ln.strip() for ln in hidden.splitlines() if ln.strip().startswith('# {"name"'))
    a_float = next(repr(c["want"]) for c in payload["cases"] if type(c["want"]) is float and len(repr(c["want"])) > 12)
    _, xy_payload = split_expected(split_hidden(xy.source)[1])
    a_pair = str(xy_payload["cases"][-1]["want"])
    solution = next(
        c for c in source_cells(course) if nbgrader_meta(c).get("solution") and "def masked_loss" in c.source
    )
    sol_line = next(ln.strip() for ln in split_region(solution.source, SOLUTION)[1].splitlines() if "return" in ln)
    return [
        (HIDDEN, "a line of the hidden test", line),
        (EXPECTED, "the EXPECTED part's JSON line", json_line),
        (EXPECTED, "an expected loss (a float)", a_float),
        (EXPECTED, "an expected (x, y) pair of make_xy", a_pair),
        (SOLUTION_KIND, "a line of the reference solution", sol_line),
    ]


def write_feedback(course: Course, student: str, cells: list, notebook: str = NB) -> Path:
    """A feedback file as generate_feedback writes one: the notebook as nbconvert's HTML."""
    from nbconvert import HTMLExporter

    nb = nbf.new_notebook(cells=cells)
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    body, _ = HTMLExporter().from_notebook_node(nb)
    path = course.feedback / student / ASSIGNMENT / f"{notebook}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def hand_in(course: Course, student: str, cells: list, notebook: str = NB) -> None:
    nb = nbf.new_notebook(cells=cells)
    path = course.submitted / student / ASSIGNMENT / f"{notebook}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def output(text: str):
    return nbf.new_code_cell("print(In[-3])", outputs=[nbf.new_output("stream", name="stdout", text=text + "\n")])


def honest_cells(course: Course) -> list:
    """What a feedback file shows of notebook 04: its released cells, a test cell's verdict."""
    release = nbformat.read(course.root / "release" / ASSIGNMENT / f"{NB}.ipynb", as_version=4)
    cells = []
    for c in release.cells:
        c = nbf.new_code_cell(c.source) if c.cell_type == "code" else nbf.new_markdown_cell(c.source)
        if c.cell_type == "code" and c.source.startswith("check("):
            c.outputs = [nbf.new_output("stream", name="stdout", text="Tests passed.\n")]
        cells.append(c)
    return cells


@pytest.mark.slow
def test_the_secrets_hold_every_kind(course):
    found = secrets(course)
    kinds = set(found.values())
    assert kinds == {HIDDEN, EXPECTED, SOLUTION_KIND, INPUT}, kinds
    tests = [
        c
        for name in ("01-whole-machine", "02-microscope", "03-one-word-at-a-time", NB)
        for c in source_cells(course, name)
        if is_test(c) and "BEGIN EXPECTED" in c.source
    ]
    for cell in tests:  # every EXPECTED line and every expected value of every case is searched for
        hidden = split_hidden(cell.source)[1]
        json_line = next(ln.strip() for ln in hidden.splitlines() if ln.strip().startswith("# {"))
        assert found.get(json_line) == EXPECTED, grade_id(cell)
        _, payload = split_expected(hidden)
        for case in payload["cases"]:
            import json

            assert f'"want": {json.dumps(case["want"], ensure_ascii=False)}' in found, (grade_id(cell), case)


@pytest.mark.slow
@pytest.mark.parametrize(
    "index", range(5), ids=["hidden-line", "expected-json", "expected-float", "expected-pair", "solution"]
)
def test_each_kind_planted_in_an_output_is_caught(course, index):
    kind, what, text = planted(course)[index]
    student = f"planted-{index}"
    f = write_feedback(course, student, [*honest_cells(course), output(text)])
    log = []
    assert remove_leaks(course, [f], log.append) == [f], f"{what} ({text!r}) was not caught"
    assert not f.exists() and kind in log[0], log


@pytest.mark.slow
def test_a_solution_line_in_highlighted_code_is_caught(course):
    """nbconvert splits highlighted code into many tags: the check reads the text between them."""
    _, _, line = planted(course)[4]
    cell = nbf.new_code_cell(f"def masked_loss(logits, targets, pad=0):\n    {line}\n")
    f = write_feedback(course, "copied-nothing", [*honest_cells(course), cell])
    assert line not in f.read_text()  # split by the highlighting
    assert remove_leaks(course, [f], lambda *a: None) == [f]


@pytest.mark.slow
def test_a_solution_the_student_wrote_is_theirs(course):
    _, _, line = planted(course)[4]
    cell = nbf.new_code_cell(f"def masked_loss(logits, targets, pad=0):\n    {line}\n")
    hand_in(course, "wrote-it", [cell])
    f = write_feedback(course, "wrote-it", [*honest_cells(course), cell])
    assert remove_leaks(course, [f], lambda *a: None) == []
    assert f.exists()


@pytest.mark.slow
def test_a_solution_the_student_wrote_is_theirs_on_their_page_too(course):
    """The page per student (feedback-pages/<student>.html) is the student's as their feedback files are;
    another student's page with the same line is not."""
    from whole_transformer.course.reports.student_page import FOLDER

    _, _, line = planted(course)[4]
    cell = nbf.new_code_cell(f"def masked_loss(logits, targets, pad=0):\n    {line}\n")
    hand_in(course, "paged", [cell])
    shown = write_feedback(course, "paged", [*honest_cells(course), cell]).read_text()
    pages = {who: course.root / FOLDER / f"{who}.html" for who in ("paged", "other")}
    for page in pages.values():
        page.parent.mkdir(exist_ok=True)
        page.write_text(shown)
    assert remove_leaks(course, list(pages.values()), lambda *a: None) == [pages["other"]]
    assert pages["paged"].exists()


@pytest.mark.slow
def test_an_honest_feedback_file_is_kept(course):
    f = write_feedback(course, "honest", honest_cells(course))
    assert remove_leaks(course, [f], lambda *a: None) == []


def test_hide_hidden_tests_drops_an_output_quoting_the_expected_line():
    """In the notebook nbgrader hands the feedback step, an output quoting a test's EXPECTED line is
    replaced, like one quoting its kernel's part."""
    expected = '# {"name": "double", "compare": "same", "cases": [{"kind": "a negative number", "want": -6}]}'
    test = nbf.new_code_cell(
        '### BEGIN HIDDEN TESTS\ngrading.hand_out("double", double, [((-3,), {})])\n'
        f"### BEGIN EXPECTED\n{expected}\n### END EXPECTED\n### END HIDDEN TESTS",
        metadata={
            "nbgrader": {
                "grade": True,
                "grade_id": "test_double",
                "locked": True,
                "points": 1,
                "solution": False,
                "schema_version": 3,
            }
        },
    )
    nb = nbf.new_notebook(cells=[test, output(expected), output("the end")])
    out, _ = HideHiddenTests().preprocess(nb, {})
    assert "quoted the hidden tests" in out.cells[1].outputs[0]["text"]
    assert out.cells[2].outputs[0]["text"] == "the end\n"


@pytest.mark.slow
def test_no_hint_students_are_given_holds_a_line_of_a_solution(course):
    """What the visible checks and the graded feedback say of a mistake (the hints of the students' package and of
    the mistake catalogue) never hands out a line of a reference solution: a feedback file naming the mistake would
    be removed as a leak, and the hint would have given the answer."""
    from whole_transformer.course.answers.mistakes import CATALOGUE
    from whole_transformer.course.plugins.hide_tests import solution_fragments

    package = Path(__import__("whole_transformer").__file__).parent / "data"
    said = [p.read_text() for p in sorted(package.glob("*.json"))]
    said += [f"{m.hint}\n{m.check_says}" for mistakes in CATALOGUE.values() for m in mistakes]
    lines = {
        line
        for name in ("01-whole-machine", "02-microscope", "03-one-word-at-a-time", NB)
        for c in source_cells(course, name)
        if nbgrader_meta(c).get("solution")
        for line in solution_fragments(c.source)
    }
    assert lines
    shown = [(line, text[:80]) for line in lines for text in said if line in text]
    assert not shown, shown


def test_feedback_keeps_hidden_tests_out():
    src = mini_notebook()
    nb = copy.deepcopy(src)
    tests = [c for c in nb.cells if grade_id(c) and grade_id(c).startswith("test_")]
    tests[0].outputs = [
        nbf.new_output(
            "error",
            ename="TestFailed",
            evalue="answer_q: the count is not right",
            traceback=["TestFailed: answer_q: the count is not right"],
        )
    ]
    tests[1].outputs = [
        nbf.new_output(
            "error",
            ename="ValueError",
            evalue="17 is not 42 (from the test)",
            traceback=['grading.hand_out("double", double, [((21,), {})])'],
        )
    ]
    tests[2].outputs = [nbf.new_output("error", ename="AssertionError", evalue="42 expected, sneaky", traceback=["x"])]
    spy = nbf.new_code_cell("print(In)")
    spy.outputs = [
        nbf.new_output("stream", name="stdout", text="['grading.hand_out(\"double\", double, [((-3,), {})])']")
    ]
    nb.cells.append(spy)
    out, _ = HideHiddenTests().preprocess(nb, {})
    text = json.dumps(out)
    for c in src.cells:
        _, hidden = split_hidden(c.source)
        for line in hidden.split("\n"):
            if line.strip():
                assert line.strip() not in text
    assert "Test failed: answer_q: the count is not right" in text
    assert "your code raised ValueError" in text and "17 is not 42" not in text
    assert "sneaky" not in text
    assert "[output not shown: it quoted the hidden tests]" in text
    assert "(hidden tests: not shown)" in text
