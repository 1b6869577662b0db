"""The four graded exercises: references, visible checks, hidden tests, and the grading helpers.

The central tests run the notebooks' own cells (the locked setup cells, then an implementation
from tests/implementations/ in place of the solution cell, then the exercise's graded test cell,
with its hidden tests) in one namespace, as nbgrader runs them in a kernel:

- every correct implementation gets full points, and its visible check says "✓ Right.";
- every wrong one gets 0 points for that exercise, and its visible check names the mistake;
- a submission cannot win points by returning an always-equal object, by replacing builtins or
  NumPy functions, or by reading the expected values from the notebook's globals;
- a hidden test's failure message names kinds of cases, never expected values.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import verdicts
from hostile import AlwaysEqual
from implementations import SOURCE, grade, graded_cells, implementations, notebook_cells

from whole_transformer import checks, exercise_cases, grading, task
from whole_transformer.course.answers import hidden_cells, reference
from whole_transformer.course.answers import hidden_tests as hidden
from whole_transformer.course.answers.hidden_parts import DRIVERS
from whole_transformer.course.answers.mistakes import CATALOGUE
from whole_transformer.course.cells import HIDDEN_REGION
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.layout import NOTEBOOK_OF

ALL = implementations()
EXERCISES = sorted(NOTEBOOK_OF)


def right_source(exercise: str) -> str:
    return next(i for i in ALL if i.exercise == exercise and i.correct).source


# ------------------------------------------------------------------------------------------ references
def test_reference_next_token_and_greedy_decode():
    h, W, b = np.array([2.0, 0.5]), np.array([[0.5, 1.0, -1.0, 0.25], [1.0, 1.5, 2.0, -0.5]]), np.zeros(4)
    assert reference.next_token(h, W, b) == 1
    assert reference.next_token(np.array([1.0]), np.array([[0.0, 2.0, 2.0]]), np.zeros(3)) == 1  # first of a tie
    stand_in = exercise_cases.stand_in_model
    assert reference.greedy_decode(stand_in, exercise_cases.STAND_IN_PROMPT) == [3, 2, 3, 4, 5, 6, 5, 1]
    assert reference.greedy_decode(stand_in, [3, 2, 3, 4], max_new=2) == [3, 2, 3, 4, 5, 6]
    prompt = [3, 2, 3, 4]
    reference.greedy_decode(stand_in, prompt)
    assert prompt == [3, 2, 3, 4]


def test_reference_greedy_decode_reads_like_the_package():
    from whole_transformer.decode import greedy_trace
    from whole_transformer.train import load_model

    model = load_model("60")
    rows = grading.model_rows(model)
    for n in (0, 14, 427, 896, 905):
        assert reference.greedy_decode(rows, task.prompt(n)) == greedy_trace(model, task.prompt(n)).ids


def test_reference_make_xy_agrees_with_the_task_on_every_number():
    for t, make in (("read", task.sequence), ("copy", task.copy_sequence)):
        X, Y, lengths = task.xy_arrays(range(1000), t)
        for n in range(1000):
            assert reference.make_xy(make(n)) == (X[n, : lengths[n]].tolist(), Y[n, : lengths[n]].tolist())
    assert reference.make_xy(task.sequence(427)) == ([6, 4, 9, 12, 17, 41, 33, 20], [0, 0, 0, 17, 41, 33, 20, 1])


def test_reference_cached_attention_token_by_token_is_the_models_own_attention():
    """Token by token with the cache, full causal attention at once, and the trained model's own head agree."""
    from whole_transformer.stepwise import head_rows, token_by_token
    from whole_transformer.train import load_model

    rng = np.random.default_rng(5)
    for L, d in [(1, 3), (4, 2), (9, 16)]:
        Q, K, V = rng.normal(size=(3, L, d))
        whole = reference.causal_attention(Q, K, V)
        assert np.allclose(token_by_token(reference.cached_attention)(Q, K, V), whole, rtol=1e-12, atol=1e-12)
        assert np.allclose(token_by_token(reference.cached_attention)(Q, K, V, L - 1), whole[-1:], atol=1e-12)
    model, ids = load_model("60"), task.sequence(742)[:-1]
    with torch.no_grad():
        _, attention = model(torch.tensor([ids]), return_attention=True)
    for block, head in [(1, 1), (2, 3)]:
        Q, K, V = head_rows(model, ids, block, head)
        weights = attention[block - 1][0, head - 1].double().numpy()  # (L, L) the model's own
        assert np.allclose(reference.causal_attention(Q, K, V), weights @ V, atol=1e-5)


def test_reference_masked_loss_agrees_with_torch_cross_entropy():
    from whole_transformer.train import load_model

    x, y = task.make_batch(range(64))
    for name in ("2", "60"):
        with torch.no_grad():
            logits = load_model(name)(x).reshape(-1, 42)
        theirs = F.cross_entropy(logits.double(), y.reshape(-1), ignore_index=task.PAD).item()
        mine = reference.masked_loss(logits.numpy(), y.reshape(-1).numpy())
        assert mine == pytest.approx(theirs, rel=1e-9)
    big = np.random.default_rng(0).normal(size=(5, 6)) * 30 + 1000  # stable for large logits
    assert np.isfinite(reference.masked_loss(big, np.array([1, 0, 2, 3, 5])))


