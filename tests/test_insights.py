"""Named mistakes, partial credit, unanswered answers and the class report (issue 20).

The fast tests work on the hidden tests of source/ and the mistake table, in this process (that the table is
in step with source/ is tests/test_term.py's ``test_the_repository_is_in_step``). The class tests read part of the
simulated class (tests/simclass/students.py: every catalogued mistake in one of the ``impl-*`` students, the full
solution, the untouched release, and the partial student with a wrong question answer), graded once per run with
real nbgrader in the sandbox (the ``graded_class`` fixture), and check ``grades-detail.csv``, the feedback,
``insights.csv`` against what the roster says, and ``insights.html`` in Chromium (screenshot in
artifacts/insights.png).
"""

from __future__ import annotations

import csv
import html
import json
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from implementations import implementations
from simclass.students import NOT_IN_CLASS

from whole_transformer.course.answers import diagnose
from whole_transformer.course.answers.mistakes import CATALOGUE, FORWARD_CALLS
from whole_transformer.course.cells import grade_id, is_test
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.core.results import CellStatus, Result
from whole_transformer.course.core.verdict import CellVerdict, Outcome
from whole_transformer.course.layout import ASSIGNMENT, NOTEBOOK_OF
from whole_transformer.course.plugins import verdict_text
from whole_transformer.course.plugins.cell_verdict import assess
from whole_transformer.course.plugins.hide_tests import HideHiddenTests
from whole_transformer.questions import QUESTIONS

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "source" / ASSIGNMENT


def _expected_payloads() -> dict[str, dict]:
    """exercise or question → the EXPECTED part of its hidden test, from source/."""
    out = {}
    for path in sorted(SOURCE.glob("*.ipynb")):
        for c in nbformat.read(path, as_version=4).cells:
            if is_test(c):
                _, payload = split_expected(c.source)
                if payload:
                    out[payload["name"]] = payload
    return out


EXPECTED = _expected_payloads()
# sample_next hands out seeded draws, which the mistake table does not record as results a cell can replay: its
# mistakes and right answers are graded for real in tests/test_sampling.py and the simulated class instead.
RECORDED = [e for e in NOTEBOOK_OF if e != "sample_next"]
POINTS = {"next_token": 2.0, "greedy_decode": 3.0, "make_xy": 2.0, "masked_loss": 2.0, "cached_attention": 3.0}
POINTS |= {"layer_norm": 2.0, "multi_head_attention": 3.0, "decoder_block": 2.0, "forward": 3.0}  # 02's forward pass


def _cell(results, name):
    from nbformat import NotebookNode

    from whole_transformer import grading

    data = grading._encode({"name": name, "results": results})
    return NotebookNode(
        source="", outputs=[NotebookNode(output_type="display_data", metadata={}, data={grading.RESULTS_MIME: data})]
    )


# ------------------------------------------------------------------------------ fast: the table
@pytest.mark.parametrize("exercise", RECORDED)
def test_every_catalogued_mistake_is_named_and_loses_points(exercise):
    table = diagnose.mistake_table()[exercise]["mistakes"]
    expected = EXPECTED[exercise]
    for m in CATALOGUE[exercise]:
        outputs, v = assess(_cell(table[m.id], exercise), expected, None, POINTS[exercise])
        assert v is not None and v.outcome in (Outcome.WRONG, Outcome.RAISED), (m.id, v)
        assert v.mistake == m.id, (m.id, v)
        assert (v.score or 0.0) < POINTS[exercise], (m.id, v)
        assert CellVerdict.from_json(v.to_json()) == v, (m.id, v)
        assert outputs[-1].ename == verdict_text.FAILED and (m.hint or m.mistake) in outputs[-1].evalue


