"""The questions' visible checks (checks.py, questions.py) and the comparisons of the hidden tests.

- every question's right answer is the one the page and the package give, and it is accepted in
  its usual spellings, by the visible check and by the hidden test alike;
- every hint is reached by the wrong answer it names; other wrong answers get the fallback;
- the answers are not in the clear: not in the text of checks.py, questions.py or its data, not
  in what a check prints, not stored on a question;
- the hidden tests' comparisons cannot be fooled by look-alike objects or replaced builtins.
"""

import builtins
import doctest
import inspect
import re
from dataclasses import fields

import numpy as np
import pytest
import torch
import verdicts
from hostile import AlwaysEqual

from whole_transformer import checks, grading, questions
from whole_transformer.checks import QUESTIONS, check
from whole_transformer.model import ModelConfig, Transformer, parameter_counts
from whole_transformer.task import batch_counts, encode, make_batch, prompt, sequence, xy_arrays

# The answers to the lesson page's questions, with how the hidden test in the notebook compares.
ANSWERS = {
    "tokens_905": ("int", 8),
    "logits_shape": ("shape", (64, 8, 42)),
    "heads_4_to_8": ("choice", "C"),
    "ffn_params": ("int", 16576),
    "attention_scores_shape": ("shape", (64, 4, 8, 8)),
    "std1_no_factor": ("choice", "A"),
    "changes_during_inference": ("choice", "C"),
    "rows_742": ("int", 7),
    "maps_hundred_427": ("choice", "B"),
    "cached_rows_742": ("int", 8),
    "sampling_742": ("choice", "C"),
    "counted_427": ("int", 5),
    "flat_shape": ("shape", (320, 42)),
    "no_causal_mask": ("choice", "A"),
    "learns_nothing": ("choice", "B"),
}


def hidden_test(kind, value, expected) -> bool:
    """What the notebook's hidden test asserts for a question of this kind."""
    if kind == "int":
        return verdicts.same(value, expected)
    if kind == "shape":
        return verdicts.same_shape(value, expected)
    return verdicts.choice(value, expected)


def spellings(kind, answer):
    """The ways a student writes a right answer, each accepted by the visible check and the hidden test."""
    if kind == "int":
        return [answer, np.int64(answer), np.int32(answer), np.array(answer), torch.tensor(answer)]
    if kind == "shape":
        return [
            answer,
            list(answer),
            torch.Size(answer),
            np.zeros(answer).shape,
            torch.zeros(answer).shape,
            tuple(np.int64(d) for d in answer),
        ]
    return [answer, answer.lower(), f" {answer} ", f"{answer}.", f"{answer})", f"{answer.lower()}:"]


def test_every_question_has_an_answer_here():
    assert set(QUESTIONS) == set(ANSWERS)
    assert all(QUESTIONS[q].kind == kind for q, (kind, _) in ANSWERS.items())


def test_the_answers_follow_from_the_package():
    d = dict(ANSWERS)
    assert d["tokens_905"][1] == len(sequence(905))
    model = Transformer().eval()
    x, _ = make_batch(range(714, 778))  # 64 numbers, the longest x has 8 tokens
    logits, attention = model(x, return_attention=True)
    assert d["logits_shape"][1] == tuple(logits.shape)
    assert d["attention_scores_shape"][1] == tuple(attention[0].shape)
    assert d["ffn_params"][1] == parameter_counts()["one FFN"]
    assert parameter_counts(ModelConfig(n_heads=8)) == parameter_counts()  # heads_4_to_8: stays the same
    assert d["rows_742"][1] == len(prompt(742) + encode("seven hundred forty"))
    from whole_transformer.labs._cache import read_with_cache
    from whole_transformer.train import load_model

    cached = read_with_cache(load_model("60"), 742)  # the cache lab's reading: every step's new rows
    assert d["cached_rows_742"][1] == sum(step.new_rows for step in cached) == len(sequence(742)) - 1
    assert d["counted_427"][1] == int((xy_arrays([427])[1] != 0).sum())
    assert d["flat_shape"][1] == batch_counts(range(64))["flat_shape"]


@pytest.mark.parametrize("qid", sorted(ANSWERS))
def test_right_answer_in_its_usual_spellings(qid, capsys):
    kind, answer = ANSWERS[qid]
    for value in spellings(kind, answer):
        assert QUESTIONS[qid].is_right(value), (qid, value)
        assert check(qid, value) is True, (qid, value)
        assert capsys.readouterr().out.strip() == "✓ Right."
        assert hidden_test(kind, value, answer), (qid, value)


