"""Grading one submission against the assignment: ``grade(assignment, submission) -> Result``, the stages in
order, in a private course folder of its own.

It reads and writes nothing of the course, so it runs alike in a thread of ``make autograde``, on a Dask worker,
in the grading service and in ``python -m whole_transformer.course grade-one``:

1. **locate** (``locate.py``): which file handed in is which notebook;
2. **restore** (``restore.py``): protected cells put back as released, each change a finding;
3. **review** (``code_review.py``): suspicious code in what the student wrote, as findings;
4. **run** (``nbgrader_run.py``): real ``nbgrader autograde`` in its own process, on a private course that has
   its own SQLite gradebook, the kernel in the sandbox (``plugins/execute.py``); the hidden tests' results are
   judged there, outside the kernel (``plugins/verdict.py``). If nbgrader fails on the submission as a whole,
   each notebook is graded on its own, so one bad notebook does not sink the others;
5. **read back**: the run hands back one file (``plugins/run_result.py``): each test cell's ending, verdict and
   points, what happened while grading, nbgrader's comments and the hand-in time it read. It is read once into
   the ``Result`` (``core/results.py``), with the graded notebooks and the run's log.

Putting the result into the course (nbgrader's gradebook, ``autograde/``, ``result.json``) is ``store.py``'s.
"""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import nbformat

from ..cells import grade_ids
from ..core.results import FAILED, GRADED, MISSING, CellStatus, Finding, NotebookResult, Result
from ..core.verdict import CellVerdict
from ..gradebook import private_course_config
from ..layout import ASSIGNMENT
from ..plugins.run_result import read_run
from ..term.times import parse_time
from .assignment import Assignment
from .code_review import review_notebook
from .locate import locate, read_notebook
from .nbgrader_run import NbgraderRuns, nbgrader_autograde
from .restore import restore, started_from
from .submission import MAX_NOTEBOOK_BYTES, Submission, submission_files

RAN = {"ok", "not-code"}  # a graded cell's ending in the run's file when it ran to the end


def grade(
    assignment: Assignment,
    submission: Submission,
    *,
    threads: int = 1,
    sandbox: bool = True,
    cell_timeout: int | None = None,
    work: Path | None = None,
    stop=None,
    runs: NbgraderRuns | None = None,
) -> Result:
    """Grade one submission in a private course folder (a temporary folder under ``work``) and return the result as
    data. ``threads``: for NumPy and PyTorch in the kernel; ``runs``: where to register the nbgrader processes,
    for a stop to kill them; ``stop()``: whether the run is being stopped."""
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix=f"wt-grade-{submission.student[:40]}-", dir=work))
    try:
        grading = _Grading(base, assignment, submission)
        grading.prepare()
        grading.run(threads, sandbox, cell_timeout, stop or (lambda: False), runs or NbgraderRuns())
        grading.result.seconds = time.monotonic() - t0
        return grading.result
    finally:
        shutil.rmtree(base, ignore_errors=True)