#: A verdict of each shape the grader writes, as the previous version stored it (notebook metadata, records).
STORED_VERDICTS = [
    {"outcome": "right", "passed": 4, "run": 4},
    {"outcome": "unanswered", "passed": 0, "run": 4, "why": "still raises NotImplementedError"},
    {"outcome": "raised", "passed": 0, "run": 4, "errors": {"the whole test cell": "ZeroDivisionError"}},
    {"outcome": "wrong", "passed": 0, "run": 4, "why": "no results were handed out"},
    {"outcome": "wrong", "passed": 0, "run": 1, "failed": ["the answer"], "errors": {}, "answer": "7", "hint": ""},
    {
        "outcome": "wrong",
        "passed": 2,
        "run": 4,
        "failed": ["max_new = 0"],
        "errors": {},
        "mistake": "eos_dropped",
        "mistake_name": "drops the eos",
        "says": "The output must end with the eos id.",
        "kinds_passed": ["a short prompt"],
        "kinds": 2,
        "score": 1.5,
        "points": 3.0,
    },
    {
        "outcome": "raised",
        "passed": 0,
        "run": 4,
        "failed": ["a short prompt"],
        "errors": {"a short prompt": "IndexError"},
        "mistake": None,
        "mistake_name": "not a catalogued mistake",
        "closest": None,
        "agree": 0,
        "of": 4,
        "stale": True,
        "kinds_passed": [],
        "kinds": 1,
    },
]


@pytest.mark.parametrize("stored", STORED_VERDICTS, ids=range(len(STORED_VERDICTS)))
def test_a_stored_verdict_reads_back_and_writes_the_same_json(stored):
    v = CellVerdict.from_json(stored)
    assert list(v.to_json().items()) == list(stored.items())  # the same keys, values and order
    record = {
        "version": 2,
        "student": "s",
        "submission": "a",
        "assignment": "b",
        "seconds": 1.0,
        "timestamp": "2026-10-16T21:40:00",
        "worker": "here",
        "notebooks": {
            "01": {"status": "graded", "reason": "", "file": "x", "cells": {}, "comments": {}, "late_penalty": None}
        },
        "findings": [],
        "log": "",
    }
    record["notebooks"]["01"]["cells"] = {
        "test_a": {"status": "graded", "reason": "", "verdict": stored, "score": 1.0},
        "test_b": {"status": "failed", "reason": "the kernel died", "verdict": {}, "score": None},
    }
    read = Result.from_json(record)
    assert read.notebooks["01"].cells["test_a"] == CellStatus("graded", "", v, 1.0)
    assert read.notebooks["01"].cells["test_b"].verdict is None
    assert read.to_json() == record


@pytest.mark.parametrize("exercise", RECORDED)
def test_right_answers_get_full_points_and_no_mistake(exercise):
    from whole_transformer import grading
    from whole_transformer.course.answers import reference
    from whole_transformer.course.answers.diagnose import _called, _environment

    env = _environment()
    cases = __import__("whole_transformer.course.answers.hidden_tests", fromlist=["CASES"]).CASES[exercise]()
    model_at = {"greedy_decode": 0}.get(exercise)
    for impl in implementations(exercise, "correct"):
        ns = {
            "np": __import__("numpy"),
            "softmax": __import__("whole_transformer.course.answers.reference", fromlist=["softmax"]).softmax,
        }
        ns |= {n: getattr(reference, n) for n in FORWARD_CALLS.get(exercise, ())}  # 02: the earlier functions, right
        exec(compile(impl.source, impl.id, "exec"), ns)  # the test suite's own implementations
        results = []
        for c in cases:
            args, kwargs = eval(c.args, env), eval(c.kwargs, env)
            if model_at is not None:
                args = (grading.counted(args[0]),) + tuple(args[1:])
            results.append(grading.outcome(_called(exercise, ns[exercise]), args, kwargs, c.watch))
        outputs, v = assess(_cell(results, exercise), EXPECTED[exercise], None, POINTS[exercise])
        assert v is not None and v.outcome == Outcome.RIGHT and "mistake" not in v.to_json(), (impl.id, v)
        assert [o.output_type for o in outputs] == ["stream"], impl.id  # full points: no partial score


