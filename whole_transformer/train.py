"""Training: batches of 64, Adam at lr 1e-3, cross-entropy that skips PAD, 60 epochs.

Run ``python -m whole_transformer.train`` to train the default model and print its held-out
score; ``--help`` lists the ablations (token-table std, no √d_model factor, no causal mask)
and the copy task. ``--write-checkpoints`` rewrites the shipped checkpoints (after 2 epochs,
after 60, and the tiny microscope model); it asks before replacing files unless ``--force``.
Importing this module trains nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from .decode import evaluate
from .fast import logits_at, single_thread
from .model import ModelConfig, Transformer
from .task import PAD, make_batch, split

CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"
MICROSCOPE_CONFIG = ModelConfig(d_model=6, n_heads=1, n_layers=1, d_ff=12)


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 60
    batch_size: int = 64
    lr: float = 1e-3
    seed: int = 0
    task: str = "read"  # or "copy", the debugging habit

    def __post_init__(self):
        if self.task not in ("read", "copy"):
            raise ValueError(f"unknown task {self.task!r}: use 'read' or 'copy'")
        for name in ("epochs", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "epochs" else 1):
                least = 0 if name == "epochs" else 1
                raise ValueError(f"{name} must be a whole number ({least} or more), got {v!r}")
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")


@dataclass
class EpochLog:
    epoch: int
    loss: float  # mean training loss over the epoch's counted targets
    held_out: float  # fraction of the held-out numbers read right (greedy)
    seconds: float
    held_out_loss: float = math.nan  # the same loss as `loss`, on the 100 held-out numbers, after the epoch


@dataclass
class Run:
    model: Transformer
    model_config: ModelConfig
    train_config: TrainConfig
    history: list[EpochLog] = field(default_factory=list)


def loss_fn(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the targets that are not PAD: (B, L, V), (B, L) → scalar."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=PAD)


def batch_loss(model: Transformer, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, int]:
    """The training loss of one batch and how many targets it counted.

    The same number as ``loss_fn(model(x), y)``, computing scores only where a target counts
    (see ``fast.logits_at``).
    """
    counts = y != PAD  # (B, L) the targets that count
    return F.cross_entropy(logits_at(model, x, counts), y[counts]), int(counts.sum())


@torch.no_grad()
def held_out_loss(model: Transformer, x: torch.Tensor, y: torch.Tensor) -> float:
    """The loss of the held-out numbers, all in one batch, with no dropout to switch off and no weight changed."""
    was_training = model.training
    model.eval()
    loss = batch_loss(model, x, y)[0].item()
    model.train(was_training)
    return loss


def train(
    model_config: ModelConfig | None = None,
    train_config: TrainConfig | None = None,
    *,
    callback: Callable[[EpochLog, Transformer], None] | None = None,
    progress: bool = False,
    snapshots: dict[int, Callable[[Run], None]] | None = None,
    evaluate_every: int = 1,
) -> Run:
    """Train a fresh model from the seed; returns the run with its per-epoch history.

    ``callback(log, model)`` is called after every epoch (the notebooks draw live plots with it);
    ``snapshots[epoch](run)`` after that epoch (the CLI writes checkpoints with it).
    """
    for name, value, kind in (("model_config", model_config, ModelConfig), ("train_config", train_config, TrainConfig)):
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"{name} must be a {kind.__name__} (or None for the default), got {type(value).__name__}")
    if isinstance(evaluate_every, bool) or not isinstance(evaluate_every, int) or evaluate_every < 0:
        raise ValueError(f"evaluate_every must be a whole number of epochs (0: never), got {evaluate_every!r}")
    with single_thread():  # see fast.py: faster here, and the same numbers on any machine
        return _train(
            model_config or ModelConfig(), train_config or TrainConfig(), callback, progress, snapshots, evaluate_every
        )


def _train(model_config, train_config, callback, progress, snapshots, evaluate_every) -> Run:
    torch.manual_seed(train_config.seed)
    model = Transformer(model_config)
    run = Run(model, model_config, train_config)
    # fused: the whole Adam update in one kernel, the same algorithm (4× less time than the default)
    opt = torch.optim.Adam(model.parameters(), lr=train_config.lr, fused=True)
    train_numbers, held_out = split()
    x_all, y_all = make_batch(train_numbers, train_config.task)
    x_held, y_held = make_batch(held_out, train_config.task)
    gen = torch.Generator().manual_seed(train_config.seed)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=train_config.epochs, desc=f"training ({train_config.task})", unit="epoch")
    for epoch in range(1, train_config.epochs + 1):
        start = time.perf_counter()
        model.train()
        order = torch.randperm(len(train_numbers), generator=gen)
        total, counted = 0.0, 0
        for i in range(0, len(order), train_config.batch_size):
            idx = order[i : i + train_config.batch_size]
            x, y = x_all[idx], y_all[idx]
            width = int((x != PAD).sum(1).max())  # trim the columns that are PAD in every row
            x, y = x[:, :width], y[:, :width]
            loss, n = batch_loss(model, x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item() * n
            counted += n
        acc = held_loss = float("nan")
        if evaluate_every and (epoch % evaluate_every == 0 or epoch == train_config.epochs):
            acc = evaluate(model, held_out, train_config.task).accuracy
            held_loss = held_out_loss(model, x_held, y_held)
        log = EpochLog(epoch, total / counted, acc, time.perf_counter() - start, held_loss)
        run.history.append(log)
        if bar is not None:
            bar.set_postfix(loss=f"{log.loss:.3f}", held_out="–" if math.isnan(acc) else f"{100 * acc:.0f}%")
            bar.update(1)
        if callback is not None:
            callback(log, model)
        if snapshots and epoch in snapshots:
            snapshots[epoch](run)
    if bar is not None:
        bar.close()
    model.eval()
    return run


def save_checkpoint(run: Run, path: str | Path, extra: dict | None = None) -> Path:
    """A small file with the weights, the model config, the training settings and the history (and ``extra``: plain
    names and numbers a caller keeps with it, such as the training lab's run and the name a student gave it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().clone() for k, v in run.model.state_dict().items()}
    torch.save(
        {
            "model_config": run.model_config.to_dict(),
            "train_config": asdict(run.train_config),
            "epochs_trained": len(run.history),
            "history": [asdict(h) for h in run.history],
            "state_dict": state,
            "torch_version": str(torch.__version__),
            **(extra or {}),
        },
        path,
    )
    return path


CHECKPOINTS = {"2": "read-2.pt", "60": "read-60.pt", "microscope": "microscope.pt"}


def checkpoint_path(name: str | int) -> Path:
    name = str(name)
    if name in CHECKPOINTS:
        return CHECKPOINT_DIR / CHECKPOINTS[name]
    path = Path(name)
    if path.suffix == ".pt":
        return path
    raise ValueError(f"unknown checkpoint {name!r}: use one of {sorted(CHECKPOINTS)} or a path to a .pt file")


def load_checkpoint(name: str | int = "60") -> tuple[Transformer, dict]:
    """Load a checkpoint by name ('2', '60', 'microscope') or path: (model in eval mode, metadata)."""
    path = checkpoint_path(name)
    if not path.exists():
        raise ValueError(f"no checkpoint at {path}: run `python -m whole_transformer.train --write-checkpoints`")
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model = Transformer(ModelConfig.from_dict(ckpt["model_config"]))
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    meta = {k: v for k, v in ckpt.items() if k != "state_dict"}
    return model, meta


def load_model(name: str | int = "60") -> Transformer:
    """The shipped model after 60 epochs (default), after 2 ('2'), or the tiny one ('microscope')."""
    return load_checkpoint(name)[0]


# The settings the shipped checkpoints were made with; `--write-checkpoints` uses them.
MAIN_RUN = TrainConfig(epochs=60, seed=0)
MICROSCOPE_RUN = TrainConfig(epochs=200, seed=4, lr=1e-2)  # seed 4: it reads all 1,000 numbers (seed 0: 993)


def write_checkpoints(out: str | Path = CHECKPOINT_DIR, progress: bool = True) -> list[Path]:
    """Train the main model (snapshots after 2 and 60 epochs) and the microscope model; save them."""
    if not isinstance(out, (str, Path)):  # before training, not at the first snapshot minutes later
        raise TypeError(f"out must be the folder to write the checkpoints to, got {type(out).__name__}")
    out = Path(out)
    written: list[Path] = []

    def snap(name):
        return lambda run: written.append(save_checkpoint(run, out / CHECKPOINTS[name]))

    train(ModelConfig(), MAIN_RUN, progress=progress, snapshots={2: snap("2"), 60: snap("60")})
    run = train(MICROSCOPE_CONFIG, MICROSCOPE_RUN, progress=progress, evaluate_every=MICROSCOPE_RUN.epochs)
    written.append(save_checkpoint(run, out / CHECKPOINTS["microscope"]))
    return written


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m whole_transformer.train", description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--task", choices=["read", "copy"], default="read")
    p.add_argument("--emb-std", type=float, default=None, help="token-table init std (default 1/√d_model)")
    p.add_argument("--no-scale", action="store_true", help="do not multiply token rows by √d_model")
    p.add_argument("--no-causal", action="store_true", help="train without the causal mask (ablation)")
    p.add_argument("--save", type=Path, default=None, help="write the trained model to this .pt file")
    p.add_argument("--write-checkpoints", action="store_true", help="rewrite the shipped checkpoints")
    p.add_argument("--out", type=Path, default=CHECKPOINT_DIR, help="folder for --write-checkpoints")
    p.add_argument("--force", action="store_true", help="replace existing files without asking")
    return p.parse_args(argv)


