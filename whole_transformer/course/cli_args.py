"""What each instructor command takes on its command line (``__main__.COMMANDS``' third field).

Each builder adds one command's arguments to its ``argparse`` parser; the defaults come from the
environment variables the Makefile passes (``JOBS``, ``SCHEDULER``, ``WORKERS``, ``EXCHANGE``, ...).
"""

from __future__ import annotations

import argparse
import os

from ..envflags import flag


def one(*names: str, **options):
    """What adds one argument to a command's parser."""

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument(*names, **options)

    return add


def file(what: str):
    return one("file", metavar="FILE", help=what)


def write(what: str):
    return one("--write", action="store_true", help=what)


def collect_zip(p: argparse.ArgumentParser) -> None:
    file("the zip downloaded from Canvas or Moodle")(p)
    p.add_argument(
        "--replace",
        action="store_true",
        help="replace each student's whole hand-in by what the zip holds (the old one is set aside in "
        "downloaded/; make collect-zip REPLACE=1); without it, files are merged, a newer one replacing an older one",
    )


lecture = one("--no-execute", action="store_true", help="do not run the notebooks (quick check)")
handout = one("--dest", help="where to write it (default: handout/ in the course folder)")


def hidden_tests(p: argparse.ArgumentParser) -> None:
    p.add_argument("--write", action="store_true", help="rewrite the test cells that are out of date")
    p.add_argument("--discard", action="store_true", help="with --write: overwrite test cells edited by hand too")


def _grading(p: argparse.ArgumentParser, what: str) -> None:
    """Where and how many at once: the arguments autograde and serve share."""
    p.add_argument(
        "--jobs", type=int, default=int(os.environ.get("JOBS", "1") or 1), help=f"{what} graded at once (default 1)"
    )
    p.add_argument(
        "--scheduler",
        default=os.environ.get("SCHEDULER") or None,
        metavar="ADDRESS",
        help="grade on the workers of this Dask scheduler, e.g. tcp://HOST:8786 (also SCHEDULER=...)",
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        default=flag("NO_SANDBOX"),
        help="run student code WITHOUT the sandbox (explicit opt-out; also NO_SANDBOX=1 or WT_SANDBOX=off)",
    )


def autograde(p: argparse.ArgumentParser) -> None:
    _grading(p, "students")
    p.add_argument("--force", action="store_true", help="grade again students already graded")
    p.add_argument("--student", action="append", help="grade only this student (repeatable)")


def workers(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workers",
        type=int,
        default=int(os.environ.get("WORKERS", "2") or 2),
        help="worker processes (default 2), one task slot each",
    )
    p.add_argument("--port", type=int, default=8786, help="scheduler port (default 8786)")
    p.add_argument("--dashboard", default=":8787", help="dashboard address (default :8787)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; 0.0.0.0 to let other machines' workers in)",
    )


def serve(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--exchange",
        default=os.environ.get("EXCHANGE") or None,
        metavar="DIR",
        help="nbgrader's exchange folder (default: c.Exchange.root of nbgrader_config.py, else "
        "/srv/nbgrader/exchange; also EXCHANGE=...)",
    )
    p.add_argument(
        "--port",
        type=int,
        default=int(os.environ["SERVE_PORT"]) if os.environ.get("SERVE_PORT") else None,
        help="serve the status page on 127.0.0.1:PORT (0: any free port; also SERVE_PORT=...)",
    )
    p.add_argument("--once", action="store_true", help="grade what is waiting, then stop (else: until Ctrl-C)")
    p.add_argument("--poll", type=float, default=2.0, help="seconds between looks at the exchange (default 2)")
    _grading(p, "submissions")
