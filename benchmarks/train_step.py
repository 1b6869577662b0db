"""The ``train-step`` group: one training step on the default run's first batch, ours against the same model
written with x-transformers (same batch, loss, Adam settings and thread count), taking turns."""

from __future__ import annotations

import time

from benchmarks.figures import faster, median, ms, p90
from benchmarks.machine import x_transformers_version
from benchmarks.rows import Bench, Group, Row

XT_OPTIONS = (
    "TransformerWrapper(num_tokens=42, max_seq_len=16, scaled_sinu_pos_emb=True, "
    "attn_layers=Decoder(dim=64, depth=2, heads=4, attn_dim_head=16, ff_mult=2, "
    "ff_custom_activation=nn.ReLU(), pre_norm=True{flash})), called with mask=(x != PAD)"
)
FUSED = "fused=True"  # Adam as train() makes it


def _first_training_batch():
    """The first batch of epoch 1 of the default run: 64 numbers in the seeded order, trimmed like train()."""
    # lazy: torch (here and below): --list, --readme and the groups that grade do without it
    import torch

    from whole_transformer.task import PAD, make_batch, split

    train_numbers, _ = split()
    order = torch.randperm(len(train_numbers), generator=torch.Generator().manual_seed(0))[:64]
    x, y = make_batch([train_numbers[int(i)] for i in order])
    width = int((x != PAD).sum(1).max())
    return x[:, :width], y[:, :width]


def _x_transformers_model(flash: bool):
    import torch.nn as nn  # lazy: torch
    from x_transformers import Decoder, TransformerWrapper  # lazy: only this group compares with the library

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
    from whole_transformer.train import batch_loss  # lazy: torch

    return batch_loss(model, x, y)[0]


def _contenders(x, y) -> dict:
    """name: (model, loss of the batch, torch threads); ours twice (the same weights), x-transformers both ways."""
    # lazy: torch
    import torch

    from whole_transformer.model import ModelConfig, Transformer
    from whole_transformer.task import PAD
    from whole_transformer.train import loss_fn

    mask = x != PAD
    torch.manual_seed(0)
    ours = Transformer(ModelConfig())
    ours2 = Transformer(ModelConfig())
    ours2.load_state_dict(ours.state_dict())
    contenders = {
        "ours": (ours, lambda m: _our_loss(m, x, y), 1),
        "ours-2-threads": (ours2, lambda m: _our_loss(m, x, y), 2),
    }
    for flash in (False, True):
        contenders[f"xt-flash={flash}"] = (_x_transformers_model(flash), lambda m: loss_fn(m(x, mask=mask), y), 1)
    return contenders


def _time_steps(b: Bench, contenders: dict) -> dict[str, list[float]]:
    """Every step of every contender timed: each warmed up, then rounds taking turns in a rotated order."""
    import torch  # lazy: torch

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
    before = torch.get_num_threads()
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
    return times


def bench_train_step(b: Bench) -> None:
    """Our step is train()'s: its loss, Adam (fused, as train() makes it), one torch thread (what the course sets).

    The baseline gets the same batch, the same loss (cross-entropy skipping PAD, over all its logits:
    the library has no way to score only some rows), the same optimizer settings and thread count,
    so the ratio compares the two models' code.
    """
    x, y = _first_training_batch()
    contenders = _contenders(x, y)
    times = _time_steps(b, contenders)
    _ours_and_baseline(b, tuple(x.shape), contenders, times)
    _beside(b, times)


def _ours_and_baseline(b: Bench, shape: tuple, contenders: dict, times: dict[str, list[float]]) -> None:
    """Ours against the baseline (x-transformers with its default attention), and the baseline's own row."""
    from whole_transformer.model import count_parameters  # lazy: torch

    med = {k: ms(median(v)) for k, v in times.items()}
    n = len(times["ours"])
    base = med["xt-flash=False"]
    ratio = base / med["ours"]

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
            note=f"x {shape}; train()'s step: logits_at + cross-entropy, zero_grad, backward, Adam ({FUSED}); "
            f"{count_parameters(contenders['ours'][0]):,} parameters; 1 torch thread; {_spread(times, 'ours')}",
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
            f"attention (attn_flash=False); loss_fn over all logits; Adam ({FUSED}); 1 torch thread; "
            f"{_spread(times, 'xt-flash=False')}",
        )
    )


def _spread(times: dict[str, list[float]], k: str) -> str:
    return f"p90 {ms(p90(times[k])):.1f} ms"


def _beside(b: Bench, times: dict[str, list[float]]) -> None:
    """Shown beside the ratio: x-transformers with PyTorch's fused attention, and ours on 2 threads."""
    med = {k: ms(median(v)) for k, v in times.items()}
    n, base = len(times["ours"]), med["xt-flash=False"]
    rf = med["xt-flash=True"] / med["ours"]
    b.add(
        Row(
            group="train-step",
            item="training step, x-transformers with attn_flash=True",
            value=med["xt-flash=True"],
            unit="ms",
            runs=n,
            baseline=f"ours {faster(rf)}",
            note=f"PyTorch scaled_dot_product_attention; 1 torch thread; {_spread(times, 'xt-flash=True')}",
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
            note="torch.set_num_threads(2), for comparison with the course's one thread; "
            + _spread(times, "ours-2-threads"),
        )
    )


GROUP = Group(
    "train-step",
    "training step (batch 64, default model) vs x-transformers",
    bench_train_step,
    how="- **training step**: the first batch of the default run (64 numbers in the seeded order, trimmed to its "
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
)
