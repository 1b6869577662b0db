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
from simclass.built import copy_course, release_course
from simclass.minicourse import mini_notebook

from whole_transformer.course.cells import SOLUTION, grade_id, is_test, nbgrader_meta, split_hidden, split_region
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.plugins.hide_tests import HideHiddenTests
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

NB = "04-how-it-learned"


@pytest.fixture(scope="module")
def course(tmp_path_factory, released_course):
    """A copy of the released course (built once per run), which the tests write feedback files into."""
    return copy_course(released_course, tmp_path_factory.mktemp("leaks") / "course")


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
    a_float = next(repr(c["want"]) for c in payload["cases"] if type(c["want"]) is float and len(repr(c["want"])) > 8)
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


def test_a_solution_line_in_highlighted_code_is_caught(course):
    """nbconvert splits highlighted code into many tags: the check reads the text between them."""
    _, _, line = planted(course)[4]
    cell = nbf.new_code_cell(f"def masked_loss(logits, targets, pad=0):\n    {line}\n")
    f = write_feedback(course, "copied-nothing", [*honest_cells(course), cell])
    assert line not in f.read_text()  # split by the highlighting
    assert remove_leaks(course, [f], lambda *a: None) == [f]


def test_a_solution_the_student_wrote_is_theirs(course):
    _, _, line = planted(course)[4]
    cell = nbf.new_code_cell(f"def masked_loss(logits, targets, pad=0):\n    {line}\n")
    hand_in(course, "wrote-it", [cell])
    f = write_feedback(course, "wrote-it", [*honest_cells(course), cell])
    assert remove_leaks(course, [f], lambda *a: None) == []
    assert f.exists()


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


def test_no_hint_students_are_given_holds_a_line_of_a_solution(course):
    """What the visible checks and the graded feedback say of a mistake (the hints of the students' package and of
    the mistake catalogue) never hands out a line of a reference solution: a feedback file naming the mistake would
    be removed as a leak, and the hint would have given the answer."""
    from whole_transformer.course.answers.leak_search import solution_fragments
    from whole_transformer.course.answers.mistakes import CATALOGUE

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


# ------------------------------------------------------------------ short answers, however written (issue 39)
def _masked_loss_first_want(course: Course) -> float:
    _, payload = split_expected(split_hidden(a_test_cell(course, "masked_loss").source)[1])
    return payload["cases"][0]["want"]


def _greedy_want(course: Course) -> list[int]:
    cell = next(
        c for c in source_cells(course, "03-one-word-at-a-time") if is_test(c) and grade_id(c) == "test_greedy_decode"
    )
    _, payload = split_expected(split_hidden(cell.source)[1])
    return next(c["want"] for c in payload["cases"] if len(c["want"]) >= 7)


def plants(course: Course) -> list[tuple[str, str]]:
    """(what, a Markdown cell's text) of each leak an instructor's note could hold, each of another kind."""
    want = _masked_loss_first_want(course)  # 6.1019764977808615
    cut = str(want)[:6]  # 6.1019: the printed digits cut short
    return [
        ("the answer line, word for word", "*Note:* the key is `counted_427 = 5`."),
        ("the answer line without spaces", "Remember `tokens_905=8` when you grade."),
        ("an expected value rounded", f"The first pad case comes to {round(want, 5)}."),
        ("an expected value cut short", f"It starts {cut}…"),
        ("an expected value in e-notation", f"printed as {want:.2e} by the logger"),
        ("an expected value as a percentage", f"the tie case: {_percent(course)}"),
        ("a hidden input in the hidden tests' notation", "Try `g.random_array(6100, (8, 42), 2.0)` first."),
        ("the same input without its g.", "Try random_array(6100, (8,42), 2.0) first."),
        ("an expected list of ids, as numpy prints it", f"greedy: [{' '.join(map(str, _greedy_want(course)))}]"),
    ]


def _percent(course: Course) -> str:
    """A probability the hidden tests of sample_next expect, written as a percentage with 4 digits."""
    cell = next(
        c for c in source_cells(course, "03-one-word-at-a-time") if is_test(c) and grade_id(c) == "test_sample_next"
    )
    _, payload = split_expected(split_hidden(cell.source)[1])
    from whole_transformer.course.core.compare import floats

    share = next(x for case in payload["cases"] for x in floats(case["want"]) if 0.1 < x < 0.9 and len(repr(x)) > 8)
    return f"{share * 100:.2f} %"


