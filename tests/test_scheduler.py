"""core/scheduler.py on its own: the loop that make autograde and the grading service both run.

The graders here are real threads (concurrent.futures), the jobs small functions; the policy records
what the loop told it. What is checked: work is claimed only while there is room, every job ends in
exactly one of graded / failed / not started, errors are classified by the graders, a policy that raises
in `failed` stops the loop, Ctrl-C is never classified, and `run` ends only when nothing is left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from whole_transformer.course.core.scheduler import Scheduler


class Dead(Exception):
    """What a dead worker raises: the infrastructure's."""


class ThreadGraders:
    """`capacity` threads; a job is a function of the pack."""

    def __init__(self, capacity: int, refuse: set[str] | None = None):
        self.pool = ThreadPoolExecutor(capacity)
        self.cap = capacity
        self.refuse = refuse or set()
        self.stopped = self.closed = False
        self.most_at_once = 0
        self._now = 0
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"{self.cap} threads"

    def capacity(self) -> int:
        return self.cap

    def submit(self, job: tuple[str, Callable[[int], int]], pack: int) -> Future:
        name, fn = job
        if name in self.refuse:
            raise RuntimeError(f"refused {name}")

        def run() -> int:
            with self._lock:
                self._now += 1
                self.most_at_once = max(self.most_at_once, self._now)
            try:
                return fn(pack)
            finally:
                with self._lock:
                    self._now -= 1

        return self.pool.submit(run)

    def result(self, fut: Future) -> int:
        return fut.result()

    def infrastructure_error(self, e: BaseException) -> bool:
        return isinstance(e, Dead)

    def stop(self) -> None:
        self.stopped = True

    def close(self) -> None:
        self.closed = True
        self.pool.shutdown(wait=True)


class Recording:
    """A policy over a queue of named jobs that records every call the loop makes."""

    def __init__(self, jobs: dict[str, Callable[[int], int]], reraise: bool = False):
        self.queue = list(jobs.items())
        self.claimed: list[str] = []
        self.started_: list[str] = []
        self.graded_: dict[str, int] = {}
        self.failed_: dict[str, tuple[str, bool]] = {}
        self.not_started_: dict[str, str] = {}
        self.reraise = reraise

    @property
    def assignment(self) -> int:
        return 10

    def ready(self, loop: Scheduler) -> Iterator[tuple[str, tuple[str, Callable[[int], int]]]]:
        while self.queue and loop.room():
            name, fn = self.queue.pop(0)
            self.claimed.append(name)
            yield name, (name, fn)

    def started(self, loop: Scheduler, work: str) -> None:
        assert work in loop.busy()
        self.started_.append(work)

    def not_started(self, work: str, error: Exception) -> None:
        self.not_started_[work] = str(error)

    def graded(self, work: str, job: object, result: int) -> None:
        self.graded_[work] = result

    def failed(self, work: str, job: object, error: BaseException, infrastructure: bool) -> None:
        self.failed_[work] = (type(error).__name__, infrastructure)
        if self.reraise:
            raise error


def slow(value: int, seconds: float = 0.05) -> Callable[[int], int]:
    def fn(pack: int) -> int:
        time.sleep(seconds)
        return pack + value

    return fn


def raising(error: BaseException) -> Callable[[int], int]:
    def fn(pack: int) -> int:
        raise error

    return fn


def run_all(graders: ThreadGraders, policy: Recording) -> list[tuple[bool, int]]:
    loop = Scheduler(graders, policy)
    pauses: list[tuple[bool, int]] = []

    def pause(finished: bool, running: int) -> None:
        pauses.append((finished, running))
        if not finished:
            time.sleep(0.005)

    try:
        loop.run(lambda: bool(policy.queue), pause)
    finally:
        graders.close()
    assert not loop.running and not loop.busy()
    return pauses


def test_every_job_ends_graded_with_the_pack_and_never_more_at_once_than_the_room():
    graders = ThreadGraders(2)
    policy = Recording({f"s{i}": slow(i) for i in range(7)})
    pauses = run_all(graders, policy)
    assert policy.graded_ == {f"s{i}": 10 + i for i in range(7)}
    assert policy.claimed == policy.started_ == [f"s{i}" for i in range(7)]
    assert graders.most_at_once <= 2 and all(running <= 2 for _, running in pauses)
    assert not policy.failed_ and not policy.not_started_ and graders.closed


def test_errors_are_classified_by_the_graders_and_the_rest_goes_on():
    graders = ThreadGraders(2)
    policy = Recording({"ok": slow(1), "bug": raising(ValueError("student")), "gone": raising(Dead()), "ok2": slow(2)})
    run_all(graders, policy)
    assert policy.graded_ == {"ok": 11, "ok2": 12}
    assert policy.failed_ == {"bug": ("ValueError", False), "gone": ("Dead", True)}


def test_a_job_the_graders_refuse_is_not_started_and_does_not_take_room():
    graders = ThreadGraders(1, refuse={"b"})
    policy = Recording({"a": slow(1), "b": slow(2), "c": slow(3)})
    run_all(graders, policy)
    assert policy.not_started_ == {"b": "refused b"}
    assert policy.graded_ == {"a": 11, "c": 13} and "b" not in policy.started_


def test_a_policy_that_raises_in_failed_stops_the_loop():
    graders = ThreadGraders(1)
    policy = Recording({"bad": raising(Dead()), "later": slow(1)}, reraise=True)
    with pytest.raises(Dead):
        run_all(graders, policy)
    assert "later" not in policy.graded_


def test_ctrl_c_in_a_grading_is_never_classified_it_stops_the_loop():
    graders = ThreadGraders(1)
    policy = Recording({"stop": raising(KeyboardInterrupt()), "later": slow(1)})
    with pytest.raises(KeyboardInterrupt):
        run_all(graders, policy)
    assert policy.failed_ == {} and policy.graded_ == {}


def test_step_reports_whether_anything_finished_and_run_waits_for_work_under_way():
    graders = ThreadGraders(2)
    policy = Recording({"a": slow(1, 0.2)})
    loop = Scheduler(graders, policy)
    assert loop.step() is False  # submitted, not finished yet
    assert loop.busy() == ["a"] and loop.room()  # one of two threads busy
    # the queue is empty, but run goes on while a grading is under way
    loop.run(lambda: False, lambda finished, running: time.sleep(0.01))
    assert policy.graded_ == {"a": 11} and not loop.running
    graders.close()