def test_the_notebook_stand_in_is_the_reference_stand_in():
    import json

    cells = json.loads((SOURCE / NOTEBOOK_OF["greedy_decode"]).read_text())["cells"]
    src = next("".join(c["source"]) for c in cells if "def stand_in(ids)" in "".join(c["source"]))
    ns = {"np": np}
    exec(src, ns)
    assert np.array_equal(ns["TOKEN"], exercise_cases.STAND_IN_TOKEN)
    assert np.array_equal(ns["POSITION"], exercise_cases.STAND_IN_POSITION)
    assert ns["STAND_IN_VOCAB"] == exercise_cases.STAND_IN_VOCAB
    ids = [3, 2, 3, 4, 5, 6, 5]
    assert np.array_equal(ns["stand_in"](ids), exercise_cases.stand_in_model(ids))


# ------------------------------------------------------------------------------------------ implementations
def test_every_exercise_has_correct_and_wrong_implementations_and_every_listed_mistake():
    names = {(i.exercise, i.verdict, i.name) for i in ALL}
    for ex in EXERCISES:
        assert sum(1 for e, v, _ in names if e == ex and v == "correct") >= 4, ex
    must = {  # the typical mistakes the issue lists, each a file
        "greedy_decode": [
            "eos_dropped",
            "prompt_only",
            "last_token_only",
            "first_row",
            "one_too_many",
            "one_too_few",
            "returns_scores",
        ],
        "masked_loss": ["mean_over_all", "keep_mean", "pad_hard_coded", "sum", "sign"],
        "make_xy": ["no_shift", "eq_target_kept", "first_word_dropped"],
        "next_token": ["returns_score"],
        "sample_next": [
            "temperature_multiplied",
            "temperature_after_softmax",
            "k_plus_one",
            "k_smallest",
            "drops_crossing",
            "no_renormalise",
        ],
        "layer_norm": ["variance_n_minus_1", "eps_outside_sqrt", "no_scale_shift"],
        "multi_head_attention": [
            "scale_d_model",
            "reshape_no_transpose",
            "mask_hides_past",
            "mask_after_softmax",
            "pad_not_masked",
            "softmax_wrong_axis",
            "no_output_bias",
        ],
        "decoder_block": ["post_ln", "attention_residual_dropped", "ffn_residual_dropped"],
        "forward": ["no_sqrt_d_model", "positions_before_scaling", "no_final_layer_norm"],
    }
    for ex, mistakes in must.items():
        for m in mistakes:
            assert (ex, "wrong", m) in names, (ex, m)
    assert all(i.check_says for i in ALL if not i.correct), "every wrong implementation says what the check says"


@pytest.mark.package  # the check and the hidden test run on every case
@pytest.mark.parametrize("imp", [i for i in ALL if i.correct], ids=lambda i: i.id)
def test_a_correct_implementation_gets_full_points(imp):
    graded = grade(imp.exercise, imp.source)
    assert graded.max_points > 0
    assert graded.points == graded.max_points, graded.errors
    assert "✓ Right." in graded.output, graded.output


@pytest.mark.package  # the check and the hidden test run on every case
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("imp", [i for i in ALL if not i.correct], ids=lambda i: i.id)
def test_a_wrong_implementation_loses_the_points_and_the_check_names_the_mistake(imp):
    graded = grade(imp.exercise, imp.source)
    assert graded.points == 0, f"{imp.id} got {graded.points} of {graded.max_points}"
    assert "✗" in graded.output and "✓" not in graded.output, graded.output
    assert imp.check_says in graded.output, graded.output
    # the hidden test says which kinds of case failed, and nothing else
    (message,) = graded.errors.values()
    assert message.startswith(f"TestFailed: {imp.exercise} is not right yet for: "), message
    message, _, named = message.partition(". This looks like a typical mistake, ")
    stateful = any(m.stateful for m in CATALOGUE[imp.exercise] if m.id == imp.name)
    assert named or stateful, message  # the grader names the catalogued mistake (answers/diagnose.py)
    # the kinds, before what the code did on those that raised (". On every one of them, your code raised …")
    kinds = message.split(": ", 2)[2].split(". On ", 1)[0].split("; ")
    assert set(kinds) <= hidden_kinds(imp.exercise) | {
        "the caller's prompt must not change",
        "the caller's sequence must not change",
    }, kinds


def expected_of(exercise: str) -> dict:
    (cell,) = graded_cells(exercise).values()
    return split_expected(cell["source"])[1]


def hidden_kinds(exercise: str) -> set[str]:
    return {c["kind"] for c in expected_of(exercise)["cases"]}


