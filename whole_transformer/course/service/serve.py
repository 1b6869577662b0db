"""``python -m whole_transformer.course serve``: grade each attempt the moment it is handed in.

The loop, every few seconds: read course.toml (the [service] policy may change while it runs; off
means idle), list the exchange's inbound folders (``watch.scan``), and for each attempt without a
record, oldest first and one at a time per student: decide under the policy (``policy.decide``),
then refuse it, report it as malformed, or grade it in the sandbox (threads here, or the workers
of a Dask cluster with ``--scheduler``) and finish it (``attempt.graded``).

Beside the instructor's own commands: a student is claimed (``grading.claims``) from the start
of the grading until the record is written, so ``make autograde`` run meanwhile leaves them to
the service, and the service waits for a student ``make autograde`` is grading. One service runs
per course (a lock file). A grading whose worker died is tried again (three times), a grader that
fails is reported: either way only that attempt is touched.
"""

from __future__ import annotations

import fcntl
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..layout import Course
from ..sandbox import zygote
from . import attempt, warm
from .policy import decide, describe
from .status import Status, serve_status
from .watch import FAILED, Store, inbound, scan

if TYPE_CHECKING:
    from ..autograder.graders import DaskGraders, LocalGraders
    from ..autograder.pack import Pack
    from ..autograder.template import Template

RETRIES = 3


def exchange_root(course: Course, given: str | None) -> Path:
    """The exchange: as given, else ``c.Exchange.root`` of the course's nbgrader config, else nbgrader's default."""
    if given:
        return Path(given).resolve()
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course.root)).load_config()
    root = config.Exchange.get("root") if "Exchange" in config else None
    return Path(str(root or "/srv/nbgrader/exchange"))


