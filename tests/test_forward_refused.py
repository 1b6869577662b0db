"""A forward-pass exercise of 02 that gets its result from torch or the course's model earns nothing (issue 41).

Two guards, each tested on all four functions:

- in the grader, the solution cell's syntax (``answers/forbidden.py``): a cell that imports torch or the course's
  model code, or names what runs the torch model (``trace``, ``load_model``, ``float64_model``…), is refused
  whatever it returned, and the verdict says why;
- in the kernel, the tripwire (``tripwire.FORBIDDEN``): a right NumPy version that routes one step through torch's
  own layer by a helper written in another cell (no forbidden name in the solution cell) is caught when it calls
  it; the visible check and the hidden tests both say which function it called, and it earns nothing.
"""

from __future__ import annotations

import sys

import pytest
from implementations import grade, graded_cells
from nbformat import NotebookNode

from whole_transformer.course.answers import forbidden
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.plugins.cell_verdict import assess
from whole_transformer.course.plugins.verdict_text import FAILED

FORWARD = ("layer_norm", "multi_head_attention", "decoder_block", "forward")
POINTS = {"layer_norm": 2.0, "multi_head_attention": 3.0, "decoder_block": 2.0, "forward": 3.0}
SIGNATURES = {
    "layer_norm": "def layer_norm(x, gamma, beta, eps=1e-5):\n",
    "multi_head_attention": "def multi_head_attention(x, w_q, w_k, w_v, w_o, b_o, n_heads, key_pad=None):\n",
    "decoder_block": "def decoder_block(x, weights, i, n_heads, key_pad=None):\n",
    "forward": "def forward(ids, weights, n_heads=4, pad=0):\n",
}
USES = {
    "    import torch\n": "torch",
    "    import torch.nn.functional as F\n": "torch.nn.functional",
    "    from whole_transformer.model import Transformer\n": "whole_transformer.model",
    "    from whole_transformer import steps\n": "whole_transformer.steps",
    "    import whole_transformer.fast\n": "whole_transformer.fast",
    "    _ = trace, load_model\n": "trace, load_model",
    "    _ = float64_model\n": "float64_model",
}


def _right(exercise: str) -> str:
    """The notebook's own solution cell of the exercise (right)."""
    from implementations import notebook_cells

    from whole_transformer.course.layout import NOTEBOOK_OF

    return notebook_cells(NOTEBOOK_OF[exercise])[exercise]["source"]


@pytest.mark.parametrize("exercise", FORWARD)
@pytest.mark.parametrize("line", list(USES), ids=lambda s: s.strip())
def test_a_solution_that_uses_torch_or_the_model_is_refused_in_the_grader_saying_why(exercise, line):
    source = _right(exercise).replace(SIGNATURES[exercise], SIGNATURES[exercise] + line, 1)
    assert line in source
    (cell,) = graded_cells(exercise).values()
    _, expected = split_expected(cell["source"])
    solution = NotebookNode(cell_type="code", source=source, metadata={"nbgrader": {"grade_id": exercise}})
    outputs, verdict = assess(NotebookNode(outputs=[]), expected, solution, POINTS[exercise])
    (out,) = outputs
    assert out.output_type == "error" and out.ename == FAILED, out
    assert f"{exercise} is refused: it uses {USES[line]}" in out.evalue and "earns no points" in out.evalue
    assert not verdict.score and verdict.failed == ["refused"], verdict
    assert forbidden.refusal(exercise, _right(exercise)) is None  # the notebook's own solution is not