# ------------------------------------------------------------------------------------------ the graded cells
@pytest.mark.parametrize("exercise", EXERCISES)
def test_graded_cells_follow_the_convention(exercise):
    cells = notebook_cells(NOTEBOOK_OF[exercise])
    sol = cells[exercise]
    assert sol["solution"] and not sol["grade"]
    body = sol["source"].split("### BEGIN SOLUTION\n")[1]
    assert sol["source"].lstrip().startswith(f"def {exercise}("), "the solution cell holds only the definition"
    assert "### END SOLUTION" in body
    tests = graded_cells(exercise)
    assert list(tests) == [f"test_{exercise}"]
    (cell,) = tests.values()
    points = {"next_token": 2, "greedy_decode": 3, "make_xy": 2, "masked_loss": 3, "cached_attention": 3}
    points["sample_next"] = 3
    points.update({"layer_norm": 2, "multi_head_attention": 3, "decoder_block": 2, "forward": 3})
    assert cell["points"] == points[exercise]
    visible = cell["source"].split("### BEGIN HIDDEN TESTS")[0]
    assert visible.strip() == f'check("{exercise}")'
    hidden = HIDDEN_REGION.search(cell["source"]).group(1)
    assert "reference" not in hidden and "whole_transformer.checks" not in hidden
    assert len(hidden_kinds(exercise)) >= 6
    kernel_part = hidden.split("### BEGIN EXPECTED")[0]
    called = f"{DRIVERS[exercise]}({exercise})" if exercise in DRIVERS else exercise  # a driver calls it per token
    assert f'g.hand_out("{exercise}", {called},' in kernel_part


def test_the_notebooks_hold_the_hidden_tests_generated_from_the_reference():
    """whole_transformer/course/answers/hidden_tests.py works every expected value out with the reference;
    the notebooks hold exactly its output (python -m whole_transformer.course hidden-tests --write)."""
    assert hidden_cells.out_of_sync(SOURCE) == []


def test_the_trained_model_cases_expect_the_right_readings():
    """Cases with the 60-epoch model expect what a right reading is, not what some weights say."""
    for case in hidden.greedy_cases():
        if case.args.startswith("(read_60,"):
            args = eval(case.args.replace("read_60", "None"), {"task": task, "ints": grading.numpy_ints})
            prompt = [int(i) for i in args[1]]
            n = int("".join(task.VOCAB[i] for i in prompt[:-1]))
            max_new = args[3] if len(args) > 3 else eval(case.kwargs).get("max_new", 6)
            assert case.want == task.sequence(n)[: len(task.prompt(n)) + max_new], (case.kind, n)


def test_hidden_tests_cover_the_cases_the_issue_names():
    kinds = {ex: " | ".join(hidden_kinds(ex)) for ex in EXERCISES}
    for needle in [
        "random score tables",
        "prompts of every length",
        "never picks eos",
        "max_new = 0",
        "max_new = 1",
        "ties",
        "large scores",
        "NumPy ints",
        "eos other than 1",
        "trained model",
    ]:
        assert needle in kinds["greedy_decode"], needle
    for needle in ["pad other than 0", "large logits", "no target is PAD", "batch 0…63", "float32"]:
        assert needle in kinds["masked_loss"], needle
    for needle in ["pad other than 0", "eq other than 12", "copy task", "NumPy ints"]:
        assert needle in kinds["make_xy"], needle
    for needle in ["tie", "bias decides", "negative", "large scores", "square W"]:
        assert needle in kinds["next_token"], needle
    for needle in ["temperature near 0", "top_k = 1", "crosses p", "top-k keeps", "top-k and top-p", "ValueError"]:
        assert needle in kinds["sample_next"], needle
    for needle in ["empty cache", "several lengths and sizes", "cache handed in", "trained model", "float32"]:
        assert needle in kinds["cached_attention"], needle
    for ex in ("layer_norm", "multi_head_attention", "decoder_block"):  # issue 41: float32, the trained weights
        assert "float32" in kinds[ex] and "trained model's weights" in kinds[ex], ex
    for needle in ["small variance", "eps given", "large values", "a batch"]:
        assert needle in kinds["layer_norm"], needle
    for needle in ["one token", "right-padded batch", "large scores", "d_k < d_model"]:
        assert needle in kinds["multi_head_attention"], needle
    for needle in ["one token", "right-padded batch", "pad other than 0", "60-epoch", "2-epoch"]:
        assert needle in kinds["forward"], needle


@pytest.mark.package  # the check and the hidden test run on every case
def test_no_expected_value_reaches_the_kernel():
    """The kernel runs the test cell without its EXPECTED part, and leaves no name of the hidden test behind."""
    for ex in EXERCISES:
        graded = grade(ex, right_source(ex))
        assert graded.points == graded.max_points
        added = {k for k in graded.namespace if k.startswith("_") and not k.startswith("__")}
        assert not added, added
        (cell,) = graded_cells(ex).values()
        kernel_part, expected = split_expected(cell["source"])
        assert expected["cases"] and "EXPECTED" not in kernel_part and '"want"' not in kernel_part


