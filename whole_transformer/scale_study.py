"""Why × √d_model? Real training runs that compare the token table's start size and the factor.

Before the first block, every token row is added to a position row. A position row is a row of
sinusoids: 32 (sin, cos) pairs, each pair of length 1, so every position row is √32 ≈ 5.66 long.
A token row starts as ``d_model`` random numbers of size ``std``, so it is about std · √d_model
long, times √d_model more if the factor is on. The study trains the default model (60 epochs,
the usual seed-fixed split) for each setting below and several seeds, and stores for every run:

- the starting lengths (mean over the 42 token rows, mean over the 8 position rows the task uses,
  both measured on the freshly initialised model, the factor included), and their ratio;
- the held-out accuracy after training (greedy decoding of the 100 held-out numbers).

The settings come in pairs with the *same* starting ratio, one using the factor and one not
(std 1/8 × √64 and std 1 without it; std 1 × √64 and std 8 without; std 1/64 × √64 and std 1/8
without): if the factor itself mattered, the two of a pair would differ; if only the starting
ratio mattered, they would agree.

``python -m whole_transformer.scale_study`` reruns everything (21 runs of ~5 s each on an idle
2-core machine) and
rewrites ``data/scale_runs.json``; ``load_study()`` reads the stored file. Importing this module
trains nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .task import split

DATA_FILE = Path(__file__).parent / "data" / "scale_runs.json"
D_MODEL = 64
LONGEST_INPUT = 8  # the longest x of the task: positions 0…7 are the ones that are ever used


@dataclass(frozen=True)
class Setting:
    """One way to start the token table: its std, and whether rows are multiplied by √d_model."""

    std: float
    factor: bool

    @property
    def label(self) -> str:
        return f"std {std_label(self.std)}, {'× √d_model' if self.factor else 'no factor'}"

    def key(self) -> str:
        return f"{self.std:.6g}|{int(self.factor)}"


def std_label(std: float, d_model: int = D_MODEL) -> str:
    """1/√64 → '1/8', 1/64 → '1/64', 1 → '1': the stds of the study read as fractions."""
    if std >= 1:
        return f"{std:g}"
    inv = 1 / std
    if abs(inv - round(inv)) < 1e-9:
        return f"1/{round(inv)}"
    return f"{std:.3g}"


SETTINGS: tuple[Setting, ...] = (
    # pairs with the same starting ratio, one with the factor and one without
    Setting(1 / 8, True),  # the course's model: std 1/√64, × √64 → token rows ≈ 8 long, ratio ≈ 1.4
    Setting(1.0, False),  # ≈ 8 long too, without the factor
    Setting(1.0, True),  # ≈ 64 long, ratio ≈ 11
    Setting(8.0, False),  # ≈ 64 long too, without the factor
    Setting(1 / 64, True),  # ≈ 1 long, ratio ≈ 0.18
    Setting(1 / 8, False),  # ≈ 1 long too, without the factor
    Setting(1 / 64, False),  # ≈ 0.125 long, ratio ≈ 0.02
)
SEEDS = (0, 1, 2)
EPOCHS = 60


def expected_token_length(std: float, factor: bool, d_model: int = D_MODEL) -> float:
    """About how long a freshly drawn token row is: std · √d_model, times √d_model with the factor."""
    return std * math.sqrt(d_model) * (math.sqrt(d_model) if factor else 1.0)


def position_length(d_model: int = D_MODEL, length: int = LONGEST_INPUT) -> float:
    """Mean length of the position rows 0…length-1 (every one is √(d_model / 2) for even d_model)."""
    from .model import sinusoidal_positions  # lazy: torch, which reading the stored runs does not need

    pe = sinusoidal_positions(length, d_model).double().numpy()
    return float(np.linalg.norm(pe, axis=1).mean())


def token_lengths(std: float, factor: bool, d_model: int = D_MODEL, seed: int = 0, vocab: int = 42) -> np.ndarray:
    """Lengths of 42 token rows as they enter the first block (factor included), for a NumPy draw.

    A quick look at any std without torch; the study and the scale lab measure the models the runs
    start from (``start_lengths``).
    """
    if not (isinstance(std, (int, float)) and std > 0 and math.isfinite(std)):
        raise ValueError(f"std must be a positive number, got {std!r}")
    rows = np.random.default_rng(seed).normal(0.0, std, size=(vocab, d_model))
    if factor:
        rows = rows * math.sqrt(d_model)
    return np.linalg.norm(rows, axis=1)


def start_lengths(std: float, factor: bool, seed: int) -> tuple[np.ndarray, float]:
    """(the lengths of the 42 token rows as they enter the first block, the mean position-row length) of
    exactly the model ``train`` starts from with this seed (it seeds torch the same way). The study stores
    their means; the scale lab draws them: one computation for both. The caller's torch RNG is left as it was."""
    import torch

    from .model import ModelConfig, Transformer  # lazy: torch, which reading the stored runs does not need

    mc = ModelConfig(emb_std=std, scale_embedding=factor)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        fresh = Transformer(mc)
        tok = fresh.tok(torch.arange(mc.vocab_size)) * (math.sqrt(mc.d_model) if mc.scale_embedding else 1.0)
        return tok.double().norm(dim=1).numpy(), float(fresh.pos[:LONGEST_INPUT].norm(dim=1).mean())