def test_partial_credit_splits_points_over_kinds_evenly_or_as_course_toml_says(tmp_path):
    expected = {
        "name": "ex",
        "compare": "same",
        "cases": [
            {"kind": "a", "want": 1},
            {"kind": "a", "want": 2},
            {"kind": "b", "want": 3},
            {"kind": "c", "want": 4},
        ],
    }
    assert diagnose.partial_score(expected, [True, True, True, True], 3) == 3.0
    assert diagnose.partial_score(expected, [True, True, False, False], 3) == 1.0  # kind a: 1 of 3 kinds
    assert diagnose.partial_score(expected, [True, False, True, True], 3) == 2.0  # a failed one case
    assert diagnose.partial_score(expected, [False] * 4, 3) == 0.0
    (tmp_path / "course.toml").write_text('[partial_credit.ex]\na = 2\n"c" = 0\n')
    settings = diagnose.partial_credit_settings(tmp_path)
    assert settings == {"ex": {"a": 2.0, "c": 0.0}}
    assert diagnose.partial_score(expected, [True, True, False, True], 3, settings) == 2.0  # a: 2 of 3
    assert diagnose.partial_score(expected, [True, True, True, False], 3, settings) == 2.99  # never full
    for bad, words in [
        ('[partial_credit.ex]\na = "two"\n', "must be a number"),
        ("[partial_credit.ex]\na = -1\n", "must be a number"),
        ("[partial_credit]\nex = 3\n", "must map kinds"),
        ("[partial_credit\n", "not valid TOML"),
    ]:
        (tmp_path / "course.toml").write_text(bad)
        with pytest.raises(ValueError, match=words):
            diagnose.partial_credit_settings(tmp_path)
    assert diagnose.partial_credit_settings(tmp_path / "nowhere") == {}


def test_unanswered_is_told_apart_and_feedback_says_not_answered_yet():
    stub = [{"error": "NotImplementedError"}] * len(EXPECTED["make_xy"]["cases"])
    outputs, v = assess(_cell(stub, "make_xy"), EXPECTED["make_xy"], None, 2.0)
    assert v is not None and v.outcome == Outcome.UNANSWERED and outputs[0].ename == verdict_text.NOT_ANSWERED
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "check('make_xy')",
                metadata={
                    "nbgrader": {
                        "grade": True,
                        "grade_id": "test_make_xy",
                        "points": 2,
                        "locked": True,
                        "solution": False,
                    }
                },
            )
        ]
    )
    nb.cells[0].outputs = outputs
    nb, _ = HideHiddenTests().preprocess(nb, {})
    text = nb.cells[0].outputs[0].evalue
    assert text.startswith("Not answered yet: make_xy still raises NotImplementedError"), text
    assert "NameError" not in text


def test_a_question_records_the_wrong_answer_and_its_hint():
    q = QUESTIONS["tokens_905"]
    outputs, v = assess(_cell([{"value": 7}], "tokens_905"), EXPECTED["tokens_905"])
    assert v is not None and v.answer == "7" and v.hint == q.hints[7]
    assert q.hints[7] in outputs[-1].evalue


def test_the_instructors_summary_names_input_returned_and_expected_wrapped():
    m = next(m for m in CATALOGUE["greedy_decode"] if m.id == "eos_dropped")
    table = diagnose.mistake_table()["greedy_decode"]["mistakes"][m.id]
    source = next(
        c.source
        for c in nbformat.read(SOURCE / NOTEBOOK_OF["greedy_decode"], as_version=4).cells
        if grade_id(c) == "test_greedy_decode"
    )
    kernel_part, expected = split_expected(source)
    cell = _cell(table, "greedy_decode")
    cell.source = kernel_part
    outputs, _ = assess(cell, expected, None, 3.0)
    tb = outputs[-1].traceback
    assert all(len(line) <= verdict_text.WRAP for line in tb), max(tb, key=len)
    assert any(line.startswith("input    ((M(") for line in tb)
    assert any(line.startswith("returned [") for line in tb) and any(line.startswith("expected [") for line in tb)
    assert "expected" not in outputs[-1].evalue and "[" not in outputs[-1].evalue  # the student's text: no values