# ------------------------------------------------------------------------------------------ hostile submissions


WRONG_BUT_SHADOWING = {
    "next_token": """
import builtins
abs = lambda x: 0
len = lambda x: 0
isinstance = lambda *a: True
np.isclose = lambda *a, **k: True
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
def next_token(h, W, b):
    return int(np.argmin(h @ W + b))
""",
    "greedy_decode": """
abs = lambda x: 0
len = lambda x: 0
np.isclose = lambda *a, **k: True
def greedy_decode(model, prompt, eos=1, max_new=6):
    ids = list(prompt)
    for _ in range(max_new):
        nxt = int(np.argmax(model(ids)[-1]))
        if nxt == eos:
            break
        ids.append(nxt)
    return ids
""",
    "make_xy": """
abs = lambda x: 0
len = lambda x: 0
sorted = lambda x: x
np.isclose = lambda *a, **k: True
def make_xy(seq, eq=12, pad=0):
    return list(seq[:-1]), list(seq[1:])
""",
    "masked_loss": """
abs = lambda x: 0.0
float = lambda x: 0.0
np.isclose = lambda *a, **k: True
np.allclose = lambda *a, **k: True
math_isclose = __import__("math").isclose
__import__("math").isclose = lambda *a, **k: True
def masked_loss(logits, targets, pad=0):
    p = softmax(logits)
    return -np.log(p[np.arange(len(targets)), targets]).mean()
""",
    "cached_attention": """
abs = lambda x: 0.0
len = lambda x: 1
np.array_equal = lambda *a, **k: True
np.allclose = lambda *a, **k: True
def cached_attention(q, k, v, cache=None):
    K = k[None, :] if cache is None else np.vstack([cache[0], k])
    V = v[None, :] if cache is None else np.vstack([cache[1], v])
    return v, [K, V]
""",
    "sample_next": """
sum = lambda *a, **k: 0.0
len = lambda x: 1
np.allclose = lambda *a, **k: True
def sample_next(scores, temperature=1.0, top_k=None, top_p=None, rng=None):
    return int(np.argmax(scores))
""",
    "layer_norm": """
len = lambda x: 0
np.allclose = lambda *a, **k: True
def layer_norm(x, gamma, beta, eps=1e-5):
    return (x - x.mean(axis=-1, keepdims=True)) * gamma + beta
""",
    "multi_head_attention": """
abs = lambda x: 0.0
np.allclose = lambda *a, **k: True
np.isclose = lambda *a, **k: True
def multi_head_attention(x, w_q, w_k, w_v, w_o, b_o, n_heads, key_pad=None):
    return x @ w_o.T + b_o
""",
    "decoder_block": """
np.allclose = lambda *a, **k: True
def decoder_block(x, weights, i, n_heads, key_pad=None):
    return x
""",
    "forward": """
len = lambda x: 0
np.allclose = lambda *a, **k: True
def forward(ids, weights, n_heads=4, pad=0):
    return weights["tok.weight"][np.asarray(ids)] @ weights["head.weight"].T
""",
}


@pytest.mark.package  # the check and the hidden test run on every case
@pytest.mark.parametrize("exercise", EXERCISES)
def test_shadowed_builtins_and_numpy_do_not_give_points_to_a_wrong_answer(exercise):
    import math

    saved = {k: getattr(np, k) for k in ("isclose", "allclose", "array_equal")}
    saved_math = math.isclose
    try:
        graded = grade(exercise, WRONG_BUT_SHADOWING[exercise])
    finally:
        for k, v in saved.items():
            setattr(np, k, v)
        math.isclose = saved_math
    assert graded.points == 0, graded.errors


@pytest.mark.package  # the check and the hidden test run on every case
@pytest.mark.parametrize("exercise", EXERCISES)
def test_shadowed_builtins_and_numpy_do_not_take_points_from_a_right_answer(exercise):
    saved = {k: getattr(np, k) for k in ("isclose", "allclose")}
    shadow = "abs = lambda x: -1\nnp.isclose = lambda *a, **k: False\nnp.allclose = lambda *a, **k: False\n"
    try:
        graded = grade(exercise, shadow + right_source(exercise))
    finally:
        for k, v in saved.items():
            setattr(np, k, v)
    assert graded.points == graded.max_points, graded.errors


