"""The grading service with the forward pass of notebook 02 (issue 41): the real course's 02, graded on submission.

The course is the real one (a copy of the run's released course of source/, course.toml's points and partial credit, its
service switched on with full feedback), released to a local nbgrader exchange; the service runs once
(``serve(..., once=True)``) over five students' attempts, in the real sandbox:

- ada fetches the assignment with nbgrader, writes the four functions right, submits and fetches her feedback;
- bo hands in 02 with two catalogued mistakes, ``layer_norm`` (eps outside the square root) and
  ``multi_head_attention`` (PAD keys not masked); his ``decoder_block`` and ``forward``, which call them,
  are left as released;
- cy's ``decoder_block`` always reads block 0's weights (his ``forward`` left as released);
- dee's ``forward`` does not pass PAD on to the blocks;
- eve's ``forward`` is right but imports torch.

Each mistake is named in the attempt's feedback with its hint, the kinds of case it failed and its score,
which is the partial credit of the kinds it passed (course.toml's weights); eve's forward earns nothing and the
feedback says why; ada's attempt gets every point of 02.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from simclass.built import copy_course
from simclass.local_exchange import nbgrader
from simclass.minicourse import REPO, require_sandbox
from simclass.notebooks import Notebooks, cell, set_answer

from whole_transformer.course.answers.diagnose import kinds_of, partial_credit_settings, partial_score
from whole_transformer.course.answers.mistakes import CATALOGUE
from whole_transformer.course.autograder.store import load_result
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.core.verdict import Outcome
from whole_transformer.course.layout import ASSIGNMENT, COURSE_ID, Course
from whole_transformer.course.service.serve import serve
from whole_transformer.course.service.watch import Store

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("course-real-service")]

NB2 = "02-microscope"
FUNCTIONS = ("layer_norm", "multi_head_attention", "decoder_block", "forward")
#: student → {exercise: catalogued mistake}; the exercises that call a wrong one are left as released
MISTAKES = {
    "bo": {"layer_norm": "eps_outside_sqrt", "multi_head_attention": "pad_not_masked"},
    "cy": {"decoder_block": "block_0_always"},
    "dee": {"forward": "pad_ignored"},
}
LEFT_AS_RELEASED = {"bo": ("decoder_block", "forward"), "cy": ("forward",)}


def _service_toml() -> str:
    """The course's own course.toml, its [service] on, with full feedback before the due date."""
    text = (REPO / "course.toml").read_text(encoding="utf-8")
    text = text.split("\n[service]")[0]
    return text + '\n[service]\nenabled = true\nfeedback_before_due = "full"\n'


def _attempt(exchange: Path, student: str, nb, when: datetime) -> Path:
    """02 alone handed in, laid out in the exchange's inbound folder as nbgrader submit writes an attempt."""
    stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = exchange / COURSE_ID / "inbound" / f"{student}+{ASSIGNMENT}+{stamp}+r{os.urandom(3).hex()}"
    folder.mkdir(parents=True)
    (folder / f"{NB2}.ipynb").write_text(nbformat.writes(nb))
    (folder / "timestamp.txt").write_text(stamp)
    (folder / "submission_secret.txt").write_text(os.urandom(16).hex())
    return folder


def _page(exchange: Path, attempt: Path) -> str:
    """The feedback page of 02 that nbgrader fetch_feedback gives for this attempt, as text."""
    from nbgrader.utils import notebook_hash

    secret = (attempt / "submission_secret.txt").read_text()
    path = exchange / COURSE_ID / "feedback" / f"{notebook_hash(secret=secret, notebook_id=NB2)}.html"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))).split())


def _expected(course: Course) -> dict[str, dict]:
    nb = nbformat.read(course.source / f"{NB2}.ipynb", as_version=4)
    found = {}
    for c in nb.cells:
        _, payload = split_expected(c.source) if c.cell_type == "code" else (None, None)
        if payload and payload["name"] in FUNCTIONS:
            found[payload["name"]] = payload
    return found


