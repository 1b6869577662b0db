"""The task's facts, which every notebook relies on: vocabulary, words, sequences, x/y, batches, split, bad input."""

import re

import numpy as np
import pytest
import torch
from num2words import num2words

from whole_transformer import task
from whole_transformer.task import (
    EOS,
    EQ,
    PAD,
    TOKEN_ID,
    VOCAB,
    answer_words,
    batch_counts,
    copy_sequence,
    decode,
    encode,
    expected_answer,
    make_batch,
    number_to_words,
    pad_rows,
    parse_prompt,
    prompt,
    sequence,
    split,
    to_text,
    tokenize,
    xy_arrays,
)

# ------------------------------------------------------------------ vocabulary


def test_vocabulary_has_42_tokens_with_the_design_ids():
    assert len(VOCAB) == 42 == task.VOCAB_SIZE
    assert (PAD, EOS, EQ) == (0, 1, 12)
    assert VOCAB[0] == "<pad>" and VOCAB[1] == "<eos>"
    assert VOCAB[2:12] == [str(d) for d in range(10)]
    assert VOCAB[12] == "="
    assert VOCAB[13:33] == [num2words(n) for n in range(20)]  # zero … nineteen
    assert VOCAB[33:41] == ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    assert VOCAB[41] == "hundred"
    assert len(set(VOCAB)) == 42
    assert all(TOKEN_ID[tok] == i for i, tok in enumerate(VOCAB))


def test_29_words_besides_pad_eos_digits_and_equals():
    words = [t for t in VOCAB if t.isalpha()]
    assert len(words) == 29


# ------------------------------------------------------------------ number → words


def _library_words(text: str) -> list[str]:
    """A library's spelling without 'and', hyphens or commas."""
    return [w for w in text.replace("-", " ").replace(",", " ").split() if w != "and"]


def test_number_to_words_matches_num2words_for_all_1000():
    mismatches = [n for n in range(1000) if number_to_words(n) != _library_words(num2words(n))]
    assert mismatches == []


@pytest.mark.package  # inflect checks its arguments' types at every call: seconds for the 1,000
def test_number_to_words_matches_inflect_for_all_1000():
    import inflect  # here, not at the top: importing it takes about 1.7 s, and every run collects this module

    engine = inflect.engine()
    mismatches = [n for n in range(1000) if number_to_words(n) != _library_words(engine.number_to_words(n))]
    assert mismatches == []


@pytest.mark.parametrize(
    "n, words",
    [
        (0, "zero"),
        (7, "seven"),
        (14, "fourteen"),
        (20, "twenty"),
        (82, "eighty two"),
        (100, "one hundred"),
        (110, "one hundred ten"),
        (427, "four hundred twenty seven"),
        (905, "nine hundred five"),
        (999, "nine hundred ninety nine"),
    ],
)
def test_number_to_words_examples(n, words):
    assert number_to_words(n) == words.split()
    assert expected_answer(n) == words


def test_no_and_no_hyphens_and_every_word_in_the_vocabulary():
    for n in range(1000):
        words = number_to_words(n)
        assert "and" not in words
        assert all("-" not in w and w in TOKEN_ID for w in words)


def test_numpy_integers_are_accepted():
    assert number_to_words(np.int64(427)) == number_to_words(427)
    assert prompt(np.int32(89)) == prompt(89)


@pytest.mark.parametrize("bad", [1000, -1, 10**6])
def test_out_of_range_numbers_raise(bad):
    with pytest.raises(ValueError, match=r"whole number from 0 to 999, got -?\d+"):
        number_to_words(bad)
    with pytest.raises(ValueError, match="from 0 to 999"):
        sequence(bad)


@pytest.mark.parametrize(
    "bad, kind", [(3.0, "float"), (3.5, "float"), ("7", "str"), (None, "NoneType"), (True, "bool"), (False, "bool")]
)
def test_non_integers_and_bools_raise(bad, kind):
    with pytest.raises(ValueError, match=rf"whole number from 0 to 999, got .* of type {kind}"):
        number_to_words(bad)
    with pytest.raises(ValueError, match="whole number"):
        prompt(bad)


