"""The service's kernel zygote (whole_transformer/course/sandbox/zygote.py, kernel_zygote.py): one process
imports the libraries for every student, and each kernel it forks is put into its own student's sandbox.

What the per-student fork server promised still holds for a kernel from the zygote: the student's own
folder and /tmp only, no capability, nothing of the grading side in memory, nothing of another student
(graded before, or at the same time), and nothing of the zygote to reach."""

from __future__ import annotations

import ast
import os
import subprocess
import threading
from pathlib import Path

import pytest
from simclass.minicourse import require_sandbox
from test_warm_kernels import errors, run, text

from whole_transformer.course.env_vars import KERNEL_ZYGOTE
from whole_transformer.course.sandbox import warm_kernels, zygote
from whole_transformer.course.sandbox.bubblewrap import grading_env, sandbox_status
from whole_transformer.course.sandbox.spec import SandboxSpec

pytestmark = pytest.mark.slow  # each starts a zygote (about 1.3 s) and sandboxes: out of make quick

PROBE = """import os, sys
def attempt(fn):
    try:
        return fn()
    except OSError as e:
        return type(e).__name__
status = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines() if ':' in l)
open('/tmp/{me}.txt', 'w').write('{me}')
print('PROBE', {{
    'me': '{me}', 'pid': os.getpid(), 'ppid': os.getppid(), 'uid': os.getuid(), 'gid': os.getgid(),
    'groups': os.getgroups(), 'cwd': os.getcwd(), 'files': sorted(os.listdir('.')), 'tmp': sorted(os.listdir('/tmp')),
    'procs': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),
    'caps': [status[k].strip() for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')],
    'nonewprivs': status['NoNewPrivs'].strip(), 'pidns': os.readlink('/proc/self/ns/pid'),
    'torch': 'torch' in sys.modules,
    'course': sorted(m for m in sys.modules if m.startswith('whole_transformer.course')),
    'others': {{p: attempt(lambda: sorted(os.listdir(p))) for p in {others!r}}},
    'zygote': attempt(lambda: os.listdir({zygote!r})),
}})
"""


def probe(scratch: Path, me: str, others: list[str], zygote_dir: str) -> dict:
    (scratch / f"{me}-work.txt").write_text(me)
    nb = run([PROBE.format(me=me, others=others, zygote=zygote_dir), "print(1 + 1)"], scratch)
    assert errors(nb.cells[0]) == [] and text(nb.cells[1]).strip() == "2", [c.outputs for c in nb.cells]
    return ast.literal_eval(text(nb.cells[0]).split("PROBE", 1)[1].strip())


def notes(seen: dict) -> list[str]:
    """The students' notes in the kernel's /tmp (beside its home and the sandbox's runtime folders)."""
    return [f for f in seen["tmp"] if f.endswith(".txt")]


@pytest.fixture
def with_zygote(monkeypatch):
    require_sandbox()
    warm_kernels.close_servers()
    zygote.close_all()
    z = zygote.running({"threads": 1, "headless": True})
    monkeypatch.setenv(KERNEL_ZYGOTE, z.socket)
    forks = []
    real = zygote.fork
    monkeypatch.setattr(zygote, "fork", lambda *a, **kw: forks.append(a[1][0]) or real(*a, **kw))
    yield z, forks
    warm_kernels.close_servers()
    zygote.close_all()


def test_a_kernel_from_the_zygote_is_as_locked_in_as_one_from_the_students_fork_server(tmp_path, with_zygote):
    z, forks = with_zygote
    (tmp_path / "alone").mkdir()
    warm_kernels.close_servers()
    os.environ.pop(KERNEL_ZYGOTE)
    before = probe(tmp_path / "alone", "before", [], z.folder.as_posix())  # today's way: the student's fork server
    os.environ[KERNEL_ZYGOTE] = z.socket
    (tmp_path / "ada").mkdir()
    ada = probe(tmp_path / "ada", "ada", [str(tmp_path / "alone"), "/tmp/before.txt"], z.folder.as_posix())
    assert len(forks) == 1  # ada's one kernel, from the zygote
    assert before["ppid"] == 2 and ada["ppid"] == 0  # the zygote's joiner is outside the sandbox's PID namespace
    for key in ("uid", "gid", "groups", "cwd", "caps", "torch", "course"):
        assert ada[key] == before[key], (key, ada[key], before[key])
    assert ada["caps"] == ["0000000000000000"] * 5 and ada["nonewprivs"] == "1" and ada["course"] == []
    assert ada["files"] == ["ada-work.txt"] and notes(ada) == ["ada.txt"]
    assert ada["procs"] == [1, 2, ada["pid"]]  # bwrap's init, the sandbox's holder, the kernel: no zygote
    assert set(ada["others"].values()) == {"FileNotFoundError"} and ada["zygote"] == "FileNotFoundError"
    assert ada["pidns"] != before["pidns"] != os.readlink("/proc/self/ns/pid")


