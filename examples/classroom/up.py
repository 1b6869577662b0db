"""A whole classroom on this machine: JupyterHub, nbgrader's exchange, an instructor and N students.

    python -m examples.classroom up [--students N] [--dir DIR] [--package DIR] [--port P] [--lti FILE]
    python -m examples.classroom down [--dir DIR]

(``make classroom`` / ``make classroom-stop``; docs/jupyterhub.md). ``up`` needs root: it creates Linux
accounts, which log in to JupyterHub through PAM, and JupyterHub starts each user's server as that user.
With ``--lti FILE`` (``make classroom LTI=1``: the course's own course.toml) users sign in from an LMS by
LTI 1.3 instead, with the LMS's registration in FILE's ``[lti]`` (checked before anything is made): the LMS's
instructors as the classroom's instructor, each student as an account the hub makes at their first launch
(no student account is made beforehand), the instructor's course gets that ``[lti]`` and the tool's key pair
(``make lti-key``), and a launch opens the student's notebook, fetched for them. Everything it makes is under
one folder (default ``/srv/wt-classroom``) and recorded, as it is made, in ``DIR/classroom.json``; ``down``
stops the hub and removes exactly that, and the accounts whose homes the hub made in ``DIR/home/``:

    DIR/classroom.json      what was made: accounts, port, pids (root only)
    DIR/env/                the students' environment (env.py): a venv everyone can run and
                            only root can write, the course package installed NON-editable from the
                            handout (no course/ part), nbgrader's instructor extensions off
    DIR/exchange/           nbgrader's exchange (c.Exchange.root), writable by all as nbgrader wants
    DIR/hub/  DIR/logs/     jupyterhub_config.py, its database, cookie secret; jupyterhub.log, env.log,
                            course.log (root only)
    DIR/home/<account>/     each account's home (0700): the instructor's holds the course folder
                            ``whole-transformer/`` (a copy of this course, released to the exchange)
                            and the ~/.jupyter settings that turn the Formgrader on for them alone.

No student has a path into the instructor's folder: the environment holds no editable install pointing
at a course checkout, and the instructor's home is closed to others. What ``up`` made is a ``Classroom``
(``room.py``); its accounts and the instructor's course are made by ``instructor.py``, its JupyterHub is
configured and started by ``hub.py``; ``down`` is in ``teardown.py``.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from whole_transformer.course.layout import COURSE_ID, REPO, Course
from whole_transformer.course.lti.settings import LtiSettings, read_lti
from whole_transformer.course.publish.handout import handout
from whole_transformer.course.term.settings import parse
from whole_transformer.course.term.toml_values import SettingsError

from .commands import ClassroomError
from .env import build_env
from .hub import DEFAULT_PROXY, free_port, start_hub, wait_for_hub, write_hub_config
from .instructor import add_account, set_up_instructor
from .room import COURSE_FOLDER, DEFAULT_DIR, NEED_ROOT, RECORD, Classroom
from .teardown import down


def up(
    folder: Path = DEFAULT_DIR,
    students: int = 3,
    package: Path | None = None,
    port: int = 0,
    prefix: str = "wt",
    proxy: Path = DEFAULT_PROXY,
    log=print,
    hub_up=None,
    lti: Path | None = None,
) -> Classroom:
    """Make the classroom (see the module doc) and start its hub; returns it, passwords included.
    ``hub_up(room)``, if given, is called once the hub answers, while the course may still be being released.
    With ``lti`` (a TOML file with the LMS's ``[lti]``), users sign in from the LMS and no student account is made:
    each student's is made by the hub at their first launch."""
    registration = read_registration(lti)
    folder = _check_up(Path(folder).resolve(), students, proxy)
    room = _make_room(folder, 0 if registration else students, port, prefix)
    if registration:
        where = _tool_url_note(room, registration)
        log(f"classroom: users sign in from the LMS {registration.issuer} (LTI 1.3, {lti}): {where}")
    log(f"classroom: {folder} (hub state, logs, accounts' homes, exchange, environment)")
    t0 = [time.monotonic()]

    def done(part: str, what: str, since: float | None = None) -> None:
        room.times[part] = round(time.monotonic() - (since or t0[-1]), 1)
        t0.append(time.monotonic())
        log(f"classroom: {what} ({room.times[part]:.0f} s)")

    try:
        for name in [room.instructor, *room.students]:
            room.passwords[name] = add_account(room, name)
        if package is None:  # the students' handout: the package without course/ (no answers, no grading code)
            package = handout(Course.here(REPO), folder / "handout", log=log)
        done("accounts", f"{len(room.accounts)} accounts; the students' package: {package}")
        done(
            "environment",
            "the students' environment: "
            + build_env(room.env, room.exchange, Path(package).resolve(), folder / "logs" / "env.log"),
        )
        hub, started = start_hub(room, write_hub_config(room, Path(proxy).resolve(), registration)), time.monotonic()
        with ThreadPoolExecutor(1) as pool:  # the instructor's course is made and released while the hub starts
            course = pool.submit(set_up_instructor, room, folder / "logs" / "course.log", lti)
            wait_for_hub(room, hub)
            done("hub", f"JupyterHub answers at {room.url}")
            if hub_up is not None:
                hub_up(room)
            course.result()
        done("course", "the course folder made and released to the exchange by the instructor", since=started)
    except BaseException:
        log(f"classroom: setting up failed; logs in {folder / 'logs'} (make classroom-stop removes it all)")
        raise
    log(f"classroom: up in {time.monotonic() - t0[0]:.0f} s")
    return room


def read_registration(lti: Path | None) -> LtiSettings | None:
    """The LMS's registration in ``lti``'s ``[lti]`` (None without ``lti``); a ClassroomError naming the key and
    the fix if a value is missing or wrong."""
    if lti is None:
        return None
    path = Path(lti)
    if not path.is_file():
        raise ClassroomError(
            f"--lti {lti}: no such file; give the course.toml (or a TOML file) whose [lti] holds the LMS's values"
        )
    try:
        return read_lti(parse(path.read_text(encoding="utf-8"), path))
    except SettingsError as e:
        raise ClassroomError(f"the LMS's registration is not complete: {e}") from None


def _tool_url_note(room: Classroom, lti: LtiSettings) -> str:
    """Where the LMS sends students (``[lti] tool_url``) against where this hub answers."""
    if lti.tool_url.rstrip("/") == room.url:
        return f"it sends them to this hub, {room.url}"
    return (
        f"it sends them to [lti] tool_url {lti.tool_url}, and this hub answers at {room.url} (loopback only): "
        "a proxy at tool_url must pass them on"
    )


def _check_up(folder: Path, students: int, proxy: Path) -> Path:
    """What must hold before anything is made: root, the proxy, a sensible class size and a new folder."""
    if os.geteuid() != 0:
        raise ClassroomError(NEED_ROOT)
    if not Path(proxy).is_file():
        raise ClassroomError(
            f"configurable-http-proxy is not at {proxy}: run `make classroom` (it installs it "
            "from npm into .classroom/), or pass --proxy"
        )
    if not 1 <= students <= 200:
        raise ClassroomError(f"STUDENTS must be between 1 and 200, not {students}")
    if (folder / RECORD).exists():
        raise ClassroomError(f"a classroom is already set up in {folder}: run `make classroom-stop` first")
    if folder.exists() and any(folder.iterdir()):
        raise ClassroomError(f"{folder} exists and is not empty: name a new folder with CLASSROOM_DIR=...")
    if not all(p.stat().st_mode & stat.S_IXOTH for p in folder.parents if p.exists()):
        raise ClassroomError(f"every user must be able to pass through the folders above {folder}")
    return folder


def _make_room(folder: Path, students: int, port: int, prefix: str) -> Classroom:
    """The classroom's folder and its record, with the folders for the hub, the logs, the homes and the exchange."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    room = Classroom(
        folder, port or free_port(), f"{prefix}-instructor", [f"{prefix}-student{i}" for i in range(1, students + 1)]
    )
    room.save()
    for sub, mode in [("hub", 0o700), ("logs", 0o700), ("home", 0o755), ("exchange", 0o777)]:
        (folder / sub).mkdir()
        (folder / sub).chmod(mode)  # the exchange: writable by all, as nbgrader's docs ask
    return room


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m examples.classroom",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "command",
        choices=["up", "down"],
        help="up: make the classroom and start JupyterHub; down: stop it and remove the accounts and folders it made",
    )
    p.add_argument("--dir", default=DEFAULT_DIR, type=Path)
    p.add_argument("--students", type=int, default=3)
    p.add_argument(
        "--package",
        type=Path,
        default=None,
        help="the package folder the students' environment "
        "is installed from (default: the course's handout, built into the classroom folder)",
    )
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--prefix", default="wt", help="account names: PREFIX-instructor, PREFIX-student1 ...")
    p.add_argument("--proxy", type=Path, default=DEFAULT_PROXY, help="configurable-http-proxy to run")
    p.add_argument(
        "--lti",
        type=Path,
        metavar="FILE",
        help="sign users in from an LMS by LTI 1.3, with the LMS's registration in FILE's [lti] (make classroom "
        "LTI=1: the course's course.toml); students get their accounts at their first launch",
    )
    args = p.parse_args(argv)
    try:
        if args.command == "down":
            down(args.dir)
            return 0
        room = up(args.dir, args.students, args.package, args.port, args.prefix, args.proxy, lti=args.lti)
    except ClassroomError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.lti:
        print(
            f"\nThe classroom is up: {room.url}  (loopback only); users sign in from the LMS (LTI 1.3).\n"
            f"Everything it made is in {room.dir} (hub state and logs in hub/ and logs/).\n"
            f"The LMS's instructors sign in as {room.instructor} (Formgrader, ~/{COURSE_FOLDER}); each student gets "
            f"an account {room.instructor.removesuffix('instructor')}<name> at their first launch.\n"
            f"What the LMS admin pastes: in {room.course}, python -m whole_transformer.course lti-config "
            "(docs/lms.md).\n"
            f"Stop it and remove all of it: make classroom-stop CLASSROOM_DIR={room.dir}"
        )
        return 0
    print(
        f"\nThe classroom is up: {room.url}  (loopback only)\nEverything it made is in {room.dir} "
        "(hub state and logs in hub/ and logs/).\nAccounts (the passwords are shown only now):"
    )
    for name in [room.instructor, *room.students]:
        role = "student: Assignments tab" if name in room.students else f"instructor: Formgrader, ~/{COURSE_FOLDER}"
        print(f"  {name:<20} {room.passwords[name]:<16} {role}")
    print(
        f"The course {COURSE_ID!r} is released to the exchange {room.exchange}.\n"
        f"Stop it and remove all of it: make classroom-stop CLASSROOM_DIR={room.dir}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
