"""The one scheduling loop of the course's grading: claim, submit, poll, classify, merge.

``make autograde`` (``autograder/autograde.py``) and the grading service (``service/serve.py``) both
hand work to the same ``Scheduler``; what differs between them is the ``Queue`` each gives it, the run's side of
the loop (``autograder/autograde.ClassQueue``, ``service/on_submission.OnSubmission``):

- which work is next (``Queue.ready``): for ``make autograde``, the class, biggest submissions first;
  for the service, the attempts without a record, oldest first, one at a time per student;
- what a result becomes (``Queue.graded``): merged into the course / the attempt recorded and its
  feedback released;
- what a failure becomes (``Queue.failed``): the grader's is the student's failed result and the
  infrastructure's leaves the student for the next run / a dead worker is tried again (three times in
  all), then the attempt is recorded as failed;
- progress and logging: a progress bar and a line per student / the service's log and status page.

A pass (``step``) asks the queue for work, claimed, while the graders have room, submits each job,
then takes every finished one: its result to ``Queue.graded``, or its error, classified by the
graders (``Graders.infrastructure_error``: a worker that died, a run being stopped) as the grading
infrastructure's or the grader's, to ``Queue.failed``. A ``KeyboardInterrupt`` is never classified:
it stops the loop, and the caller stops the graders. The batch runs passes until its queue is empty
(``run``); the service runs one pass every few seconds for as long as it is up.

Graders (threads of the process, or the workers of a Dask cluster: ``autograder/graders.py``) are
anything with the ``Graders`` methods; this module imports no other part of ``course/``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Generic, Protocol, TypeVar

Work = TypeVar("Work")  # what the queue holds: a student's name, an attempt
Job = TypeVar("Job")  # what a grader is given: one submission, as data (autograder/submission.py)
Given = TypeVar("Given")  # what every grader is given with it: the assignment, as data (autograder/assignment.py)
Result = TypeVar("Result")  # what a grader gives back (core/results.py)
JobIn = TypeVar("JobIn", contravariant=True)
GivenIn = TypeVar("GivenIn", contravariant=True)
ResultOut = TypeVar("ResultOut", covariant=True)


class Future(Hashable, Protocol):
    """A grading under way, as ``concurrent.futures`` and Dask both give one."""

    def done(self) -> bool: ...


class Graders(Protocol[JobIn, GivenIn, ResultOut]):
    """Where the grading runs (``autograder/graders.py``: ``LocalGraders``, ``DaskGraders``)."""

    def describe(self) -> str:
        """How many at once, and where, for the log."""
        ...

    def capacity(self) -> int:
        """How many jobs can run at once now."""
        ...

    def submit(self, job: JobIn, assignment: GivenIn) -> Future: ...

    def result(self, fut: Future) -> ResultOut:
        """The finished job's result; raises what the grading raised."""
        ...

    def infrastructure_error(self, e: BaseException) -> bool:
        """Whether ``e`` is the grading infrastructure's (a stopped run, a dead worker), not the grader's."""
        ...

    def stop(self) -> None:
        """Kill the gradings under way (Ctrl-C, or a service stopped mid-grading)."""
        ...

    def close(self) -> None:
        """Release the graders once nothing runs."""
        ...


class Queue(Protocol[Work, Job, Given, Result]):
    """What one kind of run decides: which work next, what each ending becomes; the ``Scheduler`` calls it (see the
    list in the module doc)."""

    @property
    def assignment(self) -> Given:
        """The assignment every job is submitted with (the service prepares it again when source/ changes)."""
        ...

    def ready(self, loop: Scheduler[Work, Job, Given, Result]) -> Iterator[tuple[Work, Job]]:
        """The next work to grade, each claimed, with its job, for as long as ``loop.room()``; work that needs
        no grading (graded already, refused, unreadable) is settled here and not yielded."""
        ...

    def started(self, loop: Scheduler[Work, Job, Given, Result], work: Work) -> None:
        """``work`` was submitted (and is among ``loop.busy()``)."""
        ...

    def not_started(self, work: Work, error: Exception) -> None:
        """The graders refused ``work``'s job (``submit`` raised ``error``)."""
        ...

    def graded(self, work: Work, job: Job, result: Result) -> None:
        """``work``'s result came back: merge or record it, and release the claim."""
        ...

    def failed(self, work: Work, job: Job, error: BaseException, infrastructure: bool) -> None:
        """``work``'s grading raised ``error`` (``infrastructure``: the grading infrastructure's, not the grader's);
        the queue releases the claim, and raises ``error`` again to stop the loop."""
        ...


class Scheduler(Generic[Work, Job, Given, Result]):
    """The gradings under way and the pass that moves them on (see the module doc)."""

    def __init__(self, graders: Graders[Job, Given, Result], queue: Queue[Work, Job, Given, Result]):
        self.graders, self.queue = graders, queue
        self.running: dict[Future, tuple[Work, Job]] = {}

    def room(self) -> bool:
        """Whether the graders can take one more job now."""
        return len(self.running) < self.graders.capacity()

    def busy(self) -> list[Work]:
        """The work being graded now."""
        return [work for work, _ in self.running.values()]

    def run(self, more: Callable[[], bool], pause: Callable[[bool, int], None]) -> None:
        """Passes until neither ``more()`` (work in the queue) nor a grading under way is left;
        ``pause(finished, running)`` between two passes (progress, and a wait when nothing finished)."""
        while more() or self.running:
            finished = self.step()
            pause(finished, len(self.running))

    def step(self) -> bool:
        """One pass: fill, then collect; whether any grading finished."""
        self.fill()
        return self.collect()

    def fill(self) -> None:
        """Submit the queue's next work while the graders have room."""
        for work, job in self.queue.ready(self):
            try:
                fut = self.graders.submit(job, self.queue.assignment)
            except Exception as e:  # noqa: BLE001 - the queue says what a refused job means
                self.queue.not_started(work, e)
                continue
            self.running[fut] = (work, job)
            self.queue.started(self, work)

    def collect(self) -> bool:
        """Hand every finished grading to the queue, its error classified; whether any finished."""
        finished = [fut for fut in self.running if fut.done()]
        for fut in finished:
            work, job = self.running.pop(fut)
            try:
                result = self.graders.result(fut)
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # noqa: BLE001 - classified here, decided by the queue
                self.queue.failed(work, job, e, self.graders.infrastructure_error(e))
                continue
            self.queue.graded(work, job, result)
        return bool(finished)
