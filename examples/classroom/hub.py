"""The classroom's JupyterHub: its config written, the hub started as root and waited for until it answers.

The hub (``DIR/hub/jupyterhub_config.py``) listens on loopback only, signs its users in, starts each user's
server from the students' environment (``env.py``) as that user, and runs the grading service (``service/``)
as the instructor. Users sign in with their account's password (PAM), or, with ``--lti``, from an LMS by LTI
1.3 (the course's ``lti/hub.py``): an LMS instructor as the classroom's instructor, each LMS student as an
account of their own, made by the hub at their first launch, their copy of the assignment fetched before their
server starts. ``up.py`` calls these in order.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from whole_transformer.course.layout import REPO, python_first_on_path
from whole_transformer.course.lti.settings import LtiSettings

from .commands import ClassroomError
from .room import COURSE_FOLDER, Classroom

DEFAULT_PROXY = REPO / ".classroom" / "node_modules" / ".bin" / "configurable-http-proxy"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sign_in(room: Classroom, lti: LtiSettings | None) -> str:
    """The hub's lines that sign users in: PAM for the classroom's accounts, or LTI 1.3 from the LMS of ``lti``
    (every user new to the hub gets an account under ``DIR/home``, named with the classroom's prefix)."""
    if lti is None:
        return f"""c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_users = {set([room.instructor, *room.students])!r}
c.Authenticator.admin_users = {{{room.instructor!r}}}
"""
    from whole_transformer.course.lti.hub import hub_config  # lazy: jupyterhub's LTI authenticator, for LTI alone

    prefix = room.instructor.removesuffix("instructor")
    text = hub_config(
        lti, room.course, linux_accounts=room.dir / "home", name_prefix=prefix, instructor_name=room.instructor
    )
    return text + "\n"


def write_hub_config(room: Classroom, proxy: Path, lti: LtiSettings | None = None) -> Path:
    """The hub's jupyterhub_config.py in ``DIR/hub/`` (root only): its ports, how users sign in (``sign_in``), the
    users' servers, the service."""
    hub = room.dir / "hub"
    config = hub / "jupyterhub_config.py"
    service_port = free_port()
    config.write_text(f"""\
# JupyterHub of the classroom made by `make classroom` (examples/classroom/hub.py)
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = {room.url!r}            # loopback only
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.command = [{str(proxy)!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.pid_file = {str(hub / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{hub / "jupyterhub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(hub / "jupyterhub_cookie_secret")!r}
c.JupyterHub.pid_file = {str(hub / "jupyterhub.pid")!r}
{sign_in(room, lti)}c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{str(room.env / "bin" / "jupyterhub-singleuser")!r}]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.environment = {{"PATH": {f"{room.env / 'bin'}:/usr/local/bin:/usr/bin:/bin"!r}}}
# nothing of the hub's own environment (PYTHONPATH, VIRTUAL_ENV, CONDA_*) reaches a user's server
c.Spawner.env_keep = ["LANG", "LC_ALL", "JUPYTERHUB_SINGLEUSER_APP"]
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
# the grading service (whole_transformer/course/service/): each submission graded at once, its feedback
# released at once; run as the instructor in their course folder (once it is copied there), idle until
# course.toml [service] is on. Its status page: {room.url}/services/grading/ (the counts; with
# ?token=… from the course's autograde/.wt/service/status-token, names and scores too)
c.JupyterHub.services = [{{
    "name": "grading",
    "user": {room.instructor!r},
    "cwd": {str(room.home(room.instructor))!r},
    "command": ["/bin/sh", "-c", "until [ -O {COURSE_FOLDER}/nbgrader_config.py ]; do sleep 1; done; "
                "cd {COURSE_FOLDER} && exec {room.env / "bin" / "python"} -m whole_transformer.course serve "
                "--exchange {room.exchange} --port {service_port}"],
    "url": "http://127.0.0.1:{service_port}",
    "timeout": 300,
    "environment": {{"PATH": {f"{room.env / 'bin'}:/usr/local/bin:/usr/bin:/bin"!r}}},
}}]
""")
    config.chmod(0o600)
    return config


def start_hub(room: Classroom, config: Path) -> subprocess.Popen:
    """JupyterHub started in a session of its own, logging to ``DIR/logs/jupyterhub.log``; its pid recorded."""
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": python_first_on_path(os.environ.get("PATH", "/usr/bin:/bin"))}
    with open(room.dir / "logs" / "jupyterhub.log", "a") as out:
        proc = subprocess.Popen(
            [bindir / "jupyterhub", "-f", config],
            cwd=room.dir / "hub",
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    room.hub_pid = proc.pid
    room.save()
    return proc


def wait_for_hub(room: Classroom, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until the hub's API answers; ClassroomError (with the log's tail) if it exits or is too slow."""
    log, deadline = room.dir / "logs" / "jupyterhub.log", time.monotonic() + timeout
    while proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{room.url}/hub/api", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise ClassroomError(f"JupyterHub did not answer at {room.url} within {timeout:.0f} s; see {log}")
        time.sleep(0.5)
    raise ClassroomError(
        f"JupyterHub exited with code {proc.returncode}; see {log}:\n"
        + "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    )
