"""The table of every implementation × (visible check, hidden tests), for the six exercises of 03 and 04.

Each right and wrong implementation (``correct.toml``; the catalogue of mistakes) and each version built on the
course's own code (``CALLS_AN_ANSWER`` of ``tests/test_exercises.py``) runs as ``grade`` runs it (the notebook's
setup cells, the implementation, the graded test cell: its visible check, then its hidden tests judged by the
grader). One row each: what the check said (✓, or ✗ and the first words of its hint) and what the hidden tests
gave (points of points, the mistake the grader named). ``agrees`` is what the tests assert: the check says ✓
exactly when the hidden tests give every point.

    .venv/bin/python tests/implementations/matrix.py [exercise …]   # the table, as Markdown, on stdout
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]

from implementations import grade, implementations  # noqa: E402

EXERCISES = ("next_token", "greedy_decode", "cached_attention", "sample_next", "make_xy", "masked_loss")


def _said(output: str, width: int = 70) -> str:
    line = next((x for x in output.splitlines() if x.startswith(("✓", "✗"))), output.strip() or "(nothing)")
    return (line if len(line) <= width else line[: width - 1] + "…").replace("|", "\\|")


def _hidden(graded) -> str:
    score = f"{graded.points:g}/{graded.max_points:g}"
    (message,) = graded.errors.values() or [""]
    if "earns nothing" in message:
        return f"{score}, earns nothing: calls the course's code"
    _, _, named = message.partition("This looks like a typical mistake, ")
    return f"{score}" + (f", named {named.split(':')[0]}" if named else ("" if not message else ", not named"))


def rows(exercises=EXERCISES):
    from test_exercises import CALLS_AN_ANSWER

    runs = [(i.exercise, i.verdict, i.name, i.source) for i in implementations() if i.exercise in exercises]
    runs += [(ex, "calls", called, src) for called, (ex, src) in sorted(CALLS_AN_ANSWER.items()) if ex in exercises]
    for exercise, verdict, name, source in sorted(runs, key=lambda r: (EXERCISES.index(r[0]), r[1], r[2])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graded = grade(exercise, source)
        right = "✓ Right." in graded.output
        full = graded.points == graded.max_points
        yield exercise, verdict, name, _said(graded.output), _hidden(graded), right == full


def main(argv: list[str]) -> int:
    chosen = tuple(argv) or EXERCISES
    print("| exercise | version | name | visible check | hidden tests | agree |")
    print("|---|---|---|---|---|---|")
    bad = 0
    for exercise, verdict, name, said, hidden, agrees in rows(chosen):
        bad += not agrees
        print(f"| {exercise} | {verdict} | {name} | {said} | {hidden} | {'yes' if agrees else '**NO**'} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