#: prose a student must see, which holds no answer: a name alone, a frame line, common numbers, a fact
HONEST = [
    "Write your count in `counted_427` and run the check.",
    "The loop ends with `return ids`; `else:` and `break` are yours to place.",
    "There are 64 rows, 42 tokens, 0.5 and 3.14 and 1e-3 and 6.1 in this sentence.",
    "A model that guesses evenly has loss ln 42 ≈ 3.738, and the table's std is 0.1250.",
    "Read `task.sequence(742)` aloud, and `task.prompt(427)`.",
]


def test_every_short_answer_planted_in_source_is_refused_naming_its_cell(course, tmp_path):
    """Each leak of issue 39 planted in its own Markdown cell of source/: make release refuses, naming each cell and
    what it showed; the honest cells beside them are not named."""
    copy_ = copy_course(course.root, tmp_path / "course")
    path = copy_.source / f"{NB}.ipynb"
    nb = nbformat.read(path, as_version=4)
    first = len(nb.cells)
    planted_ = plants(copy_)
    nb.cells += [nbf.new_markdown_cell(text) for _, text in planted_]
    nb.cells += [nbf.new_markdown_cell(text) for text in HONEST]
    nbformat.write(nb, path)
    before = (copy_.release / f"{NB}.ipynb").read_bytes()
    with pytest.raises(ValueError) as e:
        release_course(copy_)
    err = str(e.value)
    print(err)
    lines = err.splitlines()
    for i, (what, text) in enumerate(planted_):
        label = f"{NB}.ipynb, cell {first + i + 1} (markdown"
        assert any(ln.strip().startswith(label) for ln in lines), f"{what} ({text!r}) was not refused:\n{err}"
    for j, text in enumerate(HONEST):
        label = f"{NB}.ipynb, cell {first + len(planted_) + j + 1} (markdown"
        assert not any(ln.strip().startswith(label) for ln in lines), f"honest prose refused: {text!r}\n{err}"
    assert "'counted_427 = 5'" in err and "'tokens_905 = 8'" in err and "'6.10198'" in err  # what it found
    assert (copy_.release / f"{NB}.ipynb").read_bytes() == before  # release/ left as it was


def test_a_short_line_is_an_answer_by_what_it_does():
    from whole_transformer.course.answers.leak_search import answer_line, solution_fragments

    answers = ["tokens_905 = 8", "counted_427 = 5", 'x = "B"', "h = x @ W", "ids[-1]", "return h.sum()"]
    frames = ["return ids", "return x, y", "y[i] = pad", "else:", "break", "ids.append(nxt)", "if nxt == eos:"]
    assert all(answer_line(a) for a in answers), [a for a in answers if not answer_line(a)]
    assert not any(answer_line(f) for f in frames), [f for f in frames if answer_line(f)]
    cell = "### BEGIN SOLUTION\ncounted_427 = 5\n### END SOLUTION"
    assert solution_fragments(cell) == {"counted_427 = 5"}


def test_an_expected_value_is_found_however_written_and_only_then():
    from whole_transformer.course.answers.leak_search import EXPECTED, found_in

    kinds = {'"want": 6.1019764977808615': EXPECTED, '"want": [7, 9, 0, 4, 8, 4, 0, 4]': EXPECTED}
    for shown in (
        "6.10198",
        "6.1020",
        "6.1019",
        "6.10e+00",
        "-6.102"[1:],
        "6.1019764977808615",
        "(7, 9, 0, 4, 8, 4, 0, 4)",
    ):
        assert found_in(f"<p>the loss is {shown}.</p>", kinds), shown
    for prose in ("6.1", "6.10", "6.103", "61019", "the loss is 6.2019", "[7, 9, 0, 4]", "x_6.10198", "2.4853939448"):
        assert not found_in(f"<p>{prose}</p>", kinds), prose
    assert not found_in("6.10198", kinds, own="my loss: 6.10198")  # the student's own output is theirs


