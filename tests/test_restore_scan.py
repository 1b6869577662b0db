"""Grading a submission's cells: ``autograder/restore.py`` puts protected cells back as released (deleted,
edited, re-tagged, re-typed, duplicated, moved) and ``autograder/code_review.py`` reports suspicious code."""

from __future__ import annotations

import copy

import nbformat.v4 as nbf
import pytest
from simclass.minicourse import mini_notebook

from whole_transformer.course.autograder.code_review import review
from whole_transformer.course.autograder.restore import restore
from whole_transformer.course.cells import grade_id as gid


def ids(nb):
    return [gid(c) for c in nb.cells]


# ------------------------------------------------------------------------------ restoring
@pytest.fixture
def release():
    return mini_notebook()


def test_untouched_submission_restores_to_itself(release):
    nb, findings = restore(copy.deepcopy(release), release)
    assert findings == []
    assert [c.source for c in nb.cells] == [c.source for c in release.cells]


def test_deleted_test_cell_comes_back_in_place(release):
    sub = copy.deepcopy(release)
    sub.cells = [c for c in sub.cells if gid(c) != "test_double_small"]
    nb, findings = restore(sub, release)
    assert ids(nb) == ids(release)
    assert [(f.cell, "deleted" in f.finding) for f in findings] == [("test_double_small", True)]


def test_edited_retagged_and_detagged_cells_are_restored(release):
    sub = copy.deepcopy(release)
    by = {gid(c): c for c in sub.cells}
    by["test_answer_q"].source = "pass"
    by["test_double_small"].metadata["nbgrader"]["points"] = 50
    del by["test_double_neg"].metadata["nbgrader"]
    by["test_double_neg"].source = "print('fine')"
    by["imports"].metadata["nbgrader"]["locked"] = False
    nb, findings = restore(sub, release)
    rel = {gid(c): c for c in release.cells}
    got = {gid(c): c for c in nb.cells}
    for g in ("test_answer_q", "test_double_small", "test_double_neg", "imports"):
        assert got[g].source == rel[g].source
        assert got[g].metadata["nbgrader"] == rel[g].metadata["nbgrader"]
    text = {(f.cell, f.finding.split(" (")[0].split(";")[0]) for f in findings}
    assert ("test_answer_q", "test cell edited") in text
    assert any(
        c == "test_double_small" and "points 1.0 → 50.0" in f.finding for c, f in [(f.cell, f) for f in findings]
    )
    assert any(f.cell == "test_double_neg" and "de-tagged" in f.finding for f in findings)
    assert any(f.cell == "imports" and "retagged" in f.finding for f in findings)


def test_answer_cell_turned_to_markdown_runs_as_code_again(release):
    sub = copy.deepcopy(release)
    c = next(c for c in sub.cells if gid(c) == "double")
    c.cell_type = "markdown"
    c.source = "def double(x):\n    return x * 2"
    del c["outputs"], c["execution_count"]
    nb, findings = restore(sub, release)
    got = next(c for c in nb.cells if gid(c) == "double")
    assert got.cell_type == "code" and got.source == "def double(x):\n    return x * 2"
    assert any("re-typed markdown" in f.finding or "re-typed code → markdown" in f.finding for f in findings)


def test_duplicate_grade_id_keeps_the_original(release):
    sub = copy.deepcopy(release)
    i = ids(sub).index("test_double_small")
    fake = copy.deepcopy(sub.cells[i])
    fake.source, fake.id = "pass", "fake0001"
    sub.cells.insert(i, fake)
    nb, findings = restore(sub, release)
    assert ids(nb).count("test_double_small") == 1
    kept = next(c for c in nb.cells if gid(c) == "test_double_small")
    assert kept.source == next(c for c in release.cells if gid(c) == "test_double_small").source
    assert any(c.source == "pass" and "nbgrader" not in c.metadata for c in nb.cells)
    assert any("duplicate" in f.finding for f in findings)


