"""Greedy decoding: the trace for the labs, the batched reader, evaluation with its mistakes."""

import numpy as np
import pytest
import torch

from whole_transformer.decode import (
    MAX_NEW,
    Evaluation,
    evaluate,
    greedy_step,
    greedy_trace,
    read_numbers,
)
from whole_transformer.model import ModelConfig, Transformer
from whole_transformer.task import EOS, TOKEN_ID, encode, expected_answer, prompt, split, to_text


def _one_at_a_time(model, numbers):
    """Each number read alone, the whole prefix run again at every step (greedy_trace)."""
    return {n: greedy_trace(model, prompt(n)).answer for n in numbers}


# ------------------------------------------------------------------ the shipped models read as the course says


def test_60_epoch_model_reads_all_100_held_out_numbers(model60):
    result = evaluate(model60, split()[1])
    assert (result.correct, result.total) == (100, 100), result.report()
    assert result.mistakes == [] and result.accuracy == 1.0


def test_60_epoch_model_reads_all_1000_numbers(model60):
    assert evaluate(model60, range(1000)).correct == 1000


def test_2_epoch_model_writes_long_wrong_answers_for_short_numbers(model2):
    said = read_numbers(model2, range(20))
    assert said[14] == "one hundred forty hundred forty"
    for n in range(20):  # every one of them is wrong and has a "hundred" in it
        assert said[n] != expected_answer(n)
        assert "hundred" in said[n].split() and len(said[n].split()) >= 3
    assert evaluate(model2, split()[1]).correct == 0


def test_2_epoch_report_names_the_mistakes(model2):
    report = evaluate(model2, [14, 7]).report()
    assert report.splitlines()[0] == "0/2 right (0 %)"
    assert "reads 14 as 'one hundred forty hundred forty', should be 'fourteen'" in report


def test_microscope_model_loads_and_reads(microscope):
    assert read_numbers(microscope, [89, 8, 98]) == {89: "eighty nine", 8: "eight", 98: "ninety eight"}
    assert evaluate(microscope, split()[1]).correct == 100
    # the first numbers a student types into the microscope (0, 1, 3, 5 …) as well: all 1,000 (issue 31)
    every = evaluate(microscope, range(1000))
    assert (every.correct, every.total) == (1000, 1000), every.report()


def test_60_epoch_model_reads_896_looking_at_the_right_digits(model60):
    trace = greedy_trace(model60, prompt(896))
    assert trace.answer == "eight hundred ninety six" and trace.finished
    digit_of_word = {"eight": 0, "ninety": 1, "six": 2}  # the row writing the word looks most at its digit
    for step in trace.steps:
        word = to_text([step.picked])
        if word in digit_of_word:
            last_row = step.attention[-1][:, -1, :3].mean(0)  # last block, mean over heads, on the digits
            assert int(last_row.argmax()) == digit_of_word[word], word


# ------------------------------------------------------------------ batched == one at a time


@pytest.mark.parametrize("name", ["60", "2", "microscope"])
def test_batched_reading_equals_one_at_a_time_for_all_1000(shipped, name):
    model = shipped[name]
    assert read_numbers(model, range(1000)) == _one_at_a_time(model, range(1000))


def test_batched_reading_without_causal_mask_reruns_the_prefix():
    torch.manual_seed(0)
    model = Transformer(ModelConfig(causal=False)).eval()
    numbers = [0, 7, 14, 89, 100, 427, 999]
    assert read_numbers(model, numbers) == _one_at_a_time(model, numbers)


def test_batched_reading_of_a_plain_module(model60):
    class Wrapped(torch.nn.Module):  # a model without the fast path
        def __init__(self):
            super().__init__()
            self.inner = model60

        def forward(self, ids):
            return self.inner(ids)

    assert read_numbers(Wrapped(), [3, 42, 427]) == {3: "three", 42: "forty two", 427: "four hundred twenty seven"}


