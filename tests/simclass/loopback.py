"""A TCP listener on this machine's loopback address, outside any sandbox, for the network probes.

A sandboxed kernel that tries the internet fails alike whether its sandbox denies the network or
the machine is offline. A listener on 127.0.0.1 tells the two apart: this process checks that it
can connect to it (so the address is reachable without the sandbox), and a kernel in a sandbox
with its own network namespace must not reach it (its loopback is another one, where nothing
listens: ConnectionRefusedError). Every connection the listener accepts is counted.
"""

from __future__ import annotations

import socket
import threading
from contextlib import contextmanager


class Listener:
    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def reachable(self) -> bool:
        """Whether this process (no sandbox) can connect: then a refusal inside the sandbox is the sandbox's."""
        before = self.accepted
        with socket.create_connection(("127.0.0.1", self.port), timeout=3):
            pass
        for _ in range(50):
            if self.accepted > before:
                return True
            threading.Event().wait(0.05)
        return False

    def close(self):
        self._stop = True
        self.sock.close()
        self._thread.join(timeout=2)


@contextmanager
def loopback_listener():
    listener = Listener()
    try:
        assert listener.reachable(), "a listener on 127.0.0.1 is not reachable even without the sandbox"
        listener.accepted = 0  # count only what comes after the check
        yield listener
    finally:
        listener.close()