def test_a_leak_in_the_instructors_formgrader_comment_is_named_as_such(course, tmp_path):
    """A feedback file refused for what the instructor's own comment said: the line says so and which comment."""
    from nbgrader.api import Gradebook

    want = round(_masked_loss_first_want(course), 5)
    note = f"Close! The first case should come to {want}."
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student("commented")
        gb.add_submission(ASSIGNMENT, "commented")
        nb = gb.find_submission_notebook(NB, ASSIGNMENT, "commented")
        comment = nb.comments[0]
        comment.manual_comment = note
        gb.db.commit()
        cell = comment.name
    f = write_feedback(course, "commented", [*honest_cells(course), nbf.new_markdown_cell(note)])
    log: list[str] = []
    assert remove_leaks(course, [f], log.append) == [f]
    print(log)
    assert log[0].startswith(f"REFUSED feedback/commented/{ASSIGNMENT}/{NB}.html: it showed expected value '{want}'")
    assert f"your own Formgrader comment on {NB}, {cell}" in log[0]


# ------------------------------------------------------------------ readable at a glance (issue 39)
WIDE = (
    "greedy_decode is not right yet for: random score tables, prompts of every length; the trained model reads "
    "held-out numbers; max_new stops the loop; eos stops the loop. This looks like a typical mistake, 'the loop "
    "never stops': stop as soon as the new token is eos. Hint: never run more than max_new steps, and return the "
    "prompt with the new tokens after it, as one list."
)


def nbgrader_feedback_html(cells) -> str:
    """A notebook as nbgrader's generate_feedback writes it: its feedback template (classic, bootstrap)."""
    import os

    import nbgrader
    from nbconvert.exporters import HTMLExporter

    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    exporter = HTMLExporter(
        template_name="feedback",
        extra_template_basedirs=[str(formgrader / "templates")],
        extra_template_paths=[os.fspath(formgrader / "static" / "node_modules" / "bootstrap" / "dist" / "css")],
    )
    nb = nbf.new_notebook(cells=cells)
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb, _ = HideHiddenTests().preprocess(nb, {})
    resources = {"nbgrader": {"notebook": NB, "score": 1.0, "max_score": 3.0, "late_penalty": 0, "student": "wide"}}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return body


