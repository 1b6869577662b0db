"""The rig of the service benchmark (service.py): a course with a local nbgrader exchange, students
handing in with nbgrader's real ``submit``, the service started and stopped, and a CPU meter.

``CpuMeter`` counts the CPU of one process tree, every process it starts included (the sandboxed
kernels too), from a cgroup (v1 cpuacct) of its own: unlike /proc/stat it is blind to whatever else
runs on a shared machine. Where no cgroup can be made (not root, no cpuacct) it falls back to the
machine's CPU (/proc/stat), as the autograde group measures it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.checkout import course_cli, released_copy
from benchmarks.machine import machine_busy
from whole_transformer.course.layout import ASSIGNMENT, COURSE_ID, checkout_env, nbgrader_env

SERVICE_TOML = '[service]\nenabled = true\nattempts = 0\ncooldown = "0m"\n'


def _nbgrader(args: list[str], cwd: Path, exchange: Path, student: str | None = None) -> None:
    env = nbgrader_env() if (cwd / "nbgrader_config.py").exists() else checkout_env()
    env.pop("NBGRADER_EXECUTION", None)
    who = [f"--student={student}"] if student else []
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args, *who, f"--Exchange.root={exchange}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed: {(done.stdout + done.stderr)[-400:]}")


def submit(home: Path, student: str, notebooks: dict, exchange: Path) -> Path:
    """The student's notebooks handed in with nbgrader's real ``submit``; the inbound folder it made."""
    folder = home / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    for name, nb in notebooks.items():
        (folder / (name if name.endswith(".ipynb") else f"{name}.ipynb")).write_text(json.dumps(nb, indent=1))
    _nbgrader(["submit", ASSIGNMENT, f"--course={COURSE_ID}"], home / student, exchange, student)
    inbound = exchange / COURSE_ID / "inbound"
    return max(inbound.glob(f"{student}+{ASSIGNMENT}+*"), key=lambda p: p.name)


def feedback_files(exchange: Path, attempt: Path) -> list[Path]:
    """Where ``nbgrader fetch_feedback`` looks for the attempt's feedback: one file per notebook."""
    from nbgrader.utils import notebook_hash

    secret = (attempt / "submission_secret.txt").read_text()
    return [
        exchange / COURSE_ID / "feedback" / f"{notebook_hash(secret=secret, notebook_id=p.stem)}.html"
        for p in sorted(attempt.glob("*.ipynb"))
    ]


def wait_feedback(files: list[Path], proc: subprocess.Popen, timeout: float = 900) -> float:
    """time.monotonic() when every file is there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(f.exists() for f in files):
            return time.monotonic()
        if proc.poll() is not None:
            raise RuntimeError(f"the service exited ({proc.returncode}) before the feedback was released")
        time.sleep(0.1)
    raise RuntimeError(f"no feedback within {timeout:.0f} s")


class CpuMeter:
    """CPU seconds of one process tree, every process it starts included (the sandboxed kernels too), from a
    cgroup (v1 cpuacct) of its own: unlike /proc/stat, blind to whatever else runs on the machine. Falls back
    to the machine's CPU (/proc/stat) where no cgroup can be made (not root, no cpuacct)."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self, name: str):
        self.path: Path | None = self.ROOT / f"wt-bench-{name}-{os.getpid()}"
        try:
            self.path.mkdir()
            self.how = "its cgroup's CPU (cpuacct: every process it started, the sandboxed kernels included)"
        except OSError:
            self.path, self.how = None, "the machine's CPU (/proc/stat, all processes)"

    def join(self) -> None:
        """In the child (preexec_fn): into the cgroup."""
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        if self.path is None:
            return machine_busy()
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        if self.path is not None:
            for _ in range(50):
                try:
                    self.path.rmdir()
                    return
                except OSError:  # processes still in it, on their way out
                    time.sleep(0.1)


def today(course: Path, meter: CpuMeter, force: bool) -> float:
    """``course autograde --jobs 1`` as the instructor runs it, in the meter's cgroup; the CPU it took."""
    c0 = meter.seconds()
    course_cli(course, "autograde", "--jobs", "1", *(["--force"] if force else []), preexec_fn=meter.join)
    return meter.seconds() - c0


class Service:
    """``python -m whole_transformer.course serve`` on a course, started and stopped."""

    def __init__(self, course: Path, exchange: Path, *args: str, meter: CpuMeter | None = None):
        self.log = course / "autograde" / ".wt" / "service" / "serve.log"
        self.out = open(course.parent / f"serve-{course.name}.out", "w")
        cmd = [
            sys.executable,
            "-m",
            "whole_transformer.course",
            "--root",
            str(course),
            "serve",
            f"--exchange={exchange}",
            *args,
        ]
        env = checkout_env()
        env.pop("NBGRADER_EXECUTION", None)
        self.proc = subprocess.Popen(
            cmd,
            cwd=course,
            env=env,
            stdout=self.out,
            stderr=subprocess.STDOUT,
            preexec_fn=meter.join if meter else None,
        )
        deadline = time.monotonic() + 300
        while "serve: grading" not in (self.log.read_text() if self.log.exists() else ""):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the service did not start: {self.tail()}")
            time.sleep(0.2)

    def tail(self) -> str:
        self.out.flush()
        text = Path(self.out.name).read_text(errors="replace")
        return " / ".join(text.strip().splitlines()[-3:])[-400:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(2)  # Ctrl-C: the service stops its graders and closes
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()


def new_course(tmp: Path, name: str) -> tuple[Path, Path]:
    """A course (released, [service] on, no attempt limit) and its exchange, the assignment released to it."""
    root = released_copy(tmp / name)
    (root / "course.toml").write_text(SERVICE_TOML)
    exchange = tmp / f"exchange-{name}"
    exchange.mkdir(mode=0o777)
    _nbgrader(["release_assignment", ASSIGNMENT, "--force"], root, exchange)
    return root, exchange
