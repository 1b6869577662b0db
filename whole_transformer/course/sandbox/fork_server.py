"""The fork server: a Python in the student's sandbox that imports the libraries once and forks kernels.

Run as ``python -c <programs.source("fork_server")>`` inside bubblewrap (``warm_kernels.ForkServer``).
Requests and answers are JSON lines on its stdin and stdout: ``fork`` (a kernel with this connection
file), ``poll`` (has that kernel exited, and how) and ``signal`` (send one; 9 also kills everything
that kernel started). It never runs student code itself.
"""

import ctypes
import json
import os
import resource
import sys
import time

from whole_transformer.course.sandbox.limits import (  # sandbox: inlined
    LIMIT_AS,
    LIMIT_FSIZE,
    LIMIT_NPROC,
    env_limit,
    env_warm_modules,
    limit,
    no_core_dumps,
    run_kernel,
)

PR_SET_DUMPABLE = 4


class Server:
    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no kernel may trace this process or read its memory
        self.limit_as = env_limit(LIMIT_AS)
        self.limit_fsize = env_limit(LIMIT_FSIZE)
        limit(resource.RLIMIT_NPROC, env_limit(LIMIT_NPROC))  # not enforced for root
        no_core_dumps()
        self.warm = env_warm_modules()
        self.requests, self.answers = os.fdopen(os.dup(0), "r"), os.fdopen(os.dup(1), "w")
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(2, 1)  # what a kernel prints on its own stdout goes where its stderr goes (the grading log)
        os.close(null)
        self.exited: dict[int, int] = {}
        self.live: set[int] = set()

    def warm_up(self) -> None:
        if not self.warm:
            return  # the service's kernel zygote forks this sandbox's kernels (``zygote.py``)
        sys.argv = ["ipykernel_launcher"]
        from ipykernel import kernelapp  # noqa: F401  (imported once, for every kernel forked)

        for name in self.warm:
            try:
                __import__(name)
            except Exception:  # noqa: BLE001 - the kernel that imports it meets the same error itself
                pass

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.exited[pid] = os.waitstatus_to_exitcode(status)
            self.live.discard(pid)

    def answer(self, **a) -> None:
        self.answers.write(json.dumps(a) + "\n")
        self.answers.flush()

    def serve(self) -> None:
        self.answer(ready=True)
        for line in self.requests:
            req = json.loads(line)
            self.reap()
            op = req["op"]
            if op == "fork":
                self.answer(pid=self.fork(req["connection"]))
            elif op == "poll":
                self.answer(code=self.exited.get(req["pid"]))
            elif op == "adopt":  # a kernel the service's zygote put into this sandbox
                self.live.add(req["pid"])
                self.answer(ok=True)
            elif op == "signal":
                self.signal(req["pid"], req["signal"])
                self.answer(ok=True)

    def fork(self, connection: str) -> int:
        pid = os.fork()
        if pid == 0:
            self.kernel(connection)
        self.live.add(pid)
        return pid

    def kernel(self, connection: str) -> None:
        """In the forked child: become an ordinary limited process, then ipykernel; never returns."""

        def prepare() -> None:
            self.requests.close()
            self.answers.close()
            os.setsid()
            self.libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # the kernel itself is an ordinary process
            limit(resource.RLIMIT_AS, self.limit_as)
            limit(resource.RLIMIT_FSIZE, self.limit_fsize)

        run_kernel(prepare, connection)

    def signal(self, pid: int, signal: int) -> None:
        try:
            os.killpg(pid, signal)
        except OSError:
            try:
                os.kill(pid, signal)
            except OSError:
                pass
        if signal == 9:
            self.kill_what_it_started(pid)

    def kill_what_it_started(self, pid: int) -> None:
        """What the kernel started goes with it, even in a session of its own (the sandbox of a fresh
        kernel dies with it): every process here but this one, bwrap's and other kernels."""
        self.live = {p for p in self.live if os.path.exists(f"/proc/{p}")}  # adopted kernels that ended
        others = self.live - {pid}
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in others | {os.getpid(), 1}:
                try:
                    os.kill(int(name), 9)
                except OSError:
                    pass
        for _ in range(2000):  # and it is gone within moments: say so at the next poll
            self.reap()
            if pid in self.exited or not os.path.exists(f"/proc/{pid}"):  # (an adopted kernel is not ours to reap)
                break
            time.sleep(0.001)


def main() -> None:
    server = Server()
    server.warm_up()
    server.serve()
    # its stdin closed: the grading is over. Out at once: tearing down what it imported (PyTorch) took 0.45 s, and
    # the sandbox ends with it (bubblewrap's first process, then every kernel in it)
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