def _run_one(setting: Setting, seed: int, epochs: int) -> dict:
    # lazy: torch (decode, model, train), which reading the stored runs does not need
    from .decode import evaluate
    from .model import ModelConfig
    from .train import TrainConfig, train

    mc = ModelConfig(emb_std=setting.std, scale_embedding=setting.factor)
    rows, pos_len = start_lengths(setting.std, setting.factor, seed)
    token_len = float(rows.mean())
    start = time.perf_counter()
    run = train(mc, TrainConfig(epochs=epochs, seed=seed), evaluate_every=epochs)
    seconds = time.perf_counter() - start
    _, held_out = split()
    result = evaluate(run.model, held_out)
    return {
        "std": setting.std,
        "factor": setting.factor,
        "seed": seed,
        "epochs": epochs,
        "token_length": round(token_len, 4),
        "position_length": round(pos_len, 4),
        "ratio": round(token_len / pos_len, 4),
        "held_out": result.correct,
        "held_out_total": result.total,
        "final_loss": round(run.history[-1].loss, 5),
        "seconds": round(seconds, 2),
        "mistakes": [[n, said] for n, said in result.mistakes[:3]],
    }


def run_study(settings=SETTINGS, seeds=SEEDS, epochs: int = EPOCHS, progress: bool = True) -> dict:
    """Train every setting × seed; returns the study as a dict (what ``save_study`` writes)."""
    import torch

    runs = []
    start = time.perf_counter()
    for setting in settings:
        for seed in seeds:
            r = _run_one(setting, seed, epochs)
            runs.append(r)
            if progress:
                print(
                    f"{setting.label:28s} seed {seed}: token {r['token_length']:7.2f}  position "
                    f"{r['position_length']:.2f}  held out {r['held_out']}/{r['held_out_total']}"
                    f"  ({r['seconds']:.1f} s)",
                    flush=True,
                )
    return {
        "description": "Held-out accuracy of the default model (d_model 64, 4 heads, 2 blocks, d_ff 128) "
        "for token-table init std × use of the √d_model factor; lengths measured at initialisation.",
        "d_model": D_MODEL,
        "epochs": epochs,
        "seeds": list(seeds),
        "torch_version": str(torch.__version__),
        # the kernels torch chose for this CPU: training is the same to the bit only with the same ones
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "total_seconds": round(time.perf_counter() - start, 1),
        "runs": runs,
    }


def save_study(study: dict, path: Path = DATA_FILE) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(study, indent=1) + "\n")
    return path


def load_study(path: Path = DATA_FILE) -> dict:
    """The stored study; raises ValueError saying how to make it if the file is missing."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"no scale study at {path}: run `python -m whole_transformer.scale_study`")
    return json.loads(path.read_text())


@dataclass(frozen=True)
class Summary:
    """What the runs of one setting show."""

    setting: Setting
    token_length: float  # mean over seeds of the mean starting token-row length
    position_length: float
    ratio: float
    held_out: tuple[int, ...]  # one per seed, out of `total`
    total: int

    @property
    def mean_accuracy(self) -> float:
        return sum(self.held_out) / (len(self.held_out) * self.total)


def summarize(study: dict | None = None) -> list[Summary]:
    """One Summary per setting, in the order the runs were stored."""
    study = study if study is not None else load_study()
    groups: dict[str, list[dict]] = {}
    for r in study["runs"]:
        groups.setdefault(Setting(r["std"], r["factor"]).key(), []).append(r)
    out = []
    for rs in groups.values():
        out.append(
            Summary(
                Setting(rs[0]["std"], rs[0]["factor"]),
                float(np.mean([r["token_length"] for r in rs])),
                float(np.mean([r["position_length"] for r in rs])),
                float(np.mean([r["ratio"] for r in rs])),
                tuple(int(r["held_out"]) for r in rs),
                int(rs[0]["held_out_total"]),
            )
        )
    return out


def table(study: dict | None = None) -> str:
    """The study as a Markdown table, sorted by starting ratio."""
    lines = [
        "| setting | token row | position row | ratio | held out per seed | mean |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for s in sorted(summarize(study), key=lambda s: s.ratio):
        per_seed = ", ".join(str(n) for n in s.held_out)
        lines.append(
            f"| {s.setting.label} | {s.token_length:.2f} | {s.position_length:.2f} | {s.ratio:.2f} "
            f"| {per_seed} (of {s.total}) | {100 * s.mean_accuracy:.0f} % |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m whole_transformer.scale_study", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=len(SEEDS), help="number of seeds per setting (0, 1, …)")
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("--out", type=Path, default=DATA_FILE)
    args = p.parse_args(argv)
    if args.seeds < 1 or args.epochs < 1:
        print("error: --seeds and --epochs must be at least 1", file=sys.stderr)
        return 2
    study = run_study(seeds=tuple(range(args.seeds)), epochs=args.epochs)
    print(f"wrote {save_study(study, args.out)} in {study['total_seconds']:.0f} s")
    print(table(study))
    return 0


if __name__ == "__main__":
    sys.exit(main())
