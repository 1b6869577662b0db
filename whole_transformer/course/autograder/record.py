"""The record stage: what is kept of one student's grading, written to disk and read back.

A grader returns a ``StudentResult`` (the ``Record`` plus the graded notebooks, the scores nbgrader
wrote, its log); once merged, the ``Record`` alone (``core/results.py``: the statuses, the verdicts, the
findings) is written to ``autograde/.wt/students/<student>.json``. ``reports/grades.py`` and the next run
read it back with ``load_record``; ``write_integrity_report`` lists every record's findings.
"""

from __future__ import annotations

import csv
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..core.results import RECORD_VERSION, Record
from ..layout import Course, write_json


@dataclass
class StudentResult(Record):
    """What grading one student returns: the record, and what is merged into the course with it."""

    graded: dict[str, bytes] = field(default_factory=dict)  # notebook file name → graded notebook
    scores: dict | None = None  # what nbgrader wrote into the private gradebook (graded.scores_of)
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
    try:
        data = json.loads(record_path(course, student).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
        return None
    try:
        return Record.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError):  # a damaged record: grade the student again
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
