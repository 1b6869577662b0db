"""The simulated class's rows for the forward pass of notebook 02 (issue 41), from a real graded run.

The ``impl-*`` students of the simulated class (tests/simclass/hand_ins.py ``catalogued_mistakes``: every catalogued
mistake of ``layer_norm``, ``multi_head_attention``, ``decoder_block`` and ``forward``, and every right version of
them, each beside right versions of the functions it calls) are graded with the class, once per run (the
``graded_class`` fixture: ``make autograde`` for real, with nbgrader in the sandbox). Each version's row: what the
visible check says of it (``check``, run as the notebook runs it: ``implementations.grade``), and what the hidden
tests gave in the real run (its score of the exercise's points, the mistake the grader named). Every catalogued
mistake loses points and is named by both; every right version, however written (loops, einsum, another order), gets
full marks and ✓.

The table is printed (``pytest -s``) and written to artifacts/forward-class.md, for the closing note.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from implementations import grade, implementations
from simclass.students import NOT_IN_CLASS

from whole_transformer.course.answers.mistakes import CATALOGUE
from whole_transformer.course.autograder.store import load_result
from whole_transformer.course.core.verdict import Outcome

pytestmark = pytest.mark.xdist_group("graded-class")  # the worker that grades the class reads it

NB2 = "02-microscope"
FORWARD = ("layer_norm", "multi_head_attention", "decoder_block", "forward")
POINTS = {"layer_norm": 2.0, "multi_head_attention": 3.0, "decoder_block": 2.0, "forward": 3.0}
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def _said(output: str, width: int = 90) -> str:
    """The visible check's verdict line (✓ or ✗ and its first words)."""
    line = next((x for x in output.splitlines() if x.startswith(("✓", "✗"))), output.strip() or "(nothing)")
    return line if len(line) <= width else line[: width - 1] + "…"


@pytest.fixture(scope="module")
def rows(graded_class):
    """One row per version of the four functions the class hands in: (exercise, version id, student, the
    visible check's words, the verdict of the real run)."""
    handed = {}
    for s in graded_class.students.values():
        versions = [i for i in s.note.split(", ") if i.split("__")[0] in FORWARD]
        if s.name.startswith("impl-") and versions:
            handed[s.name] = versions
    by_id = {i.id: i for ex in FORWARD for i in implementations(ex)}
    out = []
    for student, versions in handed.items():
        cells = load_result(graded_class.course, student).notebooks[NB2].cells
        for vid in versions:
            impl = by_id[vid]
            check = grade(impl.exercise, impl.source).output  # the visible check, as the notebook runs it
            out.append((impl.exercise, vid, student, _said(check), cells[f"test_{impl.exercise}"].verdict))
    out.sort(key=lambda r: (FORWARD.index(r[0]), "__wrong__" in r[1], r[1]))
    table = ["| exercise | version | student | visible check | hidden tests (real run) |", "|---|---|---|---|---|"]
    for ex, vid, student, said, v in out:
        score = POINTS[ex] if v.outcome == Outcome.RIGHT else (v.score or 0.0)
        named = f", named {v.mistake_name!r} ({v.mistake})" if v.mistake else ""
        kind = vid.split("__")[1]
        table.append(
            f"| {ex} | {kind}: {vid.split('__')[2]} | {student} | {said.replace('|', '/')} | "
            f"{score:g} / {POINTS[ex]:g}{named} |"
        )
    text = "\n".join(table)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "forward-class.md").write_text(text + "\n", encoding="utf-8")
    print("\n" + text)
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # a wrong version run by its check (nan, overflow)
def test_every_catalogued_mistake_of_the_four_functions_loses_points_and_is_named(rows):
    seen = set()
    for ex, vid, student, said, v in rows:
        if "__wrong__" not in vid:
            continue
        mistake = next(m for m in CATALOGUE[ex] if m.id == vid.split("__wrong__")[1])
        assert v is not None and v.outcome == Outcome.WRONG and v.mistake == mistake.id, (vid, student, v)
        assert (v.score or 0.0) < POINTS[ex], (vid, v)
        assert said.startswith("✗") and mistake.check_says in grade(ex, mistake.source).output, (vid, said)
        seen.add(vid)
    assert seen == {i.id for ex in FORWARD for i in implementations(ex, "wrong")} - NOT_IN_CLASS
    assert len(seen) == 23


def test_every_right_version_gets_full_marks_and_a_tick(rows):
    right = {vid: (said, v) for ex, vid, _, said, v in rows if "__correct__" in vid}
    assert set(right) == {i.id for ex in FORWARD for i in implementations(ex, "correct")}
    for vid, (said, v) in right.items():
        assert v is not None and v.outcome == Outcome.RIGHT and not v.mistake, (vid, v)
        assert said.startswith("✓ Right."), (vid, said)
