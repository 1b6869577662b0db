"""A whole classroom on this machine: JupyterHub, nbgrader's exchange, an instructor and N students.

    python -m whole_transformer.course.classroom up [--students N] [--dir DIR] [--package DIR] [--port P]
    python -m whole_transformer.course.classroom down [--dir DIR]

(``make classroom`` / ``make classroom-stop``). ``up`` needs root: it creates Linux accounts, which
log in to JupyterHub through PAM, and JupyterHub starts each user's server as that user.
Everything it makes is under one folder (default ``/srv/wt-classroom``) and recorded, as it is
made, in ``DIR/classroom.json``; ``down`` stops the hub and removes exactly that:

    DIR/classroom.json      what was made: accounts, port, pids (root only)
    DIR/env/                the students' environment: a venv from a Python everyone can run, with the
                            course package installed NON-editable from --package (default: the
                            handout, see make handout) and JupyterHub; root-owned, read-only for everyone else. Its
                            etc/jupyter/ turns nbgrader's instructor extensions (Formgrader, Create
                            Assignment, Courses) off and names the exchange.
    DIR/exchange/           nbgrader's exchange (c.Exchange.root), writable by all as nbgrader wants
    DIR/hub/                jupyterhub_config.py, its database, cookie secret (root only)
    DIR/logs/               jupyterhub.log, env.log (root only)
    DIR/home/<account>/     each account's home (0700): the instructor's holds the course folder
                            ``whole-transformer/`` (a copy of this course, released to the exchange)
                            and the ~/.jupyter settings that turn the Formgrader on for them alone.

Students get a server that can run the course but has no path into the instructor's folder: the
environment is a copy in DIR/env (no editable install pointing at a course checkout), and the
instructor's home is closed to others. The Python the environment is made from must be one that
students can run (a venv made from a Python under /root cannot start for them): the first of
$WT_CLASSROOM_PYTHON, the Python running this, and /usr/bin/python3 that every user can execute.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from .layout import ASSIGNMENT, COURSE_ID

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DIR = Path("/srv/wt-classroom")
DEFAULT_PROXY = REPO / ".classroom" / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE_FOLDER = "whole-transformer"
RECORD = "classroom.json"
# nbgrader's JupyterLab plugins only an instructor gets (the Assignments tab and Validate stay on)
INSTRUCTOR_LAB_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                          "@jupyter/nbgrader:course-list"]
INSTRUCTOR_SERVER_EXTENSIONS = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]
# what is not copied into the instructor's course folder
COURSE_IGNORE = [".git", ".venv", ".classroom", "node_modules", "artifacts", "autograde", "feedback", "submitted",
                 "gradebook.db", "__pycache__", ".pytest_cache", ".ruff_cache", "build", "*.egg-info", "handout",
                 ".ipynb_checkpoints", "grades.csv", "grades-detail.csv", "integrity-report.csv", "runs"]

NEED_ROOT = (
    "make classroom needs root: it creates Linux accounts (students log in to JupyterHub with their\n"
    "password through PAM) and JupyterHub starts each user's server as that user.\n"
    "Run it as root, e.g.  sudo make classroom  (make classroom-stop removes everything it made).\n"
    "To try the course alone, without accounts, use  make lab."
)


class ClassroomError(RuntimeError):
    pass


@dataclass
class Classroom:
    """What ``up`` made (kept in DIR/classroom.json) and the passwords (never written to disk)."""

    dir: Path
    port: int = 0
    instructor: str = ""
    students: list[str] = field(default_factory=list)
    accounts: list[str] = field(default_factory=list)  # the Linux accounts this classroom created
    hub_pid: int = 0
    passwords: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> Path:
        return self.dir / "env"

    @property
    def exchange(self) -> Path:
        return self.dir / "exchange"

    def home(self, user: str) -> Path:
        return self.dir / "home" / user

    @property
    def course(self) -> Path:
        return self.home(self.instructor) / COURSE_FOLDER

    def save(self) -> None:
        data = {"dir": str(self.dir), "port": self.port, "instructor": self.instructor, "students": self.students,
                "accounts": self.accounts, "hub_pid": self.hub_pid}
        tmp = self.dir / f".{RECORD}.tmp"
        tmp.write_text(json.dumps(data, indent=1))
        tmp.chmod(0o600)
        os.replace(tmp, self.dir / RECORD)

    @classmethod
    def load(cls, folder: Path) -> Classroom:
        data = json.loads((folder / RECORD).read_text())
        return cls(Path(data["dir"]), data["port"], data["instructor"], data["students"], data["accounts"],
                   data["hub_pid"])


# ------------------------------------------------------------------------------ helpers
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(cmd, *, user: str | None = None, cwd=None, env=None, log: Path | None = None, timeout=1800):
    """Run a command (as ``user`` if given); raise ClassroomError with its output if it fails."""
    kw = {}
    if user is not None:
        pw = pwd.getpwnam(user)
        kw = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        env = {**(env or {}), "HOME": pw.pw_dir, "USER": user, "LOGNAME": user}
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, **kw)
    if log is not None:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        raise ClassroomError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                             f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done


def _everyone_can_run(path: Path) -> bool:
    """True if a user with no special rights can execute ``path`` (every folder above it included)."""
    try:
        real = Path(os.path.realpath(path))
        if not real.is_file() or not real.stat().st_mode & stat.S_IXOTH:
            return False
        return all(p.stat().st_mode & stat.S_IXOTH for p in real.parents)
    except OSError:
        return False


def pick_python() -> Path:
    """A Python (3.11+, with venv) that students can run, to make the shared environment from."""
    base = Path(getattr(sys, "_base_executable", sys.executable))
    tried = []
    for cand in [os.environ.get("WT_CLASSROOM_PYTHON"), str(base), "/usr/bin/python3"]:
        if not cand:
            continue
        tried.append(cand)
        if not _everyone_can_run(Path(cand)):
            continue
        ok = subprocess.run([cand, "-c", "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)"],
                            capture_output=True)
        if ok.returncode == 0:
            return Path(cand)
    raise ClassroomError(
        "no Python 3.11+ with venv that every user can run (tried: " + ", ".join(tried) + ").\n"
        "Students' servers cannot start from a Python under a folder they cannot read (such as /root).\n"
        "Install one (Debian: apt-get install python3-venv) or name one with WT_CLASSROOM_PYTHON=/path/python3.")


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


# ------------------------------------------------------------------------------ the pieces
def build_env(room: Classroom, package: Path, log: Path) -> None:
    """DIR/env: a venv everyone can run, the course package installed from ``package`` (not editable)."""
    python = pick_python()
    _run([python, "-m", "venv", room.env], log=log)
    pip = [room.env / "bin" / "python", "-m", "pip", "--disable-pip-version-check"]
    # the same JupyterHub as the hub's (single-user servers must match it); the package as a copy
    _run([*pip, "install", "--quiet", "--no-warn-script-location", str(package),
          f"jupyterhub=={_version('jupyterhub')}"], cwd=room.dir, log=log)
    etc = room.env / "etc" / "jupyter"
    jupyter = room.env / "bin" / "jupyter"
    for ext in INSTRUCTOR_SERVER_EXTENSIONS:
        _run([jupyter, "server", "extension", "disable", "--sys-prefix", ext], log=log)
    for plugin in INSTRUCTOR_LAB_PLUGINS:
        _run([jupyter, "labextension", "disable", "--level=sys_prefix", plugin], log=log)
    # Terminals: a plain bash, not a login shell (Debian's /etc/profile would drop this environment from PATH)
    server_config = etc / "jupyter_server_config.json"
    settings = json.loads(server_config.read_text()) if server_config.exists() else {}
    settings.setdefault("ServerApp", {})["terminado_settings"] = {"shell_command": ["/bin/bash"]}
    server_config.write_text(json.dumps(settings, indent=1))
    (etc / "nbgrader_config.py").write_text(
        "# The classroom's nbgrader exchange, for everyone who runs this environment\n"
        "c = get_config()  # noqa: F821\n"
        f"c.Exchange.root = {str(room.exchange)!r}\n")
    # JupyterLab's own settings for everyone: no news or update checks (no network here)
    overrides = room.env / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text(json.dumps({"@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false", "checkForUpdates": False}}))
    for dirpath, dirnames, filenames in os.walk(room.env):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                mode = os.stat(p).st_mode
                os.chmod(p, (mode | stat.S_IROTH | stat.S_IRGRP
                             | (stat.S_IXOTH | stat.S_IXGRP if mode & stat.S_IXUSR else 0)) & ~0o022)


def add_account(room: Classroom, name: str) -> str:
    """A Linux account with its home under DIR/home, and a fresh password (returned, not stored)."""
    try:
        pwd.getpwnam(name)
        raise ClassroomError(f"an account named {name} already exists: remove it, or pick another --prefix")
    except KeyError:
        pass
    home = room.home(name)
    _run(["useradd", "--create-home", "--home-dir", home, "--shell", "/bin/bash", "--user-group", name])
    room.accounts.append(name)
    room.save()
    home.chmod(0o700)
    password = secrets.token_urlsafe(9)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
    return password


def set_up_instructor(room: Classroom, log: Path) -> None:
    """The course folder in the instructor's home, released to the exchange; the Formgrader for them."""
    user, home, course = room.instructor, room.home(room.instructor), room.course
    shutil.copytree(REPO, course, ignore=shutil.ignore_patterns(*COURSE_IGNORE), symlinks=True)
    jupyter = home / ".jupyter"
    (jupyter / "labconfig").mkdir(parents=True)
    (jupyter / "nbgrader_config.py").write_text(
        "# The instructor's course: the Formgrader and nbgrader commands find it from anywhere\n"
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(course / 'nbgrader_config.py')!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course)!r}\n")
    (jupyter / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {
        "jpserver_extensions": {ext: True for ext in INSTRUCTOR_SERVER_EXTENSIONS},
        # the Formgrader is a page of this server shown in a frame of JupyterLab: allow frames from itself
        "tornado_settings": {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}},
    }}, indent=1))
    (jupyter / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {p: False for p in INSTRUCTOR_LAB_PLUGINS}}, indent=1))
    pw = pwd.getpwnam(user)
    for dirpath, dirnames, filenames in os.walk(home):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.lchown(name, pw.pw_uid, pw.pw_gid)
    env = {"PATH": f"{room.env / 'bin'}:/usr/bin:/bin"}
    py = room.env / "bin" / "python"
    _run([py, "-m", "whole_transformer.course", "release"], user=user, cwd=course, env=env, log=log)
    _run([py, "-m", "nbgrader", "release_assignment", ASSIGNMENT, "--force"], user=user, cwd=course, env=env,
         log=log)


