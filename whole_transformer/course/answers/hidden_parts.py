"""The text of a generated hidden test cell, and the stamp by which a hand edit is found.

``exercise_hidden`` writes an exercise's hidden part from its cases (``hidden_tests.py`` makes them):
the kernel's part calls ``grading.hand_out`` with the student's function and the inputs of every
case, and the EXPECTED part (``core/expected.expected_region``) holds each case's kind and right result.
``question_hidden`` does the same for a question, whose answer is its solution cell's value
(``solution_value``). A generated cell is ``stamped``: its first hidden line says where it is
generated from, with a digest of the generated text (``[#…]``); ``is_hand_edited`` finds a cell
whose text no longer matches its digest.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from whole_transformer import grading as g
from whole_transformer.questions import QUESTIONS

from ..core.expected import expected_region, rounded_payload

BATCH_Y = "task.make_batch(range(64))[1].numpy().reshape(-1)"  # (320,) the targets of the batch 0…63

#: per exercise: (lines that set up the names the cases use, how results compare, the model's position)
SETUP = {
    "next_token": (["np = g.np"], "id", None),
    "greedy_decode": (
        [
            "from whole_transformer import task",
            "from whole_transformer.train import load_model",
            "M, ints = g.score_model, g.numpy_ints",
            'read_60 = g.model_rows(load_model("60"))',
        ],
        "ids",
        0,
    ),
    "make_xy": (["from whole_transformer import task", "ints = g.numpy_ints"], "pair", None),
    "masked_loss": (
        ["from whole_transformer import task", "np = g.np", f"batch_y = {BATCH_Y}  # (320,)"],
        "close",
        None,
    ),
    "sample_next": (["np = g.np"], "sample", None),
    "cached_attention": (
        [
            "from whole_transformer import task",
            "from whole_transformer.stepwise import head_rows, token_by_token",
            "from whole_transformer import weights",
            "np = g.np",
            # float64: in float32, torch's kernels for another CPU move a value of these rows by up to 2.5e-5 of its
            # size (its plain kernels against AVX-512's, measured), beyond the case's 1e-6; in float64 by 1.5e-13
            'model_60 = weights.float64_model("60")  # float64: the same rows on any CPU',
            "rows_60 = lambda ids, block, head: head_rows(model_60, ids, block, head)  # noqa: E731",
        ],
        "same",
        None,
    ),
}
#: the forward pass of notebook 02: each returns an array, handed out as its view (``views.py``)
FORWARD_EXERCISES = ("layer_norm", "multi_head_attention", "decoder_block", "forward")
FORWARD_SETUP = [
    "from whole_transformer import task",
    "from whole_transformer.views import viewed",
    "from whole_transformer.weights import load_weights, random_weights as RW",
    "np = g.np",
    'W_60, W_2, W_tiny = load_weights("60"), load_weights("2"), load_weights("microscope")',
    "held_x = task.xy_arrays(task.split()[1][:16])[0]  # (16, 8) held-out numbers, right-padded",
]
SETUP.update({name: (FORWARD_SETUP, "same", None) for name in FORWARD_EXERCISES})
#: per exercise whose function is not called once per case: what calls it (a name the SETUP lines import)
DRIVERS = {"cached_attention": "token_by_token", **{name: "viewed" for name in FORWARD_EXERCISES}}


def kernel_names(exercise: str) -> dict:
    """The names an exercise's hidden test sets up in the kernel (its ``SETUP`` lines, run here as the cell runs
    them): what the generators and the mistake table evaluate its cases' expressions in, so that they read exactly
    what the grading kernel reads."""
    names: dict = {"g": g}
    exec("\n".join(SETUP[exercise][0]), names)  # noqa: S102 - the course's own lines, never a student's
    return names


#: What a question's failed test says (its answer is never in the message).
QUESTION_WHAT = {
    "tokens_905": "the count of tokens in the sequence of 905",
    "logits_shape": "the shape of the logits",
    "heads_4_to_8": "the letter chosen",
    "ffn_params": "the parameter count of one FFN",
    "attention_scores_shape": "the shape of the scores",
    "std1_no_factor": "the letter chosen",
    "changes_during_inference": "the letter chosen",
    "rows_742": "the number of rows",
    "maps_hundred_427": "the letter chosen",
    "counted_427": "the number of targets that count",
    "flat_shape": "the flattened shape",
    "no_causal_mask": "the letter chosen",
    "learns_nothing": "the letter chosen",
    "sampling_742": "the letter chosen",
    "cached_rows_742": "the number of rows",
}
_COMPARE_OF_KIND = {"int": "same", "shape": "shape", "choice": "choice"}


def json_data(value):
    """value as JSON data: NumPy numbers become Python ones, tuples lists."""
    plain = g.plain(value)
    return g._listify(plain)


@dataclass
class Case:
    kind: str  # what the case is, as the feedback names it
    args: str  # the arguments, as Python source of a tuple
    kwargs: str  # the keyword arguments, as Python source of a dict
    want: object  # the right result (JSON data)
    rel: float | None = None
    watch: int | None = None  # the argument (a list) the function must not change
    before: object = None  # that argument before the call (JSON data)
    changed: str | None = None  # the kind reported when the function changed it
    draws: str | None = None  # a sampler's case: "(n, seed)", n calls sharing one Generator (grading.drawn)
    abs: float | None = None  # how far a float may be off besides ``rel`` of its size (compare.py: 1e-9 if None)

    def expected(self) -> dict:
        out = {"kind": self.kind, "want": self.want}
        if self.rel is not None:
            out["rel"] = self.rel
        if self.abs is not None:
            out["abs"] = self.abs
        if self.watch is not None:
            out["before"], out["changed"] = self.before, self.changed
        return out


def exercise_expected(exercise: str, cases: list[Case]) -> dict:
    """The EXPECTED payload of an exercise's hidden test: its cases' kinds and right results, the floats
    rounded by each case's tolerance (``core/expected.rounded_payload``: the same text on every CPU)."""
    return rounded_payload({"name": exercise, "compare": SETUP[exercise][1], "cases": [c.expected() for c in cases]})


