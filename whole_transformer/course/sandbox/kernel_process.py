"""A kernel that the grading run did not start itself, as jupyter_client's provisioner sees a process
(``poll``, ``wait``, signals): forked by its sandbox's fork server (``ForkedKernel``) or by the service's
kernel zygote (``ZygoteKernel``). Signals go through the sandbox's fork server, which also kills
whatever the kernel started when the kernel is killed. ``ForkedKernelClient`` talks to either."""

from __future__ import annotations

import signal
import subprocess
import time
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient


class ForkServerError(RuntimeError):
    """The fork server could not start a kernel."""


class ForkedKernel:
    """A kernel forked by ``server`` (a ``warm_kernels.ForkServer``), its pid as the sandbox numbers it."""

    def __init__(self, server, pid: int):
        self.server, self.pid = server, pid
        self.returncode: int | None = None
        self.stdin = self.stdout = self.stderr = None

    def poll(self) -> int | None:
        if self.returncode is None:
            if not self.server.alive():
                self.returncode = -signal.SIGKILL  # the sandbox is gone, and the kernel with it
            else:
                self.returncode = self._exit_code()
        return self.returncode

    def _exit_code(self) -> int | None:
        try:
            return self.server.request(op="poll", pid=self.pid)["code"]
        except ForkServerError:
            return -signal.SIGKILL

    def wait(self, timeout: float | None = None) -> int:
        start = time.monotonic()
        while (code := self.poll()) is None:
            if timeout is not None and time.monotonic() >= start + timeout:
                raise subprocess.TimeoutExpired("kernel", timeout)
            time.sleep(0.02)
        return code

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            self.server.request(op="signal", pid=self.pid, signal=int(signum))

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class ZygoteKernel(ForkedKernel):
    """A kernel the zygote forked into ``server``'s sandbox: its exit code comes as the zygote's next answer
    (``answers``: a ``zygote.Lines``)."""

    def __init__(self, server, pid: int, answers):
        super().__init__(server, pid)
        self.answers = answers

    def _exit_code(self) -> int | None:
        if not self.answers.ready():
            return None
        try:
            answer = self.answers.next(5)
        except (OSError, ValueError):
            answer = {}
        self.answers.close()
        return answer.get("code", -signal.SIGKILL)


class ForkedKernelClient(AsyncKernelClient):
    """The client of a forked kernel. Its sockets are bound before it connects (see
    ``ForkedKernelManager._sockets_bound``), so the kernel is ready once it has answered
    ``kernel_info`` and published that request's idle status; jupyter_client's own wait then
    waits for 0.2 s of silence besides, on every kernel start."""

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (60.0 if timeout is None else timeout)
        while time.monotonic() < deadline:
            msg_id = self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                if not await self._async_is_alive():
                    raise RuntimeError("Kernel died before replying to kernel_info") from None
                continue
            if reply["msg_type"] != "kernel_info_reply" or reply["parent_header"].get("msg_id") != msg_id:
                continue
            self._handle_kernel_info_reply(reply)
            while time.monotonic() < deadline:  # this request's iopub messages, up to its idle status
                try:
                    msg = await self.iopub_channel.get_msg(timeout=1)
                except Empty:
                    break
                if (
                    msg["parent_header"].get("msg_id") == msg_id
                    and msg["msg_type"] == "status"
                    and msg["content"].get("execution_state") == "idle"
                ):
                    return
        raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    wait_for_ready = _async_wait_for_ready
