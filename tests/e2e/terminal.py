"""A terminal of a running Jupyter server, driven as a student types in it (File ▸ New ▸ Terminal).

``run_in_terminal(base_url, token, commands)`` opens one terminal through the server's REST API and
its websocket, types each command with Enter, waits for it to end, and returns what the terminal
showed for it (the command's echo, its output and its exit status), ANSI escapes removed.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request

from tornado.websocket import websocket_connect

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\r")


def _new_terminal(base_url: str, token: str) -> str:
    req = urllib.request.Request(f"{base_url}/api/terminals?token={token}", data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["name"]


async def _session(base_url: str, token: str, commands: list[str], timeout: float) -> list[tuple[str, int, str]]:
    name = _new_terminal(base_url, token)
    ws_url = base_url.replace("http", "ws", 1) + f"/terminals/websocket/{name}?token={token}"
    conn = await websocket_connect(ws_url)
    shown: list[tuple[str, int, str]] = []
    try:
        for i, command in enumerate(commands):
            # the marker as typed ('WT''END') differs from the marker printed (WTEND): the echo is not the end
            await conn.write_message(json.dumps(["stdin", f"{command}; echo 'WT''END{i}' $?\r"]))
            text = ""
            done = re.compile(rf"WTEND{i} (\d+)")
            while not done.search(ANSI.sub("", text)):
                msg = await asyncio.wait_for(conn.read_message(), timeout)
                if msg is None:
                    raise RuntimeError(f"the terminal closed while running {command!r}:\n{ANSI.sub('', text)}")
                kind, *rest = json.loads(msg)
                if kind == "stdout":
                    text += rest[0]
            clean = ANSI.sub("", text)
            shown.append((command, int(done.search(clean).group(1)), clean))
    finally:
        conn.close()
    return shown


def run_in_terminal(base_url: str, token: str, commands: list[str], timeout: float = 600) -> list[tuple[str, int, str]]:
    """[(command, exit status, what the terminal showed)] for each command, typed in one new terminal.

    Its own thread, with its own event loop: Playwright's sync API keeps one running in the test's thread."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _session(base_url, token, commands, timeout)).result()
