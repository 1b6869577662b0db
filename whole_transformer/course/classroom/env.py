"""The students' environment of ``make classroom`` (classroom.py): one venv every account can run.

It must run the course, JupyterLab and the JupyterHub single-user server, and give no path into the
instructor's folder: a venv of a Python every user can execute (not one under /root), root's and
read-only for others, with the course package installed NON-editable from the handout (no ``course/``
part: no reference solutions, hidden tests or grading code), nbgrader's instructor extensions off, and
the exchange named. Making it the plain way (``pip install handout/ jupyterhub==…``) unpacks torch and
a hundred other wheels again, minutes on a 2-core machine; so the third-party packages it needs are
first put there from the environment running this (``seed_env``: the files each one's RECORD lists,
hard links where one disk holds both, else copies; console scripts made to start the new venv's Python),
each only where its installed version fits the students' Python (the pins, Requires-Python and markers
read for that Python). Then this environment's pip, run for the new venv (``pip --python``; the venv has
no pip of its own), installs as it would from scratch: it finds those satisfied, builds and installs the
course package, fetches whatever is still missing, and ``pip check`` confirms the whole. A hard link
shares its file's mode: the environment's files are made readable by all and writable by root alone,
the running environment's package files with them.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

import packaging
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

# nbgrader's JupyterLab plugins only an instructor gets (the Assignments tab and Validate stay on)
INSTRUCTOR_LAB_PLUGINS = [
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
]
INSTRUCTOR_SERVER_EXTENSIONS = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]


class ClassroomError(RuntimeError):
    pass


def run(cmd, *, user: str | None = None, cwd=None, env=None, log: Path | None = None, timeout=1800):
    """Run a command (as ``user`` if given); raise ClassroomError with its output if it fails."""
    uid = gid = None
    if user is not None:
        pw = pwd.getpwnam(user)
        uid, gid = pw.pw_uid, pw.pw_gid
        env = {**(env or {}), "HOME": pw.pw_dir, "USER": user, "LOGNAME": user}
    done = subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        user=uid,
        group=gid,
        extra_groups=[] if user is not None else None,
    )
    if log is not None:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        raise ClassroomError(
            f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return done


def everyone_can_run(path: Path) -> bool:
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
    tried = [
        c
        for c in [
            os.environ.get("WT_CLASSROOM_PYTHON"),
            getattr(sys, "_base_executable", sys.executable),
            "/usr/bin/python3",
        ]
        if c
    ]
    for cand in tried:
        if (
            everyone_can_run(Path(cand))
            and subprocess.run(
                [cand, "-c", "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)"], capture_output=True
            ).returncode
            == 0
        ):
            return Path(cand)
    raise ClassroomError(
        "no Python 3.11+ with venv that every user can run (tried: " + ", ".join(tried) + ").\n"
        "Students' servers cannot start from a Python under a folder they cannot read (such as /root).\n"
        "Install one (Debian: apt-get install python3-venv) or name one with WT_CLASSROOM_PYTHON=/path/python3."
    )


def installed_closure(requirements: list[str], python: Mapping[str, str] | None = None) -> list:
    """The distributions installed here that ``requirements`` need, dependencies and extras followed, each
    only where pip would take it for the Python described by ``python`` (its marker environment; default:
    this one): the version fits the requirement and the distribution's Requires-Python (a patch release can
    matter: soupsieve 4.1.3 needs 3.11.5, and fails on 3.11.2). What is missing or does not fit is left out."""
    marker_env: Mapping[str, str] = python or {k: str(v) for k, v in default_environment().items()}
    found, seen, todo = {}, set(), [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue
        if req.specifier.contains(dist.version, prereleases=True) and SpecifierSet(
            (dist.metadata.get_all("Requires-Python") or [""])[0]
        ).contains(marker_env["python_full_version"], prereleases=True):
            found[key[0]] = dist
            todo += [
                dep
                for dep in map(Requirement, dist.requires or [])
                if dep.marker is None or any(dep.marker.evaluate({**marker_env, "extra": e}) for e in ["", *req.extras])
            ]
    return list(found.values())


def seed_env(env: Path, dists: list, prefix: Path = Path(sys.prefix)) -> int:
    """Put the files of ``dists`` (installed under ``prefix``, as their RECORD lists them) into the venv
    ``env``: hard links where one disk holds both, else copies; console scripts get ``env``'s Python.
    What the venv has already is left alone. Returns how many distributions it put there."""
    have = {canonicalize_name(p.name.split("-")[0]) for p in env.glob("lib/python3*/site-packages/*.dist-info")}
    dists = [d for d in dists if canonicalize_name(d.metadata["Name"]) not in have and d.files]
    root, made = str(prefix) + os.sep, set()
    for dist in dists:
        for f in dist.files:
            src = os.path.normpath(dist.locate_file(f))
            if not src.startswith(root) or os.path.islink(src):
                continue
            dst = os.path.join(env, src[len(root) :])
            if (folder := os.path.dirname(dst)) not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            if os.path.basename(folder) == "bin" and os.path.isfile(src):
                first, _, rest = Path(src).read_bytes().partition(b"\n")
                if first.startswith(b"#!") and str(prefix).encode() in first:  # a console script of that venv
                    Path(dst).write_bytes(f"#!{env / 'bin' / 'python'}\n".encode() + rest)
                    os.chmod(dst, 0o755)
                    continue
            try:
                os.link(src, dst)
            except FileNotFoundError:  # listed in RECORD but not there (a .pyc never written)
                pass
            except OSError:
                shutil.copy2(src, dst)
    return len(dists)


def build_env(env: Path, exchange: Path, package: Path, log: Path) -> str:
    """The venv ``env`` (see the module doc), the course package installed from ``package``, not editable;
    says how it was made."""
    run([pick_python(), "-m", "venv", "--without-pip", env], log=log)
    python = env / "bin" / "python"
    hub = f"jupyterhub=={metadata.version('jupyterhub')}"  # the single-user servers must match the hub
    # the instructor's nbgrader (the Formgrader, autograde, feedback) makes students' work inert with nh3
    inert = f"nh3=={metadata.version('nh3')}"
    requirements = tomllib.loads((package / "pyproject.toml").read_text())["project"]["dependencies"] + [hub, inert]
    seeded = _seed(env, python, requirements)
    # this environment's pip, run for that Python (pip --python): the venv needs no pip of its own
    pip = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"]
    run([*pip, "install", "--quiet", "--no-warn-script-location", package, hub, inert], cwd=env.parent, log=log)
    run([*pip, "check"], log=log)  # every installed distribution has what it requires
    _configure(env, exchange)
    _readable_by_all(env)
    return f"{seeded} packages from {sys.prefix}, the course package and the rest by pip"


def _seed(env: Path, python: Path, requirements: list[str]) -> int:
    """Copy into ``env`` what this Python has installed of the requirements, when ``env`` runs the same Python
    minor (pip installs the rest); returns how many distributions were copied."""
    seeded = 0
    if (env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}").is_dir():  # the same Python minor
        here = str(Path(packaging.__file__).parent.parent)  # packaging, to describe that Python as pip will
        markers = run(
            [
                python,
                "-c",
                f"import sys, json; sys.path.insert(0, {here!r}); from packaging.markers "
                "import default_environment as d; print(json.dumps(d()))",
            ]
        ).stdout
        seeded = seed_env(env, installed_closure(requirements, json.loads(markers)))
    return seeded


def _configure(env: Path, exchange: Path) -> None:
    """The environment's settings for everyone who runs it: Jupyter's, JupyterLab's and nbgrader's exchange."""
    etc = env / "etc" / "jupyter"
    # nbgrader's instructor extensions off for everyone (as `jupyter server extension disable --sys-prefix`
    # and `jupyter labextension disable --level=sys_prefix` would), and locked; terminals run a plain bash,
    # not a login shell (Debian's /etc/profile would drop this environment from PATH)
    (etc / "jupyter_server_config.json").write_text(
        json.dumps(
            {
                "ServerApp": {
                    "jpserver_extensions": {ext: False for ext in INSTRUCTOR_SERVER_EXTENSIONS},
                    "terminado_settings": {"shell_command": ["/bin/bash"]},
                }
            },
            indent=1,
        )
    )
    (etc / "labconfig").mkdir(exist_ok=True)
    (etc / "labconfig" / "page_config.json").write_text(
        json.dumps(
            {
                "disabledExtensions": dict.fromkeys(INSTRUCTOR_LAB_PLUGINS, True),
                "lockedExtensions": dict.fromkeys(INSTRUCTOR_LAB_PLUGINS, True),
            },
            indent=1,
        )
    )
    (etc / "nbgrader_config.py").write_text(
        "# The classroom's nbgrader exchange, for everyone who runs this environment\n"
        f"c = get_config()  # noqa: F821\nc.Exchange.root = {str(exchange)!r}\n"
    )
    # JupyterLab's own settings for everyone: no news or update checks (no network here)
    overrides = env / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text(
        json.dumps({"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}})
    )


def _readable_by_all(env: Path) -> None:
    """Every file of ``env`` readable by all (and runnable where its owner may run it), writable by root alone."""
    for dirpath, dirnames, filenames in os.walk(env):  # readable by all, writable by root alone
        for p in (os.path.join(dirpath, n) for n in dirnames + filenames):
            mode = os.lstat(p).st_mode
            if not stat.S_ISLNK(mode) and mode != (new := (mode | 0o044 | (0o011 if mode & 0o100 else 0)) & ~0o022):
                os.chmod(p, new)
