"""Notebooks 01 and 02: nbgrader structure, hidden tests, and runs top to bottom in a fresh kernel.

- the source notebooks are stored without outputs; the first code cell is locked and imports
  `check` and `grading`; every question is a solution cell tagged raises-exception plus a 1-point
  test cell whose visible part is `check("<qid>")` and whose hidden part decides;
- each hidden test passes with the right answer and fails with every wrong answer that has a hint;
- each notebook runs top to bottom with nbclient in a fresh kernel in under 30 s, also with
  NBGRADER_EXECUTION=autograde, with every visible check saying "✓ Right.";
- the release form (nbgrader's ClearSolutions and ClearHiddenTests) runs top to bottom, where only
  the students' unanswered stubs raise NotImplementedError;
- `nbgrader validate` passes on the source notebooks (with their solutions).
"""

from __future__ import annotations

import copy
import re

import nbformat
import pytest
from implementations import run_test_cell
from notebook_helpers import assert_nbgrader_validates, errors, load, run_fresh
from notebook_helpers import execute as _execute
from notebook_helpers import stream_text as outputs

from whole_transformer import checks, grading, scale_study
from whole_transformer.course.cells import HIDDEN_REGION as HIDDEN
from whole_transformer.course.cells import nbgrader_meta as nbg
from whole_transformer.course.cells import split_region
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.plugins.verdict_text import failure_message


def execute(nb, **env):
    return _execute(nb, timeout=120, **env)


NOTEBOOKS = {
    "01-whole-machine.ipynb": {"tokens_905": 8, "logits_shape": (64, 8, 42), "heads_4_to_8": "C", "ffn_params": 16576},
    "02-microscope.ipynb": {"attention_scores_shape": (64, 4, 8, 8), "std1_no_factor": "A"},
}
LABS = {
    "01-whole-machine.ipynb": ["machine_lab()"],
    "02-microscope.ipynb": ["microscope_lab(step=-1)", "block_picture()", "scale_lab()"],
}


# ------------------------------------------------------------------------------------------ structure
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_source_is_stored_clean_with_locked_imports(name):
    nb = load(name)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "stored with outputs"
    first = code[0]
    assert nbg(first).get("locked") is True and nbg(first).get("solution") is False
    assert "from whole_transformer.checks import check" in first.source
    assert re.search(r"from whole_transformer import .*\bgrading\b", first.source)
    ids = [nbg(c)["grade_id"] for c in nb.cells if nbg(c)]
    assert len(ids) == len(set(ids)), "grade_ids must be unique"
    for call in LABS[name]:
        assert any(c.source.strip() == call for c in code), f"{name} does not show {call}"


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_questions_follow_the_convention(name):
    nb = load(name)
    cells = nb.cells
    qids = [nbg(c)["grade_id"] for c in cells if nbg(c).get("solution")]
    assert qids == list(NOTEBOOKS[name])
    for qid in qids:
        assert qid in checks.QUESTIONS
        i = next(k for k, c in enumerate(cells) if nbg(c).get("grade_id") == qid)
        sol, tst = cells[i], cells[i + 1]
        assert sol.cell_type == "code" and "raises-exception" in sol.metadata.get("tags", [])
        assert nbg(sol)["grade"] is False and nbg(sol)["locked"] is False
        body = sol.source.split("### BEGIN SOLUTION\n")[1].split("\n### END SOLUTION")[0]
        assert body.startswith(f"{qid} = "), body
        assert nbg(tst) == {**nbg(tst), "grade": True, "grade_id": f"test_{qid}", "points": 1, "locked": True}
        visible = split_region(tst.source)[0]
        assert visible.strip() == f'check("{qid}")'
        hidden = HIDDEN.search(tst.source).group(1)
        kernel_part, expected = split_expected(hidden)
        assert f'grading.hand_out_answer("{qid}", {qid})' in kernel_part and "want" not in kernel_part
        answer = str(NOTEBOOKS[name][qid])
        message = failure_message(expected, ["the answer"])
        assert answer not in message and "64, 8" not in message, "a message names the answer"


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_hidden_tests_pass_the_right_answer_and_fail_every_hinted_wrong_one(name):
    nb = load(name)
    kernel = {"grading": grading, "check": checks.check}
    for qid, right in NOTEBOOKS[name].items():
        tst = next(c for c in nb.cells if nbg(c).get("grade_id") == f"test_{qid}")
        assert run_test_cell(tst.source, dict(kernel, **{qid: right})) == (True, None)
        wrongs = list(checks.QUESTIONS[qid].hints) + [None, "", 3.5, True]
        for wrong in wrongs:
            assert run_test_cell(tst.source, dict(kernel, **{qid: wrong}))[0] is False, (qid, wrong)
        # the visible check agrees with the hidden test on the right answer
        assert checks.QUESTIONS[qid].is_right(right)


def test_notebook_02_states_what_the_stored_runs_show():
    """The prose of section 4 quotes the per-seed results of the stored study, setting by setting."""
    prose = " ".join(c.source for c in load("02-microscope.ipynb").cells if c.cell_type == "markdown")
    prose = " ".join(prose.split())
    for s in scale_study.summarize():
        *first, last = (str(n) for n in s.held_out)
        seeds = f"{', '.join(first)} and {last}"
        if set(s.held_out) == {100}:
            assert "100 of 100 in all three runs" in prose or seeds in prose, s.setting.label
        else:
            assert seeds in prose, f"{s.setting.label}: the notebook does not quote its runs ({seeds})"


# ------------------------------------------------------------------------------------------ execution
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["interactive", "autograde"])
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_runs_top_to_bottom_in_a_fresh_kernel(name, mode, record_property):
    nb, seconds = run_fresh(name, mode, record_property, timeout=120)
    for qid in NOTEBOOKS[name]:
        tst = next(c for c in nb.cells if nbg(c).get("grade_id") == f"test_{qid}")
        assert outputs(tst).strip() == "✓ Right.", (qid, outputs(tst))
    views = [c for c in nb.cells if c.cell_type == "code" and c.source.strip() in LABS[name]]
    for c in views:  # a lab shows its widget view (after the few lines of JavaScript that name its controls)
        kinds = [mime for out in c.outputs for mime in out.get("data", {})]
        assert "application/vnd.jupyter.widget-view+json" in kinds, (c.source, kinds)
    # how long it took is in the test's record (run_fresh); its size is make bench's row, not a test's
    assert seconds > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_release_form_runs_with_only_the_stubs_raising(name):
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    nb = copy.deepcopy(load(name))
    nb, _ = ClearSolutions().preprocess(nb, {})
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    assert "BEGIN SOLUTION" not in str(nb) and "HIDDEN" not in str(nb)
    execute(nb)
    raised = errors(nb)
    stubs = [i for i, c in enumerate(nb.cells) if nbg(c).get("solution")]
    assert raised == [(i, "NotImplementedError") for i in stubs]
    for qid in NOTEBOOKS[name]:
        tst = next(c for c in nb.cells if nbg(c).get("grade_id") == f"test_{qid}")
        assert outputs(tst).startswith("No answer yet"), outputs(tst)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_nbgrader_validate_passes_on_the_source(name, tmp_path):
    assert_nbgrader_validates(name, tmp_path)
