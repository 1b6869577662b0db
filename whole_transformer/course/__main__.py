"""Instructor commands: ``python -m whole_transformer.course <command>`` (the Makefile calls these).

    release                     release/whole-transformer/ from source/ (nbgrader generate_assignment)
    lecture                     notebooks/ (run, widget state saved) and notebooks/html/ (offline HTML)
    autograde [--jobs N]        grade submitted/<student>/whole-transformer/ in the sandbox
              [--scheduler tcp://HOST:8786]   ... on the workers of a Dask cluster instead
              [--force] [--student ID ...] [--no-sandbox]
    workers [--workers N]       a local Dask scheduler and N worker processes (Ctrl-C stops them)

The gradebook is gradebook.db, or the database DB_URL names (e.g. postgresql://grader@host/course).
    feedback                    feedback/<student>/whole-transformer/*.html, hidden tests removed
    grades                      grades.csv (nbgrader export) and grades-detail.csv
    handout [--dest DIR]        handout/: the students' repository (no answers, no hidden tests)
    hidden-tests [--write]      are source/'s hidden tests and their expected values up to date? (--write: make them so)
    check-data [--write]        is the visible checks' data (hashes of right and typical wrong results) up to date?
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "yes", "true", "on"}


def main(argv: list[str] | None = None) -> int:
    # nbgrader runs `alembic` from this environment when it creates a gradebook
    bindir = str(Path(sys.executable).parent)
    os.environ["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])

    p = argparse.ArgumentParser(prog="python -m whole_transformer.course", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", help="the course folder (default: the current folder)")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("release", help="build release/ from source/")
    lec = sub.add_parser("lecture", help="build notebooks/ and notebooks/html/ from source/")
    lec.add_argument("--no-execute", action="store_true", help="do not run the notebooks (quick check)")
    ag = sub.add_parser("autograde", help="grade every submission")
    ag.add_argument("--jobs", type=int, default=int(os.environ.get("JOBS", "1") or 1),
                    help="students graded at once (default 1)")
    ag.add_argument("--scheduler", default=os.environ.get("SCHEDULER") or None, metavar="ADDRESS",
                    help="grade on the workers of this Dask scheduler, e.g. tcp://HOST:8786 (also SCHEDULER=...)")
    ag.add_argument("--force", action="store_true", help="grade again students already graded")
    ag.add_argument("--student", action="append", help="grade only this student (repeatable)")
    ag.add_argument("--no-sandbox", action="store_true", default=_env_flag("NO_SANDBOX"),
                    help="run student code WITHOUT the sandbox (explicit opt-out; also NO_SANDBOX=1 or WT_SANDBOX=off)")
    wk = sub.add_parser("workers", help="run a local Dask scheduler and N workers until Ctrl-C")
    wk.add_argument("--workers", type=int, default=int(os.environ.get("WORKERS", "2") or 2),
                    help="worker processes (default 2), one task slot each")
    wk.add_argument("--port", type=int, default=8786, help="scheduler port (default 8786)")
    wk.add_argument("--dashboard", default=":8787", help="dashboard address (default :8787)")
    wk.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1; 0.0.0.0 to let other machines' workers in)")
    sub.add_parser("feedback", help="write feedback HTML (no hidden tests)")
    sub.add_parser("grades", help="write grades.csv and grades-detail.csv")
    ho = sub.add_parser("handout", help="build handout/, the students' repository")
    ho.add_argument("--dest", help="where to write it (default: handout/ in the course folder)")
    ht = sub.add_parser("hidden-tests", help="check (or --write) the hidden tests of source/")
    ht.add_argument("--write", action="store_true", help="rewrite the test cells that are out of date")
    cd = sub.add_parser("check-data", help="check (or --write) the visible checks' data file")
    cd.add_argument("--write", action="store_true", help="rewrite it")
    args = p.parse_args(argv)

    from .layout import Course

    try:
        course = Course.here(args.root)
        if args.command == "release":
            from .build import release

            release(course)
        elif args.command == "lecture":
            from .build import lecture

            lecture(course, execute=not args.no_execute)
        elif args.command == "autograde":
            from .autograde import autograde
            from .sandbox import SandboxMissing

            try:
                autograde(course, jobs=args.jobs, force=args.force, students=args.student,
                          no_sandbox=args.no_sandbox, scheduler=args.scheduler)
            except SandboxMissing as e:
                print(f"make autograde refused to run.\n{e}", file=sys.stderr)
                return 2
            except KeyboardInterrupt:
                print("autograde stopped (Ctrl-C); run it again to grade who is left", file=sys.stderr)
                return 130
        elif args.command == "workers":
            from .cluster import serve

            serve(args.workers, port=args.port, host=args.host, dashboard=args.dashboard)
        elif args.command == "feedback":
            from .feedback import feedback

            feedback(course)
        elif args.command == "grades":
            from .grades import grades

            grades(course)
        elif args.command == "handout":
            from .handout import handout

            handout(course, Path(args.dest) if args.dest else None)
        elif args.command == "hidden-tests":
            from . import hidden

            if args.write:
                print("rewrote:", ", ".join(hidden.write(course.source)) or "nothing")
            else:
                stale = hidden.out_of_sync(course.source)
                print("out of date:", ", ".join(stale) if stale else "none")
                return 1 if stale else 0
        elif args.command == "check-data":
            from . import checkdata

            if args.write:
                print(f"wrote {checkdata.write()}")
            elif not checkdata.is_current():
                print(f"out of date: {checkdata.DATA}; run python -m whole_transformer.course check-data --write")
                return 1
    except (ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
