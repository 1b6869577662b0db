"""The students' environment of ``make classroom`` (``up.py``): one venv every account can run.

It must run the course, JupyterLab and the JupyterHub single-user server, and give no path into the
instructor's folder: a venv of a Python every user can execute (not one under /root), root's and
read-only for others, with the course package installed NON-editable from the handout (no ``course/``
part: no reference solutions, hidden tests or grading code), nbgrader's instructor extensions off, and
the exchange named. The third-party packages it needs are first put there from the environment running
this (``seed.py``). Then this environment's pip, run for the new venv (``pip --python``; the venv has
no pip of its own), installs as it would from scratch: it finds those satisfied, builds and installs the
course package, fetches whatever is still missing, and ``pip check`` confirms the whole. A hard link
shares its file's mode: the environment's files are made readable by all and writable by root alone,
the running environment's package files with them.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from whole_transformer.course.env_vars import classroom_python

from .commands import ClassroomError, run
from .seed import seed_from_here

# nbgrader's JupyterLab plugins only an instructor gets (the Assignments tab and Validate stay on)
INSTRUCTOR_LAB_PLUGINS = [
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
]
INSTRUCTOR_SERVER_EXTENSIONS = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]


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
            classroom_python(),
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


def build_env(env: Path, exchange: Path, package: Path, log: Path) -> str:
    """The venv ``env`` (see the module doc), the course package installed from ``package``, not editable;
    says how it was made."""
    run([pick_python(), "-m", "venv", "--without-pip", env], log=log)
    python = env / "bin" / "python"
    hub = f"jupyterhub=={metadata.version('jupyterhub')}"  # the single-user servers must match the hub
    # the instructor's nbgrader (the Formgrader, autograde, feedback) makes students' work inert with nh3; their
    # autograde and grading service sign the LMS's token requests with pyjwt and cryptography (lti/passback.py)
    instructor = [f"{name}=={metadata.version(name)}" for name in ("nh3", "pyjwt", "cryptography")]
    requirements = tomllib.loads((package / "pyproject.toml").read_text())["project"]["dependencies"] + [
        hub,
        *instructor,
    ]
    seeded = seed_from_here(env, python, requirements)
    # this environment's pip, run for that Python (pip --python): the venv needs no pip of its own
    pip = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"]
    run([*pip, "install", "--quiet", "--no-warn-script-location", package, hub, *instructor], cwd=env.parent, log=log)
    run([*pip, "check"], log=log)  # every installed distribution has what it requires
    _configure(env, exchange)
    _readable_by_all(env)
    return f"{seeded} packages from {sys.prefix}, the course package and the rest by pip"


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