@pytest.mark.package  # the check and the hidden test run on every case
@pytest.mark.parametrize("exercise", EXERCISES)
def test_an_always_equal_return_value_gets_no_points(exercise):
    args = {
        "next_token": "h, W, b",
        "greedy_decode": "model, prompt, eos=1, max_new=6",
        "make_xy": "seq, eq=12, pad=0",
        "masked_loss": "logits, targets, pad=0",
        "cached_attention": "q, k, v, cache=None",
        "sample_next": "scores, temperature=1.0, top_k=None, top_p=None, rng=None",
        "layer_norm": "x, gamma, beta, eps=1e-5",
        "multi_head_attention": "x, w_q, w_k, w_v, w_o, b_o, n_heads, key_pad=None",
        "decoder_block": "x, weights, i, n_heads, key_pad=None",
        "forward": "ids, weights, n_heads=4, pad=0",
    }[exercise]
    src = f"def {exercise}({args}):\n    return AlwaysEqual()\n"
    graded = grade(exercise, src, {"AlwaysEqual": AlwaysEqual})
    assert graded.points == 0
    # nor a list of them, nor a pair of them
    src = f"def {exercise}({args}):\n    return [AlwaysEqual(), AlwaysEqual()]\n"
    assert grade(exercise, src, {"AlwaysEqual": AlwaysEqual}).points == 0


def test_subclasses_of_int_float_and_list_cannot_lie():
    class LyingInt(int):
        def __eq__(self, other):
            return True

    class LyingFloat(float):
        def __sub__(self, other):
            return 0.0

    class LyingList(list):
        def __eq__(self, other):
            return True

    assert not verdicts.same_id(LyingInt(5), 3)
    assert not verdicts.close(LyingFloat(5.0), 3.0)
    assert not verdicts.same_ids(LyingList([9]), [1, 2])
    assert not verdicts.same_pair(LyingList([[1], [2]]), [1], [2])


#: A submission that looks for the expected values everywhere the notebook reaches (its globals, the
#: kernel's input history ``In``/``_ih``, every string and container in them) and, when it finds the
#: EXPECTED part of greedy_decode's test, returns its answers to the hidden test's calls in turn.
READS_GLOBALS = """
def greedy_decode(model, prompt, eos=1, max_new=6):
    import json
    import sys

    seen, wants, stack = set(), [], [globals(), vars(sys.modules["__main__"])]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, str):
            for line in v.splitlines():
                line = line.strip().lstrip("#").strip()
                if line.startswith("{") and '"greedy_decode"' in line:
                    wants += [c["want"] for c in json.loads(line)["cases"]]
        elif isinstance(v, dict):
            stack += [x for x in v.values() if isinstance(x, (str, dict, list, tuple))]
            stack += [k for k in v if isinstance(k, str)]
        elif isinstance(v, (list, tuple)):
            stack += [x for x in v if isinstance(x, (str, dict, list, tuple))]
    if sys._getframe(1).f_globals.get("__name__") != "whole_transformer.grading":
        return list(prompt)  # the visible check: only the hidden test's calls are counted
    calls = greedy_decode.__dict__.setdefault("calls", [0])
    calls[0] += 1
    return list(wants[calls[0] - 1]) if len(wants) >= calls[0] else list(prompt)
"""


def test_a_submission_that_reads_the_notebook_globals_finds_no_expected_value():
    assert grade("greedy_decode", READS_GLOBALS).points == 0


def test_the_globals_reader_would_win_if_the_expected_values_were_there():
    """The submission above is able to cheat: with the test cells' EXPECTED parts in the input history
    (as a kernel would hold them had they not been cut out before it ran), it gets full points."""
    leaked = [c["source"] for c in graded_cells("greedy_decode").values()]
    graded = grade("greedy_decode", READS_GLOBALS, {"In": ["", *leaked], "_ih": ["", *leaked]})
    assert graded.points == graded.max_points > 0, graded.errors


def test_a_failing_test_cell_message_shows_no_expected_value():
    graded = grade("greedy_decode", next(i for i in ALL if i.name == "eos_dropped").source)
    (message,) = graded.errors.values()
    assert not re.search(r"\[\d", message) and "want" not in message


# ------------------------------------------------------------------------------------------ visible checks
def test_check_reads_the_function_from_the_callers_globals(capsys):
    ns = {"check": checks.check}
    exec('ok = check("next_token")', ns)
    assert ns["ok"] is False and "No function yet" in capsys.readouterr().out
    ns["next_token"] = reference.next_token
    exec('ok = check("next_token")', ns)
    assert ns["ok"] is True and "✓ Right." in capsys.readouterr().out


def test_check_on_the_release_stub_says_not_written_yet(capsys):
    ns = {"check": checks.check}
    exec("def make_xy(seq, eq=12, pad=0):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n", ns)
    exec('ok = check("make_xy")', ns)
    out = capsys.readouterr().out
    assert ns["ok"] is False and "Not written yet" in out


def test_check_never_raises_and_reports_errors_and_none(capsys):
    def crashes(h, W, b):
        raise KeyError("oops")

    def nothing(logits, targets, pad=0):
        scores = softmax_missing  # noqa: F821, F841

    def forgot_return(model, prompt, eos=1, max_new=6):
        ids = list(prompt)
        ids.append(1)

    assert checks.check("next_token", crashes) is False
    assert "raised KeyError" in capsys.readouterr().out
    assert checks.check("masked_loss", nothing) is False
    assert "NameError" in capsys.readouterr().out
    assert checks.check("greedy_decode", forgot_return) is False
    assert "returns None" in capsys.readouterr().out
    assert checks.check("make_xy", 42) is False
    assert "not a function" in capsys.readouterr().out


