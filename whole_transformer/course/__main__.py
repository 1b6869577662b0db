"""``python -m whole_transformer.course <command>``: the instructor's commands (the Makefile's targets call them).

``--help`` lists the commands, each with its help line, and ``<command> --help`` its arguments. Both are
read from the commands' declarations in ``commands/`` (a command's function, its arguments and its help
line, declared together), as is what ``make help`` says of them (``tests/test_commands.py`` checks it).
This module only runs them: it reads the command line and calls the command on the course folder.

The term's settings (due date, late policy, extensions, points) are in course.toml. The gradebook is
gradebook.db, or the database DB_URL names (e.g. postgresql://grader@host/course).
"""

from __future__ import annotations

import argparse
import os
import sys

from .commands import COMMANDS
from .layout import Course, python_first_on_path
from .venv import instructor_python


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m whole_transformer.course",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--root", help="the course folder (default: the current folder)")
    commands = p.add_subparsers(dest="command", required=True, metavar="<command>")
    for command in COMMANDS.values():
        command.add_to(commands)
    return p


def main(argv: list[str] | None = None) -> int:
    # nbgrader runs `alembic` from this environment when it creates a gradebook
    os.environ["PATH"] = python_first_on_path(os.environ.get("PATH", ""))
    args = parser().parse_args(argv)
    instructor_python(sys.argv[1:] if argv is None else argv, args.root)  # venv.py: .venv's Python if need be
    try:
        return COMMANDS[args.command](Course.here(args.root), args)
    except (ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
