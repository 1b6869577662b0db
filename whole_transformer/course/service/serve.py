"""``python -m whole_transformer.course serve``: grade each attempt the moment it is handed in.

The service runs the course's one scheduling loop (``core/scheduler.py``, which ``make autograde``
runs too) a pass every few seconds, with its own queue (``on_submission.py``). Each pass: read
course.toml (the [service] policy may change while it runs; off means idle), prepare the assignment
again if source/ changed, then let the loop take the exchange's attempts without a record (oldest
first, one at a time per student), refuse them, report them as malformed, or grade them in the
sandbox (threads here, or the workers of a Dask cluster with ``--scheduler``) and end them
(``attempt.py``: into the course, feedback, record).

Beside the instructor's own commands: a student is claimed (``autograder/claims.py``) from the
start of the grading until the record is written, so ``make autograde`` run meanwhile leaves them
to the service, and the service waits for a student ``make autograde`` is grading. One service runs
per course (a lock file). A grading whose worker died is tried again (three times), a grader that
fails is reported: either way only that attempt is touched.

Stopped by Ctrl-C, SIGTERM or SIGHUP, it ends its gradings and leaves nothing in /tmp: every temporary
folder of the service and of what it starts (the kernel zygote's, the fork servers', the kernels') is made
inside one folder of its own (``TMPDIR`` for the service and its children), removed as it stops.
"""

from __future__ import annotations

import fcntl
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import env_vars
from ..autograder import warm_nbgrader
from ..autograder.assignment import Assignment, prepare
from ..autograder.claims import Claims
from ..autograder.graders import DaskGraders, LocalGraders
from ..autograder.submission import Submission
from ..core.results import Result
from ..core.scheduler import Scheduler
from ..gradebook import source_digest
from ..layout import Course, exchange_root, inbound
from ..plugins.app import check_course_config
from ..reports.feedback import secrets
from ..sandbox import zygote
from ..sandbox.bubblewrap import check_sandbox
from ..term.settings import Settings, SettingsError, load
from .attempt import Attempts, Prepared
from .decision import describe
from .on_submission import Grading, OnSubmission
from .status import ServiceState, serve_status
from .watch import Store


class Service:
    """The grading service of one course: its settings, its graders and the scheduling loop's passes."""

    def __init__(
        self,
        course: Course,
        exchange: Path,
        status: ServiceState,
        *,
        jobs: int = 1,
        scheduler: str | None = None,
        no_sandbox: bool = False,
        cell_timeout: int | None = None,
    ):
        self.course, self.exchange, self.status = course, exchange, status
        self.jobs, self.scheduler, self.no_sandbox, self.cell_timeout = jobs, scheduler, no_sandbox, cell_timeout
        settings = load(course)
        store, self.claims = Store(course), Claims(course)
        self.work = course.state / "service" / "work"
        self.attempts = Attempts(course, exchange, store, self.work, status.log, settings)
        self.queue = OnSubmission(self.attempts, self.claims, status)
        self.loop: Scheduler[Grading, Submission, Assignment, Result] | None = None  # made by start(), once it is on

    @property
    def settings(self) -> Settings:
        """course.toml as last read."""
        return self.attempts.settings

    @property
    def running(self) -> bool:
        """Whether an attempt is being graded."""
        return self.loop is not None and bool(self.loop.running)

    def start(self) -> None:
        """The assignment prepared and the graders started (once the service is on)."""
        sandbox = check_sandbox(self.no_sandbox)
        check_course_config(self.course.root, "autograde", "make serve")  # else nbgrader's defaults: no sandbox
        if not sandbox:
            self.status.log("WARNING: grading WITHOUT a sandbox: student code runs with your rights")
        shutil.rmtree(self.work, ignore_errors=True)  # this service holds the course's service lock
        self.work.mkdir(parents=True)
        self._prepare()
        graders: LocalGraders | DaskGraders
        if self.scheduler:
            graders = DaskGraders(self.scheduler, sandbox, self.cell_timeout, self.status.log, zygote=True)
        else:
            # each nbgrader run forked from a warm one (autograder/warm_nbgrader.py); the kernel zygote is the
            # service's (own_tmp)
            graders = LocalGraders(self.jobs, self.work, sandbox, self.cell_timeout, warm_nbgrader.WarmRuns())
            given = self.attempts.current.assignment
            kernels = {"threads": graders.threads, **given.kernels} if sandbox and given.kernels else None
            self.status.log(f"serve: {warm_nbgrader.prestart(kernels)}")
        self.loop = Scheduler(graders, self.queue)
        self.status.log(
            f"serve: grading {graders.describe()} ({'sandboxed' if sandbox else 'NO SANDBOX'}); "
            f"exchange {self.exchange}"
        )
        if not inbound(self.exchange).is_dir():
            self.status.log(
                f"serve: WARNING: there is no {inbound(self.exchange)} yet: is the assignment released "
                "to this exchange (nbgrader release_assignment), and is --exchange right?"
            )

    def _prepare(self) -> None:
        """The assignment as source/ has it now (again, after make release changed it)."""
        self.claims.lock("assignment")
        try:
            assignment = prepare(self.course, self.work, self.status.log)
        finally:
            self.claims.unlock("assignment")
        self.attempts.prepared = Prepared(assignment, secrets(self.course), source_digest(self.course))

    def _settings(self) -> None:
        try:
            self.attempts.settings = load(self.course)
        except SettingsError as e:
            self.status.log(f"serve: course.toml cannot be used ({e}); going on with the settings read before")

    def step(self) -> bool:
        """One pass; True when nothing is waiting and nothing is being graded."""
        self._settings()
        if not self.settings.service.enabled:
            if self.status.state != "off":
                self.status.log("serve: off (course.toml [service] enabled = false); waiting for it to be turned on")
            self.status.state = "off"
            return not self.running  # gradings under way are taken once it is on again
        self.status.state = "on: " + describe(self.settings.service)
        if self.loop is None:
            self.start()  # only once it is on: nothing of the course is touched while it is off
        elif not self.loop.running and source_digest(self.course) != self.attempts.current.built_from:
            self.status.log("serve: source/ changed: preparing the assignment again")
            self._prepare()
        assert self.loop is not None
        collected = self.loop.step()
        self.queue.show_running(self.loop)
        return not self.queue.pending and not self.loop.running and not collected

    def close(self) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.graders.stop()  # kills the gradings under way: their attempts have no record, so are graded again
        elif self.loop is not None:
            self.loop.graders.close()
        self.claims.close()
        shutil.rmtree(self.work, ignore_errors=True)