def write_hub_config(room: Classroom, proxy: Path) -> Path:
    hub = room.dir / "hub"
    users = [room.instructor, *room.students]
    config = hub / "jupyterhub_config.py"
    config.write_text(f"""\
# JupyterHub of the classroom made by `make classroom` (whole_transformer/course/classroom.py)
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = {room.url!r}            # loopback only
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {_free_port()}
c.ConfigurableHTTPProxy.command = [{str(proxy)!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{_free_port()}"
c.ConfigurableHTTPProxy.pid_file = {str(hub / 'proxy.pid')!r}
c.JupyterHub.db_url = "sqlite:///{hub / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(hub / 'jupyterhub_cookie_secret')!r}
c.JupyterHub.pid_file = {str(hub / 'jupyterhub.pid')!r}
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_users = {set(users)!r}
c.Authenticator.admin_users = {{{room.instructor!r}}}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{str(room.env / 'bin' / 'jupyterhub-singleuser')!r}]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.environment = {{"PATH": {f"{room.env / 'bin'}:/usr/local/bin:/usr/bin:/bin"!r}}}
# nothing of the hub's own environment (PYTHONPATH, VIRTUAL_ENV, CONDA_*) reaches a user's server
c.Spawner.env_keep = ["LANG", "LC_ALL", "JUPYTERHUB_SINGLEUSER_APP"]
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
""")
    config.chmod(0o600)
    return config


