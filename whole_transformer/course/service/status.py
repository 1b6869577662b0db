"""The service's log and its status page for the instructor (HTTP, on loopback only).

``/`` is a short HTML page and ``/status.json`` the same as data: whether the service is on, the
queue (attempts waiting), what is being graded, the last gradings and the last failures. Anyone
who reaches the port (through JupyterHub's proxy too) sees only the counts; the student ids and
scores need the token the service prints at start (``?token=…``), kept in
``autograde/.wt/service/status-token`` (readable by the instructor alone).
"""

from __future__ import annotations

import html
import json
import secrets
import threading
import time
from collections import deque
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from ..csp import SERVED
from .watch import AttemptRecord


class ServiceState:
    """What the service is doing, shared by its loop and the page; also its log (file and stdout)."""

    def __init__(self, folder: Path, echo=print):
        folder.mkdir(parents=True, exist_ok=True)
        self.log_file, self.echo = folder / "serve.log", echo
        token = folder / "status-token"
        if not token.is_file():
            token.write_text(secrets.token_urlsafe(18))
            token.chmod(0o600)
        self.token = token.read_text().strip()
        self.lock = threading.Lock()
        self.state, self.queue = "starting", 0
        self.running: list[str] = []  # "student (hand-in time)" of each attempt being graded
        self.last: deque = deque(maxlen=20)
        self.failures: deque = deque(maxlen=20)
        self.counts = {"graded": 0, "refused": 0, "failed": 0, "collected": 0}
        self.started = datetime.now(UTC)

    def log(self, line: str) -> None:
        stamped = f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} {line}"
        with self.lock, open(self.log_file, "a") as f:
            f.write(stamped + "\n")
        self.echo(stamped)

    def done(self, record: AttemptRecord) -> None:
        with self.lock:
            kind = str(record.status) if record.status in self.counts else "failed"
            self.counts[kind] += 1
            self.last.appendleft(record)
            if kind == "failed":
                self.failures.appendleft(record)

    def snapshot(self, full: bool) -> dict:
        with self.lock:
            out = {
                "state": self.state,
                "queue": self.queue,
                "running": len(self.running),
                "since": f"{self.started:%Y-%m-%d %H:%M} UTC",
                **self.counts,
            }
            if full:
                keys = ("student", "when", "status", "score", "max_score", "late", "reason", "seconds", "counts")
                out["running_now"] = list(self.running)
                out["last"] = [{k: r.to_json().get(k) for k in keys} for r in self.last]
                out["failures"] = [{k: r.to_json().get(k) for k in keys} for r in self.failures]
            return out


COLUMNS = (
    ("student", "student"),
    ("when", "handed in (UTC)"),
    ("status", "status"),
    ("score", "score"),
    ("counts", "counts"),
    ("late", "late"),
    ("seconds", "grading (s)"),
    ("reason", "why"),
)


def _cell(key: str, r: dict) -> str:
    v = r.get(key)
    if key == "when" and v:
        return str(v)[:19].replace("T", " ")
    if key == "score" and v is not None:
        return f"{v:g} / {r.get('max_score') or 0:g}"
    if key in ("counts", "late") and v is not None:
        return "yes" if v else "no"
    return "" if v is None else str(v)


def _table(key: str, title: str, records: list[dict]) -> str:
    if not records:
        return f"<h2>{title}</h2><p>none</p>"
    head = "".join(f'<th scope="col">{html.escape(name)}</th>' for _, name in COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(k, r))}</td>" for k, _ in COLUMNS) + "</tr>" for r in records
    )
    return (
        f'<h2 id="{key}">{title}</h2><p>Newest first.</p><table aria-labelledby="{key}"><tr>{head}</tr>{body}</table>'
    )


def _html(snap: dict) -> str:
    rows = "".join(
        f'<tr><th scope="row">{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>'
        for k, v in snap.items()
        if not isinstance(v, list)
    )
    parts = [f"<table>{rows}</table>"]
    if snap.get("running_now"):
        parts.append(
            "<h2>Being graded</h2><ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in snap["running_now"]) + "</ul>"
        )
    for key, title in (("last", "Last gradings"), ("failures", "Failures")):
        if key in snap:
            parts.append(_table(key, title, snap[key]))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="refresh" content="10"><title>Grading service</title>'
        "<style>table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top;"
        "white-space:nowrap}td:last-child{white-space:normal}</style></head>"
        "<body><h1>Grading service: The whole Transformer</h1>" + "".join(parts) + "</body></html>"
    )


def serve_status(status: ServiceState, port: int) -> ThreadingHTTPServer:
    """The status page on 127.0.0.1:``port`` (0: any free port), in a thread; ``.server_port`` says which."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # the name http.server calls
            url = urlparse(self.path)
            given = parse_qs(url.query).get("token", [""])[0]
            snap = status.snapshot(full=secrets.compare_digest(given, status.token))
            as_json = url.path.endswith("status.json")
            body = (json.dumps(snap, indent=1) if as_json else _html(snap)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json" if as_json else "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Security-Policy", SERVED)  # no script at all (csp.py)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # the service's own log says what matters
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="status-page", daemon=True).start()
    time.sleep(0)
    return server
