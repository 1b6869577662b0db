"""The bench's row of notebook 02 under autograding (``benchmarks/notebooks.py``): measured, written, and graded.

Issue 41 asks that 02, with the forward pass students write, stays within the notebooks' time target under
autograding. The row runs the source notebook with NBGRADER_EXECUTION=autograde, its expected values held out of
the kernel, and judges every graded test cell with the grader's own verdict; these tests check that its time is
measured and written to results.md with the exercises it graded named, and that a wrong solution makes it an
error row instead of a time. How long it takes is not asserted (``make bench`` judges it against its target).
"""

from __future__ import annotations

import datetime
import re

import nbformat
import pytest

from benchmarks import notebooks
from benchmarks.checkout import SOURCE
from benchmarks.results_md import RunInfo, read_rows, write_results
from benchmarks.rows import Bench
from whole_transformer.course.answers.mistakes import CATALOGUE
from whole_transformer.course.cells import grade_id

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bench")]
NB2 = "02-microscope.ipynb"
FORWARD = ("layer_norm", "multi_head_attention", "decoder_block", "forward")


def test_02_under_autograding_is_measured_graded_and_written(tmp_path):
    b = Bench(quick=True)
    row = notebooks.notebook_row(b, NB2, autograde=True)
    assert not row.status, row.status
    out = tmp_path / "results.md"
    run = RunInfo([("commit", "abc1234")], datetime.datetime(2026, 12, 6, 10, 0), "1 / 1 / 1", "1 / 1 / 1", 1.0)
    write_results(out, b, run)
    (written,) = [r for r in read_rows(out) if r.item == "02 under autograding"]
    assert written.group == "notebooks" and re.fullmatch(r"[\d.]+ s", written.text), written
    assert written.runs == 1 and written.target == "≤ 30 s", written
    assert "| pass |" in out.read_text() or "| **MISS** |" in out.read_text()
    graded = re.search(r"(\d+) graded test cells judged as the grader judges them, (\d+) passed", written.note)
    assert graded and graded.group(1) == graded.group(2) and int(graded.group(1)) >= 6, written.note
    assert f"(exercises graded: {', '.join(FORWARD)})" in written.note, written.note


def test_a_wrong_solution_makes_it_an_error_row_not_a_time(tmp_path, monkeypatch):
    """The row is graded for real: 02 with a catalogued mistake in its layer_norm is no time but an error."""
    nb = nbformat.read(SOURCE / NB2, as_version=4)
    wrong = next(m for m in CATALOGUE["layer_norm"] if m.id == "no_scale_shift")
    (solution,) = [c for c in nb.cells if grade_id(c) == "layer_norm"]
    solution.source = wrong.source
    nbformat.write(nb, tmp_path / NB2)
    monkeypatch.setattr(notebooks, "SOURCE", tmp_path)
    row = notebooks.notebook_row(Bench(quick=True), NB2, autograde=True)
    assert row.value is None and row.status.startswith("error: RuntimeError: "), row
    assert "graded test cell(s) not passed; test_layer_norm: layer_norm is not right yet" in row.status, row.status