def test_check_stops_a_loop_that_never_ends(capsys):
    def forever(model, prompt, eos=1, max_new=6):
        ids = list(prompt)
        while True:
            ids = ids[:1] + [int(np.argmax(model(ids)[-1]))]

    assert checks.check("greedy_decode", forever) is False
    assert "does your loop stop?" in capsys.readouterr().out


def test_check_hints_for_the_questions_of_03_and_04(capsys):
    right = {
        "changes_during_inference": "C",
        "rows_742": 7,
        "counted_427": 5,
        "flat_shape": (320, 42),
        "no_causal_mask": "A",
        "learns_nothing": "B",
    }
    for qid, answer in right.items():
        assert checks.check(qid, answer), qid
        assert "✓ Right." in capsys.readouterr().out
        for wrong, hint in checks.QUESTIONS[qid].hints.items():
            assert not checks.check(qid, wrong)
            assert hint in capsys.readouterr().out
    # text is not what the hidden tests accept, so the check does not call it right (it says what to write)
    assert not checks.check("flat_shape", "(320, 42)") and not checks.check("rows_742", "7")
    assert capsys.readouterr().out.count("✗ Cannot read that answer") == 2


def test_check_unknown_names_raise_with_the_list():
    with pytest.raises(ValueError, match="exercises"):
        checks.check("greedy")


# ------------------------------------------------------------------------------------------ grading helpers
def test_same_id_accepts_python_and_numpy_ints_only():
    assert verdicts.same_id(3, 3) and verdicts.same_id(np.int64(3), 3) and verdicts.same_id(np.int32(3), 3)
    assert verdicts.same_id(np.array(3), 3) and verdicts.same_id(torch.tensor(3), 3)
    for bad in (3.0, np.float64(3.0), True, [3], np.array([3]), "3", None, AlwaysEqual()):
        assert not verdicts.same_id(bad, 3), bad
    assert not verdicts.same_id(True, 1) and not verdicts.same_id(4, 3)


def test_same_ids_accepts_lists_tuples_and_int_arrays():
    want = [6, 4, 12, 1]
    for ok in (want, tuple(want), np.array(want), [np.int64(v) for v in want], torch.tensor(want)):
        assert verdicts.same_ids(ok, want), ok
    for bad in (
        [6, 4, 12],
        [6, 4, 12, 1, 0],
        [6.0, 4, 12, 1],
        np.array(want, dtype=float),
        [6, 4, 12, True],
        "6 4 12 1",
        None,
        [[6, 4, 12, 1]],
        AlwaysEqual(),
    ):
        assert not verdicts.same_ids(bad, want), bad

    assert verdicts.same_pair(([1, 2], [0, 3]), [1, 2], [0, 3])
    assert verdicts.same_pair([np.array([1, 2]), (0, 3)], [1, 2], [0, 3])
    assert not verdicts.same_pair(([1, 2], [0, 3], []), [1, 2], [0, 3])
    assert not verdicts.same_pair({"x": [1, 2]}, [1, 2], [0, 3])
    assert verdicts.close(0.5, 0.5) and verdicts.close(np.float32(0.5), 0.5) and verdicts.close(np.array(0.5), 0.5)
    assert verdicts.close(0.5 + 1e-8, 0.5) and not verdicts.close(0.5 + 1e-4, 0.5)
    assert verdicts.close(0.50001, 0.5, rel=1e-4)
    for bad in (float("nan"), float("inf"), np.array([0.5]), "0.5", None, True, AlwaysEqual()):
        assert not verdicts.close(bad, 0.5), bad
    assert not verdicts.close(0.5, float("nan"))


def test_hidden_test_data_is_made_from_private_references():
    a = grading.random_array(5, (3, 4))
    saved = np.random.default_rng
    try:
        np.random.default_rng = lambda *a, **k: None  # a submission replacing NumPy's generator
        b = grading.random_array(5, (3, 4))
    finally:
        np.random.default_rng = saved
    assert np.array_equal(a, b)
    assert grading.array([1, 2], int).dtype == np.int64 and grading.array([1, 2]).dtype == np.float64
    assert [type(v) for v in grading.numpy_ints([1, 2])] == [np.int64, np.int64]
    assert grading.random_array(1, 3, dtype=np.float32).dtype == np.float32


