"""The benchmark: `benchmarks/bench.py --quick` writes a results table with every row, and the
figures the project shows are those of results.md.

Timings are not asserted (speed goals are checked by `make bench`, on a quiet machine); this checks
that every item a user waits for has its row, that each row holds either a measured median with its
pass/miss, or says why it has none ("not available: …", "skipped: …"), that nothing crashed, and
that the machine is described. The quick mode runs each item once, with the smallest workloads;
the autograde and scale groups really run in it (one submission, a class of 2, one merge into each
gradebook), and their rows must be numbers. The committed results.md must name the run of every
row, and the README's speed table must be the one generated from it.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.checkout import NOTEBOOKS
from benchmarks.cli import GROUPS
from benchmarks.labs import LAB_CHANGES
from benchmarks.readme import README_BEGIN, README_END, readme_table
from benchmarks.results_md import KEPT, RESULTS, RunInfo, keep_rows, read_machine, read_rows, write_results
from benchmarks.rows import QUICK_CLASS_SIZE, Bench, Row
from benchmarks.scale_study import scale_study
from benchmarks.service import QUICK_BURST, QUICK_BURST_SECONDS

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks" / "bench.py"
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bench")]


def table_rows(text: str) -> list[list[str]]:
    """The rows of the results table (the first table; the scale study's and the machine's come after it)."""
    rows = []
    for line in text.split("## Scale study")[0].split("## Machine")[0].splitlines():
        if line.startswith("| ") and not line.startswith("| group") and not line.startswith("|---"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
    return rows


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "results.md"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert out.exists(), f"no results written:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done, out.read_text(encoding="utf-8")


def test_quick_run_writes_every_row(quick_run):
    done, text = quick_run
    rows = table_rows(text)
    assert rows, text
    assert all(len(r) == 8 for r in rows), [r for r in rows if len(r) != 8]
    items = {r[1]: r for r in rows}
    groups = {r[0] for r in rows}
    assert groups == set(GROUPS), f"groups without a row: {set(GROUPS) - groups}"

    expected = [
        "training step, batch 64, default model (ours)",
        "training step, ours on 2 torch threads",
        "training step, x-transformers with attn_flash=True",
        "full training, 60 epochs (wall)",
        "epochs to 100/100 held out",
        "read all 1,000 numbers, batched (read_numbers)",
        "read all 1,000 numbers, one at a time (greedy_decode_slow, baseline)",
        "read all 1,000 numbers, batched, re-reading every row (no KV cache)",
        "training_lab: redraw after one epoch (chart, table, status)",
    ]
    expected += [f"{c.lab}: {c.change}" for c in LAB_CHANGES]
    expected += [f"{name[:2]} {how}" for name in NOTEBOOKS for how in ("in a fresh kernel", "under autograding")]
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
        assert re.fullmatch(r"[\d.]+ (ms|s|epochs|×)", median), (item, median)
        assert int(runs) >= 1, item
        assert result in ({"pass", "**MISS**"} if target != "—" else {"—"}), (item, target, result)

    # the core figures are measured, not left out, even in --quick mode
    for key in (
        "training step, batch 64, default model (ours)",
        "full training, 60 epochs (wall)",
        "read all 1,000 numbers, batched (read_numbers)",
    ):
        assert re.fullmatch(r"[\d.]+ m?s", items[key][2]), items[key]
        assert items[key][5] in ("pass", "**MISS**")
    # the ratios are measured and written; how large they are is the table's pass or MISS, not this test's
    assert re.search(
        r"[\d.]+× (faster|slower) than x-transformers", items["training step, batch 64, default model (ours)"][6]
    )
    assert re.search(
        r"[\d.]+× (faster|slower) than one at a time", items["read all 1,000 numbers, batched (read_numbers)"][6]
    )
    assert done.returncode == 0, f"bench.py exited {done.returncode}:\n{done.stderr[-3000:]}"


def test_quick_autograde_and_scale_really_run(quick_run):
    """The code behind the headline grading figures runs in --quick: its rows are numbers, not skip rows."""
    from whole_transformer.course.sandbox.bubblewrap import sandbox_status

    _, text = quick_run
    rows = table_rows(text)
    skipped = [r for r in rows if r[0] in ("autograde", "scale") and r[2].startswith(("skipped", "error"))]
    assert not skipped, skipped
    items = {r[1]: r for r in rows}
    one = items["one complete submission (4 notebooks), JOBS=1, headless labs, warm kernels (after)"]
    if not sandbox_status().ok:
        pytest.fail(f"the autograde group needs the sandbox: {sandbox_status().message()}")
    assert re.fullmatch(r"[\d.]+ s", one[2]) and one[3] == "1" and one[5] in ("pass", "**MISS**"), one
    score = re.search(r"scored ([\d.]+)/([\d.]+)", one[7])
    assert score and score.group(1) == score.group(2) and float(score.group(2)) > 0, one  # full marks
    for way in ("JOBS=2", "2 Dask workers"):
        row = items[f"a class of {QUICK_CLASS_SIZE}, {way}"]
        assert re.fullmatch(r"[\d.]+ s", row[2]) and row[3] == "1", row
    ratio = items["students/min per worker core: 2 Dask workers ÷ JOBS=2"]
    assert re.fullmatch(r"[\d.]+ ×", ratio[2]) and ratio[5] in ("pass", "**MISS**"), ratio
    merge = items["merge one graded student into SQLite (gradebook.db)"]
    assert re.fullmatch(r"[\d.]+ ms", merge[2]) and merge[3] == "1", merge
    from simclass.pgcluster import server_bin

    pg = items["merge one graded student into PostgreSQL"]
    if server_bin() is None:
        assert pg[2].startswith("not available: PostgreSQL is not installed"), pg
    else:
        assert re.fullmatch(r"[\d.]+ ms", pg[2]) and pg[3] == "1", pg
    dask = items["Dask per-task overhead (submit → result, one task at a time)"]
    assert re.fullmatch(r"[\d.]+ ms", dask[2]) and int(dask[3]) >= 1, dask
    study = text.split("## Scale study")[1].split("## Machine")[0]
    assert f"the class of {QUICK_CLASS_SIZE} was graded with JOBS=2, ÷ {QUICK_CLASS_SIZE}" in study, study
    sizes = re.search(
        r"the student's files \((\d+) kB.*the assignment \((\d+) kB.*the scores \((\d+) kB.*"
        r"writes (\d+) kB per student.*at 128 cores, ([\d.]+) students a second, ([\d.]+) MB/s",
        study,
        re.S,
    )
    assert sizes, study
    assert all(float(x) > 0 for x in sizes.groups()), sizes.groups()


def test_quick_service_really_runs(quick_run):
    """The service group runs in --quick (one idle submission against the baseline, a burst of 2 each way):
    its rows are numbers, the CPU ratio is judged against its target."""
    _, text = quick_run
    rows = [r for r in table_rows(text) if r[0] == "service"]
    items = {r[1]: r for r in rows}
    assert not [r for r in rows if r[2].startswith(("skipped", "error", "not available"))], rows
    idle = items["idle: one complete submission, nbgrader submit → feedback available"]
    assert re.fullmatch(r"[\d.]+ s", idle[2]) and idle[3] == "1" and idle[5] in ("pass", "**MISS**"), idle
    before = items["CPU per complete submission, today's way: autograde --jobs 1 on one student (baseline)"]
    after = items["CPU per complete submission, graded by the running service"]
    assert re.fullmatch(r"[\d.]+ s", before[2]) and re.fullmatch(r"[\d.]+ s", after[2]), (before, after)
    assert after[5] in ("pass", "**MISS**") and re.fullmatch(r"[\d.]+× today's way", after[6]), after
    for way in ("2 local workers", "2 Dask workers"):
        for stat in ("p50", "p95", "max"):
            row = items[
                f"burst of {QUICK_BURST} in {QUICK_BURST_SECONDS:g} s, {way}: submit → feedback available, {stat}"
            ]
            assert re.fullmatch(r"[\d.]+ s", row[2]) and row[3] == str(QUICK_BURST), row


def test_machine_is_described(quick_run):
    _, text = quick_run
    machine = text.split("## Machine")[1]
    for key in ("| CPU |", "| cores |", "| Python |", "| torch |", "| numpy |", "| date |", "| load average"):
        assert key in machine, key
    assert "x-transformers" in machine


def test_bad_arguments_are_refused():
    done = subprocess.run(
        [sys.executable, str(BENCH), "--only", "nonsense"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "unknown group" in done.stderr and "train-step" in done.stderr
    listed = subprocess.run(
        [sys.executable, str(BENCH), "--list"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0 and "autograde" in listed.stdout


# ------------------------------------------------------------------------------------ figures shown
def test_the_readme_speed_table_is_results_md():
    """README.md's "How fast" table is the one bench.py generates from the committed results.md."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert README_BEGIN in readme and README_END in readme
    shown = readme.split(README_BEGIN, 1)[1].split(README_END, 1)[0].strip("\n")
    want = "\n".join(readme_table(read_rows(RESULTS), read_machine(RESULTS)))
    assert shown == want, "run `.venv/bin/python benchmarks/bench.py --readme` (or `make bench`)"
    table = [ln for ln in shown.splitlines() if ln.startswith("| ") and not ln.startswith("| what")]
    assert len(table) >= 8 and all(ln.rstrip(" |").rsplit("| ", 1)[1] in ("pass", "**MISS**", "—") for ln in table), (
        table
    )