# ------------------------------------------------------------------------------ the graded class
#: the students of the simulated class these tests are about: the full solution, the untouched release, the partial
#: student (a wrong question answer), and every impl-* student (each catalogued mistake, and each right implementation)
ABOUT = ("full", "release", "partial")


@pytest.fixture(scope="module")
def graded(graded_class):
    """The simulated class, graded once per run (tests/simclass/built.py), as these tests read it: their students
    (``ABOUT`` and the impl-* students), grades-detail.csv's rows of them, and insights.csv's (the whole class's)."""
    students = {n: s for n, s in graded_class.students.items() if n in ABOUT or n.startswith("impl-")}
    detail = {k: r for k, r in graded_class.detail().items() if k[0] in students}
    with open(graded_class.course.root / "insights.csv") as f:
        ins = list(csv.DictReader(f))
    return {
        "course": graded_class.course,
        "nbs": graded_class.nbs,
        "students": students,
        "detail": detail,
        "insights": ins,
    }


def _about(rows: list[dict], students) -> list[dict]:
    """insights.csv's rows as they name ``students`` only: each row's students among them (a row may name none)."""
    return [{**r, "students": " ".join(s for s in r["students"].split() if s in students)} for r in rows]


def _impls(student) -> dict[str, str]:
    """exercise → the implementation id a roster impl-* student hands in."""
    return {i.split("__")[0]: i for i in student.note.split(", ") if "__" in i}


def _verdict(course, student, notebook, gid):
    from whole_transformer.course.autograder.store import load_result

    return load_result(course, student).notebooks[notebook].cells[gid].verdict


@pytest.mark.xdist_group("graded-class")
def test_every_catalogued_mistake_in_the_roster_is_recognised_for_its_student(graded):
    course, detail, seen = graded["course"], graded["detail"], set()
    for name, s in graded["students"].items():
        for ex, impl in _impls(s).items():
            row = detail[(name, f"test_{ex}")]
            v = _verdict(course, name, NOTEBOOK_OF[ex].removesuffix(".ipynb"), f"test_{ex}")
            if "__wrong__" in impl:
                mid = impl.split("__wrong__")[1]
                assert v is not None and v.mistake == mid, (name, impl, v)
                assert f"({mid})" in row["reason"] and row["status"] == "graded", row
                assert float(row["score"]) < float(row["max_score"]), row
                seen.add(impl)
            else:
                assert v is not None and v.outcome == Outcome.RIGHT and not v.mistake, (name, impl, v)
                assert row["score"] == row["max_score"] and row["reason"] == "", row
    in_class = {i.id for ex in NOTEBOOK_OF for i in implementations(ex, "wrong")} - NOT_IN_CLASS
    assert seen == in_class


@pytest.mark.xdist_group("graded-class")
def test_unanswered_students_are_unanswered(graded):
    detail = graded["detail"]
    release = [r for (s, _), r in detail.items() if s == "release"]
    assert release and all(r["status"] == "unanswered" and r["score"] == "0" for r in release), release
    assert all(r["reason"].startswith("not answered yet") for r in release)
    row = detail[("partial", "test_greedy_decode")]  # the stub left as released
    assert row["status"] == "unanswered", row
    row = detail[("partial", "test_rows_742")]  # rows_742 = 6: wrong, not unanswered
    assert row["status"] == "graded" and "answered 6" in row["reason"], row
    assert QUESTIONS["rows_742"].hints.get(6, QUESTIONS["rows_742"].fallback) in row["reason"]


