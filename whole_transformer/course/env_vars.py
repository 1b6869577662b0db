"""The environment variables the instructor's side reads, each read here and nowhere else.

Two kinds. Set by the instructor (or a test): ``WT_COURSE_ROOT``, ``DB_URL``, ``WT_BWRAP``,
``WT_CLASSROOM_PYTHON``. Set by the course itself for a child process it starts, to hand it what it
cannot get on its command line: ``WT_PRESTART_SANDBOX`` (``autograder/nbgrader_run.py`` to nbgrader's
process) and ``WT_KERNEL_ZYGOTE`` (the grading service to its nbgrader runs); ``TMPDIR``, set by the grading
service for itself and its children (``tmpdir``). The variables the
student's kernel reads are in ``whole_transformer/envflags.py``; those the sandboxed programs read, in
``sandbox/limits.py`` (no file of this package is visible in the sandbox). docs/code.md has the table.

Each setting is a command-line flag where it can be one (``--jobs``, ``--no-sandbox``, ...): no
command takes a default from the environment.

Nothing heavy is imported here: ``plugins/app.py`` reads this before nbgrader starts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager

#: nbgrader's settings for the sandboxed kernels' fork server, as JSON (``warm_kernels.prestart``'s arguments)
PRESTART_SANDBOX = "WT_PRESTART_SANDBOX"
#: the socket of the grading service's kernel zygote (``sandbox/zygote.py``), for its nbgrader runs' kernels
KERNEL_ZYGOTE = "WT_KERNEL_ZYGOTE"


def course_root() -> str | None:
    """``WT_COURSE_ROOT``: the course folder when no ``--root`` is given (else the current folder)."""
    return os.environ.get("WT_COURSE_ROOT") or None


def db_url() -> str:
    """``DB_URL``: the gradebook's database (e.g. ``postgresql://grader@host/course``); "" for gradebook.db."""
    return os.environ.get("DB_URL", "")


def bwrap() -> str | None:
    """``WT_BWRAP``: the bubblewrap program to use instead of ``bwrap`` on PATH (a path)."""
    return os.environ.get("WT_BWRAP") or None


def classroom_python() -> str | None:
    """``WT_CLASSROOM_PYTHON``: the Python ``make classroom`` makes the students' environment from."""
    return os.environ.get("WT_CLASSROOM_PYTHON") or None


def with_prestart_sandbox(env: Mapping[str, str], settings: dict) -> dict[str, str]:
    """``env`` handing nbgrader's process the fork server's ``settings`` (``PRESTART_SANDBOX``)."""
    return {**env, PRESTART_SANDBOX: json.dumps(settings)}


def prestart_sandbox(env: Mapping[str, str]) -> dict | None:
    """The fork server's settings ``env`` hands over, if any."""
    settings = env.get(PRESTART_SANDBOX)
    return json.loads(settings) if settings else None


def take_prestart_sandbox(env: MutableMapping[str, str] = os.environ) -> dict | None:
    """The fork server's settings this process was handed, taken out of its environment (so that the
    kernels it starts do not inherit them)."""
    settings = env.pop(PRESTART_SANDBOX, "")
    return json.loads(settings) if settings else None


def kernel_zygote() -> str | None:
    """The socket of the kernel zygote this nbgrader run's kernels are forked by, if any (``KERNEL_ZYGOTE``)."""
    return os.environ.get(KERNEL_ZYGOTE) or None


@contextmanager
def tmpdir(folder: str) -> Iterator[None]:
    """``TMPDIR`` set to ``folder`` meanwhile (the grading service's own temporary folder, for it and every process
    it starts: ``service/serve.own_tmp``), then as it was."""
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = folder
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before
