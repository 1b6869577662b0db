"""Warm kernels (whole_transformer/course/sandbox/warm_kernels.py): the sandboxed kernels of one grading
forked from one fork server. Each kernel starts clean, the student's code cannot reach into the
fork server, and a student who kills it loses only the cell that did."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import nbformat.v4 as nbf
import pytest
from simclass.minicourse import require_sandbox

from whole_transformer.course.env_vars import KERNEL_ZYGOTE
from whole_transformer.course.plugins.execute import SandboxExecute
from whole_transformer.course.sandbox import warm_kernels, zygote


def run(cells: list[str], scratch: Path, **kw):
    nb = nbf.new_notebook(cells=[nbf.new_code_cell(c) for c in cells])
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    ex = SandboxExecute(timeout=30, scratch_dir=str(scratch), **kw)
    ex.preprocess(nb, {"metadata": {"path": str(scratch)}, "nbgrader": {"notebook": "nb"}})
    return nb


def text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs)


def errors(cell) -> list[str]:
    return [o.get("ename") for o in cell.outputs if o.get("output_type") == "error"]


def test_each_kernel_starts_clean_from_one_fork_server(tmp_path):
    require_sandbox()
    warm_kernels.close_servers()
    spoil = run(
        [
            "import builtins, sys, os\n"
            "import whole_transformer.task as task\n"
            "task.VOCAB.append('spoiled')\n"
            "builtins.left_behind = 1\n"
            "sys.modules['whole_transformer.grading'] = None\n"
            "print(os.getppid(), 'torch' in sys.modules)"
        ],
        tmp_path,
    )
    fresh = run(
        [
            "import builtins, sys, os\n"
            "import whole_transformer.task as task\n"
            "import whole_transformer.grading\n"
            "print(os.getppid(), len(task.VOCAB), hasattr(builtins, 'left_behind'), 'torch' in sys.modules)"
        ],
        tmp_path,
    )
    assert errors(spoil.cells[0]) == [] and errors(fresh.cells[0]) == []
    parent1, warm = text(spoil.cells[0]).split()
    parent2, vocab, left, warm2 = text(fresh.cells[0]).split()
    assert parent1 == parent2  # both forked from the same fork server ...
    assert warm == warm2 == "True"  # ... which had imported torch before either started
    assert vocab == "42" and left == "False"  # and the second saw nothing of what the first did
    assert len(warm_kernels._servers) == 1


@pytest.mark.parametrize("forked_by", ["the student's fork server", "the service's kernel zygote"])
def test_nothing_a_kernel_started_outlives_it(tmp_path, monkeypatch, request, forked_by):
    require_sandbox()
    if "zygote" in forked_by:
        request.addfinalizer(zygote.close_all)  # the zygote too: none outlives the test into the worker's next ones
        monkeypatch.setenv(KERNEL_ZYGOTE, zygote.running({"threads": 1, "headless": True}).socket)
    leave = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        open('daemon.pid', 'w').write(str(os.getpid()))\n"
        "        while True:\n"
        "            time.sleep(0.05)\n"
        "    os._exit(0)\n"
        "while not os.path.exists('daemon.pid'):\n"
        "    time.sleep(0.05)\n"
        "print('left', open('daemon.pid').read())"
    )
    where = "import os\nprint(os.getppid(), os.readlink('/proc/self/ns/pid'))"
    look = "import os\nprint(os.path.exists(f\"/proc/{open('daemon.pid').read()}\"))"
    warm_kernels.close_servers()
    first = run([where, leave], tmp_path)
    assert text(first.cells[1]).startswith("left ")
    second = run([where, look], tmp_path)
    # the second kernel is a sibling from the same fork server (or zygote), in the same PID namespace: there the
    # daemon's pid would still show if it had outlived the first kernel (from another sandbox it never would)
    assert text(first.cells[0]).split() == text(second.cells[0]).split(), (text(first.cells[0]), text(second.cells[0]))
    assert len(warm_kernels._servers) == 1
    assert text(second.cells[1]).strip() == "False"


def test_a_kernel_cannot_reach_into_its_fork_server(tmp_path):
    require_sandbox()
    probe = (
        "import os, stat\n"
        "server = os.getppid()\n"
        "def attempt(fn):\n"
        "    try:\n"
        "        fn()\n"
        "        return 'allowed'\n"
        "    except OSError as e:\n"
        "        return type(e).__name__\n"
        "mem = attempt(lambda: open(f'/proc/{server}/mem', 'rb').read(1))\n"
        "env = attempt(lambda: open(f'/proc/{server}/environ', 'rb').read())\n"
        "try:\n"
        "    listed, fds = os.listdir(f'/proc/{server}/fd'), 'listed'\n"
        "except OSError as e:\n"
        "    listed, fds = [], type(e).__name__\n"
        "opened = {attempt(lambda: os.close(os.open(f'/proc/{server}/fd/{fd}', os.O_WRONLY))) for fd in listed}\n"
        "fds += ''.join(f'+open:{o}' for o in sorted(opened))\n"
        "pipes = set()\n"
        "for fd in range(1024):\n"
        "    try:\n"
        "        st = os.fstat(fd)\n"
        "    except OSError:\n"
        "        continue\n"
        "    if stat.S_ISFIFO(st.st_mode):\n"
        "        pipes.add(st.st_ino)\n"
        "print(mem, env, fds, os.readlink('/proc/self/fd/0'))\n"
        "print(*sorted(pipes))"
    )
    nb = run([probe], tmp_path)
    assert errors(nb.cells[0]) == []
    first, second = text(nb.cells[0]).splitlines()
    # the fork server is not dumpable: its memory, environment and open files are all refused. Its fd
    # folder may be listed (it is here), but then every fd in it was tried and each open refused.
    mem, env, fds, stdin = first.split()
    assert (mem, env, stdin) == ("PermissionError", "PermissionError", "/dev/null"), first
    assert fds in ("PermissionError", "listed+open:PermissionError"), first
    kernel_pipes = {int(i) for i in second.split()}
    server_pipes = {
        os.fstat(f.fileno()).st_ino
        for server in warm_kernels._servers.values()
        for f in (server.proc.stdin, server.proc.stdout)
    }
    assert server_pipes and not kernel_pipes & server_pipes  # its control pipe is closed in every kernel


def test_killing_the_fork_server_loses_only_that_cell(tmp_path):
    require_sandbox()
    nb = run(
        [
            "x = 41",
            "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time\ntime.sleep(10)",
            "print('still here', x + 1)",
        ],
        tmp_path,
    )
    assert errors(nb.cells[0]) == []
    assert errors(nb.cells[1]) == ["DeadKernelError"]
    assert text(nb.cells[2]).strip() == "still here 42"  # a new fork server, the cells before run again


def test_fresh_kernels_remain_an_option(tmp_path):
    require_sandbox()
    nb = run(["import os, sys\nprint('torch' in sys.modules, os.getppid())"], tmp_path, warm_kernels=False)
    warm, parent = text(nb.cells[0]).split()
    assert warm == "False" and parent == "1"  # started by bubblewrap itself, nothing imported before


def test_prestart_leaves_nothing_behind(tmp_path, monkeypatch):
    require_sandbox()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the managers and servers make their folders
    warm_kernels.close_servers()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    warm_kernels.prestart(str(scratch), 1, 3 * 2**30, 64 * 2**20, True)
    assert len(warm_kernels._servers) == 1
    assert [p.name.split("-")[1] for p in tmp_path.glob("wt-*")] == ["forkserver"]
    warm_kernels.close_servers()
    assert not list(tmp_path.glob("wt-*"))
    assert not processes_naming(tmp_path), "a process of the sandbox outlived close_servers()"


def processes_naming(folder: Path) -> list[str]:
    """The command lines of the processes whose command line names ``folder`` (a sandbox's bubblewrap does)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if proc.name.isdigit() and str(folder) in cmd:
            found.append(f"{proc.name}: {cmd[:200]}")
    return found
