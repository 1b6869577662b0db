"""Grading one student, start to end, in a private course folder: the stages in order.

``grade_job(job, pack)`` takes the student's files and the assignment as data and returns a
``StudentResult``; it reads and writes nothing of the course, so it runs in a thread of the
autograde process or on a Dask worker alike:

1. **locate** (``locate.py``): which file handed in is which notebook;
2. **restore** (``restore.py``): protected cells put back as released, each change a finding;
3. **scan** (``scan.py``): suspicious code in what the student wrote, as findings;
4. **run**: real ``nbgrader autograde`` in its own process, on a private course that has its own
   SQLite gradebook, the kernel in the sandbox (``execute.py``); if nbgrader fails on the student
   as a whole, each notebook is graded on its own, so one bad notebook does not sink the others;
5. **verdict** (``verdict.py``, inside nbgrader): the hidden tests' results judged outside the
   kernel; here, each test cell's status is read from the sandboxed run's report (``graded.py``).

Merging into the course (``merge.py``) and the record (``record.py``) come after, in the
autograde process.
"""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import nbformat

from ..cells import grade_ids
from ..core.results import FAILED, GRADED, MISSING, Finding, NotebookResult
from ..gradebook import private_course_config
from ..layout import ASSIGNMENT
from ..term.times import parse_time
from .graded import cell_statuses, scores_of
from .locate import MAX_NOTEBOOK_BYTES, Job, locate, read_notebook, submission_files, unpack
from .nbgrader_run import NbgraderRuns, nbgrader_autograde
from .pack import Pack
from .record import StudentResult
from .restore import restore, started_from
from .scan import scan_notebook


def grade_job(
    job: Job,
    pack: Pack,
    *,
    threads: int,
    sandbox: bool,
    cell_timeout: int | None = None,
    work: Path | None = None,
    stop=None,
    runs: NbgraderRuns | None = None,
) -> StudentResult:
    """Grade one student in a private course folder of its own (a temporary folder under ``work``)
    and return the result as data. Reads and writes nothing of the course: it can run anywhere
    the course's Python environment (and bubblewrap) is. ``runs``: where to register the nbgrader
    processes, for a stop to kill them."""
    stop = stop or (lambda: False)
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix=f"wt-grade-{job.student[:40]}-", dir=work))
    try:
        grading = _SubmissionRun(base, job, pack)
        grading.prepare()
        grading.run(threads=threads, sandbox=sandbox, cell_timeout=cell_timeout, stop=stop, runs=runs or NbgraderRuns())
        result = grading.result
        result.seconds = time.monotonic() - t0
        return result
    finally:
        shutil.rmtree(base, ignore_errors=True)


class _SubmissionRun:
    """One student's grading in the private course under ``base``."""

    def __init__(self, base: Path, job: Job, pack: Pack):
        self.base, self.job, self.pack = base, job, pack
        self.private = base / "course"
        self.sub = self.private / "submitted" / job.student / ASSIGNMENT
        self.reports, self.log = base / "reports", base / "nbgrader.log"
        self.graded_dir = self.private / "autograde" / job.student / ASSIGNMENT
        self.result = StudentResult(
            job.student, job.submission, job.assignment, {}, list(job.findings), worker=socket.gethostname()
        )
        self.to_grade: list[str] = []

    def _finding(self, notebook: str, cell: str, text: str) -> None:
        self.result.findings.append(Finding(cell, text, notebook))

    # ------------------------------------------------------------------ locate, restore, scan
    def prepare(self) -> None:
        """The private course, with the student's notebooks located, restored and scanned in it."""
        self.sub.mkdir(parents=True)
        (self.private / "source" / ASSIGNMENT).mkdir(parents=True)
        (self.private / "gradebook.db").write_bytes(self.pack.db)
        (self.base / "course_config.py").write_text(self.pack.config, encoding="utf-8")
        (self.base / "scratch").mkdir()
        private_course_config(self.private, self.base / "course_config.py")
        folder = self.base / "handed-in"
        unpack(self.job, folder)
        release = {n: nbformat.reads(self.pack.release[n], as_version=4) for n in self.pack.notebooks}
        located = locate(folder, self.pack.notebooks, {n: grade_ids(nb) for n, nb in release.items()})
        self._copy_other_files(folder)
        for name in self.pack.notebooks:
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
                past = [nbformat.reads(t, as_version=4) for t in self.pack.history.get(name, [])]
                started = started_from(nb, past + [release[name]]) if past else None
                restored, findings = restore(nb, release[name], started)
                findings += scan_notebook(restored, release[name])
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

    # ------------------------------------------------------------------ run, verdict
    def run(self, *, threads: int, sandbox: bool, cell_timeout: int | None, stop, runs: NbgraderRuns) -> None:
        result, pack = self.result, self.pack
        extra = [
            f"--SandboxExecute.report_dir={self.reports}",
            f"--SandboxExecute.scratch_dir={self.base / 'scratch'}",
            f"--SandboxExecute.threads={threads}",
        ]
        if not sandbox:
            extra.append("--SandboxExecute.sandbox=False")
        if pack.partial_credit:
            weights = self.base / "partial_credit.json"
            weights.write_text(json.dumps(pack.partial_credit), encoding="utf-8")
            extra.append(f"--Verdict.partial_credit_file={weights}")
        if cell_timeout:
            extra.append(f"--SandboxExecute.timeout={cell_timeout}")
        budget = 120 + 200 * max(1, len(self.to_grade))
        prestart = (
            {"scratch": str(self.base / "scratch"), "threads": threads, **pack.kernels}
            if sandbox and pack.kernels
            else None
        )
        if self.to_grade:
            rc, why = nbgrader_autograde(self.private, result.student, extra, self.log, budget, stop, runs, prestart)
            if rc != 0:
                # one bad notebook must not sink the others: grade them one by one
                for name in self.to_grade:
                    rc1, why1 = nbgrader_autograde(
                        self.private,
                        result.student,
                        extra + [f"--notebook={name}"],
                        self.log,
                        budget,
                        stop,
                        runs,
                        prestart,
                    )
                    if rc1 != 0 or not (self.graded_dir / f"{name}.ipynb").exists():
                        res = result.notebooks[name]
                        res.status, res.reason = FAILED, f"nbgrader could not grade it: {why1 or why}"
            for name in self.to_grade:
                res = result.notebooks[name]
                if res.status == FAILED:
                    continue
                if not (self.graded_dir / f"{name}.ipynb").exists():
                    res.status, res.reason = FAILED, f"nbgrader could not grade it: {why or 'no graded notebook'}"
                    continue
                res.status = GRADED
                self._cell_statuses(name, pack.grade_cells.get(name, []))
        for name, res in result.notebooks.items():
            if res.status != GRADED:
                res.settle(gid for gid, _ in pack.grade_cells[name])
        if self.graded_dir.is_dir():
            result.graded = {
                p.name: p.read_bytes() for p in sorted(self.graded_dir.iterdir()) if p.is_file() and not p.is_symlink()
            }
        if any(r.status == GRADED for r in result.notebooks.values()):
            result.scores = scores_of(self.private / "gradebook.db", result.student)
        result.log = self.log.read_text(errors="replace") if self.log.exists() else ""

    def _cell_statuses(self, name: str, cells) -> None:
        """Each test cell's status from the sandboxed run's report; what happened while grading
        (timeouts, dead kernels) becomes a finding."""
        for where, text in cell_statuses(
            self.result.notebooks[name], self.reports / f"{name}.json", self.graded_dir / f"{name}.ipynb", cells
        ):
            self._finding(name, where, text)
