"""``make workers``: a Dask scheduler and N worker processes on this machine, for ``make autograde
SCHEDULER=tcp://127.0.0.1:8786``; and ``local_cluster()`` for the tests and the benchmark.

Each worker is a process of its own (under a nanny that restarts it if it dies) with one task
slot: a task grades one student, and one student's grading uses about one core (the nbgrader
process and the sandboxed kernel take turns). Workers on other machines join the same scheduler
with ``dask worker tcp://HOST:8786 --nthreads 1 --nworkers N`` from the course's environment
(README, instructor guide): they need the course's Python packages and bubblewrap, not the
course folder, since the files of a submission travel with its task.
"""

from __future__ import annotations

import time


def local_cluster(workers: int = 2, *, port: int = 0, host: str = "127.0.0.1", dashboard: str | None = ":0"):
    """A LocalCluster of ``workers`` processes with one task slot each (close it when done)."""
    from distributed import LocalCluster  # lazy: dask's distributed only when a cluster is started

    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host=host,
        scheduler_port=port,
        dashboard_address=dashboard,
        memory_limit=0,
        silence_logs=40,
    )


def serve(workers: int, *, port: int = 8786, host: str = "127.0.0.1", dashboard: str = ":8787") -> None:
    if workers < 0:
        raise ValueError(f"--workers must be 0 (a scheduler only) or more, got {workers}")
    cluster = local_cluster(workers, port=port, host=host, dashboard=dashboard)
    try:
        print(f"Dask scheduler at {cluster.scheduler_address} with {workers} worker process(es), one task slot each")
        print(f"dashboard: {cluster.dashboard_link}")
        print(
            f"grade on it: make autograde SCHEDULER={cluster.scheduler_address}   (Ctrl-C here stops the cluster)",
            flush=True,
        )
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopping the workers and the scheduler")
    finally:
        cluster.close()