@pytest.mark.xdist_group("graded-class")
def test_partial_credit_sums_match_the_case_counts(graded):
    course, checked = graded["course"], 0
    for (name, gid), row in graded["detail"].items():
        ex = gid.removeprefix("test_")
        if ex not in NOTEBOOK_OF or row["status"] != "graded":
            continue
        payload, points = EXPECTED[ex], float(row["max_score"])
        passed, run = (int(x) for x in row["cases"].split(" of "))
        assert run == len(payload["cases"]) and 0 <= passed <= run, row
        v = _verdict(course, name, row["notebook"], gid)
        if passed == run:
            assert float(row["score"]) == points, row
            continue
        kinds = diagnose.kinds_of(payload["cases"])
        assert v is not None and v.kinds_passed is not None
        assert set(v.kinds_passed) <= set(kinds) and v.kinds == len(kinds)
        in_passed_kinds = sum(1 for c in payload["cases"] if c["kind"] in v.kinds_passed)
        assert in_passed_kinds <= passed, (row, v)
        want = round(points * len(v.kinds_passed) / len(kinds), 2)
        assert float(row["score"]) == pytest.approx(min(want, points - 0.01) if want else 0.0), (row, v)
        checked += 1
    assert checked >= 20


@pytest.mark.xdist_group("graded-class")
def test_feedback_names_the_mistake_and_never_shows_hidden_inputs_or_expected_values(graded):
    """(That no feedback file of the class shows a secret, by the feedback's own leak check, is
    tests/test_course_class.py's ``check_feedback_holds_no_hidden_test``, which reads every file.)"""
    course = graded["course"]
    released = " ".join(p.read_text() for p in course.release.glob("*.ipynb")).replace(" ", "")
    wants = {
        json.dumps(c["want"])
        for p in EXPECTED.values()
        if not p.get("question")
        for c in p["cases"]
        if isinstance(c["want"], list) and len(json.dumps(c["want"])) > 12
    }
    wants = {w for w in wants if w.replace(" ", "") not in released}  # not the notebook's own examples
    named = 0
    for name, s in graded["students"].items():
        for ex, impl in _impls(s).items():
            f = course.feedback / name / ASSIGNMENT / f"{NOTEBOOK_OF[ex].removesuffix('.ipynb')}.html"
            text = html.unescape(f.read_text())
            flat = text.replace(" ", "").replace(",", ", ")
            assert not [w for w in wants if w in flat], f
            if "__wrong__" in impl:
                m = next(m for m in CATALOGUE[ex] if m.id == impl.split("__wrong__")[1])
                assert (m.hint or m.mistake) in text, (name, impl)
                named += 1
    assert named >= 30
    text = html.unescape((course.feedback / "release" / ASSIGNMENT / "01-whole-machine.html").read_text())
    assert "Not answered yet" in text and "NameError" not in text


def _roster_counts(graded) -> dict[tuple[str, str], list[str]]:
    """(exercise, mistake id) → students, as the roster hands them in."""
    out: dict[tuple[str, str], list[str]] = {}
    for name, s in graded["students"].items():
        for ex, impl in _impls(s).items():
            if "__wrong__" in impl:
                out.setdefault((ex, impl.split("__wrong__")[1]), []).append(name)
    return out