def test_the_committed_results_name_the_run_of_every_row():
    text = RESULTS.read_text(encoding="utf-8")
    machine = read_machine(RESULTS)
    assert re.fullmatch(r"[0-9a-f]{7,}", machine["commit"]), machine  # a committed state, no uncommitted changes
    assert "--quick" not in text.split("\n\n")[1]
    rows = read_rows(RESULTS)
    assert {r.group for r in rows} == set(GROUPS)
    for r in rows:
        assert "kept" not in r.note or KEPT.search(r.note), r.item
        assert not r.text.startswith(("skipped", "error")), (r.item, r.text)
    if not any(KEPT.search(r.note) for r in rows):
        assert f"Every row was measured in this run, on commit {machine['commit']}." in text


def test_a_kept_row_names_its_run_or_is_dropped(tmp_path):
    old = tmp_path / "results.md"
    b = Bench(False)
    b.rows = [
        Row(
            group="train-60",
            item="full training, 60 epochs (wall)",
            value=5.0,
            unit="s",
            runs=3,
            target="≤ 8 s",
            ok=True,
            note="measured",
        ),
        Row(
            group="labs",
            item="decode_lab: Next step button",
            value=0.1,
            unit="ms",
            runs=30,
            target="≤ 30 ms",
            ok=True,
            note="p90 0.1 ms; kept from the run of 2026-11-30 10:00 (commit abc1234, load average "
            "before 1.0 / 1.0 / 1.0; after 2.0 / 2.0 / 2.0)",
        ),
        Row(
            group="startup",
            item="fresh kernel to the first lab on screen",
            value=0.9,
            unit="s",
            runs=3,
            target="≤ 3 s",
            ok=True,
            note="kept from the previous run",
        ),
    ]
    run = RunInfo(
        [("commit", "def5678")], datetime.datetime(2026, 12, 1, 9, 30), "0.5 / 0.5 / 0.5", "1.5 / 1.5 / 1.5", 10.0
    )
    write_results(old, b, run)
    kept = {r.item: r for r in keep_rows(old, ran={"read-1000"})}
    assert kept["full training, 60 epochs (wall)"].note == (
        "measured; kept from the run of 2026-12-01 09:30 (commit def5678, load average before 0.5 / 0.5 / 0.5; "
        "after 1.5 / 1.5 / 1.5)"
    )
    assert "commit abc1234" in kept["decode_lab: Next step button"].note  # its own run, not the last one
    assert "fresh kernel to the first lab on screen" not in kept  # kept once before, by no run it can name
    assert keep_rows(old, ran={"train-60", "labs", "startup"}) == []


def test_the_scale_study_prints_what_was_measured():
    facts = {
        "submission_s": 9.0,
        "submission_grade_s": 7.0,
        "submission_cpu_s": 8.0,
        "cpu_of_class": 7,
        "merge_sqlite_s": 0.07,
        "merge_sqlite_cpu_s": 0.06,
        "dask_task_s": 0.02,
        "job_bytes": 71_234,
        "pack_bytes": 347_000,
        "result_bytes": 510_000,
        "written_bytes": 1_200_000,
    }
    text = "\n".join(scale_study(facts, "1.0 / 1.0 / 1.0"))
    assert "the class of 7 was graded with JOBS=2, ÷ 7" in text and "class of 25" not in text
    assert "the student's files (71 kB" in text and "the assignment (347 kB" in text and "(510 kB)" in text
    assert "writes 1.2 MB per student" in text
    rate = min(128 / 8.02, 1 / 0.06)
    assert f"at 128 cores, {rate:.1f} students a second, {rate * 1.2:.1f} MB/s" in text
    other = "\n".join(scale_study({**facts, "job_bytes": 12_000, "cpu_of_class": 3}, "1.0 / 1.0 / 1.0"))
    assert "the student's files (12 kB" in other and "÷ 3" in other
