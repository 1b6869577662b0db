"""Where grading runs: threads of the autograde process, or the workers of a Dask cluster.

Both take a ``Submission`` and the ``Assignment`` (data, not paths) and give back a future of the submission's
``Result`` (``grade.grade``); the scheduling loop hands each result to its policy as it comes back. A Dask worker
needs the course's Python environment and bubblewrap, not the course folder.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import socket
import time
import uuid
from pathlib import Path

from ..core.results import Result
from ..sandbox.bubblewrap import SandboxMissing, sandbox_status
from .assignment import Assignment
from .grade import grade
from .nbgrader_run import NbgraderRuns, Stopped, ZygoteRuns
from .submission import Submission


class LocalGraders:
    """N students at once in threads of this process (``--jobs N``). ``runs``: how their nbgrader processes start
    (each afresh by default; ``warm_nbgrader.WarmRuns`` for a class and the grading service: each forked from the warm
    nbgrader, its kernels from one kernel zygote); whoever gives them stops what they start (``sandbox/zygote.py``)."""

    def __init__(
        self, jobs: int, work: Path, sandbox: bool, cell_timeout: int | None, runs: NbgraderRuns | None = None
    ):
        self.jobs, self.work, self.sandbox, self.cell_timeout = jobs, work, sandbox, cell_timeout
        self.pool = cf.ThreadPoolExecutor(max_workers=jobs)
        self.threads = max(1, (os.cpu_count() or 1) // jobs)
        self.runs = runs if runs is not None else NbgraderRuns()

    def describe(self) -> str:
        return f"{self.jobs} at a time"

    def capacity(self) -> int:
        return self.jobs

    def submit(self, submission: Submission, assignment: Assignment):
        return self.pool.submit(
            grade,
            assignment,
            submission,
            threads=self.threads,
            sandbox=self.sandbox,
            cell_timeout=self.cell_timeout,
            work=self.work,
            stop=self.runs.stopping.is_set,
            runs=self.runs,
        )

    def result(self, fut) -> Result:
        return fut.result()

    def infrastructure_error(self, e: BaseException) -> bool:
        return isinstance(e, Stopped)

    def stop(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.runs.stop_all()

    def close(self) -> None:
        self.pool.shutdown(wait=True)


class DaskGraders:
    """Each student a task on the workers of a running Dask cluster (``--scheduler ADDRESS``)."""

    def __init__(self, address: str, sandbox: bool, cell_timeout: int | None, log=print, zygote: bool = False):
        """``zygote``: each worker forks the kernels from a kernel zygote of its own (the grading service)."""
        from distributed import Client, Event  # lazy: dask's distributed only with --scheduler

        self.client = Client(address, timeout="30s")
        self.sandbox, self.cell_timeout, self.zygote = sandbox, cell_timeout, zygote
        self.event_name = f"wt-stop-{uuid.uuid4().hex}"
        self.event = Event(self.event_name, client=self.client)
        info = self.client.scheduler_info()
        log(
            f"autograde: Dask scheduler {address}, {len(info.get('workers', {}))} worker(s) with "
            f"{self.capacity()} task slot(s); dashboard: {self.client.dashboard_link}"
        )

    def describe(self) -> str:
        return f"on the Dask cluster ({self.capacity()} task slots now)"

    def capacity(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def submit(self, submission: Submission, assignment: Assignment):
        return self.client.submit(
            grade_on_dask_worker,
            submission,
            assignment,
            self.sandbox,
            self.cell_timeout,
            self.event_name,
            self.zygote,
            key=f"grade-{submission.student}-{uuid.uuid4().hex[:8]}",
            pure=False,
        )

    def result(self, fut) -> Result:
        return fut.result()

    def infrastructure_error(self, e: BaseException) -> bool:
        import distributed  # lazy: dask's distributed only with --scheduler

        return isinstance(
            e,
            (
                Stopped,
                distributed.client.FutureCancelledError,
                distributed.scheduler.KilledWorker,
                cf.CancelledError,
                OSError,
                TimeoutError,
            ),
        ) or type(e).__module__.startswith("distributed")

    def stop(self) -> None:
        try:
            self.event.set()  # graders on the workers kill their nbgrader runs within 2 s
            time.sleep(2.5)
        except Exception:  # noqa: BLE001 - the scheduler may be gone
            pass
        self.close()

    def close(self) -> None:
        try:
            self.client.close(timeout=10)
        except Exception:  # noqa: BLE001
            pass


_worker_runs: ZygoteRuns | None = None


def _zygote_runs() -> ZygoteRuns:
    """This worker's nbgrader runs that take their kernels from its kernel zygote (one per worker process)."""
    global _worker_runs
    if _worker_runs is None:
        _worker_runs = ZygoteRuns()
    return _worker_runs


def grade_on_dask_worker(
    submission: Submission,
    assignment: Assignment,
    sandbox: bool,
    cell_timeout: int | None,
    stop_event: str,
    zygote: bool = False,
) -> Result:
    """The task a Dask worker runs: one submission, graded on this worker (threads: the worker's cores
    shared by its task slots); returns the Result. Stops when the run's Event is set. With
    ``zygote``, the kernels come from the worker's kernel zygote (started at its first such task)."""
    from distributed import Event, get_worker  # lazy: on a Dask worker only, not in a --jobs run

    if sandbox:
        status = sandbox_status()
        if not status.ok:
            raise SandboxMissing(f"worker {socket.gethostname()}: {status.message()}")
    worker = get_worker()
    slots = max(1, worker.state.nthreads)
    threads = max(1, (os.cpu_count() or 1) // slots)
    event = Event(stop_event)
    asked_at, stopped = 0.0, False

    def stop() -> bool:
        nonlocal asked_at, stopped
        if time.monotonic() - asked_at >= 2.0:  # ask the scheduler at most every 2 s
            asked_at = time.monotonic()
            try:
                stopped = event.is_set()
            except Exception:  # noqa: BLE001 - scheduler unreachable: go on; the task is dropped anyway
                pass
        return stopped

    result = grade(
        assignment,
        submission,
        threads=threads,
        sandbox=sandbox,
        cell_timeout=cell_timeout,
        work=Path(worker.local_directory) / "wt-grading",
        stop=stop,
        runs=_zygote_runs() if zygote and sandbox else None,
    )
    result.worker = f"{socket.gethostname()} {worker.address}"
    return result
