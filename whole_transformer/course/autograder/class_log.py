"""What a class's autograde run tells the instructor as it goes (``autograde.py`` runs it), and who it graded.

``ClassLog`` keeps the run's ``Tally`` (graded, skipped, graded elsewhere, left) and says each step: a line per
student merged (``summary_line``: score, notebooks graded, failed and missing, findings, ``lateness_note``), the
progress between two passes of the loop (``Progress``: students done, running and left, with the rate), what is
left when the run stops, and the run's end (``log_summary``: graded, skipped, left for the next run, and the
students to look at).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import MissingEntry
from tqdm import tqdm

from ..core.results import FAILED, GRADED, MISSING, Result
from ..layout import ASSIGNMENT, Course
from ..term.late import student_lateness
from ..term.settings import Settings, load
from .assignment import Assignment


@dataclass
class Tally:
    """Who one run graded (and on which worker, in order), skipped as already graded, found being graded
    by another run, or left for the next run."""

    graded: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


class Progress:
    """Students done, running and left, with the rate: a tqdm bar on a terminal, else a plain line
    on stderr every 15 s."""

    def __init__(self, total: int, enabled: bool = True):
        self.t0 = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.enabled = enabled and total > 0
        self.last = 0.0
        self.bar = tqdm(
            total=total,
            unit="student",
            file=sys.stderr,
            disable=not (self.enabled and self.tty),
            bar_format="autograde {bar:20} {desc}",
            dynamic_ncols=True,
        )
        self.total = total

    def update(self, done: int, running: int, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or not (force or self.tty or now - self.last >= 15):
            return
        self.last = now
        minutes = (now - self.t0) / 60
        rate = done / minutes if minutes > 0 and done else 0.0
        left = self.total - done - running
        eta = f", about {(self.total - done) / rate:.0f} min to go" if rate and done < self.total else ""
        text = f"{done}/{self.total} done · {running} running · {left} left · {rate:.1f} students/min{eta}"
        if self.tty:
            self.bar.n = done
            self.bar.set_description_str(text)
        else:
            print(f"autograde: {text}", file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.tty:
            self.bar.clear()

    def close(self) -> None:
        self.bar.close()


def lateness_note(course: Course, student: str, settings=None) -> str:
    """On time, late by how much (and the penalty), or an extension, as course.toml has it."""
    try:
        return student_lateness(course, settings or load(course), student).describe()
    except ValueError as e:  # an unreadable timestamp.txt: said on the student's line, grading goes on
        return f"hand-in time unreadable: {e}"


def summary_line(student: str, rec: Result, gb, assignment: Assignment, when: str = "") -> str:
    """One line for the log: the student's score, notebooks graded, failed and missing, findings,
    and when it was handed in (``when``: ``lateness_note``)."""
    score = 0.0
    try:
        sub = gb.find_submission(ASSIGNMENT, student)
        score, maximum = sub.score, sub.max_score
    except MissingEntry:
        maximum = assignment.max_score
    gb.db.commit()  # end the read transaction
    counts = {k: rec.count(k) for k in (GRADED, FAILED, MISSING)}
    parts = [f"{counts[GRADED]} graded"]
    if counts[FAILED]:
        parts.append(f"{counts[FAILED]} failed")
    if counts[MISSING]:
        parts.append(f"{counts[MISSING]} missing")
    bad_cells = sum(
        1 for v in rec.notebooks.values() if v.status == GRADED for c in v.cells.values() if c.status != GRADED
    )
    if bad_cells:
        parts.append(f"{bad_cells} test cell(s) failed to run")
    return (
        f"{student:<24} {score:6.1f} / {maximum:<5.1f} notebooks: {', '.join(parts):<34} "
        f"findings: {len(rec.findings)}  ({rec.seconds:.0f} s)" + (f"  {when}" if when else "")
    )


def _some(names, most: int = 10) -> str:
    """Up to ``most`` names, and how many more."""
    names = list(names)
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def log_summary(tally: Tally, records: dict[str, Result | None], report: Path, seconds: float, log) -> None:
    """The run's last lines: how many graded and skipped, how fast, the findings, who was graded elsewhere
    or left, and the students an instructor should look at (a notebook failed, or findings)."""
    graded = tally.graded
    total_findings = sum(len(r.findings) for r in records.values() if r)
    skipped = f" ({_some(tally.skipped)})" if tally.skipped else ""
    log(
        f"autograde: graded {len(graded)}, skipped {len(tally.skipped)} already graded{skipped}, in {seconds:.1f} s "
        f"({60 * len(graded) / max(seconds, 1e-9):.1f} students/min); {total_findings} finding(s) in {report.name}"
    )
    if tally.elsewhere:
        log(
            f"autograde: {len(tally.elsewhere)} student(s) were being graded by another run: "
            f"{', '.join(tally.elsewhere)}"
        )
    if tally.left:
        log(f"autograde: {len(tally.left)} student(s) left for the next run: {', '.join(tally.left)}")
    look = []
    for s, r in records.items():
        bad = [f"{n[:2]} {v.status}" for n, v in (r.notebooks.items() if r else []) if v.status == FAILED]
        nf = len(r.findings) if r else 0
        if bad or nf:
            look.append(f"{s} ({', '.join(bad + ([f'{nf} finding(s)'] if nf else []))})")
    if look:
        log(f"to look at ({len(look)}): " + "; ".join(look))


class ClassLog:
    """What one class run says as it goes, and its tally (see the module doc)."""

    def __init__(self, course: Course, settings: Settings, log):
        self.course, self.settings, self.log = course, settings, log
        self.tally = Tally()
        self.bar = Progress(0, enabled=False)

    def start(self, todo: int, progress: bool) -> None:
        """The progress bar of ``todo`` students."""
        self.bar = Progress(todo, enabled=progress)

    def graded(self, student: str, result: Result, gb, assignment: Assignment) -> None:
        """A student merged: counted, and their line said."""
        self.tally.graded.append(student)
        self.tally.where.append(result.worker)
        self.bar.clear()
        self.log(summary_line(student, result, gb, assignment, lateness_note(self.course, student, self.settings)))

    def left(self, student: str, error: BaseException) -> None:
        """A student the grading infrastructure failed on: left for the next run."""
        self.log(f"{student}: not graded ({type(error).__name__}: {error}); left for the next run")
        self.tally.left.append(student)

    def pause(self, finished: bool, running: int) -> None:
        """Between two passes of the loop: the progress bar, and a short wait when nothing finished."""
        if finished:
            self.bar.update(len(self.tally.graded), running, force=not running)
        else:
            self.bar.update(len(self.tally.graded), running)
            time.sleep(0.2)

    def stopping(self, todo: list[str]) -> None:
        """Stopped (Ctrl-C or an error): the bar closed, and who is left said before the graders stop."""
        self.bar.close()
        done = set(self.tally.graded) | set(self.tally.elsewhere) | set(self.tally.skipped)
        self.tally.left = [s for s in todo if s not in done]
        self.log(
            f"autograde: stopping: {len(self.tally.graded)} graded in this run, {len(self.tally.left)} left (run it "
            "again to grade who is left)"
        )

    def end(self, results: dict[str, Result | None], report: Path, seconds: float) -> None:
        self.bar.close()
        log_summary(self.tally, results, report, seconds, self.log)
