"""The command line of benchmarks/bench.py and a run: the groups in their order, each run in turn (a group that
crashes is an error row, the others go on), results.md written, then the README's table from it."""

from __future__ import annotations

import argparse
import datetime
import sys
import time
import traceback
from pathlib import Path

from benchmarks import autograde, labs, notebooks, read_1000, scale, service, train_60, train_step
from benchmarks.machine import cpu_seconds, loadavg, machine
from benchmarks.readme import README, update_readme
from benchmarks.results_md import RESULTS, RunInfo, keep_rows, write_results
from benchmarks.rows import CLASS_SIZE, QUICK_CLASS_SIZE, Bench, Group, Row, Skipped

#: the groups by name, in the order they run, are listed (--list) and stand in results.md
GROUPS: dict[str, Group] = {
    g.name: g
    for g in (
        train_step.GROUP,
        train_60.GROUP,
        read_1000.GROUP,
        labs.GROUP,
        notebooks.NOTEBOOKS_GROUP,
        notebooks.STARTUP_GROUP,
        autograde.GROUP,
        scale.GROUP,
        service.GROUP,
    )
}


def parse(argv, description: str = ""):
    p = argparse.ArgumentParser(prog="benchmarks/bench.py", description=description)
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


def refused(args) -> str:
    """Why the arguments cannot make a run ("" when they can)."""
    if args.keep and not args.only:
        return "--keep needs --only (a whole run keeps nothing)"
    unknown = sorted(set(args.only or []).union(args.skip) - set(GROUPS))
    if unknown:
        return f"unknown group(s) {unknown}: use some of {list(GROUPS)}"
    if args.class_size is not None and args.class_size < 1:
        return f"--class-size must be 1 or more, got {args.class_size}"
    return ""


def main(argv=None, description: str = "") -> int:
    args = parse(argv, description)
    if args.list:
        for name, g in GROUPS.items():
            print(f"{name:12} {g.title}")
        return 0
    if args.readme:
        if not args.out.exists():
            print(f"error: no results at {args.out}: run `make bench` first", file=sys.stderr)
            return 2
        print(f"{README}: {'rewritten' if update_readme(README, args.out) else 'already up to date'}")
        return 0
    if why := refused(args):
        print(f"error: {why}", file=sys.stderr)
        return 2
    started, t0, load_before = datetime.datetime.now(), time.perf_counter(), loadavg()
    b = Bench(args.quick, args.class_size)
    info = machine()  # the commit measured is the one the run starts from
    group_seconds = run_groups(b, [n for n in GROUPS if not (args.only and n not in args.only) and n not in args.skip])
    wall = time.perf_counter() - t0
    if args.keep and args.out.exists():  # rows of the groups not run now, from the previous results
        kept = keep_rows(args.out, {r.group for r in b.rows})
        b.rows = sorted(kept + b.rows, key=lambda r: list(GROUPS).index(r.group) if r.group in GROUPS else 99)
    how = [g.how for g in GROUPS.values() if g.how]
    write_results(args.out, b, RunInfo(info, started, load_before, loadavg(), wall, group_seconds, args.note, how))
    if args.out.resolve() == RESULTS.resolve() and not args.quick:  # the README's figures follow results.md
        print(f"{README}: {'rewritten' if update_readme(README, args.out) else 'already up to date'}")
    misses = [r for r in b.rows if r.ok is False and not r.status]
    errors = [r for r in b.rows if r.status.startswith("error")]
    print(f"wrote {args.out} in {wall:.0f} s: {len(b.rows)} rows, {len(misses)} missed, {len(errors)} errors")
    return 1 if errors else 0


def run_groups(b: Bench, names: list[str]) -> dict[str, tuple[float, float, str]]:
    """Each group in turn; its (wall seconds, CPU seconds, load average as it started)."""
    group_seconds: dict[str, tuple[float, float, str]] = {}
    for name in names:
        title, fn = GROUPS[name].title, GROUPS[name].run
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
    return group_seconds
