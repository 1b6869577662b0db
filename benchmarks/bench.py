"""How fast the course is for the people who use it; writes benchmarks/results.md.

Run ``make bench`` (or ``.venv/bin/python benchmarks/bench.py``). Every item is measured several
times on this machine and its median is compared with its target; where the target is a
ratio, the baseline is measured in the same run, interleaved with the thing it is compared to.

    group        what a user waits for
    train-step   one training step, batch 64, the default model; the same model in x-transformers
    train-60     the full 60-epoch training run (as the notebooks and the CLI call it); first epoch at 100/100
    read-1000    reading all 1,000 numbers greedily: batched (read_numbers) vs one at a time (greedy_decode_slow),
                 and batched with the KV cache vs re-reading every row
    labs         one change of each lab from Python (a slider, a step, a button, a typed value)
    notebooks    each source notebook top to bottom in a fresh kernel, and with NBGRADER_EXECUTION=autograde
    autograde    one complete submission three ways; a simulated class (--class-size, default 25) with
                 --jobs 2 and on 2 Dask workers (in a temp copy)
    scale        merging one graded student (SQLite, PostgreSQL), Dask's per-task overhead, the scale study
    startup      a fresh kernel to the first lab of notebook 01 displayed, imports included
    service      grading on submission (serve): idle submit → feedback; CPU per submission vs autograde
                 --jobs 1; a burst of 30 in one minute on 2 local and 2 Dask workers (bench_service.py)

An item this machine cannot run (PostgreSQL not installed) appears as a "not available: <why>" row.
An item that crashes appears as "error: ..." (and the script exits 1 after writing the table).

Options: ``--quick`` (one run per item, the smallest workloads; only notebook 01 is run, one
submission is autograded once the default way, a class of 3 once each way, and one student is
merged into each gradebook), ``--only GROUP ...``, ``--skip GROUP ...``, ``--class-size N``,
``--out PATH`` (default benchmarks/results.md), ``--list``, ``--readme`` (only rewrite the README's
"How fast" table from results.md). A default run spends most of its time autograding (one
submission three ways, then the class twice each way); ``--quick`` takes about two minutes on a
quiet 2-core machine. The end of results.md gives each group's wall and CPU seconds and the
machine's load average, so a run on a busy machine can be told from a slow one.

A full run writes results.md whole and then the README's "How fast" table from it. With
``--only`` and ``--keep``, the rows of the groups not run are kept, each marked with the commit,
date and load average of the run that measured it; a row that cannot say so is dropped.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import pickle
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from whole_transformer.course.autograder.record import load_record  # noqa: E402
from whole_transformer.course.layout import ASSIGNMENT, Course, checkout_env  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results.md"
README = ROOT / "README.md"
SOURCE = ROOT / "source" / ASSIGNMENT
NOTEBOOKS = ("01-whole-machine.ipynb", "02-microscope.ipynb", "03-one-word-at-a-time.ipynb", "04-how-it-learned.ipynb")
CLASS_SIZE = 25
QUICK_CLASS_SIZE = 3  # --quick: a class this small, unless --class-size says otherwise


class Skipped(Exception):
    """Left out on purpose in this mode (--quick)."""


# ---------------------------------------------------------------------------------------------- rows
@dataclass(kw_only=True)
class Row:
    """One row of results.md; made with keywords only (``Row(group=..., item=..., value=...)``)."""

    group: str
    item: str
    value: float | None = None  # the median, in `unit`
    unit: str = ""  # "ms" or "s" (or "×" for a ratio-only row)
    runs: int = 0
    target: str = ""  # e.g. "≤ 50 ms"
    ok: bool | None = None  # None: no target for this row
    baseline: str = ""  # the ratio to the baseline measured in the same run
    note: str = ""
    status: str = ""  # "" when measured; else "not available: …", "skipped: …", "error: …"
    text: str = ""  # the median as written by an earlier run (a row kept by --keep)

    def median_text(self) -> str:
        if self.status:
            return self.status
        if self.text:
            return self.text
        if self.value is None:
            return "—"
        if self.unit == "ms":
            return f"{self.value:.1f} ms" if self.value < 100 else f"{self.value:.0f} ms"
        if self.unit == "s":
            return f"{self.value:.2f} s" if self.value < 10 else f"{self.value:.1f} s"
        return f"{self.value:.3g} {self.unit}".strip()

    def result_text(self) -> str:
        if self.status:
            return "—"
        return "—" if self.ok is None else ("pass" if self.ok else "**MISS**")


def median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def p90(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]


def faster(ratio: float) -> str:
    """'2.10× faster' for a ratio (baseline time / our time) above 1, '1.30× slower' below."""
    return f"{ratio:.2f}× faster" if ratio >= 1 else f"{1 / ratio:.2f}× slower"


def ms(seconds: float) -> float:
    return 1000.0 * seconds


class Bench:
    def __init__(self, quick: bool, class_size: int | None = None):
        self.quick = quick
        self.class_size = class_size or (QUICK_CLASS_SIZE if quick else CLASS_SIZE)
        self.rows: list[Row] = []
        self.facts: dict[str, float] = {}  # figures the scale study is built from
        self.scale_study: list[str] = []

    def runs(self, full: int, quick: int = 1) -> int:
        return quick if self.quick else full

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        print(f"  {row.item:58} {row.median_text():>14}  {row.result_text():8} {row.baseline}", flush=True)
        return row


GROUPS: dict[str, tuple[str, Callable[[Bench], None]]] = {}


def group(name: str, title: str):
    def register(fn):
        GROUPS[name] = (title, fn)
        return fn

    return register


# ------------------------------------------------------------------------------------ training step
def _first_training_batch():
    """The first batch of epoch 1 of the default run: 64 numbers in the seeded order, trimmed like train()."""
    import torch

    from whole_transformer.task import PAD, make_batch, split

    train_numbers, _ = split()
    order = torch.randperm(len(train_numbers), generator=torch.Generator().manual_seed(0))[:64]
    x, y = make_batch([train_numbers[int(i)] for i in order])
    width = int((x != PAD).sum(1).max())
    return x[:, :width], y[:, :width]


XT_OPTIONS = (
    "TransformerWrapper(num_tokens=42, max_seq_len=16, scaled_sinu_pos_emb=True, "
    "attn_layers=Decoder(dim=64, depth=2, heads=4, attn_dim_head=16, ff_mult=2, "
    "ff_custom_activation=nn.ReLU(), pre_norm=True{flash})), called with mask=(x != PAD)"
)


def _x_transformers_model(flash: bool):
    import torch.nn as nn
    from x_transformers import Decoder, TransformerWrapper

    return TransformerWrapper(
        num_tokens=42,
        max_seq_len=16,
        scaled_sinu_pos_emb=True,
        attn_layers=Decoder(
            dim=64,
            depth=2,
            heads=4,
            attn_dim_head=16,
            ff_mult=2,
            ff_custom_activation=nn.ReLU(),
            pre_norm=True,
            attn_flash=flash,
        ),
    )


def _our_loss(model, x, y):
    """The loss of one batch exactly as train() computes it."""
    from whole_transformer.train import batch_loss

    return batch_loss(model, x, y)[0]


@group("train-step", "training step (batch 64, default model) vs x-transformers")
def bench_train_step(b: Bench) -> None:
    """Our step is train()'s: its loss, Adam (fused, as train() makes it), one torch thread (what the course sets).

    The baseline gets the same batch, the same loss (cross-entropy skipping PAD, over all its logits:
    the library has no way to score only some rows), the same optimizer settings and thread count,
    so the ratio compares the two models' code.
    """
    import torch

    from whole_transformer.model import ModelConfig, Transformer, count_parameters
    from whole_transformer.task import PAD
    from whole_transformer.train import loss_fn

    x, y = _first_training_batch()
    mask = x != PAD
    before = torch.get_num_threads()
    torch.manual_seed(0)
    ours = Transformer(ModelConfig())
    ours2 = Transformer(ModelConfig())
    ours2.load_state_dict(ours.state_dict())
    # name: (model, loss of the batch, torch threads)
    contenders = {
        "ours": (ours, lambda m: _our_loss(m, x, y), 1),
        "ours-2-threads": (ours2, lambda m: _our_loss(m, x, y), 2),
    }
    for flash in (False, True):
        contenders[f"xt-flash={flash}"] = (_x_transformers_model(flash), lambda m: loss_fn(m(x, mask=mask), y), 1)
    fused = "fused=True"  # as train() makes it
    opts = {k: torch.optim.Adam(m.parameters(), lr=1e-3, fused=True) for k, (m, _, _) in contenders.items()}

    def step(k):
        m, compute, _ = contenders[k]
        loss = compute(m)
        opts[k].zero_grad(set_to_none=True)
        loss.backward()
        opts[k].step()

    rounds, per_round = b.runs(8, 2), b.runs(25, 5)
    times: dict[str, list[float]] = {k: [] for k in contenders}
    keys = list(contenders)
    try:
        for k in keys:  # warm up every model and its optimizer
            torch.set_num_threads(contenders[k][2])
            contenders[k][0].train()
            for _ in range(10):
                step(k)
        for r in range(rounds):  # interleaved, each round in a rotated order, so load hits all alike
            for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
                torch.set_num_threads(contenders[k][2])
                for _ in range(per_round):
                    t = time.perf_counter()
                    step(k)
                    times[k].append(time.perf_counter() - t)
    finally:
        torch.set_num_threads(before)
    med = {k: ms(median(v)) for k, v in times.items()}
    n = len(times["ours"])
    base = med["xt-flash=False"]
    ratio = base / med["ours"]

    def spread(k):
        return f"p90 {ms(p90(times[k])):.1f} ms"

    b.add(
        Row(
            group="train-step",
            item="training step, batch 64, default model (ours)",
            value=med["ours"],
            unit="ms",
            runs=n,
            target="≥ 1.5× faster than x-transformers",
            ok=ratio >= 1.5,
            baseline=f"{faster(ratio)} than x-transformers ({base:.1f} ms)",
            note=f"x {tuple(x.shape)}; train()'s step: logits_at + cross-entropy, zero_grad, backward, Adam ({fused}); "
            f"{count_parameters(ours):,} parameters; 1 torch thread; {spread('ours')}",
        )
    )
    xt_params = count_parameters(contenders["xt-flash=False"][0])
    b.add(
        Row(
            group="train-step",
            item=f"training step, x-transformers {x_transformers_version()} (baseline)",
            value=base,
            unit="ms",
            runs=n,
            baseline="1.00× (the baseline)",
            note=f"{xt_params:,} parameters (no biases in LayerNorms, W_O and the output layer); its default "
            f"attention (attn_flash=False); loss_fn over all logits; Adam ({fused}); 1 torch thread; "
            f"{spread('xt-flash=False')}",
        )
    )
    rf = med["xt-flash=True"] / med["ours"]
    b.add(
        Row(
            group="train-step",
            item="training step, x-transformers with attn_flash=True",
            value=med["xt-flash=True"],
            unit="ms",
            runs=n,
            baseline=f"ours {faster(rf)}",
            note=f"PyTorch scaled_dot_product_attention; 1 torch thread; {spread('xt-flash=True')}",
        )
    )
    r2 = base / med["ours-2-threads"]
    b.add(
        Row(
            group="train-step",
            item="training step, ours on 2 torch threads",
            value=med["ours-2-threads"],
            unit="ms",
            runs=n,
            baseline=f"{faster(r2)} than x-transformers on 1 thread",
            note=f"torch.set_num_threads(2), for comparison with the course's one thread; {spread('ours-2-threads')}",
        )
    )


def x_transformers_version() -> str:
    try:
        from importlib.metadata import version

        return version("x-transformers")
    except Exception:  # noqa: BLE001 - any failure to read the version: shown as "?"
        return "?"


# ------------------------------------------------------------------------------------ full training
@group("train-60", "full training, 60 epochs")
def bench_train_60(b: Bench) -> None:
    from whole_transformer.model import ModelConfig
    from whole_transformer.train import TrainConfig, train

    seconds, first = [], None
    for _ in range(b.runs(3, 1)):
        t = time.perf_counter()
        run = train(ModelConfig(), TrainConfig())
        seconds.append(time.perf_counter() - t)
        if first is None:
            first = run
    hist = first.history
    reached = next((h.epoch for h in hist if h.held_out >= 1.0), None)
    best = max(hist, key=lambda h: h.held_out)
    eval_s = sum(h.seconds for h in hist)
    reach = (
        f"first 100/100 held out at epoch {reached}"
        if reached is not None
        else f"never 100/100 (best {round(100 * best.held_out)}/100 at epoch {best.epoch})"
    )
    b.add(
        Row(
            group="train-60",
            item="full training, 60 epochs (wall)",
            value=median(seconds),
            unit="s",
            runs=len(seconds),
            target="≤ 8 s",
            ok=median(seconds) <= 8.0,
            note=f"{reach}; final {round(100 * hist[-1].held_out)}/100; loss {hist[-1].loss:.4f}; train() as the "
            f"notebooks call it, held out evaluated after every epoch (sum of epoch times {eval_s:.2f} s)",
        )
    )
    b.add(
        Row(
            group="train-60",
            item="epochs to 100/100 held out",
            value=float(reached) if reached is not None else None,
            unit="epochs",
            runs=1,
            note=reach,
        )
    )


# ------------------------------------------------------------------------------------ reading
def greedy_decode_slow(model, prompt_ids: list[int], max_new: int = 6) -> list[int]:
    """The baseline: one number at a time, re-running the whole prefix each step (kept here, not in
    the students' package, where it would be a solution of an exercise)."""
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


@group("read-1000", "reading all 1,000 numbers (greedy)")
def bench_read(b: Bench) -> None:
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


# ------------------------------------------------------------------------------------ labs
@dataclass
class LabChange:
    lab: str  # the function of whole_transformer.labs that builds it
    change: str  # what one change is
    act: Callable  # act(lab, i): make change number i (must change something)
    before: Callable | None = None  # before(lab, i): untimed preparation (e.g. Reset at the end)
    target_ms: float = 50.0


def _cycle(values):
    values = list(values)
    return lambda i: values[(i + 1) % len(values)]


def _set(attr: str, values):
    pick = _cycle(values)

    def act(lab, i):
        getattr(lab, attr).value = pick(i)

    return act


def _toggle(attr: str):
    def act(lab, i):
        w = getattr(lab, attr)
        w.value = not w.value

    return act


def _click(attr: str):
    return lambda lab, i: getattr(lab, attr).click()


def _microscope_next_prep(lab, i):
    if lab.step.value >= lab.step.max:
        lab.step.value = 0


def _decode_prep(lab, i):
    if lab.done:
        lab.reset()


def _slider_values(attr: str):
    """Every option of a selection slider, or every integer of an int slider, walked in order."""

    def act(lab, i):
        w = getattr(lab, attr)
        if hasattr(w, "options") and w.options:
            opts = [o[1] if isinstance(o, tuple) else o for o in w.options]
            w.value = opts[(opts.index(w.value) + 1) % len(opts)]
        else:
            w.value = w.min if w.value >= w.max else w.value + 1

    return act


def _sampling_cut(lab, i):
    lab.top_k.value, lab.top_p.value = [(0, 1.0), (5, 1.0), (0, 0.9), (10, 0.6)][i % 4]


def _new_seed(lab, i):
    lab.seed.value = i


def _machine_part(lab, i):
    names = [n for n, btn in lab.buttons.items() if n in lab.part.options]
    current = lab.part.value
    lab.buttons[names[(names.index(current) + 1) % len(names)]].click()


LAB_CHANGES = [
    LabChange("machine_lab", "d_model slider", _slider_values("d_model")),
    LabChange("machine_lab", "blocks slider", _slider_values("blocks")),
    LabChange("machine_lab", "click a part of the stack", _machine_part),
    LabChange("microscope_lab", "Next ▶ button (one stage)", _click("next"), _microscope_next_prep),
    LabChange("microscope_lab", "step slider", _slider_values("step")),
    LabChange("microscope_lab", "prompt typed (8 9 = ↔ 4 2 7 =)", _set("prompt", ["8 9 =", "4 2 7 ="])),
    LabChange("scale_lab", "token-table std slider", _slider_values("std")),
    LabChange("scale_lab", "√d_model checkbox", _toggle("factor")),
    LabChange("decode_lab", "Next step button", _click("next_button"), _decode_prep, target_ms=30.0),
    LabChange("decode_lab", "number typed (896 ↔ 427)", _set("number", ["896", "427"])),
    LabChange("decode_lab", "model dropdown (60 ↔ 2 epochs)", _set("checkpoint", ["60", "2"])),
    LabChange("cache_lab", "Next step button", _click("next_button"), _decode_prep),
    LabChange("cache_lab", "number typed (742 ↔ 777), read and timed both ways", _set("number", ["742", "777"])),
    LabChange("cache_lab", "block dropdown (1 ↔ 2)", _set("block", [1, 2])),
    LabChange("sampling_lab", "temperature slider (0.5 → 1 → 2 → 3)", _set("temperature", [0.5, 1.0, 2.0, 3.0])),
    LabChange("sampling_lab", "top-k and top-p sliders", _sampling_cut),
    LabChange("sampling_lab", "step slider (1 … 5 of 742)", _slider_values("step")),
    LabChange("sampling_lab", "Read it 20 times button (a new seed first)", _click("read_button"), _new_seed),
    LabChange(
        "batch_lab",
        "numbers typed (0-63 ↔ 5, 17, 905 ↔ 0-9, 100-109)",
        _set("numbers", ["0-63", "5, 17, 905", "0-9, 100-109"]),
    ),
]


def bench_training_lab(b: Bench) -> None:
    """The training lab's one change is the Train button: a whole run, redrawn after every epoch.

    Two rows: the wall time of Train (60 epochs of the main run, as a student presses it) against the
    full-training target, and the lab's own work after each epoch (progress, status, SVG chart, table),
    timed by wrapping the callback the lab hands to ``train.train``.
    """
    import whole_transformer.labs.training as mod

    redraws: list[float] = []
    real_train = mod.train

    def timed_train(*args, callback=None, **kw):
        def timed(log, model):
            t = time.perf_counter()
            callback(log, model)
            redraws.append(time.perf_counter() - t)

        return real_train(*args, callback=timed if callback else None, **kw)

    lab = mod.training_lab()
    epochs = 3 if b.quick else 60  # --quick: a short run, not compared with the target
    seconds, held = [], []
    mod.train = timed_train
    try:
        for _ in range(b.runs(2, 1)):
            lab.run_choice.value, lab.epochs.value = "main", epochs
            t = time.perf_counter()
            lab.train_button.click()
            seconds.append(time.perf_counter() - t)
            held.append(round(100 * lab.runs["main"].history[-1].held_out))
    finally:
        mod.train = real_train
    med = median(seconds)
    full = epochs == 60
    b.add(
        Row(
            group="labs",
            item=f"training_lab: Train button (main run, {epochs} epochs, redrawn each epoch)",
            value=med,
            unit="s",
            runs=len(seconds),
            target="≤ 8 s (as full training)" if full else "",
            ok=(med <= 8.0) if full else None,
            note=f"held out after {epochs} epochs: {', '.join(f'{h}/100' for h in held)}; the lab trains on one torch "
            "thread" + ("" if full else "; --quick: a short run, not compared with the 60-epoch target"),
        )
    )
    m = ms(median(redraws))
    b.add(
        Row(
            group="labs",
            item="training_lab: redraw after one epoch (chart, table, status)",
            value=m,
            unit="ms",
            runs=len(redraws),
            target="≤ 50 ms",
            ok=m <= 50.0,
            note=f"p90 {ms(p90(redraws)):.1f} ms, max {ms(max(redraws)):.1f} ms",
        )
    )


@group("labs", "each lab: one change from Python")
def bench_labs(b: Bench) -> None:
    built: dict[str, tuple[object, float, float]] = {}
    n_changes, warm = b.runs(30, 3), 2
    for c in LAB_CHANGES:
        label = f"{c.lab}: {c.change}"
        try:
            if c.lab not in built:
                import whole_transformer.labs as labs

                factory = getattr(labs, c.lab)
                t = time.perf_counter()
                factory()  # the first build loads what the lab needs (checkpoints, ipywidgets)
                first = time.perf_counter() - t
                t = time.perf_counter()
                lab = factory()
                built[c.lab] = (lab, first, time.perf_counter() - t)
            lab, first, again = built[c.lab]
            times = []
            for i in range(warm + n_changes):
                if c.before is not None:
                    c.before(lab, i)
                t = time.perf_counter()
                c.act(lab, i)
                dt = time.perf_counter() - t
                if i >= warm:
                    times.append(dt)
            med = ms(median(times))
            b.add(
                Row(
                    group="labs",
                    item=label,
                    value=med,
                    unit="ms",
                    runs=len(times),
                    target=f"≤ {c.target_ms:.0f} ms",
                    ok=med <= c.target_ms,
                    note=f"p90 {ms(p90(times)):.1f} ms, max {ms(max(times)):.1f} ms; lab built in {ms(again):.0f} ms "
                    f"({ms(first):.0f} ms the first time)",
                )
            )
        except Exception as e:  # noqa: BLE001 - a lab that changed its parts: report, go on with the others
            traceback.print_exc()
            b.add(Row(group="labs", item=label, status=f"error: {type(e).__name__}: {e}"))
    bench_training_lab(b)


# ------------------------------------------------------------------------------------ notebooks
def run_notebook(nb, workdir: Path, autograde: bool = False, timeout: int = 120):
    """Run a notebook (nbformat node) top to bottom in a fresh kernel; (seconds, cell timings, executed nb)."""
    from whole_transformer.course.publish import notebook as kernel

    env = kernel.kernel_env(**({"NBGRADER_EXECUTION": "autograde"} if autograde else {}))
    log = workdir / "kernel-stderr.txt"  # the kernel's own warnings stay out of the bench's output
    with open(log, "w") as err:
        try:
            total = kernel.run_notebook(nb, workdir, timeout=timeout, env=env, stderr=err)
        except Exception as e:
            tail = log.read_text(errors="replace").strip().splitlines()[-3:]
            if tail:
                e.add_note("kernel stderr: " + " / ".join(tail))
            raise
    cells = []
    for i, cell in enumerate(nb.cells):
        ex = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type == "code" and "shell.execute_reply" in ex and "iopub.execute_input" in ex:
            dt = (_ts(ex["shell.execute_reply"]) - _ts(ex["iopub.execute_input"])).total_seconds()
            cells.append((dt, i, cell.source.strip().splitlines()[0][:40] if cell.source.strip() else ""))
    return total, sorted(cells, reverse=True), nb


def _ts(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _slowest(cells, n=2) -> str:
    return ", ".join(f"cell {i} `{src}` {dt:.1f} s" for dt, i, src in cells[:n])


@group("notebooks", "each notebook top to bottom (fresh kernel; under autograding)")
def bench_notebooks(b: Bench) -> None:
    import nbformat

    for k, name in enumerate(NOTEBOOKS):
        path = SOURCE / name
        for autograde in (False, True):
            label = f"{name[:2]} {'under autograding' if autograde else 'in a fresh kernel'}"
            how = "NBGRADER_EXECUTION=autograde" if autograde else "fresh kernel"
            if b.quick and (k > 0 or autograde):
                b.add(
                    Row(
                        group="notebooks", item=label, status="skipped: --quick runs only notebook 01 in a fresh kernel"
                    )
                )
                continue
            seconds, slow_cells = [], []
            try:
                for _ in range(b.runs(3, 1)):
                    with tempfile.TemporaryDirectory(prefix="wt-bench-nb-") as tmp:
                        nb = nbformat.read(path, as_version=4)
                        total, cells, _ = run_notebook(nb, Path(tmp), autograde)
                    seconds.append(total)
                    slow_cells = cells
            except Exception as e:  # noqa: BLE001 - a notebook that fails is an error row; the others go on
                traceback.print_exc()
                first = str(e).strip().splitlines()
                why = next((ln for ln in reversed(first) if ln.strip()), type(e).__name__)[:160]
                b.add(Row(group="notebooks", item=label, status=f"error: {type(e).__name__}: {why}"))
                continue
            med = median(seconds)
            b.add(
                Row(
                    group="notebooks",
                    item=label,
                    value=med,
                    unit="s",
                    runs=len(seconds),
                    target="≤ 30 s",
                    ok=med <= 30.0,
                    note=f"{how}; kernel start included; slowest: {_slowest(slow_cells)}",
                )
            )


# ------------------------------------------------------------------------------------ start-up
LAB_CALL = re.compile(r"\b(\w+_lab|block_picture)\s*\(")


@group("startup", "start-up: fresh kernel to the first lab on screen")
def bench_startup(b: Bench) -> None:
    import nbformat

    path = SOURCE / NOTEBOOKS[0]
    nb = nbformat.read(path, as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    first_lab = next((i for i in code if LAB_CALL.search(nb.cells[i].source)), None)
    if first_lab is None:
        raise RuntimeError(f"{NOTEBOOKS[0]} has no cell that shows a lab")
    lab_source = nb.cells[first_lab].source.strip().splitlines()[0][:40]
    seconds = []
    for _ in range(b.runs(3, 1)):
        part = nbformat.read(path, as_version=4)
        part.cells = part.cells[: first_lab + 1]
        with tempfile.TemporaryDirectory(prefix="wt-bench-start-") as tmp:
            total, cells, done = run_notebook(part, Path(tmp))
        outputs = done.cells[first_lab].get("outputs", [])
        if not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs):
            raise RuntimeError(f"cell {first_lab} (`{lab_source}`) displayed no widget")
        seconds.append(total)
    with tempfile.TemporaryDirectory(prefix="wt-bench-start-") as tmp:  # a kernel that runs nothing, to compare
        empty = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")], metadata=part.metadata)
        bare = run_notebook(empty, Path(tmp))[0]
    med = median(seconds)
    b.add(
        Row(
            group="startup",
            item=f"fresh kernel to the first lab on screen ({NOTEBOOKS[0][:2]}: `{lab_source}`)",
            value=med,
            unit="s",
            runs=len(seconds),
            target="≤ 3 s",
            ok=med <= 3.0,
            note=f"kernel start + the cells before it + the lab's widget displayed (the browser's drawing is not "
            f"included); a bare kernel takes {bare:.2f} s; slowest: {_slowest(cells)}",
        )
    )


# ------------------------------------------------------------------------------------ autograde
TESTS_DIR = ROOT / "tests"  # the simulated class of the course's test suite is tests/simclass/


def _tests_importable() -> None:
    """tests/ on sys.path, as pytest has it (``pythonpath`` in pyproject.toml)."""
    if str(TESTS_DIR) not in sys.path:
        sys.path.insert(0, str(TESTS_DIR))


def _class_generator():
    """(make_course, Notebooks, write_submission, roster) from tests/simclass/."""
    _tests_importable()
    from simclass.minicourse import make_course
    from simclass.notebooks import Notebooks, write_submission
    from simclass.students import roster

    return make_course, Notebooks, write_submission, roster


def _course_cli(root: Path, *args: str, timeout: float = 1800) -> tuple[float, str]:
    """Run `python -m whole_transformer.course --root ROOT ARGS` as an instructor does; (seconds, output)."""
    env = checkout_env()
    env.pop("NBGRADER_EXECUTION", None)
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "whole_transformer.course", "--root", str(root), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.perf_counter() - t
    out = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        tail = " ".join(out.strip().splitlines()[-3:])[-300:]
        raise RuntimeError(f"`course {' '.join(args)}` exited with {done.returncode}: {tail}")
    return seconds, out


def _slowest_students(course: Path, n: int = 4) -> str:
    """The students whose grading took longest, from the records autograde keeps (autograde/.wt/students)."""
    c = Course(course)
    took = [(rec.seconds, s) for s in c.students() if (rec := load_record(c, s)) is not None]
    return ", ".join(f"{name} {sec:.0f} s" for sec, name in sorted(took, reverse=True)[:n]) or "?"


def _score(out: str, student: str) -> str:
    """The 'score / max' the autograde summary prints for a student."""
    m = re.search(rf"^{re.escape(student)}\s+([\d.]+)\s*/\s*([\d.]+)", out, re.M)
    return f"{m.group(1)}/{m.group(2)}" if m else "?"


def _machine_busy() -> float:
    """CPU seconds the whole machine has been busy (all cores, /proc/stat). Differences count every
    process, the sandboxed kernels too (whose CPU getrusage misses when their sandbox is killed),
    and whatever else runs: on a quiet machine, the CPU of what is measured."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _typical_class(run_dir: Path, size: int, Notebooks, roster, write_submission) -> str:
    students = roster(Notebooks(run_dir), run_dir)
    # A typical class: the roster's ordinary students (complete, untouched, partial, and every
    # correct and wrong implementation of each exercise), repeated under new ids up to the class
    # size. The hostile students (endless loops waiting out the 30 s cell limit, crashes) are the
    # test suite's business.
    typical = [s for s in students if s.name.startswith(("full", "release", "partial", "impl-"))]
    chosen = [
        (f"{s.name}-{i}" if i >= len(typical) else s.name, s)
        for i, s in ((i, typical[i % len(typical)]) for i in range(size))
    ]
    for name, s in chosen:
        write_submission(run_dir, name, s.notebooks, raw=s.raw, folder=s.folder)
    return (
        f"{len(chosen)} ordinary submissions ({len(typical)} distinct, from tests/simclass/students.py: "
        "complete, untouched, partial, each correct and wrong implementation)"
    )


@group("autograde", "autograde: one submission (first, before, after); a class: JOBS=2 vs 2 Dask workers")
def bench_autograde(b: Bench) -> None:
    """--quick: the one submission once, the default way only (warm kernels); the class once each way."""
    make_course, Notebooks, write_submission, roster = _class_generator()
    with tempfile.TemporaryDirectory(prefix="wt-bench-course-") as tmp:
        # one course built from source/ in a temp folder; nothing of the repository is written
        base = make_course(Path(tmp) / "base", real_source=True)
        _course_cli(base, "release")
        _bench_one_submission(b, Path(tmp), base, Notebooks(base), write_submission)
        took_way, cpu_class, who, slowest = _grade_the_class(b, Path(tmp), base, Notebooks, roster, write_submission)
        _class_rows(b, took_way, cpu_class, who, slowest)


#: the ways one submission is graded, taking turns: mode → (its label, the lines added to nbgrader_config.py)
ONE_SUBMISSION_MODES = {
    "built": (
        "labs built, fresh kernels (first)",
        "c.SandboxExecute.headless_labs = False\nc.SandboxExecute.warm_kernels = False\n",
    ),
    "headless": ("headless labs, fresh kernels (before)", "c.SandboxExecute.warm_kernels = False\n"),
    "warm": ("headless labs, warm kernels (after)", ""),
}


def _bench_one_submission(b: Bench, tmp: Path, base: Path, nbs, write_submission) -> None:
    """The same submission three ways, taking turns: as first built (the labs build their widgets and train while
    graded; every kernel started afresh, importing torch), headless labs, and headless labs with the kernels forked
    from one warm fork server (the default); the scores must agree."""
    modes = {"warm": ONE_SUBMISSION_MODES["warm"]} if b.quick else ONE_SUBMISSION_MODES
    courses = {}
    for mode, (_, config) in modes.items():
        one = tmp / f"one-{mode}"
        shutil.copytree(base, one, symlinks=True)
        with open(one / "nbgrader_config.py", "a") as f:
            f.write(config)
        write_submission(one, "full", {n: nbs.solved(n) for n in nbs.names})
        courses[mode] = one
    took: dict[str, list[float]] = {m: [] for m in courses}
    cpu: dict[str, list[float]] = {m: [] for m in courses}
    scores = {}
    for r in range(b.runs(3, 1)):
        for mode, one in courses.items():
            c0 = _machine_busy()
            dt, out = _course_cli(one, "autograde", "--jobs", "1", *(["--force"] if r else []))
            took[mode].append(dt)
            cpu[mode].append(_machine_busy() - c0)
            scores[mode] = _score(out, "full")
    grading = {mode: load_record(Course(one), "full").seconds for mode, one in courses.items()}
    b.facts["submission_s"] = median(took["warm"])
    b.facts["submission_grade_s"] = grading["warm"]
    for mode, (label, config) in modes.items():
        if scores[mode] == "?":
            raise RuntimeError(f"autograde printed no score for the complete submission ({label})")
        same = "" if scores[mode] == scores.get("built", scores[mode]) else " — **differs from the first way**"
        b.add(
            _one_submission_row(
                mode,
                label,
                took,
                note=f"`python -m whole_transformer.course autograde` in a temp course, sandboxed, process start "
                f"and the assignment's preparation included; {config.strip() or 'the default config'}; grading "
                f"alone {grading[mode]:.1f} s; machine CPU {median(cpu[mode]):.1f} s; "
                f"scored {scores[mode]}{same}",
            )
        )


def _one_submission_row(mode: str, label: str, took: dict[str, list[float]], note: str) -> Row:
    """One way's row: its median, the 8 s target of the default way, how much faster than the others it is."""
    t = median(took[mode])
    first, before = (median(took[m]) if m in took else None for m in ("built", "headless"))
    target = "≤ 8 s" if mode == "warm" else ""
    if mode == "headless":
        vs = faster(first / t) + " than first"
    elif mode == "warm" and first is not None:
        vs = faster(before / t) + " than before, " + faster(first / t) + " than first"
    else:
        vs = ""
    return Row(
        group="autograde",
        item=f"one complete submission ({len(NOTEBOOKS)} notebooks), JOBS=1, {label}",
        value=t,
        unit="s",
        runs=len(took[mode]),
        target=target,
        ok=(t <= 8.0) if target else None,
        baseline=vs,
        note=note,
    )


#: the two ways a class is graded on the same 2 cores: (label, autograde's arguments; None: 2 Dask workers)
CLASS_WAYS = [("JOBS=2", ["--jobs", "2"]), ("2 Dask workers", None)]


def _grade_the_class(b: Bench, tmp: Path, base: Path, Notebooks, roster, write_submission):
    """JOBS=2 and 2 Dask workers: the same class on the same 2 cores (JOBS=1 is the one-submission row × N),
    taking turns, so that a machine whose speed drifts weighs on both alike. Returns each way's times, the CPU
    one student costs with JOBS=2, who the class is, and each way's slowest students (last run)."""
    from whole_transformer.course.autograder.cluster import local_cluster

    took_way: dict[str, list[float]] = {label: [] for label, _ in CLASS_WAYS}
    cpu_class, who, slowest = [], "", {}
    for r in range(b.runs(2, 1)):
        for label, args in CLASS_WAYS:
            run_dir = tmp / f"class-{label.split()[0]}-{r}"
            shutil.copytree(base, run_dir, symlinks=True)
            who = _typical_class(run_dir, b.class_size, Notebooks, roster, write_submission)
            busy = _machine_busy()
            if args is None:
                with local_cluster(2) as cluster:
                    dt, out = _course_cli(run_dir, "autograde", "--scheduler", cluster.scheduler_address)
            else:
                dt, out = _course_cli(run_dir, "autograde", *args)
                cpu_class.append((_machine_busy() - busy) / b.class_size)
            took_way[label].append(dt)
            c = Course(run_dir)
            graded = sum(1 for s in c.students() if load_record(c, s) is not None)
            if graded != b.class_size:
                raise RuntimeError(f"{label}: {graded} of the class of {b.class_size} were graded")
            slowest[label] = _slowest_students(run_dir)
            shutil.rmtree(run_dir, ignore_errors=True)
    return took_way, cpu_class, who, slowest


def _class_rows(b: Bench, took_way: dict[str, list[float]], cpu_class: list[float], who: str, slowest: dict) -> None:
    """A row for each way of grading the class (medians of the rounds), and one for their rates per core."""
    # the CPU one student costs in a class (process start and preparation shared by all)
    b.facts["submission_cpu_s"] = median(cpu_class)
    b.facts["cpu_of_class"] = b.class_size
    for label, _ in CLASS_WAYS:
        dt = median(took_way[label])
        rate = 60 * b.class_size / dt / 2
        speed = "" if label == "JOBS=2" else f"{faster(median(took_way['JOBS=2']) / dt)} than JOBS=2"
        b.add(
            Row(
                group="autograde",
                item=f"a class of {b.class_size}, {label}",
                value=dt,
                unit="s",
                runs=len(took_way[label]),
                baseline=speed,
                note=f"{who}; {dt / b.class_size:.1f} s per student; {rate:.2f} students/min per worker "
                f"core; each run {', '.join(f'{t:.0f} s' for t in took_way[label])}; slowest (last run): "
                f"{slowest[label]}",
            )
        )
        b.facts[f"rate {label}"] = rate
    ratio = b.facts["rate 2 Dask workers"] / b.facts["rate JOBS=2"]
    b.facts["dask_vs_jobs"] = ratio
    b.add(
        Row(
            group="autograde",
            item="students/min per worker core: 2 Dask workers ÷ JOBS=2",
            value=ratio,
            unit="×",
            runs=len(took_way["JOBS=2"]),
            target="≥ 0.9",
            ok=ratio >= 0.9,
            note=f"{b.facts['rate 2 Dask workers']:.2f} vs {b.facts['rate JOBS=2']:.2f} students/min per core "
            "(the same class, the two ways taking turns, medians; `make workers`' cluster: 2 worker "
            "processes, one task slot each)",
        )
    )


# ------------------------------------------------------------------------------------ scale
@group("scale", "scale: merging one student (SQLite, PostgreSQL); Dask's per-task overhead; the scale study")
def bench_scale(b: Bench) -> None:
    """--quick: one merge into each gradebook, five Dask tasks; the scale study from those."""
    with tempfile.TemporaryDirectory(prefix="wt-bench-scale-") as tmp:
        rig = _ScaleRig.graded(b, Path(tmp))
        # what travels with a Dask task, as pickled for the wire: the student's files, the assignment, the result
        b.facts["job_bytes"] = len(pickle.dumps(rig.job))
        b.facts["pack_bytes"] = len(pickle.dumps(rig.pack))
        b.facts["result_bytes"] = len(pickle.dumps(rig.result))
        _bench_merge_sqlite(b, rig)
        _bench_merge_postgres(b, rig)
        _bench_dask_task(b, rig)
    b.scale_study = scale_study(b.facts, loadavg())


@dataclass
class _ScaleRig:
    """A course with one complete submission graded once in this process (``result``), to merge again and again as
    other students (``merges``), and what a Dask task of it carries (``job``, ``pack``)."""

    tmp: Path
    base: Path
    course: Course
    work: Path
    template: Any
    pack: Any
    job: Any
    result: Any
    n: int  # merges per gradebook
    cpu_of: dict[str, float]  # the median CPU of a merge, per gradebook

    @classmethod
    def graded(cls, b: Bench, tmp: Path) -> _ScaleRig:
        """The course built and the submission graded; a row for that grading if the autograde group did not run."""
        make_course, Notebooks, write_submission, _ = _class_generator()
        from whole_transformer.course.autograder.locate import make_job
        from whole_transformer.course.autograder.pack import make_pack
        from whole_transformer.course.autograder.student import grade_job
        from whole_transformer.course.autograder.template import build_template
        from whole_transformer.course.publish.release import release
        from whole_transformer.course.sandbox.bubblewrap import check_sandbox

        base = make_course(tmp / "base", real_source=True)
        release(Course(base), log=lambda *a: None)
        nbs = Notebooks(base)
        write_submission(base, "full", {n: nbs.solved(n) for n in nbs.names})
        course = Course(base)
        work = tmp / "work"
        template = build_template(course, work, log=lambda *a: None)
        pack = make_pack(course, template)
        job = make_job(course, "full", template)
        c0 = _machine_busy()
        result = grade_job(job, pack, threads=1, sandbox=check_sandbox(False), work=work)
        if "submission_grade_s" not in b.facts:  # the autograde group did not run: this grading stands in
            b.facts["submission_grade_s"] = result.seconds
            b.facts["submission_cpu_s"] = _machine_busy() - c0
            b.add(
                Row(
                    group="scale",
                    item="grading one complete submission (for the scale study)",
                    value=result.seconds,
                    unit="s",
                    runs=1,
                    note=f"grade_job in this process (restore, scan, nbgrader with 4 sandboxed kernels; "
                    f"no process start, no preparation), headless labs; CPU {b.facts['submission_cpu_s']:.1f} s",
                )
            )
        return cls(tmp, base, course, work, template, pack, job, result, b.runs(30, 1), {})

    def merges(self, c: Course, label: str) -> list[float]:
        """The wall time of each of ``n`` merges of the graded student into ``c``'s gradebook, a new student each."""
        from whole_transformer.course.autograder.gradebook import open_gradebook
        from whole_transformer.course.autograder.merge import merge

        times, cpu = [], []
        with open_gradebook(c) as gb:
            for i in range(self.n):
                self.result.student = f"student-{i:04d}"
                t, c0 = time.perf_counter(), time.process_time()
                merge(c, self.result, self.template, gb, self.work / "staging")
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c0)
        self.cpu_of[label] = median(cpu)
        return times


def _bench_merge_sqlite(b: Bench, rig: _ScaleRig) -> None:
    before = _folder_bytes(rig.base)
    sq = rig.merges(rig.course, "sqlite")
    b.facts["written_bytes"] = (_folder_bytes(rig.base) - before) / rig.n  # graded notebooks, record, gradebook rows
    b.facts["merge_sqlite_s"] = median(sq)
    b.facts["merge_sqlite_cpu_s"] = rig.cpu_of["sqlite"]
    b.add(
        Row(
            group="scale",
            item="merge one graded student into SQLite (gradebook.db)",
            value=ms(median(sq)),
            unit="ms",
            runs=len(sq),
            note="grades and comments of 4 notebooks, the graded notebooks renamed into autograde/, the "
            f"record written; one open gradebook, a new student each time; p90 {ms(p90(sq)):.0f} ms; "
            f"CPU {ms(rig.cpu_of['sqlite']):.0f} ms",
        )
    )


def _bench_merge_postgres(b: Bench, rig: _ScaleRig) -> None:
    _tests_importable()
    from simclass.pgcluster import PostgresCluster, server_bin

    from whole_transformer.course.autograder.template import build_template
    from whole_transformer.course.publish.release import release

    item = "merge one graded student into PostgreSQL"
    if server_bin() is None:
        b.add(
            Row(
                group="scale",
                item=item,
                status="not available: PostgreSQL is not installed (apt-get install postgresql)",
            )
        )
        return
    with PostgresCluster.start(server_bin()) as pg:
        pgc = rig.tmp / "pg"
        shutil.copytree(rig.base, pgc, symlinks=True)
        (pgc / "gradebook.db").unlink()
        os.environ["DB_URL"] = pg.create_database("bench")
        try:
            c = Course(pgc)
            release(c, log=lambda *a: None)
            build_template(c, rig.tmp / "work-pg", log=lambda *a: None)
            times = rig.merges(c, "pg")
        finally:
            os.environ.pop("DB_URL", None)
    b.facts["merge_pg_s"] = median(times)
    b.facts["merge_pg_cpu_s"] = rig.cpu_of["pg"]
    b.add(
        Row(
            group="scale",
            item=item,
            value=ms(median(times)),
            unit="ms",
            runs=len(times),
            note="the same, into a local PostgreSQL server over its Unix socket (fsync off: a "
            f"throwaway cluster); p90 {ms(p90(times)):.0f} ms; "
            f"CPU of this process {ms(rig.cpu_of['pg']):.0f} ms",
        )
    )


def _bench_dask_task(b: Bench, rig: _ScaleRig) -> None:
    from distributed import Client

    from whole_transformer.course.autograder.cluster import local_cluster

    def noop(job, pack):  # local, as it always was: it travels to the workers by value
        return len(job.files) + len(pack.db)

    with local_cluster(2) as cluster, Client(cluster.scheduler_address) as client:
        client.submit(noop, rig.job, rig.pack, pure=False).result()  # warm up
        lat = []
        for _ in range(b.runs(100, 5)):
            t = time.perf_counter()
            client.submit(noop, rig.job, rig.pack, pure=False).result()
            lat.append(time.perf_counter() - t)
    b.facts["dask_task_s"] = median(lat)
    payload = b.facts["job_bytes"] + b.facts["pack_bytes"]
    b.add(
        Row(
            group="scale",
            item="Dask per-task overhead (submit → result, one task at a time)",
            value=ms(median(lat)),
            unit="ms",
            runs=len(lat),
            note=f"a task that does nothing with a real student's Job and the assignment's "
            f"Pack ({kb(payload)} pickled) on `make workers`' local cluster; p90 {ms(p90(lat)):.0f} ms",
        )
    )


def _folder_bytes(folder: Path) -> int:
    """Bytes of the regular files under ``folder`` (what a merge writes shows as their growth)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def kb(n: float) -> str:
    return f"{n / 1e3:.0f} kB" if n < 1e6 else f"{n / 1e6:.1f} MB"


def scale_study(f: dict, load: str = "?") -> list[str]:
    """Expected wall time for big classes, from the figures measured in this run."""
    grade = f.get("submission_grade_s")
    if grade is None:
        return ["## Scale study", "", "(the autograde group did not run: no per-submission time to build it on)"]
    task = f.get("dask_task_s", 0.0)
    cpu = f.get("submission_cpu_s", grade)
    merge_sq, merge_pg = f.get("merge_sqlite_s", 0.0), f.get("merge_pg_s")
    merge_cpu = f.get("merge_pg_cpu_s", f.get("merge_sqlite_cpu_s", 0.0))
    ratio = f.get("dask_vs_jobs")
    lines = [
        "## Scale study",
        "",
        f"Measured in this run (load average {load}): one complete submission takes "
        + (
            f"**{f['submission_s']:.1f} s** of wall time for the whole `autograde` command, "
            if "submission_s" in f
            else ""
        )
        + f"**{grade:.1f} s** for its grading alone (restore, scan, "
        f"nbgrader with 4 sandboxed kernels), and **{cpu:.1f} s of CPU** "
        + (
            f"per student in a class (all processes: the machine's CPU while the class of {f['cpu_of_class']} was "
            f"graded with JOBS=2, ÷ {f['cpu_of_class']})"
            if f.get("cpu_of_class")
            else "(the machine's, while it was graded)"
        )
        + "; Dask adds "
        f"**{1000 * task:.0f} ms** per task (submit to result, the files travelling with it); merging one student "
        f"takes **{1000 * merge_sq:.0f} ms** into SQLite"
        + (f" and **{1000 * merge_pg:.0f} ms** into PostgreSQL" if merge_pg is not None else "")
        + f" ({1000 * merge_cpu:.0f} ms of CPU)"
        + (f"; per core, 2 Dask workers grade at {ratio:.2f}× the rate of JOBS=2." if ratio else "."),
        "",
        "Expected wall time = max(students × (grading + task overhead) ÷ worker cores, students × merge time) "
        "+ 1 min to start. Two estimates: from CPU seconds (a dedicated core per task slot: what a grading "
        "machine of its own would see) and from the wall seconds measured here (this machine was shared):",
        "",
        "| students | estimate | 8 worker cores | 32 worker cores | 128 worker cores |",
        "|---|---|---|---|---|",
    ]

    def fmt(seconds: float) -> str:
        return f"{seconds / 60:.0f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"

    for n in (1_000, 10_000):
        for label, per, merge in (
            ("from CPU s", cpu + task, merge_cpu),
            ("from wall s", grade + task, merge_pg if merge_pg is not None else merge_sq),
        ):
            cells = []
            for cores in (8, 32, 128):
                grading, merging = n * per / cores, n * merge
                cells.append(fmt(max(grading, merging) + 60) + (" (merge-bound)" if merging > grading else ""))
            lines.append(f"| {n:,} | {label} | " + " | ".join(cells) + " |")
    bound = (cpu + task) / merge_cpu if merge_cpu else float("inf")
    rate_128 = min(128 / (cpu + task), 1 / merge_cpu if merge_cpu else float("inf"))  # students a second
    written = f.get("written_bytes")
    if "job_bytes" in f:
        wire = (
            f"a task carries the student's files ({kb(f['job_bytes'])} for the complete submission measured "
            f"here) and the assignment ({kb(f['pack_bytes'])}: its release and a SQLite gradebook that knows "
            f"it), and returns the graded notebooks with the scores ({kb(f['result_bytes'])}), all as pickled "
            f"for the wire; at 1 Gbit/s that is "
            f"{8 * (f['job_bytes'] + f['pack_bytes'] + f['result_bytes']) / 1e6:.0f} ms per task"
        )
    else:
        wire = "a task carries the student's files and the assignment, and returns the graded notebooks"
    if written is not None:
        wire += (
            f". The autograde machine writes {kb(written)} per student (the growth of the course folder over "
            f"the merges measured above: graded notebooks, record, gradebook rows): at 128 cores, "
            f"{rate_128:.1f} students a second, {rate_128 * written / 1e6:.1f} MB/s"
        )
    lines += [
        "",
        "Assumptions each figure rests on:",
        "",
        "- one task slot per worker core, each busy all the time (a class of thousands keeps every slot fed; the "
        "last wave of tasks is short beside the whole); worker cores as fast as this machine's;",
        "- every submission like the complete one measured here (a partial or missing notebook is cheaper; a "
        "student who waits out a 30 s cell limit costs more: those are few);",
        f"- the merge, one student at a time in the `make autograde` process, keeps up while it is faster than "
        f"the graders: up to about {bound:.0f} worker cores at {1000 * merge_cpu:.0f} ms of CPU per merge; beyond "
        "that the run is merge-bound, and two or more `make autograde` runs on one PostgreSQL gradebook share the "
        "class and merge in parallel;",
        f"- no shared file system: {wire};",
        "- the Dask scheduler handles thousands of tasks a second; here at most one task per slot is in flight.",
    ]
    return lines


# ------------------------------------------------------------------------------------ service
@group("service", "grading on submission: idle latency; CPU per submission vs autograde; a burst (local, Dask)")
def bench_service(b: Bench) -> None:
    """--quick: one idle submission (one round against the baseline), a burst of 3 each way. See bench_service.py."""
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_service

    bench_service.run(b, sys.modules[__name__])


# ------------------------------------------------------------------------------------ machine
def machine() -> list[tuple[str, str]]:
    import numpy
    import torch

    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        commit += " (with uncommitted changes)" if dirty else ""
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    return [
        ("CPU", cpu),
        ("cores", f"{os.cpu_count()} (torch set to {torch.get_num_threads()} thread(s) by the course)"),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("Python", platform.python_version()),
        ("torch", torch.__version__),
        ("numpy", numpy.__version__),
        ("x-transformers", x_transformers_version()),
        ("commit", commit or "?"),
    ]


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of the children it has waited for."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def loadavg() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


# ------------------------------------------------------------------------------------ results.md
def write_results(
    path: Path,
    b: Bench,
    info: list[tuple[str, str]],
    started: datetime.datetime,
    load_before: str,
    load_after: str,
    wall: float,
    group_seconds: dict[str, tuple[float, float, str]],
    note: str = "",
) -> None:
    kept = [r for r in b.rows if KEPT.search(r.note)]
    lines = [
        "# Benchmark results",
        "",
        f"Written by `benchmarks/bench.py`{' --quick' if b.quick else ''} on {started:%Y-%m-%d %H:%M} "
        f"(local time); the whole run took {wall:.0f} s. Medians over the runs shown; a ratio compares with a "
        "baseline measured in the same run. **MISS** marks a median beyond its target. "
        + (
            f"{len(kept)} of the {len(b.rows)} rows are kept from earlier runs (`--keep`); each names the commit, "
            "date and load average of the run that measured it."
            if kept
            else f"Every row was measured in this run, on commit {dict(info).get('commit', '?')}."
        ),
        "",
    ]
    if note:
        lines += [f"Note on this run: {note}", ""]
    lines += [
        "| group | item | median | runs | target | result | vs baseline | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in b.rows:
        cells = [
            r.group,
            r.item,
            r.median_text(),
            str(r.runs) if not r.status else "—",
            r.target or "—",
            r.result_text(),
            r.baseline or "—",
            r.note or "",
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    if b.scale_study:
        lines += [""] + b.scale_study
    lines += ["", "## Machine", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in info]
    lines += [
        f"| date | {started:%Y-%m-%d %H:%M} |",
        f"| load average (1/5/15 min) | before {load_before}; after {load_after} |",
        "",
        "Time per group, wall (CPU of this process and the processes it waited for; the load average "
        "(1/5/15 min) as the group started): "
        + ", ".join(f"{g} {w:.0f} s ({c:.0f} s; load {ld})" for g, (w, c, ld) in group_seconds.items())
        + ".",
        "",
        "## How each item is measured",
        "",
    ]
    lines += [
        "- **training step**: the first batch of the default run (64 numbers in the seeded order, trimmed to its "
        "longest x, as `train()` does); one step = loss, zero_grad, backward, Adam step (lr 1e-3, `fused=True`, as "
        "`train()` makes it), on one torch thread (what the course sets on import). Our loss is `train()`'s "
        "(scores only at the positions whose targets count, `fast.logits_at`); the baseline computes all "
        "its logits and the same cross-entropy skipping PAD (the library cannot score only some rows). After 10 "
        "warm-up steps each, the models take turns in rounds of steps (the order rotated each round) and every "
        "step is timed; the median is over all of a model's steps. The baseline is the same model written with "
        "x-transformers: " + XT_OPTIONS.format(flash="") + ". It differs from ours only where the library gives "
        "no switch: LayerNorms without a bias, W_O and the output layer without a bias, a sinusoidal position "
        "table with one learned scale. Its default attention (`attn_flash=False`, an explicit softmax like ours) "
        "is the baseline of the ratio; `attn_flash=True` (PyTorch's fused attention) and our model on 2 threads "
        "are shown beside it.",
        "- **full training**: `train(ModelConfig(), TrainConfig())`, as the notebooks and the CLI call it "
        "(60 epochs, held out evaluated after every epoch), wall time per run.",
        "- **reading 1,000 numbers**: `decode.read_numbers(model, range(1000))` with the shipped read-60 model vs "
        "`greedy_decode_slow` (benchmarks/bench.py) called for each number (every step re-runs the whole "
        "prefix); the two are checked to give the same answers.",
        "- **labs**: each lab is built in this process (no kernel, so no front end), then one control is changed "
        "from Python the way a student changes it (a slider value, `button.click()`, a typed value) and the time "
        "until the lab's callbacks have returned is measured; 2 warm-up changes, then the median of the rest. "
        "Sending the new widget state to the browser and drawing it are not included.",
        "- **notebooks**: each `source/` notebook (solutions in) is run with nbclient top to bottom in a fresh "
        "kernel in a temporary folder, kernel start included; then again with `NBGRADER_EXECUTION=autograde` in "
        "the kernel's environment.",
        "- **start-up**: notebook 01 up to and including its first cell that shows a lab, run in a fresh kernel "
        "(kernel start, imports, the lab's widget displayed); the browser's drawing is not included.",
        "- **autograde**: `python -m whole_transformer.course autograde --jobs N` in a temporary copy of the "
        "course, on one complete submission and on the simulated class of the test suite; see the notes.",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_rows(path: Path) -> list[Row]:
    """The rows of an existing results.md (as write_results writes them), medians kept as text."""
    rows = []
    for line in path.read_text(encoding="utf-8").split("\n## ")[0].splitlines():
        if not line.startswith("| ") or line.startswith(("| group", "|---")):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) != 8:
            continue
        group, item, med, runs, target, result, baseline, note = cells
        rows.append(
            Row(
                group=group,
                item=item,
                runs=int(runs) if runs.isdigit() else 0,
                target="" if target == "—" else target,
                ok=None if result == "—" else result == "pass",
                baseline="" if baseline == "—" else baseline,
                note=note,
                status=med if runs == "—" else "",
                text=med,
            )
        )
    return rows


#: How a row kept by --keep names the run that measured it (a kept row that cannot is dropped).
KEPT = re.compile(r"kept from the run of (\d{4}-\d\d-\d\d \d\d:\d\d) \(commit ([^;]+?), load average ([^)]+)\)$")


def read_machine(path: Path) -> dict[str, str]:
    """The Machine table of an existing results.md: {"commit": …, "date": …, "load average (1/5/15 min)": …}."""
    text = path.read_text(encoding="utf-8")
    if "\n## Machine" not in text:
        return {}
    out = {}
    for line in text.split("\n## Machine", 1)[1].split("\n## ")[0].splitlines():
        cells = [c.strip() for c in line.strip().split("|")[1:-1]]
        if len(cells) == 2 and cells[0] and not cells[0].startswith("---"):
            out[cells[0]] = cells[1]
    return out


def keep_rows(path: Path, ran: set[str]) -> list[Row]:
    """The rows of the groups not run now, from the results at ``path``, each naming the run that measured it.

    A row measured in that run is marked with its commit, date and load; a row that was already kept
    keeps its mark; a row kept without one (an older results.md) is dropped, and so is every row when
    the run that wrote ``path`` cannot be told (no commit or date)."""
    prev = read_machine(path)
    commit, date, load = prev.get("commit"), prev.get("date"), prev.get("load average (1/5/15 min)", "?")
    out = []
    for r in read_rows(path):
        if r.group in ran:
            continue
        if KEPT.search(r.note):
            out.append(r)
        elif "kept from" in r.note or not commit or not date or commit == "?":
            print(f"  not kept (no commit and date of its run): {r.item}", flush=True)
        else:
            r.note = (
                r.note + "; " if r.note else ""
            ) + f"kept from the run of {date} (commit {commit}, load average {load})"
            out.append(r)
    return out


# ------------------------------------------------------------------------------------ README
README_BEGIN = "<!-- the table below is written by benchmarks/bench.py from benchmarks/results.md: do not edit it -->"
README_END = "<!-- end of the table from benchmarks/results.md -->"


def _row(rows: list[Row], prefix: str) -> Row | None:
    return next((r for r in rows if r.item.startswith(prefix)), None)


def _span(rows: list[Row]) -> str:
    """'0.1–1.4 ms' over measured rows of one unit (their medians as results.md writes them)."""
    vals = []
    for r in rows:
        m = re.fullmatch(r"([\d.]+) (\S+)", r.median_text())
        if m:
            vals.append((float(m.group(1)), m.group(2), m.group(1)))
    if not vals:
        return "—"
    lo, hi = min(vals), max(vals)
    return lo[2] + " " + lo[1] if lo[2] == hi[2] else f"{lo[2]}–{hi[2]} {hi[1]}"


def _result(rows: list[Row]) -> str:
    measured = [r for r in rows if r is not None and not r.status and r.ok is not None]
    if not measured:
        return "—"
    return "pass" if all(r.ok for r in measured) else "**MISS**"


def readme_table(rows: list[Row], info: dict[str, str]) -> list[str]:
    """The README's "How fast" table: the headline figures of results.md, each with its target and pass/miss."""
    out = ["| what | measured | target | result |", "|---|---|---|---|"]
    used: list[Row] = []  # the rows the table shows, whose runs the line under it names

    def line(what: str, measured: str, target: str, result: str):
        out.append(f"| {what} | {measured} | {target or '—'} | {result} |")

    def one(what: str, prefix: str, extra=lambda r: ""):
        r = _row(rows, prefix)
        used.extend([r] if r is not None else [])
        if r is None:
            line(what, "not measured (no such row in results.md)", "", "—")
        elif r.status:
            line(what, r.status, r.target, "—")
        else:
            line(what, r.median_text() + extra(r), r.target, r.result_text())

    def baseline(r):
        return f", {r.baseline}" if r.baseline else ""

    epochs = _row(rows, "epochs to 100/100")
    one(
        "full training, 60 epochs",
        "full training, 60 epochs",
        lambda r: (
            f" (100/100 held out from epoch {epochs.median_text().split()[0]})"
            if epochs is not None and not epochs.status and epochs.median_text() != "—"
            else ""
        ),
    )
    one("one training step, batch 64", "training step, batch 64, default model (ours)", baseline)
    one("reading all 1,000 numbers", "read all 1,000 numbers, batched", baseline)
    one(
        "reading all 1,000 numbers, re-reading every row (no KV cache)",
        "read all 1,000 numbers, batched, re-",
        baseline,
    )
    labs = [r for r in rows if r.group == "labs" and not r.status and r.median_text().endswith(" ms")]
    step = _row(rows, "decode_lab: Next step")
    if labs:
        line(
            "a lab's response to one change",
            _span(labs) + (f" (decode step {step.median_text()})" if step is not None and not step.status else ""),
            "≤ 50 ms (decode step ≤ 30 ms)",
            _result(labs),
        )
    else:
        line("a lab's response to one change", "not measured in this run", "≤ 50 ms", "—")
    fresh = [r for r in rows if r.group == "notebooks" and r.item.endswith("in a fresh kernel") and not r.status]
    graded = [r for r in rows if r.group == "notebooks" and r.item.endswith("under autograding") and not r.status]
    if fresh:
        line(
            "each notebook top to bottom",
            _span(fresh) + (f" (under autograding {_span(graded)})" if graded else ""),
            "≤ 30 s",
            _result(fresh + graded),
        )
    else:
        line("each notebook top to bottom", "not measured in this run", "≤ 30 s", "—")
    one("fresh kernel to the first lab", "fresh kernel to the first lab")
    classes = "; ".join(
        f"{r.item}: {r.median_text()}"
        for r in rows
        if r.group == "autograde" and r.item.startswith("a class of ") and not r.status
    )
    one(
        "autograding one complete submission",
        "one complete submission (4 notebooks), JOBS=1, headless labs, warm",
        lambda r: (
            (
                f", {r.baseline}".replace(" than before", " than with fresh kernels").replace(
                    " than first", " than with fresh kernels and the labs built"
                )
                if r.baseline
                else ""
            )
            + (f"; {classes}" if classes else "")
        ),
    )
    one("Dask ÷ JOBS=2, students/min per worker core", "students/min per worker core")
    one("feedback after Submit, the grading service idle", "idle: one complete submission")
    one(
        "CPU per complete submission, the grading service",
        "CPU per complete submission, graded by the running",
        baseline,
    )
    used += labs + fresh + graded
    this_run = (
        f"{info.get('date', '?')} (commit {info.get('commit', '?')}; load average "
        f"{info.get('load average (1/5/15 min)', '?')})"
    )
    runs = sorted(
        {f"{m[1]} (commit {m[2]}; load average {m[3]})" if (m := KEPT.search(r.note)) else this_run for r in used}
    )
    out += [
        "",
        f"From the `make bench` run{'s' if len(runs) > 1 else ''} of {' and of '.join(runs)} (each row's run "
        "is named in `benchmarks/results.md`, which has every figure, how it was measured and on what machine).",
    ]
    return out


def update_readme(readme: Path = README, results: Path = RESULTS) -> bool:
    """Rewrite the README's table between its two markers from ``results``; True if it changed."""
    text = readme.read_text(encoding="utf-8")
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{readme} has no bench table markers ({README_BEGIN!r} … {README_END!r})")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    table = "\n".join(readme_table(read_rows(results), read_machine(results)))
    new = f"{head}{README_BEGIN}\n{table}\n{README_END}{tail}"
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


# ------------------------------------------------------------------------------------ main
def parse(argv):
    p = argparse.ArgumentParser(prog="benchmarks/bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="one run per item and the smallest workloads (smoke test)")
    p.add_argument("--only", nargs="+", metavar="GROUP", help=f"run only these groups: {', '.join(GROUPS)}")
    p.add_argument("--skip", nargs="+", metavar="GROUP", default=[], help="leave these groups out")
    p.add_argument(
        "--class-size",
        type=int,
        default=None,
        metavar="N",
        help=f"students in the simulated class that is autograded (default {CLASS_SIZE}; "
        f"{QUICK_CLASS_SIZE} with --quick)",
    )
    p.add_argument("--out", type=Path, default=RESULTS, help="where to write the table (default %(default)s)")
    p.add_argument("--list", action="store_true", help="list the groups and exit")
    p.add_argument(
        "--keep",
        action="store_true",
        help="with --only: keep the other groups' rows of the existing results, each marked with the "
        "commit, date and load of the run that measured it",
    )
    p.add_argument(
        "--note",
        default="",
        help="a sentence on this run written into results.md (e.g. who else was using the machine)",
    )
    p.add_argument(
        "--readme",
        action="store_true",
        help='only rewrite README.md\'s "How fast" table from the results (--out) and exit',
    )
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    if args.list:
        for name, (title, _) in GROUPS.items():
            print(f"{name:12} {title}")
        return 0
    if args.readme:
        if not args.out.exists():
            print(f"error: no results at {args.out}: run `make bench` first", file=sys.stderr)
            return 2
        print(f"{README}: {'rewritten' if update_readme(README, args.out) else 'already up to date'}")
        return 0
    if args.keep and not args.only:
        print("error: --keep needs --only (a whole run keeps nothing)", file=sys.stderr)
        return 2
    unknown = sorted(set(args.only or []).union(args.skip) - set(GROUPS))
    if unknown:
        print(f"error: unknown group(s) {unknown}: use some of {list(GROUPS)}", file=sys.stderr)
        return 2
    started, t0, load_before = datetime.datetime.now(), time.perf_counter(), loadavg()
    if args.class_size is not None and args.class_size < 1:
        print(f"error: --class-size must be 1 or more, got {args.class_size}", file=sys.stderr)
        return 2
    b = Bench(args.quick, args.class_size)
    info = machine()  # the commit measured is the one the run starts from
    group_seconds: dict[str, tuple[float, float, str]] = {}
    for name, (title, fn) in GROUPS.items():
        if (args.only and name not in args.only) or name in args.skip:
            continue
        print(f"[{name}] {title}", flush=True)
        tg, cg, lg = time.perf_counter(), cpu_seconds(), loadavg()
        try:
            fn(b)
        except Skipped as e:
            b.add(Row(group=name, item=title, status=f"skipped: {e}"))
        except Exception as e:  # noqa: BLE001 - a group that crashes is an error row; the others go on
            traceback.print_exc()
            b.add(Row(group=name, item=title, status=f"error: {type(e).__name__}: {e}"))
        group_seconds[name] = (time.perf_counter() - tg, cpu_seconds() - cg, lg)
    wall = time.perf_counter() - t0
    if args.keep and args.out.exists():  # rows of the groups not run now, from the previous results
        kept = keep_rows(args.out, {r.group for r in b.rows})
        b.rows = sorted(kept + b.rows, key=lambda r: list(GROUPS).index(r.group) if r.group in GROUPS else 99)
    write_results(args.out, b, info, started, load_before, loadavg(), wall, group_seconds, args.note)
    if args.out.resolve() == RESULTS.resolve() and not args.quick:  # the README's figures follow results.md
        print(f"{README}: {'rewritten' if update_readme(README, args.out) else 'already up to date'}")
    misses = [r for r in b.rows if r.ok is False and not r.status]
    errors = [r for r in b.rows if r.status.startswith("error")]
    print(f"wrote {args.out} in {wall:.0f} s: {len(b.rows)} rows, {len(misses)} missed, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