@pytest.mark.xdist_group("graded-class")
def test_insights_csv_equals_what_the_roster_says(graded):
    whole = graded["insights"]
    assert list(whole[0]) == ["section", "item", "detail", "count", "students", "hint"]
    assert all(int(r["count"]) == len(r["students"].split()) for r in whole if r["section"] == "mistake")
    rows = _about(whole, graded["students"])  # what it says of these students is what it would say of them alone
    mistakes = [r for r in rows if r["section"] == "mistake" and r["students"]]
    got = {(r["item"], r["detail"].split(" (")[0]): r["students"].split() for r in mistakes}
    want = {k: sorted(v) for k, v in _roster_counts(graded).items()}
    assert {k: sorted(v) for k, v in got.items()} == want
    ex_rows = {(r["item"], r["detail"]): r["students"].split() for r in rows if r["section"] == "exercise"}
    assert (
        "release" in ex_rows[("greedy_decode", "unanswered")] and "partial" in ex_rows[("greedy_decode", "unanswered")]
    )
    assert ex_rows[("make_xy", "missing")] == ["partial"]
    for ex in NOTEBOOK_OF:
        wrong = {n for (e, _), v in _roster_counts(graded).items() if e == ex for n in v}
        assert set(ex_rows[(ex, "partial")]) | set(ex_rows[(ex, "none")]) == wrong, ex
    q = {(r["item"], r["detail"]): r for r in rows if r["section"] == "question"}
    assert q[("rows_742", "answered 6")]["students"] == "partial"
    assert q[("rows_742", "answered 6")]["hint"] == QUESTIONS["rows_742"].hints.get(6, QUESTIONS["rows_742"].fallback)
    assert "release" in q[("tokens_905", "unanswered")]["students"].split()
    wrong_answers = [k for k in q if k[1].startswith("answered") and q[k]["students"]]
    assert wrong_answers == [("rows_742", "answered 6")]
    nxt = [r for r in whole if r["section"] == "next lecture"]
    counts = [int(r["count"]) for r in nxt]
    assert nxt and counts == sorted(counts, reverse=True)


@pytest.mark.xdist_group("graded-class")
def test_insights_html_renders_in_chromium_with_its_plots(graded, pw_driver):
    from e2e.conftest import CHROMIUM, CHROMIUM_ARGS, require_browser

    if not Path(CHROMIUM).exists():
        require_browser(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package (.ci/run does)")
    page_file = graded["course"].root / "insights.html"
    text = page_file.read_text()
    assert "http://" not in text and "https://" not in text  # self-contained: opens offline
    out = REPO / "artifacts"
    out.mkdir(exist_ok=True)
    browser = pw_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(page_file.as_uri())
        imgs = page.eval_on_selector_all("img", "els => els.map(e => [e.naturalWidth, e.alt])")
        assert len(imgs) == 2 and all(w > 200 and len(alt) > 40 for w, alt in imgs), imgs
        assert page.locator("table").count() >= 3
        assert "What to go over in the next lecture" in page.inner_text("body")
        page.screenshot(path=str(out / "insights.png"), full_page=True)
    finally:
        browser.close()
    assert all(u.startswith(("file:", "data:")) for u in requests), requests


# ------------------------------------------------------------------------------ what happened, named (issue 39)
def _error_cell(ename: str, evalue: str = ""):
    """A test cell whose kernel raised ``ename`` (or was stopped by the clock) before it handed anything out."""
    from nbformat import NotebookNode

    return NotebookNode(
        source="", outputs=[NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[ename])]
    )


def _stopped_answer_cell(name: str):
    """A question's answer cell the grader's clock stopped (nbclient interrupted it: KeyboardInterrupt)."""
    cell = _error_cell("KeyboardInterrupt")
    cell["metadata"] = {"nbgrader": {"solution": True, "grade_id": name}}
    return cell


def _student_sees(outputs, grade: str) -> str:
    """The verdict as the feedback (and so the page per student) shows it: through HideHiddenTests."""
    meta = {"grade": True, "grade_id": grade, "points": 2, "locked": True, "solution": False}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("check()", metadata={"nbgrader": meta})])
    nb.cells[0].outputs = outputs
    nb, _ = HideHiddenTests().preprocess(nb, {})
    return "\n".join(nb.cells[0].outputs[0].traceback)


def _insights_of(name: str, verdict: CellVerdict) -> list[str]:
    """What insights' "next lecture" says of one student's verdict on ``name`` (exercise or question)."""
    from whole_transformer.course.reports import class_insights as ci

    row = {"student_id": "hal", "status": "graded", "score": "0", "max_score": "2"}
    exercises, questions = {}, {}
    if name in NOTEBOOK_OF:
        exercises[name] = ci.Exercise(name)
        ci._count_exercise(exercises[name], row, verdict)
    else:
        questions[name] = ci.Question(name)
        ci._count_question(questions[name], row, verdict)
    return [it["what"] for it in ci._next_lecture(exercises, questions)]


