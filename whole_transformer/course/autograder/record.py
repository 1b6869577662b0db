"""The record stage: what is kept of one student's grading, as typed data.

A grader returns a ``StudentResult`` (the ``Record`` plus the graded notebooks, the scores nbgrader
wrote, its log); once merged, the ``Record`` alone is written to
``autograde/.wt/students/<student>.json``. ``grades.py`` and the next run read it back with
``load_record``. Statuses: ``graded`` (the test ran; its score is what it earned), ``failed``
(it could not run to the end; the reason says why) and ``missing`` (not handed in).
"""

from __future__ import annotations

import csv
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..layout import Course, write_json

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
    verdict: dict = field(default_factory=dict)  # the grader's details (verdict.assess): outcome, cases, mistake


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
                    "cells": {gid: vars(c) for gid, c in nb.cells.items()},
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
                nb["status"], nb["reason"], nb.get("file", ""), {gid: CellStatus(**c) for gid, c in nb["cells"].items()}
            )
            for name, nb in data["notebooks"].items()
        }
        findings = [Finding(f["cell"], f["finding"], f["notebook"]) for f in data["findings"]]
        return cls(data["student"], submission, assignment, notebooks, findings, data.get("seconds", 0.0))


@dataclass
class StudentResult(Record):
    """What grading one student returns: the record, and what is merged into the course with it."""

    graded: dict[str, bytes] = field(default_factory=dict)  # notebook file name → graded notebook
    scores: dict | None = None  # what nbgrader wrote into the private gradebook (run.scores_of)
    log: str = ""
    worker: str = ""  # where it was graded

    def record(self) -> Record:
        return Record(self.student, self.submission, self.assignment, self.notebooks, self.findings, self.seconds)


def record_path(course: Course, student: str) -> Path:
    return course.state / "students" / f"{student}.json"


def write_record(course: Course, record: Record) -> None:
    write_json(record_path(course, record.student), record.to_json())


def load_record(course: Course, student: str) -> Record | None:
    """The student's record, or None (never graded, unreadable, or written by another version)."""
    import json

    try:
        data = json.loads(record_path(course, student).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
        return None
    try:
        return Record.from_json(data)
    except (KeyError, TypeError, AttributeError):  # a damaged record: grade the student again
        return None


def write_integrity_report(course: Course, records: dict[str, Record | None]) -> Path:
    """``integrity-report.csv``: every finding of every student's record (student → record, or None)."""
    path = course.root / "integrity-report.csv"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student_id", "notebook", "cell", "finding"])
        for s, rec in records.items():
            for fd in rec.findings if rec else []:
                w.writerow([s, fd.notebook, fd.cell, fd.finding])
    os.replace(tmp, path)
    return path
