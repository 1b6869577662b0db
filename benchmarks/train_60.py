"""The ``train-60`` group: ``train()`` with the defaults, as the notebooks and the CLI call it (60 epochs, held out
evaluated after every epoch), and the first epoch at 100/100 held out."""

from __future__ import annotations

import time

from benchmarks.figures import median
from benchmarks.rows import Bench, Group, Row


def bench_train_60(b: Bench) -> None:
    # lazy: torch
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


GROUP = Group(
    "train-60",
    "full training, 60 epochs",
    bench_train_60,
    how="- **full training**: `train(ModelConfig(), TrainConfig())`, as the notebooks and the CLI call it "
    "(60 epochs, held out evaluated after every epoch), wall time per run.",
)