def start_hub(room: Classroom, config: Path, timeout: float = 120) -> None:
    hub, log = room.dir / "hub", room.dir / "logs" / "jupyterhub.log"
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    with open(log, "a") as out:
        proc = subprocess.Popen([bindir / "jupyterhub", "-f", config], cwd=hub, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    room.hub_pid = proc.pid
    room.save()
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise ClassroomError(f"JupyterHub exited with code {proc.returncode}; see {log}:\n"
                                 + "\n".join(log.read_text(errors="replace").splitlines()[-30:]))
        try:
            with urllib.request.urlopen(f"{room.url}/hub/api", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise ClassroomError(f"JupyterHub did not answer at {room.url} within {timeout:.0f} s; see {log}")
        time.sleep(0.5)


# ------------------------------------------------------------------------------ up and down
def up(folder: Path = DEFAULT_DIR, students: int = 3, package: Path | None = None, port: int = 0, prefix: str = "wt",
       proxy: Path = DEFAULT_PROXY, log=print) -> Classroom:
    """Make the classroom (see the module doc) and start its hub; returns it, passwords included."""
    if os.geteuid() != 0:
        raise ClassroomError(NEED_ROOT)
    if not Path(proxy).is_file():
        raise ClassroomError(f"configurable-http-proxy is not at {proxy}: run `make classroom` (it installs it "
                             "from npm into .classroom/), or pass --proxy")
    if not 1 <= students <= 200:
        raise ClassroomError(f"STUDENTS must be between 1 and 200, not {students}")
    folder = Path(folder).resolve()
    if (folder / RECORD).exists():
        raise ClassroomError(f"a classroom is already set up in {folder}: run `make classroom-stop` first")
    if folder.exists() and any(folder.iterdir()):
        raise ClassroomError(f"{folder} exists and is not empty: name a new folder with CLASSROOM_DIR=...")
    if not all(p.stat().st_mode & stat.S_IXOTH for p in folder.parents if p.exists()):
        raise ClassroomError(f"every user must be able to pass through the folders above {folder}")
    t0 = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    room = Classroom(folder, port or _free_port(), f"{prefix}-instructor",
                     [f"{prefix}-student{i}" for i in range(1, students + 1)])
    room.save()
    for sub, mode in [("hub", 0o700), ("logs", 0o700), ("home", 0o755), ("exchange", 0o777)]:
        (folder / sub).mkdir()
        (folder / sub).chmod(mode)  # the exchange: writable by all, as nbgrader's docs ask
    log(f"classroom: {folder} (hub state, logs, accounts' homes, exchange, environment)")
    try:
        for name in [room.instructor, *room.students]:
            room.passwords[name] = add_account(room, name)
        if package is None:  # the students' handout: the package without course/ (no answers, no grading code)
            from .handout import handout
            from .layout import Course

            package = handout(Course.here(REPO), folder / "handout", log=log)
        log(f"classroom: {len(room.accounts)} accounts; building the shared environment from {package} ...")
        build_env(room, Path(package).resolve(), folder / "logs" / "env.log")
        log(f"classroom: environment ready ({time.monotonic() - t0:.0f} s); releasing the course ...")
        set_up_instructor(room, folder / "logs" / "course.log")
        start_hub(room, write_hub_config(room, Path(proxy).resolve()))
    except BaseException:
        log(f"classroom: setting up failed; logs in {folder / 'logs'} (make classroom-stop removes it all)")
        raise
    log(f"classroom: JupyterHub at {room.url} in {time.monotonic() - t0:.0f} s")
    return room


def _pids_of(uids: set[int]) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if p.stat().st_uid in uids:
                    out.append(int(p.name))
            except OSError:
                pass
    return out


def _stop(pids: list[int], grace: float = 10) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.2)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def down(folder: Path = DEFAULT_DIR, log=print) -> None:
    """Stop the classroom's hub and servers; remove its accounts and its folder, nothing else."""
    folder = Path(folder).resolve()
    if not (folder / RECORD).exists():
        log(f"classroom: nothing to stop in {folder} (no {RECORD})")
        return
    if os.geteuid() != 0:
        raise ClassroomError(NEED_ROOT)
    room = Classroom.load(folder)
    if room.hub_pid:
        try:  # the hub stops the proxy and the servers it started when it gets SIGTERM
            os.killpg(room.hub_pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and Path(f"/proc/{room.hub_pid}").exists():
                time.sleep(0.2)
            os.killpg(room.hub_pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    proxy_pid = folder / "hub" / "proxy.pid"
    if proxy_pid.exists():
        try:
            pid = int(proxy_pid.read_text().strip())
            if "configurable-http-proxy" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                _stop([pid])
        except (OSError, ValueError):
            pass
    uids = set()
    for name in room.accounts:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            pass
    _stop(_pids_of(uids))  # whatever the accounts still run (servers, kernels, terminals)
    for name in room.accounts:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        subprocess.run(["userdel", name], capture_output=True)
    shutil.rmtree(folder)
    log(f"classroom: stopped; removed {len(room.accounts)} accounts and {folder}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m whole_transformer.course.classroom", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    u = sub.add_parser("up", help="make the classroom and start JupyterHub")
    u.add_argument("--dir", default=os.environ.get("CLASSROOM_DIR") or DEFAULT_DIR, type=Path)
    u.add_argument("--students", type=int, default=int(os.environ.get("STUDENTS") or 3))
    u.add_argument("--package", type=Path, default=None,
                   help="the package folder the students' environment is installed from (default: the course's "
                        "handout, built into the classroom folder)")
    u.add_argument("--port", type=int, default=int(os.environ.get("CLASSROOM_PORT") or 8000))
    u.add_argument("--prefix", default="wt", help="account names: PREFIX-instructor, PREFIX-student1 ...")
    u.add_argument("--proxy", type=Path, default=DEFAULT_PROXY, help="configurable-http-proxy to run")
    d = sub.add_parser("down", help="stop it and remove the accounts and folders it made")
    d.add_argument("--dir", default=os.environ.get("CLASSROOM_DIR") or DEFAULT_DIR, type=Path)
    args = p.parse_args(argv)
    try:
        if args.command == "up":
            room = up(args.dir, args.students, args.package, args.port, args.prefix, args.proxy)
            print(f"\nThe classroom is up: {room.url}  (loopback only)\n"
                  f"Everything it made is in {room.dir} (hub state and logs in hub/ and logs/).\n"
                  "Accounts (the passwords are shown only now):")
            for name in [room.instructor, *room.students]:
                role = "instructor: Formgrader, course folder ~/" + COURSE_FOLDER if name == room.instructor \
                    else "student: Assignments tab"
                print(f"  {name:<20} {room.passwords[name]:<16} {role}")
            print(f"The course {COURSE_ID!r} is released to the exchange {room.exchange}.\n"
                  f"Stop it and remove all of it: make classroom-stop CLASSROOM_DIR={room.dir}")
        else:
            down(args.dir)
    except ClassroomError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