def test_two_students_at_once_from_one_zygote_see_nothing_of_each_other(tmp_path, with_zygote):
    z, forks = with_zygote
    folders = {me: tmp_path / me for me in ("ada", "bob")}
    for folder in folders.values():
        folder.mkdir()
    seen, barrier = {}, threading.Barrier(2)

    def student(me: str) -> None:
        barrier.wait()
        other = next(str(f) for name, f in folders.items() if name != me)
        seen[me] = probe(folders[me], me, [other, "/submission/../" + Path(other).name], z.folder.as_posix())

    threads = [threading.Thread(target=student, args=(me,)) for me in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ada, bob = seen["ada"], seen["bob"]
    assert len(forks) == 2 and len(set(forks)) == 2  # one zygote, each kernel into its own student's sandbox
    assert ada["pidns"] != bob["pidns"] and z.alive()
    assert ada["files"] == ["ada-work.txt"] and bob["files"] == ["bob-work.txt"]
    assert notes(ada) == ["ada.txt"] and notes(bob) == ["bob.txt"]
    assert set(ada["others"].values()) == set(bob["others"].values()) == {"FileNotFoundError"}


class NoHolder:
    def request(self, **kw):
        raise AssertionError("no kernel may be adopted")


def test_the_zygote_refuses_a_process_that_is_no_sandbox(with_zygote):
    z, _ = with_zygote
    with pytest.raises(zygote.ZygoteError, match="no sandbox"):
        zygote.fork(z.socket, (os.getpid(), os.pidfd_open(os.getpid())), "{}", z.env, NoHolder())
    assert z.alive()


def test_the_zygote_refuses_a_sandbox_whose_process_is_not_the_one_it_was_given(tmp_path, with_zygote):
    """A pid is only trusted while its pidfd's process lives (else the pid could be another's by now)."""
    z, _ = with_zygote
    spec = SandboxSpec(scratch=tmp_path, runtime=tmp_path, env=grading_env(True))
    holder = warm_kernels.server_for(spec, sandbox_status().bwrap, ())
    pid, _ = holder.program()
    other = subprocess.Popen(["sleep", "0.1"])
    pidfd = os.pidfd_open(other.pid)
    other.wait()  # a pidfd of a process that ended, beside a live sandbox's pid
    with pytest.raises(zygote.ZygoteError, match="has ended"):
        zygote.fork(z.socket, (pid, pidfd), "{}", z.env, NoHolder())
    assert z.alive()


def test_a_kernel_the_zygote_cannot_start_is_started_in_the_students_sandbox(tmp_path, with_zygote, capfd):
    z, forks = with_zygote
    nb = run(["import sys, os\nprint(os.environ['OMP_NUM_THREADS'], 'torch' in sys.modules)"], tmp_path, threads=2)
    assert text(nb.cells[0]).split() == ["2", "False"]  # another thread count: the zygote says no
    assert len(forks) == 1 and "the kernel zygote could not start this kernel" in capfd.readouterr().err


HELD = "import os, sys\nprint(sorted(m for m in sys.modules if 'course' in m), 'numpy' in sys.modules, os.getppid())"


def test_the_zygote_never_holds_the_grading_side(tmp_path, monkeypatch, capfd):
    require_sandbox()
    env = SandboxSpec(scratch=Path("/"), runtime=Path("/"), env=grading_env(True)).kernel_env()
    z = zygote.KernelZygote(env, ("numpy", "whole_transformer.course.answers.hidden_tests"))
    try:
        monkeypatch.setenv(KERNEL_ZYGOTE, z.socket)
        warm_kernels.close_servers()
        nb = run([HELD], tmp_path)
    finally:
        z.close()
        warm_kernels.close_servers()
    # its import of the hidden tests failed in the zygote, so no kernel it forked (parent 0) has them in memory
    assert text(nb.cells[0]).strip() == "[] True 0", (nb.cells[0].outputs, capfd.readouterr().err[-2000:])
