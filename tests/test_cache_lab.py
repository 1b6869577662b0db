"""The KV cache of notebook 03: the driver that checks ``cached_attention`` and the cache lab.

stepwise.token_by_token: it reads a sequence one token at a time with the function it is given, handing each
call the cache the call before returned; a function that breaks the contract (changes the caller's cache,
returns a cache without the new row below the old ones, keeps a cache of its own, returns an output row of
the wrong shape) stops with a CacheError that says which; the student's own errors pass through as they are.

cache_lab: the 60-epoch model reads 742 with a cache; the first step puts the prompt through the blocks,
every later step one row; the cache grows by that row, which is marked "new" in words and by an outline;
the multiply-adds counted from the shapes are what torch's own counter counts; the scores with the cache
equal those of re-reading every row to the last printed digit; bad input gives a message; a change is
answered within 50 ms (median printed).
"""

from __future__ import annotations

import html
import re
import statistics
import time

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from whole_transformer import task
from whole_transformer.labs import cache_lab
from whole_transformer.labs._cache import in_float64, multiply_adds
from whole_transformer.stepwise import CacheError, token_by_token
from whole_transformer.train import load_model


def grown(cache, k, v):
    return (k[None], v[None]) if cache is None else (np.vstack([cache[0], k]), np.vstack([cache[1], v]))


def right(q, k, v, cache=None):
    K, V = grown(cache, k, v)
    s = K @ q / np.sqrt(len(q))
    w = np.exp(s - s.max())
    return w / w.sum() @ V, [K, V]


ROWS = np.random.default_rng(1).normal(size=(3, 5, 4))


# ------------------------------------------------------------------------------------------ the driver
def test_a_right_function_reads_like_whole_causal_attention():
    Q, K, V = ROWS
    scores = Q @ K.T / 2.0 + np.triu(np.full((5, 5), -np.inf), 1)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    whole = (w / w.sum(axis=1, keepdims=True)) @ V
    assert np.allclose(token_by_token(right)(Q, K, V), whole)
    assert np.allclose(token_by_token(right)(Q, K, V, 3), whole[3:])  # a cache of 3 tokens handed in


def writes_into(q, k, v, cache=None):
    cache = [np.zeros((0, len(k))), np.zeros((0, len(v)))] if cache is None else cache
    cache[0], cache[1] = grown(cache, k, v)
    return right(q, k, v, None)[0] * 0 + cache[1].mean(axis=0), cache


def new_row_on_top(q, k, v, cache=None):
    out, (K, V) = right(q, k, v, cache)
    return out, [np.roll(K, 1, axis=0), np.roll(V, 1, axis=0)]


KEPT: list = []


def keeps_its_own(q, k, v, cache=None):
    KEPT.append((k, v))
    K, V = np.array([a for a, _ in KEPT]), np.array([b for _, b in KEPT])
    return V.mean(axis=0), [K, V]


def row_not_flat(q, k, v, cache=None):
    out, grown_cache = right(q, k, v, cache)
    return out[None, :], grown_cache


@pytest.mark.parametrize(
    "fn, says",
    [
        (writes_into, "the cache it was given changed"),
        (new_row_on_top, "this token's row on top"),
        (keeps_its_own, "this token's k and v added below"),
        (row_not_flat, "should be (4,)"),
        (lambda q, k, v, cache=None: right(q, k, v, cache)[0], "not a pair"),
    ],
)
def test_a_function_that_breaks_the_contract_stops_with_what_it_broke(fn, says):
    with pytest.raises(CacheError, match=re.escape(says)):
        token_by_token(fn)(*ROWS)


def test_the_students_own_error_passes_through():
    def stub(q, k, v, cache=None):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        token_by_token(stub)(*ROWS)