def test_added_cells_stay_after_the_cell_they_followed_and_moves_are_undone(release):
    sub = copy.deepcopy(release)
    i = ids(sub).index("double")
    sub.cells.insert(i + 1, nbf.new_code_cell("print(double(4))"))
    j, k = ids(sub).index("test_double_small"), ids(sub).index("test_double_neg")
    sub.cells[j], sub.cells[k] = sub.cells[k], sub.cells[j]
    nb, findings = restore(sub, release)
    order = [g for g in ids(nb) if g]
    assert order == [g for g in ids(release) if g]
    assert nb.cells[ids(nb).index("double") + 1].source == "print(double(4))"
    assert any("moved" in f.finding for f in findings)


def test_cells_with_unknown_grade_ids_lose_their_metadata(release):
    sub = copy.deepcopy(release)
    extra = nbf.new_code_cell(
        "pass",
        metadata={
            "nbgrader": {
                "grade": True,
                "grade_id": "bonus",
                "points": 10,
                "locked": True,
                "solution": False,
                "schema_version": 3,
            }
        },
    )
    sub.cells.append(extra)
    nb, findings = restore(sub, release)
    assert "bonus" not in ids(nb)
    assert any("unknown grade_id 'bonus'" in f.finding for f in findings)


@pytest.mark.parametrize(
    "code, words",
    [
        ("abs = lambda x: 0", "builtin 'abs'"),
        ("def len(x):\n    return 3", "builtin 'len'"),
        ("import builtins\nbuiltins.sum = max", "replaces builtins.sum"),
        ("np.isclose = lambda *a, **k: True", "np.isclose"),
        ("setattr(np, 'allclose', lambda *a: True)", "setattr() on module numpy"),
        ("import os\nif os.environ.get('NBGRADER_EXECUTION'):\n    x = 1", "NBGRADER_EXECUTION"),
        ("get_ipython().showtraceback = lambda *a, **k: None", "showtraceback"),
        ("get_ipython().input_transformers_post.append(lambda l: [])", "IPython internals"),
        ("print(open('../../source/whole-transformer/03.ipynb').read())", "outside the submission"),
        ("import sqlite3\nsqlite3.connect('/srv/course/gradebook.db')", "gradebook"),
        ("from whole_transformer.course.answers.reference import next_token", "reference"),
        ("from whole_transformer.course import reference\nnext_token = reference.next_token", "reference"),
        ("from whole_transformer.task import xy_arrays", "reference implementation"),
        ("import whole_transformer.course.autograder.autograde", "grading internals"),
        ("grading.same = lambda *a: True", "grading"),
        ("class A:\n    def __eq__(self, o):\n        return True", "__eq__"),
        ("import sys\nf = sys._getframe(1)", "frame introspection"),
        ("exec('x = 1')", "dynamic code"),
        ("import os\nos._exit(0)", "os._exit"),
        ("while True:\n    try:\n        pass\n    except KeyboardInterrupt:\n        pass", "KeyboardInterrupt"),
    ],
)
def test_scan_reports_suspicious_code(code, words):
    aliases = {"np": "numpy", "grading": "whole_transformer.grading", "builtins": "builtins"}
    found = review(code, aliases)
    assert any(words in f for f in found), found


@pytest.mark.parametrize(
    "code",
    [
        "def next_token(h, W, b):\n    scores = h @ W + b\n    return int(np.argmax(scores))",
        "def f(xs):\n    max = 0\n    for x in xs:\n        max = x if x > max else max\n    return max",
        "tokens_905 = 8",
        "%time x = 1",
    ],
)
def test_scan_leaves_ordinary_answers_alone(code):
    assert review(code, {"np": "numpy"}) == []


def test_the_exercise_implementations_scan_clean():
    from implementations import implementations

    aliases = {
        "np": "numpy",
        "torch": "torch",
        "grading": "whole_transformer.grading",
        "task": "whole_transformer.task",
    }
    flagged = {i.id: review(i.source, aliases) for i in implementations()}
    assert not {k: v for k, v in flagged.items() if v}