def test_read_numbers_keeps_order_and_duplicates(model60):
    said = read_numbers(model60, [427, 5, 427, 63])
    assert list(said) == [427, 5, 63]
    assert said[5] == "five"
    assert read_numbers(model60, []) == {}
    assert read_numbers(model60, np.array([12])) == {12: "twelve"}


def test_max_new_cuts_the_answer(model60):
    assert read_numbers(model60, [777], max_new=2)[777] == "seven hundred"
    assert read_numbers(model60, [777], max_new=MAX_NEW)[777] == "seven hundred seventy seven"


@pytest.mark.parametrize("bad", [0, -1, 2.0, True])
def test_bad_max_new_raises(model60, bad):
    with pytest.raises(ValueError, match="max_new must be a whole number of at least 1"):
        read_numbers(model60, [1], max_new=bad)


def test_bad_numbers_raise(model60):
    with pytest.raises(ValueError, match="whole number from 0 to 999, got 1000"):
        read_numbers(model60, [1, 1000])
    with pytest.raises(ValueError, match="whole number from 0 to 999"):
        evaluate(model60, [3.5])


# ------------------------------------------------------------------ the trace of one number


def test_trace_records_every_step(model60):
    trace = greedy_trace(model60, prompt(742))
    assert trace.prompt == prompt(742)
    assert to_text(trace.ids) == "7 4 2 = seven hundred forty two <eos>"
    assert trace.answer == "seven hundred forty two" and trace.finished
    assert len(trace.steps) == 5
    for i, step in enumerate(trace.steps):
        assert len(step.ids_in) == 4 + i  # the whole prefix goes in again
        assert step.scores.shape == (42,)
        assert step.picked == int(step.scores.argmax())
        assert [a.shape for a in step.attention] == [(4, 4 + i, 4 + i)] * 2
        assert step.top[0][0] == step.picked and len(step.top) == 5
        assert [s for _, s in step.top] == sorted((s for _, s in step.top), reverse=True)
    # after "seven hundred forty" 7 rows go in, and the model writes "two"
    assert trace.steps[3].ids_in == prompt(742) + encode("seven hundred forty")
    assert len(trace.steps[3].ids_in) == 7 and trace.steps[3].picked == TOKEN_ID["two"]
    assert trace.steps[-1].picked == EOS


def test_trace_matches_the_model(model60):
    step = greedy_step(model60, prompt(58))
    with torch.no_grad():
        logits, attention = model60(torch.tensor([prompt(58)]), return_attention=True)
    assert np.allclose(step.scores, logits[0, -1].numpy())
    assert np.allclose(step.attention[1], attention[1][0].numpy())


def test_trace_stops_after_max_new(model2):
    trace = greedy_trace(model2, prompt(14), max_new=2)
    assert len(trace.steps) == 2 and not trace.finished
    assert greedy_trace(model2, prompt(14)).answer == "one hundred forty hundred forty"


def test_empty_prompt_raises(model60):
    with pytest.raises(ValueError, match="the prompt is empty"):
        greedy_trace(model60, [])


# ------------------------------------------------------------------ evaluation


def test_evaluation_report_limits_the_list():
    ev = Evaluation(correct=1, total=13, mistakes=[(n, "zero") for n in range(1, 13)])
    lines = ev.report(limit=3).splitlines()
    assert lines[0] == "1/13 right (8 %)"
    assert lines[1] == "  reads 1 as 'zero', should be 'one'"
    assert lines[-1] == "  … and 9 more"
    assert str(ev) == ev.report()
    assert Evaluation(0, 0, []).accuracy == 0.0
    assert "(nothing)" in Evaluation(0, 1, [(5, "")]).report()


def test_copy_task_evaluation_compares_digits(model60):
    ev = evaluate(model60, [12], task="copy")  # a reading model does not copy
    assert ev.correct == 0 and ev.mistakes == [(12, "twelve")]
    assert "should be '1 2'" in ev.report()