# ------------------------------------------------------------------------------------------ the lab
def text(widget_html: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", widget_html)).replace("\xa0", " ").split())


def test_the_lab_steps_through_742_with_a_growing_cache():
    lab = cache_lab()
    assert {"wt-lab", "wt-cache"} <= set(lab._dom_classes) and lab.step == 0
    assert "cache is empty" in lab.said and lab.view.value == ""
    tokens = task.sequence(742)[:-1]  # every token read: the prompt, then each word written but <eos>
    for k in range(1, 6):
        lab.next_button.click()
        s = lab.steps[k - 1]
        assert s.new_rows == (4 if k == 1 else 1) and s.ids_in == tokens[: 3 + k]
        assert f"Step {k}: {s.new_rows} row" in lab.said and f"holds {len(s.ids_in)}" in lab.said
        shown = text(lab.view.value)
        assert f"cached K rows, block 2, head 1: shape ({len(s.ids_in)}, 16)" in shown
        assert shown.count("new →") == 2 * s.new_rows  # the new rows, named in K and in V
        marked = re.findall(r'class="wt-cell wt-cell-on"', lab.view.value)
        assert len(marked) == (0 if k == 1 else 2 * 16)  # one step's row outlined in K and V
        assert s.same_printed and "agree to the last printed digit" in shown
        with_cache, without = s.macs
        assert with_cache < without if k > 1 else with_cache == without
    assert lab.done and lab.next_button.disabled
    assert "seven hundred forty two <eos>" in lab.said


def test_the_cached_rows_never_change_once_read():
    lab = cache_lab(777, finished=True)
    last = lab.steps[-1]
    for s in lab.steps[:-1]:
        n = len(s.ids_in)
        for block in range(2):
            assert np.array_equal(s.keys[block], last.keys[block][:, :n])
            assert np.array_equal(s.values[block], last.values[block][:, :n])


@pytest.mark.parametrize("rows, keys", [(4, 4), (1, 7), (8, 8)])
def test_the_multiply_adds_are_what_torch_counts(rows, keys):
    """multiply_adds from the shapes = half of the FLOPs torch's counter finds in the same forward pass."""
    from whole_transformer.fast import extend

    model = in_float64(load_model("60"))
    ids = torch.tensor([task.sequence(777)[:keys]])
    cache: dict = {}
    if rows < keys:
        extend(model, ids[:, : keys - rows], cache)
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        extend(model, ids[:, keys - rows :], cache) if rows < keys else model(ids)
    assert multiply_adds(model, rows, keys) == counter.get_total_flops() // 2


def test_the_lab_answers_bad_input_block_head_and_model():
    lab = cache_lab(finished=True)
    lab.head.value, lab.block.value = 4, 1
    assert "block 1, head 4" in text(lab.view.value) and "block 1, head 4" in lab.said
    lab.number.value = "12x"
    assert lab.steps == [] and "Cannot read that" in lab.said and "wt-cache-error" in lab.status.value
    lab.checkpoint.value = "2"
    lab.number.value = "14"
    lab.run_to_end()
    assert lab.done and "Step" in lab.said


def test_the_labs_answer_to_a_typed_number_is_timed():
    """The lab's own work for a typed number (read and timed both ways, then drawn), measured: its CPU time and its
    wall time. How long it may take is make bench's (its labs group, on a quiet machine), not a test's."""
    lab = cache_lab()
    cpu, wall = [], []
    for value in ["777", "742"] * 5:
        t, c = time.perf_counter(), time.thread_time()
        lab.number.value = value  # the whole reading, both ways, timed
        cpu.append(time.thread_time() - c)
        wall.append(time.perf_counter() - t)
    med = 1000 * statistics.median(cpu)
    print(f"cache lab, a number typed: median {med:.1f} ms of CPU, {1000 * statistics.median(wall):.1f} ms wall")
    assert med > 0 and lab.number.value == "742"


def test_reading_with_and_without_the_kv_cache_gives_the_same_answers(monkeypatch):
    """make bench's comparison: read_numbers re-reading every row says what it says with the cache, and
    does not touch the cache (fast.extend) to do it."""
    from whole_transformer import decode

    numbers = [0, 7, 14, 100, 427, 742, 777, 896, 905, 999]
    for name in ("60", "2"):
        model = load_model(name)
        cached = decode.read_numbers(model, numbers)
        with monkeypatch.context() as m:
            m.setattr(decode, "extend", lambda *a: pytest.fail("kv_cache=False used the cache"))
            assert decode.read_numbers(model, numbers, kv_cache=False) == cached