class _Grading:
    """One submission's grading in the private course under ``base``."""

    def __init__(self, base: Path, assignment: Assignment, submission: Submission):
        self.base, self.assignment, self.submission = base, assignment, submission
        self.private = base / "course"
        self.sub = self.private / "submitted" / submission.student / ASSIGNMENT
        self.log, self.handed_back = base / "nbgrader.log", base / "run-result.json"
        self.graded_dir = self.private / "autograde" / submission.student / ASSIGNMENT
        self.result = Result(
            submission.student,
            submission.digest,
            assignment.fingerprint,
            findings=list(submission.findings),
            worker=socket.gethostname(),
        )
        self.to_grade: list[str] = []

    def _finding(self, notebook: str, cell: str, text: str) -> None:
        self.result.findings.append(Finding(cell, text, notebook))

    # ------------------------------------------------------------------ locate, restore, review
    def prepare(self) -> None:
        """The private course, with the student's notebooks located, restored and reviewed in it."""
        self.sub.mkdir(parents=True)
        (self.private / "source" / ASSIGNMENT).mkdir(parents=True)
        (self.private / "gradebook.db").write_bytes(self.assignment.gradebook)
        (self.base / "course_config.py").write_text(self.assignment.config, encoding="utf-8")
        (self.base / "scratch").mkdir()
        private_course_config(self.private, self.base / "course_config.py")
        folder = self.base / "handed-in"
        self.submission.unpack(folder)
        release = {n: nbformat.reads(self.assignment.release[n], as_version=4) for n in self.assignment.notebooks}
        located = locate(folder, self.assignment.notebooks, {n: grade_ids(nb) for n, nb in release.items()})
        self._copy_other_files(folder)
        for name in self.assignment.notebooks:
            res = self.result.notebooks[name] = NotebookResult()
            path, note = located.get(name, (None, None))
            if path is None:
                res.status, res.reason = MISSING, f"{name}.ipynb was not handed in"
                continue
            res.file = str(path.relative_to(folder))
            if note:
                self._finding(name, "notebook", note)
            nb, why = read_notebook(path)
            if nb is None:
                res.status, res.reason = FAILED, why
                self._finding(name, "notebook", why)
                continue
            try:
                past = [nbformat.reads(t, as_version=4) for t in self.assignment.history.get(name, [])]
                started = started_from(nb, past + [release[name]]) if past else None
                restored, findings = restore(nb, release[name], started)
                findings += review_notebook(restored, release[name])
                nbformat.write(restored, self.sub / f"{name}.ipynb")
            except Exception as e:  # noqa: BLE001 - a notebook too broken to rebuild is reported, not fatal
                why = f"{path.name} could not be rebuilt for grading ({type(e).__name__}: {e})"
                res.status, res.reason = FAILED, why
                self._finding(name, "notebook", res.reason)
                continue
            self.result.findings += [replace(f, notebook=name) for f in findings]
            self.to_grade.append(name)

    def _copy_other_files(self, folder: Path) -> None:
        """timestamp.txt if nbgrader can read it, and every other file, as stock nbgrader does
        (release_feedback needs submission_secret.txt)."""
        for p in submission_files(folder / ASSIGNMENT):
            rel = p.relative_to(folder / ASSIGNMENT)
            if str(rel) == "timestamp.txt":
                if parse_time(p.read_text(errors="replace")) is not None:
                    shutil.copy2(p, self.sub / rel)
                else:  # any unreadable time: graded as if none was given
                    self._finding(
                        "submission", "timestamp.txt", "timestamp.txt is not a time nbgrader can read: ignored"
                    )
            elif p.suffix != ".ipynb" and p.stat().st_size <= MAX_NOTEBOOK_BYTES:
                (self.sub / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, self.sub / rel)

    # ------------------------------------------------------------------ run, read back
    def run(self, threads: int, sandbox: bool, cell_timeout: int | None, stop, runs: NbgraderRuns) -> None:
        """nbgrader on the notebooks to grade (one by one if it fails on them together), then its result read back."""
        if self.to_grade:
            extra, prestart = self._arguments(threads, sandbox, cell_timeout)
            budget = 120 + 200 * max(1, len(self.to_grade))
            student = self.submission.student

            def autograde(more: list[str]) -> tuple[int, str]:
                return nbgrader_autograde(self.private, student, extra + more, self.log, budget, stop, runs, prestart)

            rc, why = autograde([])
            failed = {}
            if rc != 0:  # one bad notebook must not sink the others: grade them one by one
                for name in self.to_grade:
                    rc1, why1 = autograde([f"--notebook={name}"])
                    if rc1 != 0 or not (self.graded_dir / f"{name}.ipynb").exists():
                        failed[name] = f"nbgrader could not grade it: {why1 or why}"
            self._read_back(failed, why)
        for name, res in self.result.notebooks.items():
            if res.status != GRADED:
                res.settle(self.assignment.grade_ids(name))
        if self.graded_dir.is_dir():
            self.result.graded = {
                p.name: p.read_bytes() for p in sorted(self.graded_dir.iterdir()) if p.is_file() and not p.is_symlink()
            }
        self.result.log = self.log.read_text(errors="replace") if self.log.exists() else ""

    def _arguments(self, threads: int, sandbox: bool, cell_timeout: int | None) -> tuple[list[str], dict | None]:
        """nbgrader's command-line settings for this grading, and the kernels' settings for their fork server."""
        extra = [
            f"--RunResult.path={self.handed_back}",
            f"--SandboxExecute.scratch_dir={self.base / 'scratch'}",
            f"--SandboxExecute.threads={threads}",
        ]
        if not sandbox:
            extra.append("--SandboxExecute.sandbox=False")
        if self.assignment.partial_credit:
            weights = self.base / "partial_credit.json"
            weights.write_text(json.dumps(self.assignment.partial_credit), encoding="utf-8")
            extra.append(f"--Verdict.partial_credit_file={weights}")
        if cell_timeout:
            extra.append(f"--SandboxExecute.timeout={cell_timeout}")
        kernels = self.assignment.kernels
        if not (sandbox and kernels):
            return extra, None
        return extra, {"scratch": str(self.base / "scratch"), "threads": threads, **kernels}

    def _read_back(self, failed: dict[str, str], why: str) -> None:
        """Each notebook to grade, from the run's file: graded (its cells' endings, verdicts and points, what
        happened while grading as findings) or failed (no graded notebook, or nbgrader failed on it)."""
        run = read_run(self.handed_back)
        if run.get("timestamp"):
            self.result.timestamp = datetime.fromisoformat(run["timestamp"])
        for name in self.to_grade:
            res, part = self.result.notebooks[name], run["notebooks"].get(name)
            if name in failed:
                res.status, res.reason = FAILED, failed[name]
            elif not (self.graded_dir / f"{name}.ipynb").exists() or part is None:
                res.status, res.reason = FAILED, f"nbgrader could not grade it: {why or 'no graded notebook'}"
            else:
                res.status = GRADED
                self._cells(name, res, part)

    def _cells(self, name: str, res: NotebookResult, part: dict) -> None:
        """One graded notebook's test cells from its part of the run's file; what happened while grading (timeouts,
        dead kernels) becomes a finding."""
        details: dict[int, str] = {}  # cell index → what happened to it
        for ev in part["events"]:
            if ev["kind"] != "restarted":
                self._finding(name, ev["where"], f"while grading: {ev['detail']}")
                details.setdefault(ev["cell"], ev["detail"])
        for gid in self.assignment.grade_ids(name):
            ran = part["cells"].get(gid, {"status": "ok", "verdict": {}})
            verdict = CellVerdict.from_json(dict(ran["verdict"])) if ran.get("verdict") else None
            if ran["status"] in RAN:
                res.cells[gid] = CellStatus(GRADED, "", verdict, ran.get("score"))
            else:
                why = details.get(ran.get("index", -1), ran["status"])
                res.cells[gid] = CellStatus(FAILED, why, None, ran.get("score"))
        res.comments = dict(part["comments"])
        res.late_penalty = part["late_penalty"]
        bad = [g for g, c in res.cells.items() if c.status != GRADED]
        if bad:
            res.reason = f"{len(bad)} test cell(s) could not run to the end: {', '.join(bad)}"
