"""The stored scale study (whole_transformer/data/scale_runs.json) can be made again: one of its runs,
trained afresh by the code that wrote it, gives the stored figures.

The run chosen is std 1 × √d_model, seed 1: the one with the fewest held-out numbers right (69 of
100), so a different model, a different seed or a changed training loop would not land on the same
count, loss and mistakes by chance. Training is seeded and runs on one torch thread, so the
figures are the same on every run with the stored torch version and the same CPU kernels: torch picks
its vectorised kernels by the CPU (AVX512, AVX2, ...), and the same run with AVX2 kernels lands on 75
of 100, not 69. The study stores the kernels it was made with, and the run is made again in a fresh
Python with torch told to use those (``ATEN_CPU_CAPABILITY``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from whole_transformer import scale_study

pytestmark = pytest.mark.slow

#: the figures that do not depend on the machine's speed (seconds do)
FIGURES = (
    "std",
    "factor",
    "seed",
    "epochs",
    "token_length",
    "position_length",
    "ratio",
    "held_out",
    "held_out_total",
    "final_loss",
    "mistakes",
)


def stored_run(std: float, factor: bool, seed: int) -> dict:
    study = scale_study.load_study()
    (run,) = [r for r in study["runs"] if (r["std"], r["factor"], r["seed"]) == (std, factor, seed)]
    return run


def test_one_stored_run_is_made_again():
    study = scale_study.load_study()
    if study["torch_version"] != torch.__version__:
        pytest.fail(
            f"the study was stored with torch {study['torch_version']}, this is {torch.__version__}: "
            "run `python -m whole_transformer.scale_study` to store it again with the pinned torch"
        )
    stored = stored_run(1.0, True, 1)
    assert stored["held_out"] < 100  # a run that gets some numbers wrong: the figures below are its own
    again = run_again(1.0, True, 1, study["epochs"], study["cpu_capability"])
    assert {k: again[k] for k in FIGURES} == {k: stored[k] for k in FIGURES}


def run_again(std: float, factor: bool, seed: int, epochs: int, capability: str) -> dict:
    """One run of the study trained afresh in a new Python whose torch uses ``capability``'s kernels."""
    program = (
        "import json, torch; from whole_transformer import scale_study as s; "
        f"r = s._run_one(s.Setting({std!r}, {factor!r}), {seed}, {epochs}); "
        "r['capability'] = torch.backends.cpu.get_cpu_capability(); print(json.dumps(r))"
    )
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability.lower()}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    again = json.loads(done.stdout.strip().splitlines()[-1])
    if again["capability"] != capability:
        pytest.fail(
            f"the study was stored with torch's {capability} kernels and this CPU runs {again['capability']} "
            "at most: run `python -m whole_transformer.scale_study` to store it again on this machine"
        )
    return again


def test_the_stored_study_has_every_setting_and_seed():
    study = scale_study.load_study()
    got = sorted((r["std"], r["factor"], r["seed"]) for r in study["runs"])
    want = sorted((s.std, s.factor, seed) for s in scale_study.SETTINGS for seed in scale_study.SEEDS)
    assert got == want
    assert study["epochs"] == scale_study.EPOCHS