def test_score_model_depends_on_token_position_and_the_token_before():
    m = grading.score_model(1, 8)
    rows = m([2, 3, 4])
    assert rows.shape == (3, 8)
    assert not np.allclose(m([4])[-1], rows[-1]), "the last token alone gives another row"
    assert not np.allclose(m([5, 3, 4])[-1], m([2, 6, 4])[-1])
    assert np.array_equal(m(np.array([2, 3, 4])), m((2, 3, 4))) and np.array_equal(
        m(grading.numpy_ints([2, 3, 4])), rows
    )
    never = grading.score_model(2, 6, eos=1, never_eos=True)
    assert all(never([2, 3, 4, 5])[:, 1] < never([2, 3, 4, 5]).max(axis=1))
    ties = grading.score_model(3, 6, ties=True)(list(range(2, 6)))
    assert any((row == row.max()).sum() > 1 for row in ties)
    with pytest.raises(ValueError, match="reads 1 to"):
        m([])
    with pytest.raises(ValueError, match="never_eos needs"):
        grading.score_model(1, 5, never_eos=True)


@pytest.mark.parametrize(
    "extra, what",
    [
        ("    import torch  # a right NumPy answer that also brings in torch\n", "torch"),
        ("    from whole_transformer.model import Transformer\n", "whole_transformer.model"),
        ("    _ = trace\n", "trace"),
    ],
)
def test_a_forward_pass_that_uses_torch_or_the_models_code_earns_nothing(extra, what):
    """Issue 41: a forward-pass exercise that calls the model it should build is refused in the grader, with
    the reason, however right its numbers (here the notebook's own solution with one more line)."""
    from nbformat import NotebookNode

    from whole_transformer import grading
    from whole_transformer.course.plugins.cell_verdict import assess

    right = right_source("layer_norm")
    signature = "def layer_norm(x, gamma, beta, eps=1e-5):\n"
    source = right.replace(signature, signature + extra, 1)
    assert extra in source
    graded = grade("layer_norm", source, {"trace": None})
    assert graded.points == graded.max_points  # the kernel's results are right ...
    (cell,) = graded_cells("layer_norm").values()
    kernel_part, expected = split_expected(cell["source"])
    outputs = []
    saved, grading._publish = (
        grading._publish,
        lambda name, res: outputs.append(
            NotebookNode(
                output_type="display_data",
                metadata={},
                data={grading.RESULTS_MIME: grading._encode({"name": name, "results": res})},
            )
        ),
    )
    try:
        exec(compile(kernel_part, "<test>", "exec"), graded.namespace)
    finally:
        grading._publish = saved
    solution = NotebookNode(
        cell_type="code", source=source, metadata={"nbgrader": {"solution": True, "grade_id": "layer_norm"}}
    )
    out, verdict = assess(NotebookNode(outputs=outputs), expected, solution, 2.0)
    assert out[0].output_type == "error" and f"it uses {what}" in out[0].evalue  # ... and refused, saying why
    assert "earns no points" in out[0].evalue and not verdict.score
    right_verdict = assess(
        NotebookNode(outputs=outputs), expected, NotebookNode(cell_type="code", source=right, metadata={}), 2.0
    )
    assert right_verdict[0][0].text.startswith("Tests passed.")


