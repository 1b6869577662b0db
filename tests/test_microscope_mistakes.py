"""Every catalogued mistake of 02's forward pass under the microscope (issue 41): the right step is named.

The microscope of the 60-epoch model (2 blocks, 4 heads, so the mistakes that need more than one head or block
show) reads `4 2 7 =` with the reference's four functions and one catalogued mistake in place of one of them.
Its first difference is the step that the wrong function returns (LayerNorm 1 for a LayerNorm, the attention's
output, the block's output, the logits), and the mistake's hint names, as its first difference, one of the
microscope's steps inside that function. A mistake about PAD keys differs nowhere on one sequence without PAD,
and its hint says it shows in a padded batch.
"""

from __future__ import annotations

import re

import pytest

from whole_transformer.course.answers import reference as ref
from whole_transformer.course.answers.mistakes import CATALOGUE
from whole_transformer.labs import _compare
from whole_transformer.labs.microscope import MicroscopeLab
from whole_transformer.steps import AXES

FORWARD = ("layer_norm", "multi_head_attention", "decoder_block", "forward")
#: the step the microscope compares for each function (the step it returns), in the first block it touches
RETURNS = {
    "layer_norm": "block 1 · LayerNorm 1",
    "multi_head_attention": "block 1 · attention out",
    "decoder_block": "block 1 · residual 2",
    "forward": "logits",
}
#: the microscope's steps that happen inside each function (a hint's "First difference at …" names one of them)
INSIDE = {
    "layer_norm": {"LayerNorm 1", "LayerNorm 2", "final LayerNorm", "LayerNorm"},
    "multi_head_attention": {"Q", "K", "V", "Q, K, V", "scores", "masked scores", "weights", "mixed values"}
    | {"attention out"},
    "decoder_block": {"LayerNorm 1", "residual 1", "LayerNorm 2", "FFN hidden", "ReLU", "FFN out", "residual 2"},
    "forward": {"token rows", "scaled", "+ positions", "final LayerNorm", "logits", "masked scores"},
}
OTHER_BLOCK = {"block_0_always": "block 2 · residual 2"}  # block 1 reads block 0's weights rightly


@pytest.fixture(scope="module")
def model60():
    from whole_transformer.train import load_model

    return load_model("60")


def _right():
    return {n: getattr(ref, n) for n in FORWARD}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "exercise, mistake", [(ex, m) for ex in FORWARD for m in CATALOGUE[ex]], ids=lambda x: getattr(x, "id", x)
)
def test_the_first_difference_is_the_wrong_functions_step_and_its_hint_names_a_step_inside(model60, exercise, mistake):
    lab = MicroscopeLab("4 2 7 =", model=model60, yours={**_right(), exercise: mistake.code})
    first = _compare.first_difference(lab.compared)
    named = re.match(r"First difference at ([^:,]+)[:,]", mistake.hint)
    if "in a padded batch" in mistake.hint:  # no PAD in one sequence: nothing differs
        assert first is None, (mistake.id, first)
    else:
        want = OTHER_BLOCK.get(mistake.id, RETURNS[exercise])
        assert first is not None and first.label == want and first.largest > 1e-6, (mistake.id, first)
        lab.whose.value = "yours"
        lab.step.value = [s.label for s in lab.stages].index(want)
        assert "≠ first difference, largest difference" in lab.mine.value
        assert f"the first step that differs is {want}" in lab.table.value
        assert "Yours: ≠ first difference, largest difference" in lab.said  # the live line: a screen reader hears it
        assert f"The first step that differs: {want}." in lab.said
    if named is None:  # a mistake about which weights or blocks: its hint says what it reads instead
        assert mistake.id in ("block_0_always", "one_block_only"), mistake.hint
        return
    step = named.group(1)
    assert step in INSIDE[exercise], (mistake.id, step)
    assert step in AXES or step in ("LayerNorm", "Q, K, V"), step  # a step the microscope shows


def test_a_right_forward_pass_agrees_everywhere_and_the_live_line_says_so(model60):
    lab = MicroscopeLab("4 2 7 =", model=model60, yours=_right())
    assert _compare.first_difference(lab.compared) is None
    lab.whose.value = "yours"
    for label in ("block 2 · LayerNorm 1", "block 2 · attention out", "block 2 · residual 2", "logits"):
        lab.step.value = [s.label for s in lab.stages].index(label)
        assert "Yours: = same as the course's, largest difference" in lab.said, (label, lab.said)
        assert "Every step your functions make agrees with the course's." in lab.said
    lab.step.value = [s.label for s in lab.stages].index("block 1 · weights")  # inside your attention
    assert "Yours: inside one of your functions" in lab.said, lab.said
    lab.whose.value = "course"
    assert "Yours" not in lab.said and lab.mine.value == ""
