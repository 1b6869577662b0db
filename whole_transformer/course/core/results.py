"""The result of grading one submission, as data: the one thing a grading hands back, kept as ``result.json``.

A ``Result`` holds, per notebook (``NotebookResult``), whether it was graded and, per test cell (``CellStatus``),
its status, the grader's verdict (``core/verdict.py``) and the score nbgrader gave it; the findings an instructor
should look at; what was graded (the submission's digest and the assignment's fingerprint, to tell when to grade
again); the hand-in time nbgrader read, the graded notebooks, the nbgrader log, where it was graded and how long it
took. ``autograder/grade.py`` makes it from what one nbgrader run handed back (``plugins/run_result.py``);
``autograder/store.py`` writes it, with the graded notebooks, to ``autograde/<student>/whole-transformer/``
(its JSON as ``result.json``) and reads it back; ``grades-detail.csv``, the insights and the service's feedback
read it.

``Status`` is the one vocabulary of how something graded ended: ``graded`` (the test ran; its score is what it
earned), ``failed`` (it could not run to the end; the reason says why), ``missing`` (not handed in), in
``grades-detail.csv`` also ``unanswered`` (a graded cell whose answer is not written yet, from its verdict); and
the endings the grading service gives an attempt besides those: ``refused`` (not graded under course.toml's
[service] policy), ``malformed`` (it cannot be graded at all) and ``collected`` (``make autograde`` graded those
very files before the service saw them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from .verdict import CellVerdict

#: the version of result.json; a result of another version is not read (the student is graded again)
RESULT_VERSION = 2


class Status(StrEnum):
    """How a submission, a notebook, a test cell or an attempt ended (stored as the word itself)."""

    GRADED = "graded"
    FAILED = "failed"
    MISSING = "missing"
    UNANSWERED = "unanswered"  # grades-detail.csv: a graded cell whose answer is not written yet (its verdict)
    REFUSED = "refused"  # an attempt the service did not grade under course.toml's [service] policy
    MALFORMED = "malformed"  # an attempt the service cannot grade at all (its folder, its name, its secret)
    COLLECTED = "collected"  # an attempt make autograde graded, these very files, before the service saw it


GRADED, FAILED, MISSING, UNANSWERED = Status.GRADED, Status.FAILED, Status.MISSING, Status.UNANSWERED


@dataclass
class Finding:
    """Something an instructor should look at; a report, not a penalty."""

    cell: str  # grade_id, or "cell N" (1-based position in the submitted notebook), or "notebook"
    finding: str
    notebook: str = ""  # notebook name, or "submission" for the files handed in


@dataclass
class CellStatus:
    status: Status
    reason: str = ""
    verdict: CellVerdict | None = None  # the grader's verdict (plugins/cell_verdict.assess); None: it gave none
    score: float | None = None  # the points nbgrader gave the cell (its auto score); None: none

    def to_json(self) -> dict:
        """As stored in result.json; no verdict is stored as ``{}``."""
        return {
            "status": self.status,
            "reason": self.reason,
            "verdict": self.verdict.to_json() if self.verdict is not None else {},
            "score": self.score,
        }

    @classmethod
    def from_json(cls, data: dict) -> CellStatus:
        verdict = data.get("verdict")
        return cls(
            Status(data["status"]),
            data.get("reason", ""),
            CellVerdict.from_json(verdict) if verdict else None,
            data.get("score"),
        )


@dataclass
class NotebookResult:
    status: Status = MISSING
    reason: str = ""
    file: str = ""  # path handed in, relative to submitted/<student>/
    cells: dict[str, CellStatus] = field(default_factory=dict)  # grade_id → status
    comments: dict[str, str | None] = field(default_factory=dict)  # answer cell → nbgrader's comment ("No response.")
    late_penalty: float | None = None  # what nbgrader's own late penalty took (the course's is course.toml's)

    def settle(self, grade_ids) -> None:
        """A notebook not graded: each of its test cells takes the notebook's status and reason."""
        self.cells = {gid: CellStatus(self.status, self.reason) for gid in grade_ids}

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "reason": self.reason,
            "file": self.file,
            "cells": {gid: c.to_json() for gid, c in self.cells.items()},
            "comments": self.comments,
            "late_penalty": self.late_penalty,
        }

    @classmethod
    def from_json(cls, data: dict) -> NotebookResult:
        cells = {gid: CellStatus.from_json(c) for gid, c in data["cells"].items()}
        return cls(
            Status(data["status"]),
            data["reason"],
            data.get("file", ""),
            cells,
            dict(data.get("comments", {})),
            data.get("late_penalty"),
        )


@dataclass
class Result:
    """One submission's grading (see the module doc): as a grader hands it back, and as ``result.json`` keeps it
    (all of it but the graded notebooks, which are the files beside it)."""

    student: str
    submission: str  # digest of the files handed in (autograder/submission.py)
    assignment: str  # fingerprint of the assignment (source/ and release/) they were graded against
    notebooks: dict[str, NotebookResult] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    timestamp: datetime | None = None  # the hand-in time nbgrader read (timestamp.txt, the student's claim; naive UTC)
    worker: str = ""  # where it was graded
    log: str = ""  # nbgrader's log of the run
    graded: dict[str, bytes] = field(default_factory=dict)  # file name → graded notebook (and the other files)

    def count(self, status: str) -> int:
        return sum(1 for nb in self.notebooks.values() if nb.status == status)

    @property
    def graded_any(self) -> bool:
        """Whether any notebook was graded (else nothing nbgrader scored is kept)."""
        return self.count(GRADED) > 0

    def score(self) -> float:
        """The points of the notebooks graded, as nbgrader scored them (rounded to a thousandth)."""
        got = sum(c.score or 0.0 for nb in self.notebooks.values() if nb.status == GRADED for c in nb.cells.values())
        return round(got, 3)

    def to_json(self) -> dict:
        return {
            "version": RESULT_VERSION,
            "student": self.student,
            "submission": self.submission,
            "assignment": self.assignment,
            "seconds": round(self.seconds, 2),
            "timestamp": self.timestamp.isoformat() if self.timestamp else None,
            "worker": self.worker,
            "notebooks": {name: nb.to_json() for name, nb in self.notebooks.items()},
            "findings": [{"notebook": f.notebook, "cell": f.cell, "finding": f.finding} for f in self.findings],
            "log": self.log,
        }

    @classmethod
    def from_json(cls, data: dict) -> Result:
        """A result as ``to_json`` wrote it (ValueError for another version; KeyError, TypeError for a damaged one)."""
        if data.get("version") != RESULT_VERSION:
            raise ValueError(f"result.json of version {data.get('version')!r}, not {RESULT_VERSION}")
        return cls(
            data["student"],
            data["submission"],
            data["assignment"],
            {name: NotebookResult.from_json(nb) for name, nb in data["notebooks"].items()},
            [Finding(f["cell"], f["finding"], f["notebook"]) for f in data["findings"]],
            data.get("seconds", 0.0),
            datetime.fromisoformat(data["timestamp"]) if data.get("timestamp") else None,
            data.get("worker", ""),
            data.get("log", ""),
        )