# ------------------------------------------------------------------------------------------ no answer to call
#: For each package function the issue names, a version of an exercise built on it (what a student could
#: write in the solution cell): it must earn nothing, and both the check and the grader must name the function.
CALLS_AN_ANSWER = {
    "labs._sampling.stages": (
        "sample_next",
        """
from whole_transformer.labs._sampling import Settings, stages


def sample_next(scores, temperature=1.0, top_k=None, top_p=None, rng=None):
    if temperature <= 0 or (top_k is not None and top_k < 1) or (top_p is not None and not 0 < top_p <= 1):
        raise ValueError("temperature must be above 0, top_k at least 1, top_p in (0, 1]")
    st = stages(np.asarray(scores, dtype=float), Settings(temperature, top_k or 0, top_p or 1.0))
    p = np.asarray(st.final, dtype=float)
    return int(rng.choice(len(p), p=p / p.sum()))
""",
    ),
    "decode.greedy_trace": (
        "greedy_decode",
        """
from whole_transformer import decode


def greedy_decode(model, prompt, eos=1, max_new=6):
    return decode.greedy_trace(model, list(prompt), max_new=max_new).ids
""",
    ),
    "stepwise._one_step": (
        "cached_attention",
        """
from whole_transformer import stepwise


def cached_attention(q, k, v, cache=None):
    def attend(q, k, v, cache=None):
        K = k[None] if cache is None else np.vstack([cache[0], k])
        V = v[None] if cache is None else np.vstack([cache[1], v])
        return softmax(K @ q / np.sqrt(len(q))) @ V, [K, V]

    return stepwise._one_step(attend, q, k, v, cache, 0)
""",
    ),
    "fast.extend": (
        "cached_attention",
        """
import torch

from whole_transformer.fast import extend


def cached_attention(q, k, v, cache=None):
    extend(None, torch.tensor([[1]]), {})
""",
    ),
    "task.xy_arrays": (
        "make_xy",
        """
from whole_transformer import task


def make_xy(seq, eq=12, pad=0):
    x, y, _ = task.xy_arrays([0])
    return list(seq[:-1]), [t for t in y[0]]
""",
    ),
    "labs._batch.xy_of": (
        "make_xy",
        """
def make_xy(seq, eq=12, pad=0, _xy=__import__("whole_transformer.labs._batch").labs._batch.xy_of):
    return _xy(0)
""",
    ),
    "torch.nn.functional.cross_entropy": (
        "masked_loss",
        """
import torch
import torch.nn.functional as F


def masked_loss(logits, targets, pad=0):
    return float(F.cross_entropy(torch.tensor(logits), torch.tensor(targets).long(), ignore_index=pad))
""",
    ),
    "decode.greedy_step": (
        "next_token",
        """
from whole_transformer.decode import greedy_step


def next_token(h, W, b):
    return greedy_step(None, [1]).picked
""",
    ),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("called", sorted(CALLS_AN_ANSWER))
def test_a_version_that_calls_the_course_s_own_code_earns_nothing_and_is_told_why(called):
    exercise, source = CALLS_AN_ANSWER[called]
    dotted = ("" if called.startswith("torch") else "whole_transformer.") + called
    graded = grade(exercise, source)
    assert graded.points == 0, f"{called}: {graded.points} of {graded.max_points}"
    what = "a library's ready-made version of" if called.startswith("torch") else "the course's own code for"
    assert f"✗ {exercise} calls {dotted}, {what} this step" in graded.output, graded.output
    (message,) = graded.errors.values()
    assert message.startswith(f"TestFailed: {exercise} earns nothing: it calls {dotted}"), message


def test_outside_a_graded_run_the_course_s_functions_are_themselves():
    from whole_transformer import tripwire
    from whole_transformer.labs._sampling import Settings, stages

    before = stages(np.array([1.0, 2.0, 0.5]), Settings(top_k=2))
    with tripwire.run("sample_next", lambda *a: None):
        from whole_transformer.labs import _sampling

        assert _sampling.stages is not stages  # the tripwire, while the run lasts
        # called by the course's own code (not from the student's), it is the function itself
        assert np.allclose(_sampling.stages(np.array([1.0, 2.0, 0.5]), Settings(top_k=2)).final, before.final)
    assert _sampling.stages is stages
    assert set(tripwire.FORBIDDEN) >= set(NOTEBOOK_OF) - {
        "layer_norm",
        "multi_head_attention",
        "decoder_block",
        "forward",
    }


def test_the_grader_takes_only_a_name_of_the_table_from_the_kernel():
    from whole_transformer.course.core.compare import case_passes
    from whole_transformer.course.plugins.cell_verdict import _called

    assert _called([{"value": 3}, {"value": 3, "called": "whole_transformer.task.xy_arrays"}]) == (
        "whole_transformer.task.xy_arrays"
    )
    assert _called([{"value": 3, "called": "<script>"}]) == "one of the course's functions for this step"
    assert _called([{"value": 3}]) is None
    assert not case_passes("id", {"want": 3}, {"value": 3, "called": "x"})


def test_draws_must_come_from_the_generator_handed_in():
    from whole_transformer.course.core.compare import from_rng

    assert from_rng({"value": [1, 2, 3], "again": [1, 2, 3]})
    assert not from_rng({"value": [1, 2, 3], "again": [1, 3, 2]})
    assert not from_rng({"value": [1, 2, 3]})  # a result without the draws made again is not taken
    (m,) = [m for m in CATALOGUE["sample_next"] if m.id == "np_random"]
    out = grading.drawn(m.code, (np.array([1.0, 2.0, 0.5]),), {}, (100, 1))
    assert not from_rng(out)
    right = grading.drawn(reference.sample_next, (np.array([1.0, 2.0, 0.5]),), {}, (100, 1))
    assert from_rng(right)


# ------------------------------------------------------------------------------------------ hints that name the bug
def test_an_error_without_its_message_is_not_right(capsys):
    (m,) = [m for m in CATALOGUE["sample_next"] if m.id == "bare_value_error"]
    assert checks.check("sample_next", m.code) is False
    out = capsys.readouterr().out
    assert "✓" not in out and "without a message" in out, out


def test_an_uncatalogued_attention_is_told_from_which_token_it_differs(capsys):
    def cached_attention(q, k, v, cache=None):
        K = k[None] if cache is None else np.vstack([cache[0], k])
        V = v[None] if cache is None else np.vstack([cache[1], v])
        out = reference.softmax(K @ q / np.sqrt(len(q))) @ V
        return (out * 1.5 if len(K) > 3 else out), [K, V]  # right for tokens 0 to 2 only

    assert checks.check("cached_attention", cached_attention) is False
    out = capsys.readouterr().out
    assert "the output row differs from full causal attention from token 3 on" in out, out


def test_each_catalogued_mistake_has_results_of_its_own_on_the_visible_cases():
    import json

    from whole_transformer.exercise_checks import DATA

    for name, entry in json.loads(DATA.read_text())["exercises"].items():
        seen = [tuple(m["outcomes"]) for m in entry["mistakes"]]
        assert len(seen) == len(set(seen)), name  # else the check could not tell two of them apart