class Service:
    def __init__(
        self,
        course: Course,
        exchange: Path,
        status: Status,
        *,
        jobs: int = 1,
        scheduler: str | None = None,
        no_sandbox: bool = False,
        cell_timeout: int | None = None,
    ):
        from ..autograder.claims import Claims
        from ..term.settings import load

        self.course, self.exchange, self.status = course, exchange, status
        self.jobs, self.scheduler, self.no_sandbox, self.cell_timeout = jobs, scheduler, no_sandbox, cell_timeout
        self.settings = load(course)
        self.store, self.claims = Store(course), Claims(course)
        self.work = course.state / "service" / "work"
        self.running: dict = {}  # future → (submission, decision, job)
        self.tries: dict[str, int] = {}
        self.graders: LocalGraders | DaskGraders | None = None  # made by start(), once the service is on
        self.template: Template  # set by _prepare(), which start() calls first
        self.pack: Pack
        self.secrets: dict = {}
        self.built_from = ""

    @property
    def ready(self) -> LocalGraders | DaskGraders:
        """The graders, which start() has made by the time anything is graded."""
        assert self.graders is not None, "the service grades only after start()"
        return self.graders

    def start(self) -> None:
        from ..autograder.graders import DaskGraders, LocalGraders
        from ..sandbox.bubblewrap import check_sandbox

        sandbox = check_sandbox(self.no_sandbox)
        if not sandbox:
            self.status.log("WARNING: grading WITHOUT a sandbox: student code runs with your rights")
        shutil.rmtree(self.work, ignore_errors=True)  # this service holds the course's service lock
        self.work.mkdir(parents=True)
        self._prepare()
        graders: LocalGraders | DaskGraders
        if self.scheduler:
            graders = DaskGraders(self.scheduler, sandbox, self.cell_timeout, self.status.log, zygote=True)
        else:
            graders = LocalGraders(self.jobs, self.work, sandbox, self.cell_timeout)
            graders.runs = warm.WarmRuns()  # each nbgrader run forked from a warm one (warm.py)
            kernels = {"threads": graders.threads, **self.pack.kernels} if sandbox and self.pack.kernels else None
            self.status.log(f"serve: {warm.prestart(kernels)}")
        self.graders = graders
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
        from ..autograder.gradebook import source_digest
        from ..autograder.pack import make_pack
        from ..autograder.template import build_template
        from ..reports.feedback import secrets

        self.claims.lock("assignment")
        try:
            self.template = build_template(self.course, self.work, self.status.log)
        finally:
            self.claims.unlock("assignment")
        self.pack, self.secrets = make_pack(self.course, self.template), secrets(self.course)
        self.built_from = source_digest(self.course)

    def _settings(self) -> None:
        from ..term.settings import SettingsError, load

        try:
            self.settings = load(self.course)
        except SettingsError as e:
            self.status.log(f"serve: course.toml cannot be used ({e}); going on with the settings read before")

    def step(self) -> bool:
        """One pass of the loop; True when nothing is waiting and nothing is being graded."""
        from ..autograder.gradebook import source_digest

        self._settings()
        if not self.settings.service.enabled:
            if self.status.state != "off":
                self.status.log("serve: off (course.toml [service] enabled = false); waiting for it to be turned on")
            self.status.state = "off"
            return not self.running and not self._collect()
        self.status.state = "on: " + describe(self.settings.service)
        if self.graders is None:
            self.start()  # only once it is on: nothing of the course is touched while it is off
        elif not self.running and source_digest(self.course) != self.built_from:
            self.status.log("serve: source/ changed: preparing the assignment again")
            self._prepare()
        busy = {sub.student for sub, _, _ in self.running.values()}
        names = {sub.name for sub, _, _ in self.running.values()}
        pending = [s for s in scan(self.exchange) if s.name not in names and not self.store.done(s.name)]
        for sub in pending:
            if sub.problem:
                self._finish(sub, lambda s=sub: attempt.malformed(self, s))
            elif sub.student not in busy and len(self.running) < self.ready.capacity():
                self._start(sub)
            busy.add(sub.student)  # a student's later attempts wait for this one
        names = {sub.name for sub, _, _ in self.running.values()}
        self.status.queue = sum(1 for s in pending if s.name not in names and not self.store.done(s.name))
        collected = self._collect()
        return not pending and not self.running and not collected

    def _start(self, sub) -> None:
        earlier = attempt.graded_by_instructor(self, sub)
        if earlier is not None:
            self._finish(sub, lambda: earlier)
            return
        d = decide(self.settings, sub.student, sub.when, self.store.history(sub.student))
        if not d.grade:
            self._finish(sub, lambda: attempt.refuse(self, sub, d))
            return
        if not self.claims.claim(sub.student):
            return  # make autograde is grading this student now: next pass
        try:
            job = attempt.make_job(sub, self.template, self.work / "stage")
            fut = self.ready.submit(job, self.pack)
        except Exception as e:  # noqa: BLE001 - only this attempt fails
            self.claims.release(sub.student)
            why = f"{type(e).__name__}: {e}"
            self._finish(sub, lambda: attempt.failed(self, sub, why))
            return
        self.running[fut] = (sub, d, job)
        self.status.running = sorted(f"{s.student} ({s.name.split('+')[2]})" for s, _, _ in self.running.values())
        self.status.log(f"grading {sub.student}: attempt handed in {sub.when:%Y-%m-%d %H:%M:%S} UTC ({sub.name})")
        if sub.handin and sub.handin.finding:
            self.status.log(f"INTEGRITY {sub.student}: {sub.handin.finding}")

    def _collect(self) -> bool:
        finished = [f for f in self.running if f.done()]
        for fut in finished:
            sub, d, job = self.running.pop(fut)
            try:
                result = self.ready.result(fut)
            except Exception as e:  # noqa: BLE001 - sorted below; only this attempt is touched
                self.claims.release(sub.student)
                why = f"{type(e).__name__}: {e}"
                self.tries[sub.name] = self.tries.get(sub.name, 0) + 1
                if self.ready.infrastructure_error(e) and self.tries[sub.name] < RETRIES:
                    self.status.log(f"{sub.student}: grading stopped ({why}); tried again shortly")
                else:
                    self._finish(sub, lambda s=sub, w=why: attempt.failed(self, s, w))
                continue
            for line in (ln for ln in result.log.splitlines() if zygote.FALLBACK in ln):
                self.status.log(f"{sub.student}: WARNING: {line.strip()}")
            try:
                self._finish(sub, lambda s=sub, d=d, j=job, r=result: attempt.graded(self, s, d, j, r))
            finally:
                self.claims.release(sub.student)
        self.status.running = sorted(f"{s.student} ({s.name.split('+')[2]})" for s, _, _ in self.running.values())
        return bool(finished)

    def _finish(self, sub, do) -> None:
        """Run one attempt's ending; write its record (last) and report it. An error leaves the attempt
        without a record (tried again next pass, at most ``RETRIES`` times, then recorded as failed)."""
        try:
            rec = do()
        except Exception as e:  # noqa: BLE001 - only this attempt is touched
            self.tries[sub.name] = self.tries.get(sub.name, 0) + 1
            self.status.log(f"{sub.student or sub.name}: finishing the attempt failed ({type(e).__name__}: {e})")
            if self.tries[sub.name] < RETRIES:
                return
            rec = attempt.record(sub, FAILED, f"finishing it failed: {type(e).__name__}: {e}")
        self.store.write(rec)
        self.status.done(rec)
        what = {
            "graded": f"graded {rec.get('score', 0):g} / {rec.get('max_score', 0):g}"
            + (" (counts)" if rec.get("counts") else " (does not count)")
            + (" late" if rec.get("late") else "")
            + f", {rec.get('feedback')} feedback released"
            + (f"; to look at: {rec['reason']}" if rec.get("reason") else "")
            + (f"; {rec['findings']} finding(s)" if rec.get("findings") else "")
        }
        self.status.log(
            f"{rec['status'].upper()} {sub.student or '?'} {sub.name}: "
            + what.get(rec["status"], rec.get("reason", ""))
        )

    def close(self) -> None:
        if self.graders is not None and self.running:
            self.graders.stop()  # kills the gradings under way: their attempts have no record, so are graded again
        elif self.graders is not None:
            self.graders.close()
        self.claims.close()
        shutil.rmtree(self.work, ignore_errors=True)


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
    """Run the service until Ctrl-C (``once``: until nothing is left to grade). See the module doc."""
    folder = course.state / "service"
    folder.mkdir(parents=True, exist_ok=True)
    lock = open(folder / "serve.lock", "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise RuntimeError(
            f"another grading service runs on this course (lock {folder / 'serve.lock'}); "
            "stop it first, or leave it to grade"
        ) from None
    status = Status(folder, echo)
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
    except KeyboardInterrupt:
        status.log("serve: stopped (Ctrl-C); attempts not finished are graded at the next start")
        return 130
    finally:
        svc.close()
        if page is not None:
            page.shutdown()
        lock.close()
