"""The verdict on one graded test cell, as data: what the grader decided, for the instructor's records.

``plugins/cell_verdict.py`` makes it (``assess``); nbgrader's run hands it back as JSON with the run's result
(``plugins/run_result.py``), read once into the submission's ``Result`` (``core/results.py``), and read by
``grades-detail.csv`` (``reports/grades.py``), the class's insights (``reports/insights.py``) and the service's
pass/fail feedback (``service/attempt_feedback.py``).

The JSON is flat, one key a field, and a key is written only when the verdict has it: a field left at
``None`` (``False`` for ``stale``) is not written. Two fields are written whenever another is, even as
null: ``mistake`` with ``mistake_name`` (an exercise's wrong answer is always named, ``mistake`` null when
it is no catalogued mistake), ``closest`` with ``of`` (null when no mistake comes close).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum


class Outcome(StrEnum):
    """What the grader made of a test cell's results (stored as the word itself)."""

    RIGHT = "right"  # every case passed
    WRONG = "wrong"  # some case failed (or the cell handed out no results, or more than one set)
    RAISED = "raised"  # every failed case raised an exception (or the whole cell did)
    UNANSWERED = "unanswered"  # the answer is not written yet: its stub still raises, or it is as released


@dataclass
class CellVerdict:
    """What the grader decided on one test cell: its outcome, the cases passed of those run, and why.

    Only some fields are set for a given outcome: ``why`` for a cell that handed out no results (or is
    unanswered); ``failed``, ``errors`` and either a question's ``answer`` and ``hint`` or an exercise's
    diagnosis (the catalogued ``mistake`` or the ``closest`` one, the kinds passed, the partial score)
    for results that are wrong.
    """

    outcome: Outcome
    passed: int  # cases passed ...
    run: int  # ... of the cases run
    why: str | None = None  # why there is no verdict on the results: not answered yet, none handed out
    failed: list[str] | None = None  # the kinds of case that failed, in the order of the cases
    errors: dict[str, str] | None = None  # kind of case → the exception its first failed case raised
    answer: str | None = None  # a question's wrong answer, short
    hint: str | None = None  # the course's hint for that answer
    mistake: str | None = None  # the catalogued mistake the answer is (its id), if it is one
    mistake_name: str | None = None  # its name, or "not a catalogued mistake" (answers/diagnose.py)
    says: str | None = None  # what the mistake's hint says to the student
    closest: str | None = None  # no catalogued mistake: the closest one ...
    agree: int | None = None  # ... on how many cases it returns the same ...
    of: int | None = None  # ... of how many
    stale: bool = False  # the mistake table was worked out for other cases: run mistake-table --write
    kinds_passed: list[str] | None = None  # the kinds of case all of whose cases passed
    kinds: int | None = None  # the test's kinds of case
    score: float | None = None  # the partial score earned (an exercise with points)
    points: float | None = None  # of the cell's points

    def to_json(self) -> dict:
        """The verdict as stored (result.json): the fields it has, in this order."""
        out: dict = {}
        for f in fields(self):
            value = getattr(self, f.name)
            kept = (
                (f.name == "mistake" and self.mistake_name is not None)
                or (f.name == "closest" and self.of is not None)
                or (value is not False if f.name == "stale" else value is not None)
            )
            if kept:
                out[f.name] = value.value if isinstance(value, Outcome) else value
        return out

    @classmethod
    def from_json(cls, data: dict) -> CellVerdict:
        """A verdict as ``to_json`` stores it (TypeError for a key it does not know, or a missing one)."""
        verdict = cls(**data)
        verdict.outcome = Outcome(verdict.outcome)
        return verdict