@pytest.mark.parametrize("qid", sorted(ANSWERS))
def test_visible_check_and_hidden_test_agree(qid):
    """A spelling the check calls right must earn the point, and one that cannot earn it must not be called right."""
    kind, answer = ANSWERS[qid]
    if kind == "int":
        candidates = [
            float(answer),
            str(answer),
            f" {answer} ",
            f"{answer:,}",
            [answer],
            (answer,),
            answer + 1,
            True,
            np.float64(answer),
            torch.tensor(float(answer)),
        ]
    elif kind == "shape":
        text = ", ".join(map(str, answer))
        candidates = [
            f"({text})",
            text,
            " × ".join(map(str, answer)),
            np.array(answer),
            torch.tensor(answer),
            tuple(float(d) for d in answer),
            answer[:-1],
            answer + (1,),
        ]
    else:
        candidates = ["A", "C", "b and c", "BB", "", 2, ["B"], f"({answer})"]
    for value in candidates:
        try:
            visible = QUESTIONS[qid].is_right(value)
        except (ValueError, questions.NoAnswer):
            visible = False
        assert visible == hidden_test(kind, value, answer), (qid, value, visible)


@pytest.mark.parametrize("qid", sorted(ANSWERS))
def test_each_hint_is_reached_by_the_wrong_answer_it_names(qid, capsys):
    q = QUESTIONS[qid]
    _, answer = ANSWERS[qid]
    assert q.hints, f"{qid} has no hints"
    for wrong, hint in q.hints.items():
        assert wrong != answer
        assert q.feedback(wrong) == (False, "✗ Not yet. " + hint)
        assert check(qid, wrong) is False
        assert capsys.readouterr().out.strip() == "✗ Not yet. " + hint
        assert not hidden_test(q.kind, wrong, answer)
    assert len(set(q.hints.values())) >= 1 and q.fallback not in q.hints.values()


@pytest.mark.parametrize("qid", sorted(ANSWERS))
def test_other_wrong_answers_get_the_fallback(qid):
    q = QUESTIONS[qid]
    kind, answer = ANSWERS[qid]
    other = {"int": 999_999, "shape": (1, 2, 3, 4, 5), "choice": "D"}[kind]
    assert q.feedback(other) == (False, "✗ Not yet. " + q.fallback)


@pytest.mark.parametrize("qid", sorted(ANSWERS))
def test_unreadable_and_missing_answers(qid):
    q = QUESTIONS[qid]
    assert q.feedback(None) == (False, "Write your answer in the cell above first (replace the None).")
    assert q.feedback(...)[0] is False
    for bad in (True, "eight", 8.5, object(), "(64, x)", "AB", ""):
        ok, message = q.feedback(bad)
        if not ok and message.startswith("✗ Not yet."):
            continue  # a choice reads "AB" as not a letter, a number question reads (64, x) as unreadable, …
        assert ok is False and message.startswith("✗ Cannot read that answer: "), (qid, bad, message)


def test_check_reads_the_notebook_variable(capsys):
    ns = {"check": check}
    exec('ok = check("tokens_905")', ns)
    assert ns["ok"] is False
    assert "No answer yet: write `tokens_905 = ...`" in capsys.readouterr().out
    ns["tokens_905"] = None
    exec('ok = check("tokens_905")', ns)
    assert "replace the None" in capsys.readouterr().out
    ns["tokens_905"] = ANSWERS["tokens_905"][1]
    exec('ok = check("tokens_905")', ns)
    assert ns["ok"] is True and capsys.readouterr().out.strip() == "✓ Right."


def test_unknown_question_raises():
    with pytest.raises(ValueError, match=r"unknown question 'tokens_906'; the questions are \["):
        check("tokens_906", 8)


def test_module_docstring_example_runs():
    result = doctest.testmod(checks, verbose=False)
    assert result.attempted >= 1 and result.failed == 0


# ------------------------------------------------------------------ answers are not in the clear


def _clear_forms(kind, answer):
    if kind == "int":
        return [f"{answer:,}", str(answer)] if answer >= 100 else []  # small numbers occur in any text
    if kind == "shape":
        return [str(answer), str(answer).replace(" ", ""), " × ".join(map(str, answer))]
    return []


def test_answers_are_not_written_in_checks_py():
    source = inspect.getsource(checks) + inspect.getsource(questions) + questions.DATA.read_text(encoding="utf-8")
    for qid, (kind, answer) in ANSWERS.items():
        for form in _clear_forms(kind, answer):
            assert form not in source, (qid, form)