def exercise_hidden(exercise: str, cases: list[Case]) -> str:
    """The hidden part of an exercise's test cell, which asks for ``cases`` (``hidden_tests.CASES``)."""
    setup, compare, model_at = SETUP[exercise]
    (watch,) = {c.watch for c in cases}  # every case watches the same thing
    lines = "\n".join(f"        ({c.args}, {c.kwargs}{', ' + c.draws if c.draws else ''}),  # {c.kind}" for c in cases)
    options = f", watch={watch}" if watch is not None else ""
    options += f", models={model_at}" if model_at is not None else ""
    expected = exercise_expected(exercise, cases)
    setup_lines = "\n".join(f"    {s}" for s in setup)
    called = f"{DRIVERS[exercise]}({exercise})" if exercise in DRIVERS else exercise
    return f"""### BEGIN HIDDEN TESTS
def _hidden_{exercise}():
    from whole_transformer import grading as g
{setup_lines}
    # (arguments, keyword arguments) of every case; the grader alone knows the right results
    g.hand_out("{exercise}", {called}, [
{lines}
    ]{options})


_hidden_{exercise}()
del _hidden_{exercise}
{expected_region(expected)}
### END HIDDEN TESTS"""


def question_hidden(qid: str, answer) -> str:
    """The hidden part of a question's test cell; ``answer`` is the value of its solution cell."""
    kind = QUESTIONS[qid].kind
    want = json_data(answer)
    if kind == "choice":
        want = want.strip().upper()
    expected = {
        "name": qid,
        "question": True,
        "compare": _COMPARE_OF_KIND[kind],
        "what": QUESTION_WHAT[qid],
        "cases": [{"kind": "the answer", "want": want}],
    }
    return f"""### BEGIN HIDDEN TESTS
grading.hand_out_answer("{qid}", {qid})
{expected_region(rounded_payload(expected))}
### END HIDDEN TESTS"""


def solution_value(source: str, name: str):
    """The value a question's solution cell gives ``name`` (its code between the solution markers)."""
    ns: dict = {}
    exec(compile(source, f"<solution {name}>", "exec"), ns)  # noqa: S102 - the instructor's own source cell
    return ns[name]


HEADER = re.compile(
    r"^# generated from (?P<home>.*?); edit (?:it|them) there, then make release "
    r"\[#(?P<sha>[0-9a-f]{12})\]\n",
    re.M,
)
BEGIN = "### BEGIN HIDDEN TESTS\n"


class HandEdited(ValueError):
    """Generated test cells were edited by hand; ``make release`` will not overwrite them."""

    def __init__(self, cells: list[tuple[str, str, str]]):
        self.cells = cells  # (notebook file, grade_id, where to make the change)
        lines = [f"  {gid} in {nb}: edit {home} instead" for nb, gid, home in cells]
        super().__init__(
            "refused: these test cells of source/ were edited by hand, and are generated; a release would "
            "overwrite the edit:\n" + "\n".join(lines) + "\nmake the change there and run make release again; "
            "to throw the hand edits away: python -m whole_transformer.course hidden-tests --write --discard"
        )


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def stamped(body: str, home: str) -> str:
    """``body`` (a generated cell) with its header: where it is generated from, and its digest."""
    visible, begin, hidden = body.partition(BEGIN)
    them = "them" if "course/answers/" in home else "it"
    return f"{visible}{begin}# generated from {home}; edit {them} there, then make release [#{sha(body)}]\n{hidden}"


def is_hand_edited(source: str) -> bool:
    """The cell carries a generator's digest that its text no longer matches (cells without one:
    written before digests, taken as generated)."""
    m = HEADER.search(source)
    return m is not None and sha(source[: m.start()] + source[m.end() :]) != m.group("sha")