#: helpers a student could write in a cell of their own: torch's layers behind names the syntax check allows
HELPERS = """
import torch
import torch.nn.functional as F


def ln_by_torch(x, gamma, beta, eps=1e-5):
    t = torch.from_numpy(np.asarray(x, dtype=np.float64))
    g, b = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (gamma, beta))
    return F.layer_norm(t, t.shape[-1:], g, b, eps).numpy()


def attend_by_torch(q, k, v, allowed):
    t = [torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in (q, k, v)]
    return F.scaled_dot_product_attention(*t, attn_mask=torch.from_numpy(np.asarray(allowed))).numpy()
"""
#: exercise → (the line of the notebook's solution, the line that routes it through torch, what is called)
ROUTED = {
    "layer_norm": (
        "return gamma * (x - mean) / np.sqrt(var + eps) + beta",
        "return ln_by_torch(x, gamma, beta, eps)",
        "torch.nn.functional.layer_norm",
    ),
    "multi_head_attention": (
        "weights = softmax(np.where(allowed, scores, -np.inf))\n"
        "    mixed = np.swapaxes(weights @ v, -2, -3).reshape(*lead, L, d)",
        "mixed = np.swapaxes(attend_by_torch(q, k, v, allowed), -2, -3).reshape(*lead, L, d)",
        "torch.nn.functional.scaled_dot_product_attention",
    ),
    "decoder_block": (
        'a = layer_norm(x, W["ln1.weight"], W["ln1.bias"])',
        'a = ln_by_torch(x, W["ln1.weight"], W["ln1.bias"])',
        "torch.nn.functional.layer_norm",
    ),
    "forward": (
        'x = layer_norm(x, weights["ln_f.weight"], weights["ln_f.bias"])',
        'x = ln_by_torch(x, weights["ln_f.weight"], weights["ln_f.bias"])',
        "torch.nn.functional.layer_norm",
    ),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("exercise", FORWARD)
def test_torchs_layer_called_from_a_helper_of_another_cell_is_caught_and_earns_nothing(exercise):
    import numpy as np

    helpers: dict = {"np": np}
    exec(compile(HELPERS, "<a cell of the student's>", "exec"), helpers)  # code typed in a notebook cell
    old, new, called = ROUTED[exercise]
    source = _right(exercise)
    assert old in source, (exercise, old)
    routed = source.replace(old, new)
    assert forbidden.refusal(exercise, routed) is None  # nothing in the cell the syntax check refuses
    extra = {n: helpers[n] for n in ("ln_by_torch", "attend_by_torch")}
    assert np.allclose(  # the helper computes the right numbers: what is refused is who computed them
        extra["ln_by_torch"](np.arange(6.0).reshape(2, 3), np.ones(3), np.zeros(3)),
        (np.arange(6.0).reshape(2, 3) - [[1], [4]]) / np.sqrt(2 / 3 + 1e-5),
    )
    graded = grade(exercise, routed, extra)
    assert graded.points == 0, (exercise, graded.points, graded.errors)
    assert f"✗ {exercise} calls {called}, a library's ready-made version of this step" in graded.output, graded.output
    (message,) = graded.errors.values()
    assert message.startswith(f"TestFailed: {exercise} earns nothing: it calls {called}"), message
    right = grade(exercise, source, extra)  # the same helpers beside the right solution: full points
    assert right.points == right.max_points, right.errors


def test_no_tripwire_outlives_its_run_in_a_module_first_imported_during_it(tmp_path, monkeypatch):
    """A module imported for the first time while a run lasts takes the tripwire by ``from … import``; once the
    run ends it holds the course's own function again (an in-process release once left ``steps`` armed, and a
    later doctest of it 'called' sinusoidal_positions)."""
    from whole_transformer import model, tripwire

    (tmp_path / "wt_imported_late.py").write_text("from whole_transformer.model import sinusoidal_positions\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def forward(ids, weights, n_heads=4, pad=0):
        import wt_imported_late  # first imported here, inside the run

        return wt_imported_late

    original = model.sinusoidal_positions
    with tripwire.run("forward", forward):
        late = forward([1], {})
        assert late.sinusoidal_positions is not original  # armed while the run lasts
    assert late.sinusoidal_positions is original and model.sinusoidal_positions is original
    monkeypatch.delitem(sys.modules, "wt_imported_late")