SHORT_TMP = 40  # a TMPDIR longer than this leaves too little of a socket's path: the service's folder goes to /tmp


class Stopped(KeyboardInterrupt):
    """The service was sent SIGTERM or SIGHUP: it stops as after Ctrl-C."""


def _stop(signum, frame) -> None:
    raise Stopped(signal.Signals(signum).name)


@contextmanager
def own_tmp() -> Iterator[Path]:
    """One temporary folder for the service and every process it starts (``TMPDIR``), and SIGTERM and SIGHUP
    taken as Ctrl-C, so that however it is stopped (but SIGKILL) nothing of it stays in /tmp."""
    base = tempfile.gettempdir()
    # the sockets made in it (the fork server's, the zygote's) need a short path: at most 107 bytes in all
    folder = Path(tempfile.mkdtemp(prefix="wt-serve-", dir=base if len(base) <= SHORT_TMP else "/tmp"))
    before = tempfile.tempdir
    main = threading.current_thread() is threading.main_thread()  # signals reach the main thread only
    handlers = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGHUP)} if main else {}
    tempfile.tempdir = str(folder)
    try:
        with env_vars.tmpdir(str(folder)):
            yield folder
    finally:
        try:
            zygote.close_all()  # the kernel zygote and its folder (its atexit would come too late)
            _forget(folder)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            tempfile.tempdir = before
            shutil.rmtree(folder, ignore_errors=True)


def _forget(folder: Path) -> None:
    """multiprocessing's fork server and temporary folder, if started in ``folder``: stopped and forgotten, so a
    later use in this process starts them afresh (the warm nbgrader's runs are forked from that server)."""
    from multiprocessing import forkserver, util

    address = getattr(forkserver._forkserver, "_forkserver_address", None)
    if address and str(address).startswith(str(folder)):  # first: its socket is in the folder cleaned up below
        warm_nbgrader.close()
    clean_up = util._remove_temp_dir  # type: ignore[attr-defined]
    for done in list(util._finalizer_registry.values()):  # type: ignore[attr-defined]
        # its temporary folder's clean-up run now (it forgets the folder), not at exit, when the folder is gone
        if done._callback is clean_up and str(done._args[1]).startswith(str(folder)):
            done()


def serve(
    course: Course,
    exchange: str | None = None,
    *,
    port: int | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    once: bool = False,
    poll: float = 2.0,
    no_sandbox: bool = False,
    echo=print,
) -> int:
    """Run the service until Ctrl-C, SIGTERM or SIGHUP (``once``: until nothing is left to grade). See the module
    doc."""
    with own_tmp(), the_one_service(course) as folder:
        status = ServiceState(folder, echo)
        svc = Service(
            course, exchange_root(course, exchange), status, jobs=jobs, scheduler=scheduler, no_sandbox=no_sandbox
        )
        if once and not svc.settings.service.enabled:
            raise ValueError("course.toml [service] enabled is false: set enabled = true there to grade on submission")
        page = serve_status(status, port) if port is not None else None
        if page is not None:
            status.log(f"serve: status page http://127.0.0.1:{page.server_port}/?token={status.token}")
        try:
            while True:
                idle = svc.step()
                if once and idle:
                    status.log("serve: nothing left to grade")
                    return 0
                time.sleep(0.2 if svc.running else poll)
        except KeyboardInterrupt as e:
            how = str(e) if isinstance(e, Stopped) else "Ctrl-C"
            status.log(f"serve: stopped ({how}); attempts not finished are graded at the next start")
            return 130
        finally:
            svc.close()
            if page is not None:
                page.shutdown()


@contextmanager
def the_one_service(course: Course) -> Iterator[Path]:
    """The service's folder of the course, held by this service alone (a lock file) while it runs."""
    folder = course.state / "service"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "serve.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RuntimeError(
                f"another grading service runs on this course (lock {folder / 'serve.lock'}); "
                "stop it first, or leave it to grade"
            ) from None
        yield folder