WHAT_HAPPENED = [
    # (test, what the kernel did, what grades-detail says, what the student reads, what insights says)
    (
        "greedy_decode",
        _error_cell("KeyboardInterrupt"),
        "ran over 30 s and was stopped on: the whole test cell",
        "greedy_decode: your code ran over 30 s and was stopped",
        "greedy_decode: ran over 30 s and was stopped",
    ),
    (
        "next_token",
        _error_cell("CellTimeoutError", "the cell ran over 30 s and did not stop when interrupted"),
        "ran over 30 s and was stopped on: the whole test cell",
        "next_token: your code ran over 30 s and was stopped",
        "next_token: ran over 30 s and was stopped",
    ),
    (
        "tokens_905",
        _error_cell("NameError", "name 'tokens_905' is not defined"),
        "raised NameError (a name not defined) on: the whole test cell",
        "your code used a name that is not defined (NameError)",
        "tokens_905: raised NameError (a name not defined)",
    ),
    (
        "make_xy",
        _error_cell("ModuleNotFoundError", "No module named 'whole_transformer.course'"),
        "a refused import (ModuleNotFoundError) on: the whole test cell",
        "your code imported a module the grader refused or lacks (ModuleNotFoundError)",
        "make_xy: a refused import (ModuleNotFoundError)",
    ),
    (
        "greedy_decode",
        _cell([{"error": "TooManyCalls"}] * len(EXPECTED["greedy_decode"]["cases"]), "greedy_decode"),
        "never stopped (TooManyCalls: over 200 model calls) on: ",
        "On every one of them, your code called the model more than 200 times (TooManyCalls)",
        "",  # named by the catalogue, or by what it did
    ),
]


@pytest.mark.parametrize("case", WHAT_HAPPENED, ids=["timeout", "killed", "NameError", "import", "never-ending"])
def test_a_timeout_an_error_a_refused_import_and_a_never_ending_loop_are_named_as_such_everywhere(case):
    from whole_transformer.course.reports.grades import verdict_reason
    from whole_transformer.course.service.attempt_feedback import _cell_line

    name, cell, detail, student, insight = case
    points = POINTS.get(name, 1.0)
    outputs, v = assess(cell, EXPECTED[name], None, points, seconds=30)
    assert v is not None and v.outcome == Outcome.RAISED, v
    reason = verdict_reason(v)[1]
    assert detail in reason, reason  # grades-detail.csv
    sees = _student_sees(outputs, f"test_{name}")
    assert student in sees, sees  # the feedback and the page per student
    for hidden in ("KeyboardInterrupt", "CellTimeoutError", "(not recorded)"):
        assert hidden not in sees, sees
    line, ok = _cell_line(CellStatus("graded", verdict=v))
    assert not ok and ("ran over 30 s" in line or "TooManyCalls" in line or "NameError" in line or "import" in line)
    said = _insights_of(name, v)
    assert all("(not recorded)" not in s for s in said), said
    if insight:
        assert insight in said, said
    else:  # a loop that never stops: the catalogued mistake, or what the code did
        assert said and said[0].startswith("greedy_decode: "), said


def test_a_runaway_answer_cell_is_named_a_timeout_not_only_a_wrong_answer():
    from whole_transformer.course.reports.grades import verdict_reason

    expected = EXPECTED["tokens_905"]
    outputs, v = assess(_cell([{"value": 26211070208}], "tokens_905"), expected, _stopped_answer_cell("tokens_905"))
    assert v is not None and v.why == "the answer cell ran over 30 s and was stopped", v
    reason = verdict_reason(v)[1]
    assert "wrong on: the answer" in reason and "the answer cell ran over 30 s and was stopped" in reason, reason
    assert "Your answer cell ran over 30 s and was stopped" in _student_sees(outputs, "test_tokens_905")
    assert _insights_of("tokens_905", v) == [
        "tokens_905: the answer cell ran over 30 s and was stopped (answered 26211070208)"
    ]