def test_a_question_stores_only_a_salted_hash():
    assert [f.name for f in fields(questions.Question)] == ["qid", "kind", "answer_hash", "hints", "fallback"]
    for qid, (_, answer) in ANSWERS.items():
        q = QUESTIONS[qid]
        assert re.fullmatch(r"[0-9a-f]{32}", q.answer_hash)
        assert answer not in q.hints
    # the same value hashes differently for different questions, so hashes cannot be compared across
    assert questions._digest("tokens_905", 8) != questions._digest("rows_742", 8)


@pytest.mark.parametrize("qid", sorted(ANSWERS))
def test_what_a_check_prints_never_gives_the_answer(qid, capsys):
    kind, answer = ANSWERS[qid]
    q = QUESTIONS[qid]
    for wrong in [*q.hints, {"int": 1, "shape": (1, 1), "choice": "D"}[kind], None, "??"]:
        check(qid, wrong)
        out = capsys.readouterr().out
        assert "✓" not in out
        for form in _clear_forms(kind, answer):
            assert form not in out, (qid, wrong, form)
        if kind == "choice":
            assert f"answer is {answer}" not in out and f"Answer {answer}" not in out


# ------------------------------------------------------------------ grading: hidden-test comparisons


def test_same_compares_by_exact_type():
    assert verdicts.same(8, 8) and verdicts.same(np.int64(8), 8) and verdicts.same(torch.tensor(8), 8)
    assert not verdicts.same(8.0, 8)  # a count must be a whole number
    assert not verdicts.same(True, 1) and not verdicts.same(1, True)
    assert not verdicts.same("8", 8)
    assert verdicts.same(2, 2.0) and verdicts.same(0.1 + 0.2, 0.3) and not verdicts.same(0.31, 0.3)
    assert not verdicts.same(float("inf"), float("inf")) and not verdicts.same(float("nan"), 1.0)
    assert verdicts.same([1, [2, 3]], (1, (2, 3))) and not verdicts.same((1, 2), (1, 2, 3))
    assert verdicts.same(np.array([[1, 2]]), ((1, 2),))
    assert verdicts.same("B", "B") and not verdicts.same(None, 8)


def test_same_shape_and_choice():
    for shape in [(64, 8, 42), [64, 8, 42], torch.Size([64, 8, 42]), np.zeros((64, 8, 42)).shape]:
        assert verdicts.same_shape(shape, (64, 8, 42))
    assert not verdicts.same_shape((64, 42, 8), (64, 8, 42))
    assert not verdicts.same_shape((64.0, 8.0, 42.0), (64, 8, 42))
    assert not verdicts.same_shape(None, (64, 8, 42))
    assert all(verdicts.choice(v, "B") for v in ["B", "b", " B. ", "b)", "B:"])
    assert not any(verdicts.choice(v, "B") for v in ["A", "BC", "", None, 2, ["B"]])


class _LyingInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class _LyingTuple(tuple):
    def __eq__(self, other):
        return True

    __hash__ = tuple.__hash__


def test_look_alike_objects_do_not_pass():
    assert not verdicts.same(AlwaysEqual(), 8)
    assert not verdicts.same(_LyingInt(3), 8)
    assert not verdicts.same_shape(_LyingTuple((1, 2)), (64, 8, 42))
    assert not verdicts.choice(AlwaysEqual(), "B")
    with pytest.raises(grading.NotPlain, match="a value of type AlwaysEqual"):
        grading.plain(AlwaysEqual())


def test_replaced_builtins_and_numpy_change_nothing():
    """What a submission does to its kernel (here: builtins and NumPy replaced while the results are
    handed out) changes nothing: the grader compares in its own process."""
    saved = builtins.abs, builtins.len, builtins.isinstance, np.isclose
    builtins.abs = lambda x: 0
    builtins.len = lambda x: 3
    builtins.isinstance = lambda *a: True
    np.isclose = lambda *a, **k: True
    try:  # no assert until restored
        handed = [verdicts.kernel_side(v) for v in (7.5, (1, 2), np.array([1, 2]), (64, 8), "8")]
    finally:
        builtins.abs, builtins.len, builtins.isinstance, np.isclose = saved
    wants = [("same", 8.0), ("same", (1, 2, 3)), ("same", (1, 2)), ("shape", (64, 8, 42)), ("same", 8)]
    assert [verdicts.grader_side(c, h, w) for h, (c, w) in zip(handed, wants, strict=True)] == [
        False,
        False,
        True,
        False,
        False,
    ]


# ------------------------------------------------------------------ checks inside IPython
@pytest.fixture
def shell():
    """A fresh IPython shell with the checks imported, as in a notebook's first cell."""
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.run_cell("from whole_transformer.checks import check")
    checks._watch_cells()  # in a kernel the import does this; here the module was imported before the shell
    checks._FAILED.clear()
    yield sh
    checks._FAILED.clear()
    InteractiveShell.clear_instance()


