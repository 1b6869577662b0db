"""The catalogue of typical mistakes in the four exercises, read from ``mistakes.toml``.

Each mistake is the wrong code a student might write, kept as the text of a solution cell; it is
the one place a mistake is written. ``check_data.py`` runs each mistake that has a hint on the
visible checks' fixed cases and stores hashes of what it returns, with its hint, in
``whole_transformer/data/exercise_checks.json``; the visible check then names the mistake whose
results the student's function reproduces. The tests grade every mistake as a wrong answer.

Instructor-only (it is not in the students' handout: several of these are one argument away from a
right answer).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from whole_transformer.exercise_checks import CALLS

from . import reference
from .reference import softmax

CATALOGUE_FILE = Path(__file__).with_name("mistakes.toml")
HEADER = (
    "# exercise: {exercise} · verdict: wrong · mistake: {mistake}\n"
    "# ruff: noqa: F821 (np and softmax are the notebook's)\n"
    "# check says: {check_says}\n"
)


#: the notebook's earlier exercises that each forward-pass exercise may call
FORWARD_CALLS = CALLS


@dataclass(frozen=True)
class Mistake:
    exercise: str
    id: str
    mistake: str  # what is wrong, in words
    code_text: str  # the solution cell's code: one function definition using the notebook's np and softmax
    check_says: str  # words the visible check's message contains for it
    name: str | None = None  # for a mistake the visible check names: its name and hint
    hint: str | None = None

    @property
    def source(self) -> str:
        """The whole solution cell: a header that says what it is, then the code."""
        return HEADER.format(exercise=self.exercise, mistake=self.mistake, check_says=self.check_says) + self.code_text

    @functools.cached_property
    def code(self) -> Callable:
        """The function, defined as the notebook would define it."""
        namespace: dict[str, Any] = {"np": np, "softmax": softmax}  # exec puts the function in it
        # a block or a forward pass calls the notebook's earlier functions: here right ones, so that each
        # mistake is its own exercise's and no other's
        namespace.update({n: getattr(reference, n) for n in FORWARD_CALLS.get(self.exercise, ())})
        exec(compile(self.code_text, f"<mistake {self.exercise} {self.id}>", "exec"), namespace)  # noqa: S102
        return namespace[self.exercise]


def _read() -> dict[str, list[Mistake]]:
    data = tomllib.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))
    return {
        exercise: [
            Mistake(exercise, e["id"], e["mistake"], e["code"], e["check_says"], e.get("name"), e.get("hint"))
            for e in entries
        ]
        for exercise, entries in data.items()
    }


#: every mistake of each exercise, in the catalogue's order
CATALOGUE: dict[str, list[Mistake]] = _read()
#: the mistakes the visible check names (those with a hint), in the order it tries them
MISTAKES: dict[str, list[Mistake]] = {ex: [m for m in ms if m.hint] for ex, ms in CATALOGUE.items()}
