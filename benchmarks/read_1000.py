"""The ``read-1000`` group: reading all 1,000 numbers greedily, batched (``decode.read_numbers``) against one at a
time (``greedy_decode_slow``, here), and batched with the KV cache against re-reading every row."""

from __future__ import annotations

import time

from benchmarks.figures import faster, median, p90
from benchmarks.rows import Bench, Group, Row


def greedy_decode_slow(model, prompt_ids: list[int], max_new: int = 6) -> list[int]:
    """The baseline: one number at a time, re-running the whole prefix each step (kept here, not in
    the students' package, where it would be a solution of an exercise)."""
    # lazy: torch
    import torch

    from whole_transformer.task import EOS

    ids = list(prompt_ids)
    model.eval()
    with torch.no_grad():
        for _ in range(max_new):
            nxt = int(model(torch.tensor([ids]))[0, -1].argmax())
            ids.append(nxt)
            if nxt == EOS:
                break
    return ids


def bench_read(b: Bench) -> None:
    # lazy: torch
    from whole_transformer.decode import read_numbers
    from whole_transformer.task import answer_words, expected_answer, prompt
    from whole_transformer.train import load_model

    model = load_model("60")
    numbers = list(range(1000))
    read_numbers(model, numbers[:64])  # warm up
    fast, slow, uncached = [], [], []
    said_fast = said_slow = said_uncached = None
    for r in range(b.runs(5, 1)):
        t = time.perf_counter()
        said_fast = read_numbers(model, numbers)
        fast.append(time.perf_counter() - t)
        t = time.perf_counter()  # the same batches, every row re-read at every step (no KV cache)
        said_uncached = read_numbers(model, numbers, kv_cache=False)
        uncached.append(time.perf_counter() - t)
        if r < b.runs(3, 1):  # the slow baseline takes seconds: fewer runs, interleaved
            t = time.perf_counter()
            said_slow = {n: answer_words(greedy_decode_slow(model, prompt(n))[len(prompt(n)) :]) for n in numbers}
            slow.append(time.perf_counter() - t)
    right = sum(said_fast[n] == expected_answer(n) for n in numbers)
    differ = sum(said_fast[n] != said_slow[n] for n in numbers)
    ratio = median(slow) / median(fast)
    agree = "the same 1,000 answers" if not differ else f"{differ} answers DIFFER"
    b.add(
        Row(
            group="read-1000",
            item="read all 1,000 numbers, batched (read_numbers)",
            value=median(fast),
            unit="s",
            runs=len(fast),
            target="≤ 0.3 s and ≥ 20× faster than one at a time",
            ok=median(fast) <= 0.3 and ratio >= 20,
            baseline=f"{faster(ratio)} than one at a time",
            note=f"{right}/1000 right; both ways give {agree}; p90 {p90(fast):.3f} s",
        )
    )
    b.add(
        Row(
            group="read-1000",
            item="read all 1,000 numbers, one at a time (greedy_decode_slow, baseline)",
            value=median(slow),
            unit="s",
            runs=len(slow),
            baseline="1.00× (the baseline)",
            note="each step re-runs the whole prefix",
        )
    )
    _cache_row(b, fast, uncached, sum(said_fast[n] != said_uncached[n] for n in numbers))


def _cache_row(b: Bench, cached: list[float], uncached: list[float], differ: int) -> None:
    """The KV cache's speed-up: the same batched reading with and without it, in the same run."""
    ratio = median(uncached) / median(cached)
    b.add(
        Row(
            group="read-1000",
            item="read all 1,000 numbers, batched, re-reading every row (no KV cache)",
            value=median(uncached),
            unit="s",
            runs=len(uncached),
            baseline=f"the KV cache is {faster(ratio)}",
            note=f"the same batches as read_numbers, each step re-running every row; "
            f"{'the same 1,000 answers' if not differ else f'{differ} answers DIFFER'}; p90 {p90(uncached):.3f} s",
        )
    )


GROUP = Group(
    "read-1000",
    "reading all 1,000 numbers (greedy)",
    bench_read,
    how="- **reading 1,000 numbers**: `decode.read_numbers(model, range(1000))` with the shipped read-60 model vs "
    "`greedy_decode_slow` (benchmarks/read_1000.py) called for each number (every step re-runs the whole "
    "prefix); the two are checked to give the same answers.",
)