@pytest.fixture(scope="module")
def served(tmp_path_factory, released_course):
    require_sandbox()
    tmp = tmp_path_factory.mktemp("service-forward")
    course = copy_course(released_course, tmp / "course")
    root = course.root
    (root / "course.toml").write_text(_service_toml(), encoding="utf-8")
    exchange = tmp / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    nbgrader(["release_assignment", ASSIGNMENT, "--force"], root, exchange)
    nbs = Notebooks(root)

    home = tmp / "ada"  # ada through nbgrader's own fetch and submit
    home.mkdir()
    nbgrader(["fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    path = home / ASSIGNMENT / f"{NB2}.ipynb"
    fetched = nbformat.read(path, as_version=4)
    solved = nbs.solved(NB2)
    for ex in FUNCTIONS:
        set_answer(fetched, ex, cell(solved, ex).source)
    nbformat.write(fetched, path)
    nbgrader(["submit", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")

    now = datetime.now(UTC) - timedelta(minutes=5)
    attempts = {}
    for k, (student, wrong) in enumerate(MISTAKES.items()):
        nb = nbs.solved(NB2)
        for ex, mid in wrong.items():
            set_answer(nb, ex, next(m for m in CATALOGUE[ex] if m.id == mid).source)
        for ex in LEFT_AS_RELEASED.get(student, ()):
            set_answer(nb, ex, cell(nbs.blank(NB2), ex).source)
        attempts[student] = _attempt(exchange, student, nb, now + timedelta(seconds=k))
    eve = nbs.solved(NB2)
    right = cell(eve, "forward").source
    signature = "def forward(ids, weights, n_heads=4, pad=0):\n"
    set_answer(eve, "forward", right.replace(signature, signature + "    import torch  # not used for the result\n"))
    attempts["eve"] = _attempt(exchange, "eve", eve, now + timedelta(seconds=10))

    lines: list[str] = []
    t0 = time.monotonic()
    assert serve(course, str(exchange), once=True, echo=lines.append) == 0
    seconds = time.monotonic() - t0
    nbgrader(["fetch_feedback", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    ada_pages = sorted((home / ASSIGNMENT / "feedback").glob(f"*/{NB2}.html"))
    print(f"service, the real 02: 5 attempts graded in {seconds:.1f} s (measured under shared load)")
    yield {
        "course": course,
        "exchange": exchange,
        "attempts": attempts,
        "ada_pages": ada_pages,
        "log": "\n".join(lines),
        "expected": _expected(course),
    }
    shutil.rmtree(tmp, ignore_errors=True)


def test_every_attempt_is_graded_once(served):
    log = served["log"]
    for student in ("ada", "bo", "cy", "dee", "eve"):
        assert log.count(f"GRADED {student}") == 1, log
    records = {r.name.split("+")[0]: r for r in Store(served["course"]).all()}
    assert sorted(records) == ["ada", "bo", "cy", "dee", "eve"]
    assert all(r.status == "graded" for r in records.values()), records


def test_a_right_forward_pass_gets_every_point_of_02(served):
    record = load_result(served["course"], "ada")
    cells = record.notebooks[NB2].cells
    for ex in FUNCTIONS:
        v = cells[f"test_{ex}"].verdict
        assert v is not None and v.outcome == Outcome.RIGHT and not v.mistake, (ex, v)
    (page,) = served["ada_pages"]  # fetched by nbgrader fetch_feedback into ada's own folder
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))).split())
    assert "not right yet" not in text and "TestFailed" not in text, text[:3000]
    for ex in FUNCTIONS:
        assert f"test_{ex}" in text
    assert text.count("Tests passed") >= 4, text[:3000]  # the four functions (02's questions say so otherwise)


@pytest.mark.parametrize(
    "student, exercise", [(s, ex) for s, wrong in MISTAKES.items() for ex in wrong], ids=lambda x: str(x)
)
def test_each_mistake_is_named_in_the_feedback_with_its_points_by_kind_of_case(served, student, exercise):
    course, expected = served["course"], served["expected"][exercise]
    mistake = next(m for m in CATALOGUE[exercise] if m.id == MISTAKES[student][exercise])
    v = load_result(course, student).notebooks[NB2].cells[f"test_{exercise}"].verdict
    assert v is not None and v.outcome == Outcome.WRONG and v.mistake == mistake.id, v
    kinds = kinds_of(expected["cases"])
    assert v.kinds == len(kinds) and v.kinds_passed and set(v.kinds_passed) < set(kinds), v
    passed = [c["kind"] in v.kinds_passed for c in expected["cases"]]
    points = {"layer_norm": 2, "multi_head_attention": 3, "decoder_block": 2, "forward": 3}[exercise]
    want = partial_score(expected, passed, points, partial_credit_settings(course.root))
    assert v.score == pytest.approx(want) and 0 < want < points, (v.score, want)
    text = _page(served["exchange"], served["attempts"][student])
    assert f"This looks like a typical mistake, '{mistake.name}': {mistake.hint}" in text, text[:4000]
    failed = [k for k in kinds if k not in v.kinds_passed]
    assert f"{exercise} is not right yet for: {'; '.join(failed)}" in text, text[:4000]
    assert f"Grade cell: test_{exercise} Score: {v.score:g} / {points:.1f}" in text, (v.score, text[:4000])


def test_a_function_left_as_released_is_said_so_not_blamed_on_its_callee(served):
    for student, left in LEFT_AS_RELEASED.items():
        cells = load_result(served["course"], student).notebooks[NB2].cells
        for ex in left:
            assert cells[f"test_{ex}"].verdict.outcome == Outcome.UNANSWERED, (student, ex)
        text = _page(served["exchange"], served["attempts"][student])
        for ex in left:
            assert f"Grade cell: test_{ex} Score: 0.0 / " in text, text[:3000]
            assert f"Not answered yet: {ex} is still as released" in text, text[:3000]


def test_a_forward_pass_that_imports_torch_earns_nothing_and_the_feedback_says_why(served):
    v = load_result(served["course"], "eve").notebooks[NB2].cells["test_forward"].verdict
    assert v is not None and v.outcome == Outcome.WRONG and not v.score and v.failed == ["refused"], v
    text = _page(served["exchange"], served["attempts"]["eve"])
    assert "forward is refused: it uses torch" in text and "earns no points for it" in text, text[:3000]
    others = load_result(served["course"], "eve").notebooks[NB2].cells
    assert all(others[f"test_{ex}"].verdict.outcome == Outcome.RIGHT for ex in FUNCTIONS[:3])
