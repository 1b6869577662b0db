"""How an instructor command is declared: its function, its arguments and its one help line, together.

A command is a function ``(course, args) -> exit status`` under ``@command(name, help, *arguments,
make=...)``, which makes it a ``Command``. Everything else is read from that one declaration:
``python -m whole_transformer.course --help`` (``__main__``'s parser) and, checked by
``tests/test_commands.py``, what ``make help`` says of the commands that have a Makefile target.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..layout import Course


@dataclass(frozen=True)
class Arg:
    """One argument of a command, as ``argparse.ArgumentParser.add_argument`` takes it."""

    names: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)


def arg(*names: str, **options: Any) -> Arg:
    return Arg(names, options)


@dataclass(frozen=True)
class Command:
    """An instructor command: ``python -m whole_transformer.course <name>``."""

    name: str
    help: str  # the one line --help and make help show
    run: Callable[[Course, argparse.Namespace], int]
    arguments: tuple[Arg, ...] = ()
    make: str | None = None  # what make help says under the help line (its variables); None: no make target

    def __call__(self, course: Course, args: argparse.Namespace) -> int:
        return self.run(course, args)

    def add_to(self, commands: argparse._SubParsersAction) -> None:
        """This command's parser among ``commands`` (the main parser's subparsers)."""
        p = commands.add_parser(self.name, help=self.help, description=self.help)
        for a in self.arguments:
            p.add_argument(*a.names, **a.options)


def command(name: str, help: str, *arguments: Arg, make: str | None = None):
    """Declare the function below as the command ``name`` (see ``Command`` for the rest)."""

    def declare(run: Callable[[Course, argparse.Namespace], int]) -> Command:
        return Command(name, help, run, arguments, make)

    return declare


def declared(module: ModuleType) -> list[Command]:
    """The commands ``module`` declares, in the order it declares them."""
    return [value for value in vars(module).values() if isinstance(value, Command)]


def write(what: str) -> Arg:
    return arg("--write", action="store_true", help=what)


def grading(what: str) -> tuple[Arg, ...]:
    """How many at once, where, and the sandbox: the arguments autograde and serve share."""
    return (
        arg("--jobs", type=int, default=1, help=f"{what} graded at once (default 1; make JOBS=N)"),
        arg(
            "--scheduler",
            metavar="ADDRESS",
            help="grade on the workers of this Dask scheduler, e.g. tcp://HOST:8786 (make SCHEDULER=...)",
        ),
        arg(
            "--no-sandbox",
            action="store_true",
            help="run student code WITHOUT the sandbox: the one way to turn it off (make NO_SANDBOX=1)",
        ),
    )