# ------------------------------------------------------------------ sequences


def test_427_is_nine_tokens():
    seq = sequence(427)
    assert decode(seq) == ["4", "2", "7", "=", "four", "hundred", "twenty", "seven", "<eos>"]
    assert seq == [6, 4, 9, 12, 17, 41, 33, 20, 1]
    assert len(seq) == 9
    assert to_text(seq) == "4 2 7 = four hundred twenty seven <eos>"


def test_905_is_eight_tokens():
    assert to_text(sequence(905)) == "9 0 5 = nine hundred five <eos>"
    assert len(sequence(905)) == 8


@pytest.mark.parametrize(
    "n, text",
    [
        (0, "0 = zero <eos>"),
        (100, "1 0 0 = one hundred <eos>"),
        (110, "1 1 0 = one hundred ten <eos>"),
        (89, "8 9 = eighty nine <eos>"),
    ],
)
def test_small_sequences(n, text):
    assert to_text(sequence(n)) == text


def test_longest_x_is_8_tokens():
    lengths = dict(enumerate(xy_arrays(range(1000))[2].tolist()))
    assert max(lengths.values()) == 8
    assert lengths[777] == 8  # 7 7 7 = seven hundred seventy seven
    assert min(lengths.values()) == 3  # 0 = zero


def test_copy_sequence():
    assert to_text(copy_sequence(123)) == "1 2 3 = 1 2 3 <eos>"
    assert to_text(copy_sequence(5)) == "5 = 5 <eos>"
    assert expected_answer(123, "copy") == "1 2 3"


def test_prompt_and_parse_prompt():
    assert to_text(prompt(89)) == "8 9 ="
    for text in ["8 9 =", "89", "89=", "8 9", " 089 = ", "0 8 9 ="]:
        assert parse_prompt(text) == prompt(89), text
    assert parse_prompt("0") == prompt(0)


