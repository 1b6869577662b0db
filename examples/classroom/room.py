"""A classroom as ``up`` made it (``up.py``): its folder, accounts, port and hub, kept in ``DIR/classroom.json``.

``down`` (``teardown.py``) reads that record and removes exactly what it names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from whole_transformer.course.layout import write_json

from .commands import run

DEFAULT_DIR = Path("/srv/wt-classroom")
COURSE_FOLDER = "whole-transformer"
RECORD = "classroom.json"

NEED_ROOT = (
    "make classroom needs root: it creates Linux accounts (students log in to JupyterHub with their\n"
    "password through PAM) and JupyterHub starts each user's server as that user.\n"
    "Run it as root, e.g.  sudo make classroom  (make classroom-stop removes everything it made).\n"
    "To try the course alone, without accounts, use  make lab."
)


@dataclass
class Classroom:
    """What ``up`` made (kept in DIR/classroom.json), the passwords (never written to disk), and the
    seconds each part of ``up`` took."""

    dir: Path
    port: int = 0
    instructor: str = ""
    students: list[str] = field(default_factory=list)
    accounts: list[str] = field(default_factory=list)  # the Linux accounts this classroom created
    hub_pid: int = 0
    passwords: dict[str, str] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        self.env, self.exchange = self.dir / "env", self.dir / "exchange"

    url = property(lambda self: f"http://127.0.0.1:{self.port}")
    course = property(lambda self: self.home(self.instructor) / COURSE_FOLDER)

    def home(self, user: str) -> Path:
        return self.dir / "home" / user

    def run_as(self, user: str, *cmd, log: Path, cwd: Path | None = None):
        """``cmd`` as ``user`` types it in a terminal of their server: their account, the students' environment
        on PATH, in the instructor's course folder unless ``cwd`` says otherwise."""
        return run(cmd, user=user, cwd=cwd or self.course, env={"PATH": f"{self.env / 'bin'}:/usr/bin:/bin"}, log=log)

    def save(self) -> None:
        write_json(self.dir / RECORD, {k: getattr(self, k) for k in RECORD_KEYS} | {"dir": str(self.dir)})
        (self.dir / RECORD).chmod(0o600)

    @classmethod
    def load(cls, folder: Path) -> Classroom:
        data = json.loads((folder / RECORD).read_text())
        return cls(Path(data["dir"]), **{k: data[k] for k in RECORD_KEYS})


RECORD_KEYS = ("port", "instructor", "students", "accounts", "hub_pid")
