"""Notebooks 03 and 04: nbgrader structure, hidden tests of the questions, and real runs.

- the source notebooks are stored without outputs; the first code cell is locked and imports
  `check` and `grading`; PAD, EOS, EQ and a stable `softmax` are defined in a locked cell before
  the exercises; questions and exercises follow the course's conventions (DESIGN.md section 3);
- each question's hidden test passes the right answer and fails every hinted wrong one;
- each notebook runs top to bottom in a fresh kernel with nbclient (03 in under 30 s, 04 in
  under 60 s), also with NBGRADER_EXECUTION=autograde; every visible check says "✓ Right.", the
  labs are shown as widgets, and the training runs show what the prose says;
- the release form runs top to bottom with only the students' stubs raising NotImplementedError;
- `nbgrader validate` passes on the source notebooks;
- `nbgrader autograde` in a scratch course gives the solutions full marks, and a submission with
  a wrong implementation of every exercise loses exactly the exercises' points.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from implementations import implementations, run_test_cell
from notebook_helpers import SOURCE, assert_nbgrader_validates, errors, load, run_fresh, widget_text
from notebook_helpers import execute as _execute
from notebook_helpers import stream_text as text_of

from whole_transformer import checks, grading
from whole_transformer.course.cells import HIDDEN_REGION as HIDDEN
from whole_transformer.course.cells import nbgrader_meta as nbg
from whole_transformer.course.cells import split_region
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.layout import ASSIGNMENT
from whole_transformer.course.plugins.verdict_text import failure_message
from whole_transformer.course.publish.notebook import kernel_env


def execute(nb, **env):
    return _execute(nb, allow_errors=True, store_widget_state=True, **env)


REPO = Path(__file__).resolve().parents[1]
N03, N04 = "03-one-word-at-a-time.ipynb", "04-how-it-learned.ipynb"
QUESTIONS = {
    N03: {
        "changes_during_inference": "C",
        "rows_742": 7,
        "maps_hundred_427": "B",
        "cached_rows_742": 8,
        "sampling_742": "C",
    },
    N04: {"counted_427": 5, "flat_shape": (320, 42), "no_causal_mask": "A", "learns_nothing": "B"},
}
EXERCISES = {
    N03: {"next_token": 2, "greedy_decode": 3, "cached_attention": 3, "sample_next": 3},
    N04: {"make_xy": 2, "masked_loss": 3},
}
LABS = {
    N03: [
        "decode_lab(finished=True)",
        "attention_maps_lab(427)  # type another number, choose another model or map",
        "cache_lab(finished=True)",
        "sampling_lab(742)",
    ],
    N04: ["batch_lab()"],
}


def cell_of(nb, grade_id):
    return next(c for c in nb.cells if nbg(c).get("grade_id") == grade_id)


def shows_widget(cell):
    return any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in cell.get("outputs", []))


# ------------------------------------------------------------------------------------------ structure
@pytest.mark.parametrize("name", [N03, N04])
def test_source_is_stored_clean_with_locked_setup(name):
    nb = load(name)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "stored with outputs"
    first, second = code[0], code[1]
    assert nbg(first) == {**nbg(first), "grade_id": "imports", "locked": True, "solution": False, "grade": False}
    assert "from whole_transformer.checks import check" in first.source
    assert re.search(r"from whole_transformer import .*\bgrading\b", first.source)
    assert nbg(second)["grade_id"] == "constants" and nbg(second)["locked"]
    assert "PAD, EOS, EQ = 0, 1, 12" in second.source and "def softmax(x):" in second.source
    assert "x.max(axis=-1, keepdims=True)" in second.source, "softmax subtracts each row's maximum"
    ids = [nbg(c)["grade_id"] for c in nb.cells if nbg(c)]
    assert len(ids) == len(set(ids)), "grade_ids must be unique"
    for call in LABS[name]:
        assert any(c.source.strip() == call for c in code), f"{name} does not show {call}"
    assert "whole_transformer.reference" not in str(nb) and "import reference" not in str(nb)
    assert "NBGRADER_EXECUTION" not in str(nb), "the notebook does not branch on autograding itself"


@pytest.mark.parametrize("name", [N03, N04])
def test_questions_and_exercises_follow_the_convention(name):
    nb = load(name)
    solutions = [nbg(c)["grade_id"] for c in nb.cells if nbg(c).get("solution")]
    assert sorted(solutions) == sorted([*QUESTIONS[name], *EXERCISES[name]])
    for qid, answer in QUESTIONS[name].items():
        sol, tst = cell_of(nb, qid), cell_of(nb, f"test_{qid}")
        assert "raises-exception" in sol.metadata.get("tags", [])
        body = sol.source.split("### BEGIN SOLUTION\n")[1].split("\n### END SOLUTION")[0]
        assert body.startswith(f"{qid} = ")
        assert nbg(tst) == {**nbg(tst), "grade": True, "points": 1, "locked": True}
        assert split_region(tst.source)[0].strip() == f'check("{qid}")'
        kernel_part, expected = split_expected(HIDDEN.search(tst.source).group(1))
        assert f'grading.hand_out_answer("{qid}", {qid})' in kernel_part and "want" not in kernel_part
        message = failure_message(expected, ["the answer"])
        assert not re.search(rf"\b{re.escape(str(answer))}\b", message), "names the answer"
    cells = nb.cells
    for ex, points in EXERCISES[name].items():
        i = next(k for k, c in enumerate(cells) if nbg(c).get("grade_id") == ex)
        sol = cells[i]
        assert sol.source.startswith(f"def {ex}("), "the solution cell holds only the function's definition"
        assert nbg(sol)["grade"] is False and nbg(sol)["locked"] is False
        tests = [c for c in cells if nbg(c).get("grade") and nbg(c)["grade_id"].startswith(f"test_{ex}")]
        assert [nbg(c)["points"] for c in tests] == [points]
        # every later cell that calls the student's function may raise in the release
        for c in cells[i + 1 :]:
            if c.cell_type == "code" and not nbg(c) and re.search(rf"\b{ex}\(", c.source):
                assert "raises-exception" in c.metadata.get("tags", []), c.source[:80]


@pytest.mark.parametrize("name", [N03, N04])
def test_question_hidden_tests_pass_the_right_answer_and_fail_every_hinted_wrong_one(name):
    nb = load(name)
    kernel = {"grading": grading, "check": checks.check}
    for qid, right in QUESTIONS[name].items():
        source = cell_of(nb, f"test_{qid}").source
        assert run_test_cell(source, dict(kernel, **{qid: right})) == (True, None)
        for wrong in [*checks.QUESTIONS[qid].hints, None, "", 3.5, True]:
            assert run_test_cell(source, dict(kernel, **{qid: wrong}))[0] is False, (qid, wrong)
        assert checks.QUESTIONS[qid].is_right(right)


def test_the_prose_matches_the_shipped_models():
    """What notebook 03 says about 896 and 14 is what the shipped checkpoints do."""
    from whole_transformer.decode import greedy_trace
    from whole_transformer.task import prompt
    from whole_transformer.train import load_model

    prose = " ".join(" ".join(c.source for c in load(N03).cells if c.cell_type == "markdown").split())
    t = greedy_trace(load_model("60"), prompt(896))
    last = [s.attention[-1][:, -1, :].mean(axis=0) for s in t.steps]  # block 2, heads averaged
    assert t.answer == "eight hundred ninety six"
    for step, digit_pos, quoted in [(0, 0, "0.99"), (2, 1, "0.62"), (3, 2, "0.92")]:
        assert f"{last[step][digit_pos]:.2f}" == quoted and quoted in prose
        assert last[step].argmax() == digit_pos
    said = greedy_trace(load_model("2"), prompt(14)).answer
    assert f'"{said}"' in prose


# ------------------------------------------------------------------------------------------ execution
@pytest.mark.slow
@pytest.mark.xdist_group("notebooks_03_04")
@pytest.mark.parametrize("mode", ["interactive", "autograde"])
@pytest.mark.parametrize("name", [N03, N04])
def test_notebook_runs_top_to_bottom_in_a_fresh_kernel(name, mode, record_property):
    nb, seconds = run_fresh(name, mode, record_property, allow_errors=True, store_widget_state=True)
    for gid in [*QUESTIONS[name], *EXERCISES[name]]:
        assert text_of(cell_of(nb, f"test_{gid}")).startswith("✓ Right."), (gid, text_of(cell_of(nb, f"test_{gid}")))
    for c in nb.cells:
        if c.cell_type == "code" and c.source.strip() in LABS[name]:
            assert shows_widget(c), c.source
    everything = "\n".join(text_of(c) for c in nb.cells if c.cell_type == "code")
    if name == N03:
        assert "896 → 8 9 6 = eight hundred ninety six <eos>" in everything
        table = next(c for c in nb.cells if c.cell_type == "code" and "held_out_table(" in c.source)
        assert "after 60 epochs: 100/100 right" in str(table.outputs)
    else:
        assert shows_widget(next(c for c in nb.cells if c.cell_type == "code" and "training_lab()" in c.source))
        losses = dict(re.findall(r"after\s+(\d+) epochs:\s+PyTorch ([0-9.]+)\s+yours \2", everything))
        assert set(losses) == {"2", "60"}, "masked_loss agrees with PyTorch to six digits"
        labs = "\n".join(widget_text(nb, c) for c in nb.cells if c.cell_type == "code" and "training_lab(" in c.source)
        runs = {
            m[0]: (int(m[2]), float(m[3]), int(m[5]))  # epochs, training loss, held out right (held-out loss m[4])
            for m in re.findall(
                r"(the course's model|no causal mask|token table std 1|copy task), seed (\d+), after (\d+) epochs: "
                r"training loss ([0-9.]+), held-out loss ([0-9.]+), (\d+) % of the 100 held-out",
                labs,
            )
        }
        assert set(runs) == {"the course's model", "no causal mask", "token table std 1", "copy task"}
        if mode == "autograde":
            assert all(epochs == 2 for epochs, _, _ in runs.values()), runs
        else:
            assert runs["the course's model"][0] == 60 and runs["the course's model"][2] >= 99
            assert runs["no causal mask"][2] <= 5, "without the mask new numbers fail"
            assert runs["token table std 1"][2] <= 90 and runs["copy task"][2] >= 90
    # how long it took is in the test's record (run_fresh); its size is make bench's row, not a test's
    assert seconds > 0


@pytest.mark.slow
@pytest.mark.xdist_group("notebooks_03_04")
@pytest.mark.parametrize("name", [N03, N04])
def test_release_form_runs_with_only_the_stubs_raising(name):
    """What students get (solutions cleared, hidden tests removed) runs top to bottom: only the
    unanswered questions and the cells that call an unwritten function raise NotImplementedError.
    (Run with NBGRADER_EXECUTION set so the training runs are short.)"""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    nb = copy.deepcopy(load(name))
    nb, _ = ClearSolutions().preprocess(nb, {})
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    assert "BEGIN SOLUTION" not in str(nb) and "HIDDEN" not in str(nb)
    execute(nb, NBGRADER_EXECUTION="autograde")
    raised = dict(errors(nb))
    assert set(raised.values()) == {"NotImplementedError"}, raised
    tagged = {i for i, c in enumerate(nb.cells) if "raises-exception" in c.metadata.get("tags", [])}
    assert set(raised) <= tagged
    for qid in QUESTIONS[name]:
        assert text_of(cell_of(nb, f"test_{qid}")).startswith("No answer yet")
    for ex in EXERCISES[name]:
        assert "Not written yet" in text_of(cell_of(nb, f"test_{ex}"))
    for c in nb.cells:
        if c.cell_type == "code" and c.source.strip() in LABS[name]:
            assert shows_widget(c)


@pytest.mark.slow
@pytest.mark.xdist_group("notebooks_03_04")
@pytest.mark.parametrize("name", [N03, N04])
def test_nbgrader_validate_passes_on_the_source(name, tmp_path):
    assert_nbgrader_validates(name, tmp_path)


def _wrong_submission(tmp: Path) -> dict[str, str]:
    """Copies of the source notebooks where every exercise holds one typical wrong implementation."""
    wrong = {
        "next_token": "returns_score",
        "greedy_decode": "eos_dropped",
        "make_xy": "eq_target_kept",
        "masked_loss": "keep_mean",
        "cached_attention": "scale_d_model",
    }
    for name in (N03, N04):
        nb = load(name)
        for c in nb.cells:
            gid = nbg(c).get("grade_id")
            if gid in wrong:
                (imp,) = [i for i in implementations(gid, "wrong") if i.name == wrong[gid]]
                c.source = imp.source
        nbformat.write(nb, tmp / name)
    return wrong


@pytest.mark.slow
@pytest.mark.xdist_group("notebooks_03_04")
def test_nbgrader_autograde_gives_the_solutions_full_marks_and_wrong_exercises_less(tmp_path):
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(  # the course's config: its grader decides the verdicts
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(REPO / 'nbgrader_config.py')!r})  # noqa: F821\n"
        "c.CourseDirectory.course_id = 'test-03-04'\n"
        "c.SandboxExecute.timeout = 300\n"
        "c.CourseDirectory.db_url = 'sqlite:///gradebook.db'\n"
    )
    for name in (N03, N04):
        shutil.copy(SOURCE / name, course / "source" / ASSIGNMENT / name)
    for student in ("solutions", "wrong"):
        (course / "submitted" / student / ASSIGNMENT).mkdir(parents=True)
    for name in (N03, N04):
        shutil.copy(SOURCE / name, course / "submitted" / "solutions" / ASSIGNMENT / name)
    wrong = _wrong_submission(course / "submitted" / "wrong" / ASSIGNMENT)

    def nbgrader(*args):
        result = subprocess.run(
            [sys.executable, "-m", "nbgrader", *args],
            cwd=course,
            env=kernel_env(),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result

    nbgrader("generate_assignment", ASSIGNMENT, "--force")
    start = time.perf_counter()
    nbgrader("autograde", ASSIGNMENT, "--force", "--create")
    print(f"nbgrader autograde of 2 submissions × 2 notebooks: {time.perf_counter() - start:.1f} s")
    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in ("solutions", "wrong"):
            for name in (N03, N04):
                sub = gb.find_submission_notebook(name[:-6], ASSIGNMENT, student)
                for g in sub.grades:
                    scores[student, g.cell.name] = (g.score, g.max_score)
    graded = {cell for _, cell in scores}
    assert graded == {f"test_{q}" for n in (N03, N04) for q in [*QUESTIONS[n], *EXERCISES[n]]}
    for cell in graded:
        score, max_score = scores["solutions", cell]
        assert score == max_score > 0, (cell, score)
        score, max_score = scores["wrong", cell]
        exercise = cell.removeprefix("test_")
        if exercise in wrong:  # partial credit by kind of case: never full points, never below 0
            assert 0 <= score < max_score, (cell, score)
        else:
            assert score == max_score, (cell, score)
