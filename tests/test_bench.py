"""Smoke test of the benchmark: `benchmarks/bench.py --quick` writes a results table with every row.

Timings are not asserted (speed goals are checked by `make bench`, on a quiet machine); this checks
that every item a user waits for has its row, that each row holds either a measured median with its
pass/miss, or says why it has none ("not available: …", "skipped: …"), that nothing crashed, and
that the machine is described. The quick mode runs each item once, with the smallest workloads.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks" / "bench.py"
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bench")]


def load_bench():
    spec = importlib.util.spec_from_file_location("wt_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["wt_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.split("## Machine")[0].splitlines():
        if line.startswith("| ") and not line.startswith("| group") and not line.startswith("|---"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
    return rows


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "results.md"
    done = subprocess.run([sys.executable, str(BENCH), "--quick", "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert out.exists(), f"no results written:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done, out.read_text(encoding="utf-8")


def test_quick_run_writes_every_row(quick_run):
    done, text = quick_run
    bench = load_bench()
    rows = table_rows(text)
    assert rows, text
    assert all(len(r) == 8 for r in rows), [r for r in rows if len(r) != 8]
    items = {r[1]: r for r in rows}
    groups = {r[0] for r in rows}
    assert groups == set(bench.GROUPS), f"groups without a row: {set(bench.GROUPS) - groups}"

    expected = ["training step, batch 64, default model (ours)", "training step, ours on 2 torch threads",
                "training step, x-transformers with attn_flash=True", "full training, 60 epochs (wall)",
                "epochs to 100/100 held out", "read all 1,000 numbers, batched (read_numbers)",
                "read all 1,000 numbers, one at a time (greedy_decode_slow, baseline)",
                "training_lab: redraw after one epoch (chart, table, status)"]
    expected += [f"{c.lab}: {c.change}" for c in bench.LAB_CHANGES]
    expected += [f"{name[:2]} {how}" for name in bench.NOTEBOOKS for how in ("in a fresh kernel",
                                                                               "under autograding")]
    missing = [e for e in expected if e not in items]
    assert not missing, f"rows missing: {missing}\n{text}"
    assert any(i.startswith("training step, x-transformers") and "(baseline)" in i for i in items)
    assert any(i.startswith("training_lab: Train button") for i in items)
    assert any(r[0] == "startup" for r in rows) and any(r[0] == "autograde" for r in rows)

    for _group, item, median, runs, target, result, _baseline, note in rows:
        if median.startswith(("not available:", "skipped:")):
            assert result == "—" and len(median.split(":", 1)[1].strip()) > 5, (item, median)
            continue
        assert not median.startswith("error"), f"{item}: {median}"
        if median == "—":  # measured, but nothing to report (e.g. never reached 100/100)
            assert note, item
            continue
        assert re.fullmatch(r"[\d.]+ (ms|s|epochs)", median), (item, median)
        assert int(runs) >= 1, item
        assert result in ({"pass", "**MISS**"} if target != "—" else {"—"}), (item, target, result)

    # the core figures are measured, not left out, even in --quick mode
    for key in ("training step, batch 64, default model (ours)", "full training, 60 epochs (wall)",
                "read all 1,000 numbers, batched (read_numbers)"):
        assert re.fullmatch(r"[\d.]+ m?s", items[key][2]), items[key]
        assert items[key][5] in ("pass", "**MISS**")
    assert "faster than x-transformers" in items["training step, batch 64, default model (ours)"][6]
    assert "faster than one at a time" in items["read all 1,000 numbers, batched (read_numbers)"][6]
    assert done.returncode == 0, f"bench.py exited {done.returncode}:\n{done.stderr[-3000:]}"


def test_machine_is_described(quick_run):
    _, text = quick_run
    machine = text.split("## Machine")[1]
    for key in ("| CPU |", "| cores |", "| Python |", "| torch |", "| numpy |", "| date |", "| load average"):
        assert key in machine, key
    assert "x-transformers" in machine


def test_bad_arguments_are_refused():
    done = subprocess.run([sys.executable, str(BENCH), "--only", "nonsense"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "unknown group" in done.stderr and "train-step" in done.stderr
    listed = subprocess.run([sys.executable, str(BENCH), "--list"], cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0 and "autograde" in listed.stdout
