"""An honest Validate: nbgrader's Validate never says a notebook passes while a visible check fails.

nbgrader's Validator (the JupyterLab button and ``nbgrader validate``) runs the notebook and counts a
test cell as failed when it shows an error or writes to stderr; with no failed cell it says
"Success! Your notebook passes all the tests." The test cells students get hold only the visible
check, which prints and never raises (so that Run All goes on past questions not answered yet).
Under Validate (``NBGRADER_EXECUTION=validate``) a check that is not right writes its line to stderr
instead, with a note that the hidden tests decide the grade, so Validate lists it with its hint.

Here the real ``nbgrader validate`` runs the released notebook 04 with a wrong ``masked_loss`` and a
wrong answer, and with every answer right; it runs in a folder holding the handout's
``nbgrader_config.py``, as in a student's copy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from simclass.notebooks import Notebooks, set_answer

from whole_transformer import checks
from whole_transformer.course.answers.mistakes import CATALOGUE
from whole_transformer.course.publish.handout import TEMPLATE

REPO = Path(__file__).resolve().parents[1]

NBGRADER = Path(sys.executable).with_name("nbgrader")
SUCCESS = "Success! Your notebook passes all the tests."


def test_outside_validate_a_check_only_prints(capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert checks.check("tokens_905", 7) is False
    out = capsys.readouterr()
    assert out.out.startswith("✗ Not yet.") and out.err == ""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # the grader: hidden tests decide, checks only print
    checks.check("tokens_905", 7)
    assert capsys.readouterr().err == ""


def test_under_validate_a_wrong_check_writes_its_hint_and_the_note_to_stderr(capsys, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    assert checks.check("tokens_905", 7) is False
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith("✗ Not yet. Did you count <eos>?")
    assert " ".join(out.err.split()).endswith(checks.VALIDATE_NOTE)
    assert all(len(line) <= 80 for line in out.err.splitlines()), "nbgrader validate cuts longer lines"
    assert checks.check("tokens_905", 8) is True
    out = capsys.readouterr()
    assert out.out == "✓ Right.\n" and out.err == ""
    # an exercise too, and a check with no answer yet
    (m,) = [m for m in CATALOGUE["masked_loss"] if m.id == "sum"]
    assert checks.check("masked_loss", m.code) is False
    assert "It returns the sum" in capsys.readouterr().err
    assert checks.check("ffn_params") is False
    assert "No answer yet" in capsys.readouterr().err


def _validate(folder: Path, nb, name="04-how-it-learned.ipynb") -> str:
    folder.mkdir()
    (folder / "nbgrader_config.py").write_text((TEMPLATE / "nbgrader_config.py").read_text())
    nbformat.write(nb, folder / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NBGRADER")}
    done = subprocess.run(
        [str(NBGRADER), "validate", name], cwd=folder, capture_output=True, text=True, timeout=600, env=env
    )
    assert "No nbgrader_config.py file found" not in done.stderr
    # the handout's settings reach the kernel through IPC, so the kernel's TCP warning does not come
    assert "without encryption" not in done.stderr + done.stdout
    return done.stdout


@pytest.fixture(scope="module")
def notebooks():
    return Notebooks(REPO)


@pytest.mark.slow
def test_nbgrader_validate_lists_a_wrong_exercise_and_a_wrong_answer_with_their_hints(notebooks, tmp_path):
    nb = notebooks.solved("04-how-it-learned")
    (m,) = [m for m in CATALOGUE["masked_loss"] if m.id == "sum"]
    set_answer(nb, "masked_loss", m.code_text.strip() + "\n")
    set_answer(nb, "no_causal_mask", 'no_causal_mask = "B"\n')
    said = _validate(tmp_path / "wrong", nb)
    flat = " ".join(said.split())
    assert SUCCESS not in said and "passes all the tests" not in said
    assert "2 visible check(s) below are not right yet, each shown with its hint." in flat
    assert "the hidden tests your instructor runs after you hand in decide the grade" in flat
    assert said.count("The following cell failed:") == 2
    assert 'check("masked_loss")' in said and 'check("no_causal_mask")' in said
    assert "✗ Not yet. It returns the sum; the loss is the mean over the rows that count." in flat
    hint = checks.QUESTIONS["no_causal_mask"].hints["B"]
    assert " ".join(f"✗ Not yet. {hint}".split()) in flat
    assert flat.count(checks.VALIDATE_NOTE) == 2
    for right in ("make_xy", "counted_427", "flat_shape", "learns_nothing"):
        assert f'check("{right}")' not in said, f"{right} is right and must not be listed"


@pytest.mark.slow
def test_nbgrader_validate_of_a_right_notebook_lists_nothing(notebooks, tmp_path):
    said = _validate(tmp_path / "right", notebooks.solved("04-how-it-learned"))
    assert SUCCESS in said and "✗" not in said and "failed" not in said


def test_under_validate_a_sampler_whose_error_says_nothing_is_listed_with_what_is_missing(capsys, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    (m,) = [m for m in CATALOGUE["sample_next"] if m.id == "bare_value_error"]
    assert checks.check("sample_next", m.code) is False
    out = capsys.readouterr()
    assert out.out == "" and "✓" not in out.err
    assert "without a message" in " ".join(out.err.split()), out.err


@pytest.mark.slow
def test_nbgrader_validate_says_what_a_sampler_s_error_is_missing(notebooks, tmp_path):
    nb = notebooks.solved("03-one-word-at-a-time")
    (m,) = [m for m in CATALOGUE["sample_next"] if m.id == "bare_value_error"]
    set_answer(nb, "sample_next", m.code_text.strip() + "\n")
    said = _validate(tmp_path / "bare", nb, "03-one-word-at-a-time.ipynb")
    flat = " ".join(said.split())
    assert SUCCESS not in said and 'check("sample_next")' in said
    assert "raises ValueError without a message" in flat, said