def test_a_check_after_an_answer_cell_that_raised_grades_nothing(shell, capsys):
    shell.run_cell('std1_no_factor = "B"')
    shell.run_cell("std1_no_factor = A")  # no quotes: NameError, and the variable keeps "B"
    capsys.readouterr()
    shell.run_cell('check("std1_no_factor")')
    out = capsys.readouterr().out
    assert "The answer cell did not run" in out and "NameError" in out and "nothing was graded" in out
    assert "Not yet" not in out and "✓" not in out, "the check graded the earlier value"
    shell.run_cell('std1_no_factor = "A"')
    shell.run_cell('check("std1_no_factor")')
    assert capsys.readouterr().out.splitlines()[0] == "✓ Right."


def test_a_check_after_a_stub_left_in_the_answer_cell(shell, capsys):
    shell.run_cell("tokens_905 = 8\nraise NotImplementedError()")
    capsys.readouterr()
    shell.run_cell('check("tokens_905")')
    out = capsys.readouterr().out
    assert "still raises NotImplementedError" in out and "✓" not in out


def test_a_check_after_a_function_cell_with_a_syntax_error(shell, capsys):
    shell.run_cell("import numpy as np\n\ndef next_token(h, W, b):\n    return int(np.argmax(h @ W + b))")
    shell.run_cell("def next_token(h, W, b)\n    return 0")
    capsys.readouterr()
    shell.run_cell('check("next_token")')
    out = capsys.readouterr().out
    assert "The cell that defines `next_token` did not run" in out and "SyntaxError" in out and "✓" not in out


def test_a_check_shows_no_out_value_in_a_notebook(shell, capsys):
    shell.run_cell("tokens_905 = 8")
    result = shell.run_cell('check("tokens_905")')
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "✓ Right." and "True" not in out  # (a terminal shell prints an empty Out prompt)
    data, _ = shell.display_formatter.format(result.result)
    assert data == {}, f"IPython would show {data} under the check"
    assert result.result and bool(result.result) is True  # still true, for a cell that uses the value


def test_assigned_names_reads_answer_and_function_cells():
    assert checks._assigned_names("# tokens_905 = a whole number\ntokens_905 = 8") == {"tokens_905"}
    assert checks._assigned_names("tokens_905 == 8") == set()
    assert checks._assigned_names('check("tokens_905")') == set()
    assert checks._assigned_names("def greedy_decode(model, prompt, eos=1, max_new=6):\n    pass") == {"greedy_decode"}


def test_the_masked_loss_hints_describe_mistakes_not_code_the_student_did_not_write():
    from whole_transformer.course.answers.mistakes import MISTAKES

    for mistake in MISTAKES["masked_loss"]:
        assert "nll" not in mistake.hint and ".mean()" not in mistake.hint, mistake.hint


def test_the_mistakes_issue_22_lists_are_catalogued_and_named_by_the_check(capsys):
    """Each named bug gets a hint that names it, not a bare "returned …" or a traceback."""
    from whole_transformer.course.answers.mistakes import MISTAKES

    named = {
        ("make_xy", "no_padding"): "Nothing in y is set to pad",
        ("make_xy", "swapped"): "in the wrong order",
        ("greedy_decode", "argmax_whole_table"): "over the whole table",
        ("greedy_decode", "ignores_max_new"): "It ignores max_new",
        ("masked_loss", "no_softmax"): "softmax first",
        ("masked_loss", "every_row_every_target"): "p[:, targets]",
    }
    for (exercise, mid), words in named.items():
        (m,) = [m for m in MISTAKES[exercise] if m.id == mid]
        assert checks.check(exercise, m.code) is False
        out = capsys.readouterr().out
        assert out.startswith("✗ Not yet. ") and words in out, (mid, out)
        assert "IndexError" not in out.split("hence")[0] and "which is not right" not in out, out


def test_next_token_may_return_a_numpy_integer_as_the_text_says(capsys):
    from notebook_helpers import load

    def next_token(h, W, b):
        return np.argmax(h @ W + b)  # np.int64

    assert checks.check("next_token", next_token) is True
    assert capsys.readouterr().out.startswith("✓ Right.")
    text = " ".join(c.source for c in load("03-one-word-at-a-time.ipynb").cells)
    assert "the NumPy integer that `np.argmax` hands back are both accepted" in " ".join(text.split())
    assert verdicts.same_id(np.int64(3), 3), "the hidden test accepts it too"
