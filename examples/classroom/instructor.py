"""The classroom's accounts and the instructor's course (``up.py``'s ``up`` calls them): a Linux account each
with a fresh password, the course folder copied into the instructor's home and released to the exchange by
them, and the Formgrader turned on for them alone."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
import tomllib
from pathlib import Path

from whole_transformer.course.layout import ASSIGNMENT, REPO, Course
from whole_transformer.course.lti.settings import read_key_file
from whole_transformer.course.term.settings import load

from .commands import ClassroomError, run
from .env import INSTRUCTOR_LAB_PLUGINS, INSTRUCTOR_SERVER_EXTENSIONS
from .room import Classroom

# what is not copied into the instructor's course folder: the checkout's own work and tools at its top
# (a package folder may share a name with one of them: whole_transformer/course/publish/ is copied) ...
COURSE_IGNORE_TOP = {
    ".git",
    ".venv",
    ".classroom",
    ".a11y",
    "node_modules",
    "artifacts",
    "autograde",
    "feedback",
    "feedback-pages",
    "submitted",
    "downloaded",
    "gradebook.db",
    "build",
    "handout",
    "grades.csv",
    "grades-detail.csv",
    "integrity-report.csv",
    "canvas-grades.csv",
    "moodle-grades.csv",
    "runs",
    "examples",  # this classroom itself: a course needs none of it
}
# ... and caches at any depth
COURSE_IGNORE = shutil.ignore_patterns(
    "__pycache__", ".pytest_cache", ".ruff_cache", "*.egg-info", ".ipynb_checkpoints"
)


def _not_copied(folder: str, names: list[str]) -> set[str]:
    top = COURSE_IGNORE_TOP if Path(folder) == REPO else set()
    return top | set(COURSE_IGNORE(folder, names))


def add_account(room: Classroom, name: str) -> str:
    """A Linux account with its home under DIR/home, and a fresh password (returned, not stored)."""
    if name in {p.pw_name for p in pwd.getpwall()}:
        raise ClassroomError(f"an account named {name} already exists: remove it, or pick another --prefix")
    run(["useradd", "--create-home", "--home-dir", room.home(name), "--shell", "/bin/bash", "--user-group", name])
    room.accounts.append(name)
    room.save()
    room.home(name).chmod(0o700)
    password = secrets.token_urlsafe(9)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
    return password


def set_up_instructor(room: Classroom, log: Path, lti: Path | None = None) -> None:
    """The course folder in the instructor's home, released to the exchange; the Formgrader for them. With
    ``lti`` (a TOML file of the LMS's registration), its ``[lti]`` goes into the course's course.toml and the
    tool's key pair is made there (``make lti-key``), unless the course has one already."""
    user, home, course = room.instructor, room.home(room.instructor), room.course
    shutil.copytree(REPO, course, ignore=_not_copied, symlinks=True)
    if lti is not None:
        add_registration(course / "course.toml", Path(lti))
    jupyter = home / ".jupyter"
    (jupyter / "labconfig").mkdir(parents=True)
    (jupyter / "nbgrader_config.py").write_text(
        "# The instructor's course: the Formgrader and nbgrader commands find it from anywhere\n"
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(course / 'nbgrader_config.py')!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
    )
    (jupyter / "jupyter_server_config.json").write_text(
        json.dumps(
            {
                "ServerApp": {
                    "jpserver_extensions": dict.fromkeys(INSTRUCTOR_SERVER_EXTENSIONS, True),
                    # the Formgrader is a page of this server shown in a frame of JupyterLab: allow frames from itself
                    "tornado_settings": {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}},
                }
            },
            indent=1,
        )
    )
    (jupyter / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": dict.fromkeys(INSTRUCTOR_LAB_PLUGINS, False)}, indent=1)
    )
    pw = pwd.getpwnam(user)
    for dirpath, dirnames, filenames in os.walk(home):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.lchown(name, pw.pw_uid, pw.pw_gid)
    steps = [["whole_transformer.course", "release"], ["nbgrader", "release_assignment", ASSIGNMENT, "--force"]]
    if lti is not None and not (course / read_key_file(load(Course(course)))).exists():
        steps.insert(0, ["whole_transformer.course", "lti-key"])
    for args in steps:
        room.run_as(user, room.env / "bin" / "python", "-m", *args, log=log)


def add_registration(toml: Path, lti: Path) -> None:
    """``lti``'s ``[lti]`` table added to the course.toml ``toml`` (nothing when ``lti`` is that course.toml's
    original in this checkout, whose [lti] the copy has); a ClassroomError if the course has another [lti]."""
    if lti.resolve() == (REPO / "course.toml").resolve():
        return
    if "lti" in tomllib.loads(toml.read_text(encoding="utf-8")):
        raise ClassroomError(f"the course's course.toml has an [lti] table already: give --lti {REPO / 'course.toml'}")
    table = tomllib.loads(lti.read_text(encoding="utf-8"))["lti"]
    lines = [f"{key} = {json.dumps(value)}" for key, value in table.items()]  # strings, booleans, lists of strings
    with open(toml, "a", encoding="utf-8") as f:
        f.write(f"\n# the LMS's registration, from {lti} (make classroom LTI=...)\n[lti]\n" + "\n".join(lines) + "\n")
