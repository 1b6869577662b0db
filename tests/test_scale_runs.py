"""The stored scale study (whole_transformer/data/scale_runs.json) can be made again: one of its runs,
trained afresh by the code that wrote it, gives the stored figures.

The run chosen is std 1 × √d_model, seed 1: the one with the fewest held-out numbers right (69 of
100). What is set before training (the setting, the seed, the epochs, the lengths of the rows at
initialisation) is the same on any machine and is compared exactly. What training reaches is not: torch
and its BLAS pick their kernels by the processor (AVX512 or AVX2, and more than that: on one AVX512
processor this run lands on 69, on another with the same torch and ``ATEN_CPU_CAPABILITY`` on 76), and 60
epochs turn last-bit differences into other models. So the trained figures are compared for what the
course says of them (a run that still gets numbers wrong, near the stored count and loss), never to their
last bits: a committed course tests the same on any machine.
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

#: the figures set before training: the same on any machine
FIGURES = ("std", "factor", "seed", "epochs", "token_length", "position_length", "ratio", "held_out_total")


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
    # what training reaches, as the course tells it: a run that misses numbers, near the stored figures
    assert again["held_out"] < 100 and abs(again["held_out"] - stored["held_out"]) <= 15, (again, stored)
    assert stored["final_loss"] / 3 <= again["final_loss"] <= 3 * stored["final_loss"], (again, stored)
    assert len(again["mistakes"]) == min(3, 100 - again["held_out"]), again  # its first three misreadings


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