@pytest.mark.parametrize(
    "bad, message",
    [
        ("", "the prompt is empty"),
        ("   ", "the prompt is empty"),
        ("=", "the prompt is empty"),
        ("abc", "cannot read 'abc' as a prompt"),
        ("1234", "type 1 to 3 digits"),
        ("4 2 7 = four", "cannot read"),
        (427, "expected the digits of a number as text"),
        (None, "expected the digits of a number as text"),
    ],
)
def test_parse_prompt_rejects_bad_prompts(bad, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_prompt(bad)


# ------------------------------------------------------------------ tokens and ids


def test_encode_decode_round_trip():
    for n in (0, 14, 427, 905, 999):
        seq = sequence(n)
        assert encode(decode(seq)) == seq
        assert encode(to_text(seq)) == seq
    assert encode("427=") == encode("4 2 7 =")
    assert tokenize("427 = four") == ["4", "2", "7", "=", "four"]
    assert decode(np.array([6, 4, 9])) == ["4", "2", "7"]
    assert decode(torch.tensor([6, 4, 9])) == ["4", "2", "7"]


@pytest.mark.parametrize("bad", ["4 2 7 = four hundred and twenty seven", "twenty-seven", "Four", "<unk>"])
def test_unknown_tokens_raise(bad):
    with pytest.raises(ValueError, match=r"unknown token '.*': the vocabulary has <pad>, <eos>, the digits"):
        encode(bad)


@pytest.mark.parametrize("bad", [42, -1, 100, True, 3.0, "4"])
def test_unknown_ids_raise(bad):
    with pytest.raises(ValueError, match=r"unknown token id .*: ids run from 0 to 41"):
        decode([6, bad])


def test_answer_words_stops_at_eos_and_skips_pad():
    ids = encode("four hundred <pad> two <eos> nine")
    assert answer_words(ids) == "four hundred two"
    assert answer_words([]) == ""


# ------------------------------------------------------------------ x and y


def _xy(n, task="read"):
    x, y, lengths = xy_arrays([n], task)
    return x[0, : lengths[0]].tolist(), y[0, : lengths[0]].tolist()


def test_xy_of_427():
    x, y = _xy(427)
    assert to_text(x) == "4 2 7 = four hundred twenty seven"
    assert to_text(y) == "<pad> <pad> <pad> four hundred twenty seven <eos>"
    assert len(y) == 8
    assert sum(t != PAD for t in y) == 5  # 5 of 8 targets count


def test_xy_arrays_shift_by_one_with_prompt_targets_padded():
    X, Y, lengths = xy_arrays(range(1000))
    assert X.shape == Y.shape == (1000, 8) and X.dtype == Y.dtype == np.int64
    for n in range(1000):
        seq, L = sequence(n), lengths[n]
        assert L == len(seq) - 1
        assert X[n, :L].tolist() == seq[:-1] and (X[n, L:] == PAD).all() and (Y[n, L:] == PAD).all()
        k = seq.index(EQ)
        assert Y[n, :k].tolist() == [PAD] * k
        assert Y[n, k:L].tolist() == seq[k + 1 :]


def test_xy_arrays_of_the_copy_task_and_bad_tasks():
    assert _xy(12, "copy") == ([3, 4, 12, 3, 4], [0, 0, 3, 4, 1])
    with pytest.raises(ValueError, match="unknown task"):
        xy_arrays([1], "sing")
    with pytest.raises(ValueError, match="no numbers"):
        xy_arrays([])


# ------------------------------------------------------------------ batches


def test_batch_of_0_to_63():
    x, y = make_batch(range(64))
    assert x.dtype == torch.int64 and y.dtype == torch.int64
    assert tuple(x.shape) == (64, 5) == tuple(y.shape)
    assert y.numel() == 320
    counted = int((y != PAD).sum())
    # count the prompt targets and the padding independently of batch_counts
    prompt_targets = sum(sequence(n).index(EQ) for n in range(64))
    real = sum(len(sequence(n)) - 1 for n in range(64))
    assert (counted, prompt_targets, 320 - real) == (167, 118, 35)
    assert batch_counts(range(64)) == {
        "x_shape": (64, 5),
        "logits_shape": (64, 5, 42),
        "flat_shape": (320, 42),
        "targets": 320,
        "counted": 167,
        "prompt": 118,
        "padding": 35,
    }
    # the longest x of the batch, e.g. 2 3 = twenty three
    assert to_text(_xy(23)[0]) == "2 3 = twenty three"


def test_make_batch_right_pads_with_pad():
    x, y = make_batch([5, 427])
    assert x[0].tolist() == _xy(5)[0] + [PAD] * 5
    assert x[1].tolist() == _xy(427)[0]
    assert y[0, 3:].tolist() == [PAD] * 5


def test_copy_batch():
    x, y = make_batch([123], task="copy")
    assert to_text(x[0]) == "1 2 3 = 1 2 3"
    assert to_text(y[0]) == "<pad> <pad> <pad> 1 2 3 <eos>"
    assert batch_counts([123], task="copy")["counted"] == 4


def test_bad_batches_raise():
    with pytest.raises(ValueError, match="cannot make a batch of no numbers"):
        make_batch([])
    with pytest.raises(ValueError, match="unknown task 'translate': use 'read' or 'copy'"):
        make_batch([1], task="translate")
    with pytest.raises(ValueError, match="unknown task"):
        expected_answer(1, "sing")
    with pytest.raises(ValueError, match="cannot make a batch of no rows"):
        pad_rows([])
    with pytest.raises(ValueError, match="from 0 to 999"):
        make_batch([1, 2, 1000])


# ------------------------------------------------------------------ split


def test_split_is_900_and_100_disjoint_sorted_and_seeded():
    train, held_out = split()
    assert len(train) == 900 and len(held_out) == 100
    assert sorted(set(train) | set(held_out)) == list(range(1000))
    assert not set(train) & set(held_out)
    assert train == sorted(train) and held_out == sorted(held_out)
    assert split() == (train, held_out)
    assert split(seed=task.SPLIT_SEED) == (train, held_out)
    assert split(seed=0)[1] != held_out
    assert all(isinstance(n, int) for n in train + held_out)


def test_held_out_has_no_number_below_20():
    # each of 0…19 has a word of its own: a held-out one could not be learned (see task.SPLIT_SEED)
    assert min(split()[1]) >= 20