def test_the_feedback_verdict_and_its_hint_wrap_within_the_page_in_chromium(course, pw_driver, tmp_path):
    """At 1,000 px and at 200 % zoom (500 CSS px, two device pixels each) neither nbgrader's feedback file nor the
    page per student scrolls sideways: the verdict and its hint wrap. Screenshots in artifacts/feedback-*.png."""
    from e2e.conftest import CHROMIUM, CHROMIUM_ARGS, require_browser

    from whole_transformer.course.reports.feedback import make_readable
    from whole_transformer.course.reports.student_page import page
    from whole_transformer.course.reports.totals import StudentTotal

    if not Path(CHROMIUM).exists():
        require_browser(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package (.ci/run does)")
    meta = {"grade": True, "grade_id": "test_greedy_decode", "locked": True, "points": 3, "score": 1.0}
    test = nbf.new_code_cell(
        "### BEGIN HIDDEN TESTS\nx = 1\n### END HIDDEN TESTS",
        metadata={"nbgrader": {**meta, "comment": "", "solution": False, "schema_version": 3}},
    )
    test.outputs = [nbf.new_output("error", ename="TestFailed", evalue=WIDE, traceback=[f"TestFailed: {WIDE}"])]
    feedback_file = course.feedback / "wide" / ASSIGNMENT / f"{NB}.html"
    feedback_file.parent.mkdir(parents=True, exist_ok=True)
    feedback_file.write_text(nbgrader_feedback_html([nbf.new_markdown_cell("# 04"), test]))
    make_readable(feedback_file)  # what make feedback does to every file
    student_page = tmp_path / "wide.html"
    student_page.write_text(page(course, StudentTotal("wide", notebooks={NB: (1.0, 3.0)})))
    out = Path(__file__).resolve().parents[1] / "artifacts"
    out.mkdir(exist_ok=True)
    browser = pw_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    widest = "Math.max(0, ...[...document.querySelectorAll('pre')].map(e => e.scrollWidth - e.clientWidth))"
    try:
        for name, path in (("file", feedback_file), ("page", student_page)):
            for width, zoom in ((1000, 1), (500, 2)):
                view = browser.new_page(viewport={"width": width, "height": 900}, device_scale_factor=zoom)
                view.goto(path.as_uri())
                assert "Hint: never run more than max_new steps" in view.inner_text("body")
                scroll = view.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
                assert scroll[0] <= scroll[1], (name, width, zoom, scroll)  # the page: no sideways scroll
                assert view.evaluate(widest) == 0, (name, width, zoom)  # nor any box inside it
                view.screenshot(path=str(out / f"feedback-{name}-{width}px-x{zoom}.png"), full_page=True)
                view.close()
    finally:
        browser.close()


def test_a_secret_whose_word_is_missing_is_passed_over_and_every_other_is_found_as_before(monkeypatch):
    """The search passes over a secret one of whose words the text lacks (as it must stand: whole, beginning or
    ending a word), or two of whose whole words follow each other in it but in none of the text's forms; what it
    finds is what the full search finds, for every form a secret can be shown in."""
    import html
    import random

    from whole_transformer.course.answers import leak_match

    kinds = {
        "g.random_array(8502, 8, 0.4, 1.0)": leak_match.INPUT,
        "return x + y": leak_match.SOLUTION,
        "P = np.zeros((L, d))": leak_match.SOLUTION,
        "((read_60, task.prompt(896)), {}),  # the trained model": leak_match.HIDDEN,
        "W_60['blocks.0.attn.W_K.weight']": leak_match.INPUT,
        "a&b < c": leak_match.SOLUTION,
        "-1.651569957": leak_match.EXPECTED,
        "heads": leak_match.SOLUTION,  # one word: its ends say nothing, never passed over
        "if a < b and b > c: return a": leak_match.SOLUTION,  # pairs of whole words across what HTML escapes
        "x = ids[:, -1] + pad_id": leak_match.SOLUTION,  # pairs across brackets, a comma, a sign
    }
    forms = (
        lambda k: k,
        html.escape,
        lambda k: "<span>" + "</span> <span>".join(k.split(" ")) + "</span>",
        lambda k: k.replace(" ", ""),
        lambda k: "xy" + k + "zz",
        lambda k: k.replace(" ", " \n  "),
        lambda k: k[1:-1],  # cut at both ends: found only where a shorter secret stands in it
        lambda k: k.replace("0", "O"),
        lambda k: " ".join(reversed(k.split(" "))),  # every word there, in another order
    )
    rng = random.Random(5)
    texts = [
        f"<p>{rng.choice(['lead', 'x', ''])}{form(k)}{rng.choice([' tail', '9', ''])}</p>"
        for k in kinds
        for form in forms
    ]
    full = leak_match._TextWords.may_show
    passed = by_order = 0
    for text in texts:
        quick = sorted(leak_match.found_in(text, kinds))
        with monkeypatch.context() as m:
            m.setattr(leak_match._TextWords, "may_show", lambda self, words: True)
            assert quick == sorted(leak_match.found_in(text, kinds)), text
        passed += sum(not full(leak_match._TextWords(text), leak_match._words_of(k)) for k in kinds)
        by_order += sum(
            full(leak_match._TextWords(text), (leak_match._words_of(k)[0], frozenset()))
            and not full(leak_match._TextWords(text), leak_match._words_of(k))
            for k in kinds
        )
    assert passed > len(texts)  # the words did pass secrets over
    assert by_order > 0  # and so did the order of the words alone


def test_an_inputs_text_as_written_is_ast_s_own_segment_of_the_hidden_part():
    """``input_fragments`` cuts each input out of a hidden part as written with ``leak_search._segments``, which
    splits the source once: for every tenth node of every hidden part of the course (ast's own is slow), and every
    node of sources with other line ends and characters of more than one byte, the same text as
    ``ast.get_source_segment``."""
    import ast

    from whole_transformer.course.answers.leak_search import _segments

    hidden = [
        split_hidden(c.source)[1]
        for path in sorted((Path(__file__).resolve().parents[1] / "source" / ASSIGNMENT).glob("*.ipynb"))
        for c in nbformat.read(path, as_version=4).cells
        if is_test(c)
    ]
    odd = ["a = 'é€'; b = [1,\r\n 2]\rc = f(\n 'ü', x)\n", "x = ('αβ'\n  + 'γ')", "y = 1", ""]
    compared = 0
    for source in [h for h in hidden if h.strip()] + odd:
        segment = _segments(source)
        nodes = list(ast.walk(ast.parse(source)))
        for node in nodes if source in odd else nodes[::10]:
            assert segment(node) == ast.get_source_segment(source, node), (source[:60], ast.dump(node)[:80])
            compared += 1
    assert len(hidden) > 20 and compared > 500, (len(hidden), compared)