def _may_write(paths: list[Path], force: bool) -> bool:
    existing = [p for p in paths if p.exists()]
    if not existing or force:
        return True
    names = ", ".join(str(p) for p in existing)
    if not sys.stdin.isatty():
        print(f"refusing to replace {names}: pass --force to replace them, or --out/--save elsewhere", file=sys.stderr)
        return False
    return input(f"replace {names}? [y/N] ").strip().lower() in ("y", "yes")


def main(argv=None) -> int:
    args = _parse(argv)
    if args.write_checkpoints:
        if not _may_write([args.out / f for f in CHECKPOINTS.values()], args.force):
            return 1
        start = time.perf_counter()
        for path in write_checkpoints(args.out):
            print(f"wrote {path}")
        print(f"done in {time.perf_counter() - start:.1f} s")
        return 0
    try:
        model_config = ModelConfig(emb_std=args.emb_std, scale_embedding=not args.no_scale, causal=not args.no_causal)
        train_config = TrainConfig(epochs=args.epochs, seed=args.seed, lr=args.lr, task=args.task)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.save and not _may_write([args.save], args.force):
        return 1
    start = time.perf_counter()
    run = train(model_config, train_config, progress=True)
    seconds = time.perf_counter() - start
    _, held_out = split()
    result = evaluate(run.model, held_out, train_config.task)
    if run.history:
        print(f"{train_config.epochs} epochs in {seconds:.1f} s; final training loss {run.history[-1].loss:.4f}")
    print("held out:", result.report())
    if args.save:
        print(f"wrote {save_checkpoint(run, args.save)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
