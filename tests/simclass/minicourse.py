"""A small nbgrader course for testing the grading machinery fast, independent of the real notebooks.

One notebook, ``01-mini.ipynb``, in the course's conventions: a locked import cell, a question
(answer cell ``answer_q`` + test cell ``test_answer_q``) and an exercise (``double(x)``, two test
cells ``test_double_small`` and ``test_double_neg``, 1 point each). Their hidden tests hand results
to the grader (``grading.hand_out``) and hold the expected values in their EXPECTED part.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat.v4 as nbf
import pytest

from whole_transformer.course.layout import ASSIGNMENT

REPO = Path(__file__).resolve().parents[2]
NAME = "01-mini"


def require_sandbox():
    """Skip a test that needs the grading sandbox when it does not work here; fail instead under
    WT_REQUIRE_SANDBOX=1 (CI), where a missing sandbox is a broken machine, not a reason to skip."""
    from whole_transformer.course.sandbox.bubblewrap import sandbox_status

    status = sandbox_status()
    if not status.ok:
        if os.environ.get("WT_REQUIRE_SANDBOX"):
            pytest.fail(f"WT_REQUIRE_SANDBOX is set but the sandbox does not work: {status.message()}")
        pytest.skip(status.message())


def _meta(grade_id, *, grade=False, solution=False, locked=False, points=None):
    m = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def _expected(name, compare, cases, **more):
    from whole_transformer.course.core.expected import expected_region

    return expected_region(
        {"name": name, "compare": compare, **more, "cases": [{"kind": k, "want": w} for k, w in cases]}
    )


def mini_notebook():
    cells = [
        nbf.new_markdown_cell("# Mini\nA tiny notebook.", metadata=_meta("intro", locked=True)),
        nbf.new_code_cell(
            "from whole_transformer.checks import check\nfrom whole_transformer import grading\nimport numpy as np",
            metadata=_meta("imports", locked=True),
        ),
        nbf.new_markdown_cell("**Question.** How many tokens does 905 have?"),
        nbf.new_code_cell(
            "# answer_q = a whole number\n### BEGIN SOLUTION\nanswer_q = 8\n### END SOLUTION",
            metadata={**_meta("answer_q", solution=True), "tags": ["raises-exception"]},
        ),
        nbf.new_code_cell(
            'print("checking answer_q")\n### BEGIN HIDDEN TESTS\n'
            'grading.hand_out_answer("answer_q", answer_q)\n'
            + _expected("answer_q", "same", [("the answer", 8)], question=True, what="the count")
            + "\n### END HIDDEN TESTS",
            metadata=_meta("test_answer_q", grade=True, locked=True, points=1),
        ),
        nbf.new_markdown_cell("Write `double(x)`."),
        nbf.new_code_cell(
            "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
            metadata={**_meta("double", solution=True), "tags": ["raises-exception"]},
        ),
        nbf.new_code_cell(
            'assert double(1) == 2, "double(1) should be 2"\n### BEGIN HIDDEN TESTS\n'
            'grading.hand_out("double", double, [((21,), {})])\n'
            + _expected("double", "same", [("a positive number", 42)])
            + "\n### END HIDDEN TESTS",
            metadata=_meta("test_double_small", grade=True, locked=True, points=1),
        ),
        nbf.new_code_cell(
            '### BEGIN HIDDEN TESTS\ngrading.hand_out("double", double, [((-3,), {})])\n'
            + _expected("double", "same", [("a negative number", -6)])
            + "\n### END HIDDEN TESTS",
            metadata=_meta("test_double_neg", grade=True, locked=True, points=1),
        ),
        nbf.new_code_cell("print('the end')"),
    ]
    nb = nbf.new_notebook(cells=cells)
    nb.metadata.kernelspec = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb.metadata.language_info = {"name": "python"}
    return nb


def make_course(root: Path, notebooks: dict | None = None, real_source: bool = False) -> Path:
    """A course folder at ``root``: nbgrader_config.py loading the repository's, and source/."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        f"c = get_config()  # noqa: F821\nload_subconfig({str(REPO / 'nbgrader_config.py')!r})  # noqa: F821\n"
    )
    src = root / "source" / ASSIGNMENT
    if real_source:
        shutil.copytree(REPO / "source" / ASSIGNMENT, src, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    else:
        src.mkdir(parents=True, exist_ok=True)
        for name, nb in (notebooks or {NAME: mini_notebook()}).items():
            nbf_write(nb, src / f"{name}.ipynb")
    return root


def nbf_write(nb, path: Path) -> None:
    import nbformat

    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
