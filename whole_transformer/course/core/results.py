"""The result of grading one student's submission, as data: what is kept of it, and read by the reports.

A ``Record`` holds, per notebook, whether it was graded and, per test cell, its status and the grader's
verdict (``core/verdict.py``), with the findings an instructor should look at and what was graded (to tell
when to grade again). ``autograder/record.py`` writes it to ``autograde/.wt/students/<student>.json`` and
reads it back; ``grades-detail.csv``, the insights and the service's feedback read it.

Statuses: ``graded`` (the test ran; its score is what it earned), ``failed`` (it could not run to the end;
the reason says why) and ``missing`` (not handed in); in ``grades-detail.csv`` also ``unanswered`` (a graded
cell whose answer is not written yet, from its verdict).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .verdict import CellVerdict

GRADED, FAILED, MISSING = "graded", "failed", "missing"
UNANSWERED = "unanswered"  # in grades-detail.csv: a graded cell whose answer is not written yet (verdict)
RECORD_VERSION = 1


@dataclass
class Finding:
    """Something an instructor should look at; a report, not a penalty."""

    cell: str  # grade_id, or "cell N" (1-based position in the submitted notebook), or "notebook"
    finding: str
    notebook: str = ""  # notebook name, or "submission" for the files handed in


@dataclass
class CellStatus:
    status: str
    reason: str = ""
    verdict: CellVerdict | None = None  # the grader's verdict (plugins/cell_verdict.assess); None: it gave none

    def to_json(self) -> dict:
        """As stored in the record; no verdict is stored as ``{}``."""
        return {
            "status": self.status,
            "reason": self.reason,
            "verdict": self.verdict.to_json() if self.verdict is not None else {},
        }

    @classmethod
    def from_json(cls, data: dict) -> CellStatus:
        verdict = data.get("verdict")
        return cls(data["status"], data.get("reason", ""), CellVerdict.from_json(verdict) if verdict else None)


@dataclass
class NotebookResult:
    status: str = MISSING
    reason: str = ""
    file: str = ""  # path handed in, relative to submitted/<student>/
    cells: dict[str, CellStatus] = field(default_factory=dict)  # grade_id → status

    def settle(self, grade_ids) -> None:
        """A notebook not graded: each of its test cells takes the notebook's status and reason."""
        self.cells = {gid: CellStatus(self.status, self.reason) for gid in grade_ids}


@dataclass
class Record:
    """One student's grading: statuses, reasons and findings, and what was graded (the digest of
    the files handed in and the fingerprint of the assignment), to tell when to grade again."""

    student: str
    submission: str  # digest of the files handed in
    assignment: str  # fingerprint of the assignment (source/ and release/) they were graded against
    notebooks: dict[str, NotebookResult] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for nb in self.notebooks.values() if nb.status == status)

    def to_json(self) -> dict:
        return {
            "version": RECORD_VERSION,
            "student": self.student,
            "fingerprint": f"{self.submission}:{self.assignment}",
            "seconds": round(self.seconds, 2),
            "notebooks": {
                name: {
                    "status": nb.status,
                    "reason": nb.reason,
                    "file": nb.file,
                    "cells": {gid: c.to_json() for gid, c in nb.cells.items()},
                }
                for name, nb in self.notebooks.items()
            },
            "findings": [{"notebook": f.notebook, "cell": f.cell, "finding": f.finding} for f in self.findings],
        }

    @classmethod
    def from_json(cls, data: dict) -> Record:
        submission, _, assignment = data["fingerprint"].partition(":")
        notebooks = {
            name: NotebookResult(
                nb["status"],
                nb["reason"],
                nb.get("file", ""),
                {gid: CellStatus.from_json(c) for gid, c in nb["cells"].items()},
            )
            for name, nb in data["notebooks"].items()
        }
        findings = [Finding(f["cell"], f["finding"], f["notebook"]) for f in data["findings"]]
        return cls(data["student"], submission, assignment, notebooks, findings, data.get("seconds", 0.0))
