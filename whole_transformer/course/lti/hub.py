"""JupyterHub signing the course's students in from the LMS (LTI 1.3), and their notebook ready when they arrive.

``CourseLTI13Authenticator`` is ``jupyterhub-ltiauthenticator``'s LTI 1.3 authenticator: its login handler
starts the OIDC login (the state and a nonce kept in the browser's cookies), its callback handler checks the
state, the signature against the LMS's key set, issuer, audience, the required claims and the nonce against
the cookie. Then come the course's own checks (``launch.accept_claims``: a deployment of course.toml's
``[lti]``, a nonce never seen before, a role the course knows) and the roster (``roster_link.enrol``). A
refusal, the package's or the course's, is one line in the hub's log, ``LTI 1.3 launch refused: <why>``, with
the values compared (a token the package refused is checked again by ``launch.decode``, which says which key,
issuer, audience or time is wrong), and a 403 page that only tells the student to launch again from the LMS.

Who signs in as whom: a student the roster knows under their roster id; a new student under the claim
``username_key`` names (with ``name_prefix``, the part of it before any ``@``, after the prefix: on a hub of
Linux accounts, the LMS's users never meet the machine's own accounts); an instructor (by their LMS role) as
the hub's admin, under ``instructor_name`` when one account holds the course folder.
``LinuxAccountsLTI13Authenticator`` adds JupyterHub's LocalAuthenticator, which makes the Linux account of a
user new to the hub (``create_system_users``, ``add_user_cmd``). The hub, as root there, gives what it wrote in
the course folder back to the folder's owner (``give_back``), so that the instructor's commands can write it
again.

``fetch_assignment`` is the Spawner's ``pre_spawn_hook``: before a student's server starts, nbgrader fetches
the assignment from the exchange into their home (``--replace``: only the files they lack; nothing of theirs is
overwritten), so that the launch's notebook is there (``tool_config.notebook_url``). ``hub_config`` is the
``jupyterhub_config.py`` text that sets all this up from ``[lti]`` (``make lti-hub``; docs/lms.md).
"""

from __future__ import annotations

import asyncio
import os
import pwd
import re
from pathlib import Path
from typing import Any

from jupyterhub.auth import LocalAuthenticator  # type: ignore[import-untyped]
from jupyterhub.utils import url_path_join  # type: ignore[import-untyped]
from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.error import ValidationError
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler
from tornado import web
from traitlets import Unicode

from ..layout import ASSIGNMENT, COURSE_ID, Course
from ..term.settings import load
from ..term.toml_values import SettingsError
from .launch import (
    NONCE_FILE,
    PAGE_TITLE,
    STUDENT_TEXT,
    KeySet,
    Launch,
    LaunchRefused,
    NonceStore,
    accept_claims,
    decode,
)
from .roster_link import LAUNCHES, enrol
from .settings import LtiSettings, read_lti

#: what the package's callback handler says when the launch is not the answer to this browser's own login
_NOT_THIS_LOGIN = ("OAuth state missing from cookies", "OAuth state mismatch", "Missing nonce state cookie")
_NONCE_MISMATCH = "OAuth nonce mismatch"


def refusal(why: str, log) -> web.HTTPError:
    """The 403 of a refused launch: ``why`` in the hub's log, and a page that tells the student only to launch
    again from the LMS (nothing of the launch, the roster or anyone else)."""
    log.warning("LTI 1.3 launch refused: %s", why)
    refused = web.HTTPError(403, "LTI 1.3 launch refused: %s", why, reason=PAGE_TITLE)  # the page's title: reason
    refused.jupyterhub_message = STUDENT_TEXT  # type: ignore[attr-defined]  # what JupyterHub's error page shows
    return refused


class CourseLTI13CallbackHandler(LTI13CallbackHandler):
    """The package's callback handler, its refusals said as the course says its own (``explain``); an instructor
    lands in JupyterLab, where the course folder is (the link's notebook is a student's copy: not in their home)."""

    def decode_and_validate_launch_request(self) -> dict[str, Any]:
        try:
            return super().decode_and_validate_launch_request()
        except (ValidationError, web.HTTPError) as e:
            why = self.authenticator.explain(e, self.get_argument("id_token", ""))
            raise refusal(why, self.log) from None

    def get_next_url(self, user: Any = None) -> str:
        if user is not None and user.admin:
            return url_path_join(self.hub.base_url, "user-redirect/lab")
        return super().get_next_url(user)


class CourseLTI13Authenticator(LTI13Authenticator):
    """The LTI 1.3 authenticator, with the course's checks, roster and names after its own (see the module doc)."""

    callback_handler = CourseLTI13CallbackHandler
    course_root = Unicode(config=True, help="The course folder: its course.toml's [lti] and its roster.")
    name_prefix = Unicode(
        "",
        config=True,
        help="Put before the hub name of a student the roster does not know yet (then the username_key claim's "
        "part before any @, in lower-case letters, digits and -); every student's name must start with it. On a "
        "hub of Linux accounts it keeps the LMS's users apart from the machine's own accounts.",
    )
    instructor_name = Unicode(
        "",
        config=True,
        help="The hub name every instructor the LMS launches signs in as: the one account that holds the course "
        "folder. Empty: their own name, from username_key.",
    )

    def get_username(self, token: dict[str, Any]) -> str:
        name = super().get_username(token)
        if not self.name_prefix:
            return name
        return self.name_prefix + re.sub(r"[^a-z0-9-]+", "-", str(name).split("@")[0].lower()).strip("-")

    def explain(self, error: Exception, token: str) -> str:
        """Why the package's callback handler refused a launch, said for the hub's log."""
        said = error.log_message if isinstance(error, web.HTTPError) else str(error)
        if said in _NOT_THIS_LOGIN:
            return (
                f"the launch does not answer a login this browser started ({said}): a launch sent again, or "
                "one begun in another browser"
            )
        if said == _NONCE_MISMATCH:
            return f"the id_token's nonce is not the one this browser's login asked for ({said}): a replayed launch"
        if token:
            try:  # the course's own check of the token names the key, issuer, audience or time that is wrong
                lti = read_lti(load(Course(Path(self.course_root))))
                decode(lti, token, KeySet(lti.jwks_url))
            except LaunchRefused as e:
                return e.log
            except SettingsError as e:
                return f"{said} (and course.toml cannot be read: {e})"
        return f"the launch is not valid: {said}"

    async def authenticate(self, handler: Any, data: dict[str, str] | None = None) -> dict[str, Any]:
        claims = dict(data or {})
        try:  # the roster is nbgrader's gradebook: seconds of imports and file work, off the hub's event loop
            launch, student = await asyncio.to_thread(self._accept, claims)
        except (LaunchRefused, SettingsError) as e:
            raise refusal(e.log if isinstance(e, LaunchRefused) else f"course.toml: {e}", self.log) from None
        if launch.role == "instructor":
            name = self.instructor_name or self.get_username(claims)
        else:
            name = student or self.get_username(claims)
            if not name.startswith(self.name_prefix):
                raise refusal(
                    f"the roster's student {name!r} (LMS user {launch.lms_user_id!r}) cannot sign in on this hub: its "
                    f"names start with {self.name_prefix!r} (name_prefix), which keeps the LMS's users apart from the "
                    "machine's own accounts; give them a roster id that starts with it (make roster FILE=...)",
                    self.log,
                )
        return {
            "name": name,
            "admin": launch.role == "instructor",
            "auth_state": {"lms_user_id": launch.lms_user_id, "role": launch.role, "lineitem": launch.lineitem},
        }

    def _accept(self, claims: dict) -> tuple[Launch, str | None]:
        course = Course(Path(self.course_root))
        try:
            launch = accept_claims(read_lti(load(course)), claims, NonceStore(course.root))
            return launch, enrol(course, launch, self.get_username(claims), log=self.log.info)
        finally:
            give_back(course)


class LinuxAccountsLTI13Authenticator(LocalAuthenticator, CourseLTI13Authenticator):
    """``CourseLTI13Authenticator`` on a hub whose users are Linux accounts (LocalProcessSpawner): a user new to
    the hub gets their account made by JupyterHub's LocalAuthenticator (``create_system_users``)."""


def give_back(course: Course) -> None:
    """What the hub (root) wrote in the course folder given to the folder's owner: the roster, the launches,
    the nonces. A file the hub made stays root's otherwise, and the instructor's commands could not write it."""
    root = Path(course.root)
    owner = root.stat()
    if os.geteuid() != 0 or owner.st_uid == 0:
        return
    written = [LAUNCHES, NONCE_FILE, Path(NONCE_FILE).with_suffix(".lock").name, "gradebook.db", "downloaded"]
    for name in written:
        top = root / name
        for path in [top, *(top.rglob("*") if top.is_dir() else [])]:
            if path.exists() and path.stat().st_uid != owner.st_uid:
                os.chown(path, owner.st_uid, owner.st_gid)


async def fetch_assignment(spawner: Any) -> None:
    """The Spawner's ``pre_spawn_hook``: the assignment fetched from nbgrader's exchange into a student's home,
    as that student (their Linux account), before their server starts: ``nbgrader fetch_assignment --replace``
    takes only the files they lack, so their own work is never overwritten. Nothing for an admin (an
    instructor's home holds the course folder under the same name). nbgrader is the one beside the Spawner's
    command (the students' environment, whose ``nbgrader_config.py`` names the exchange)."""
    user = spawner.user
    if user.admin:
        return
    account = pwd.getpwnam(user.name)
    nbgrader = Path(spawner.cmd[0]).parent / "nbgrader"
    env = {
        "PATH": spawner.environment.get("PATH", f"{nbgrader.parent}:/usr/bin:/bin"),
        "HOME": account.pw_dir,
        "USER": account.pw_name,
        "LOGNAME": account.pw_name,
    }
    root = os.geteuid() == 0  # as the student; a hub not run as root runs it as itself
    proc = await asyncio.create_subprocess_exec(
        str(nbgrader),
        "fetch_assignment",
        ASSIGNMENT,
        f"--course={COURSE_ID}",
        "--replace",
        cwd=account.pw_dir,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        user=account.pw_uid if root else None,
        group=account.pw_gid if root else None,
        extra_groups=[] if root else None,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=180)
    said = " | ".join(line for line in out.decode(errors="replace").splitlines() if line.strip())[-600:]
    if proc.returncode == 0:
        spawner.log.info("lti: %s's copy of %s fetched from the exchange: %s", user.name, ASSIGNMENT, said)
    else:  # the server starts all the same: the student finds the Assignments tab, and the log says why
        spawner.log.warning("lti: fetching %s for %s failed (%s): %s", ASSIGNMENT, user.name, proc.returncode, said)


def hub_config(
    lti: LtiSettings,
    course_root: Path,
    *,
    linux_accounts: Path | None = None,
    name_prefix: str = "",
    instructor_name: str = "",
) -> str:
    """The lines of ``jupyterhub_config.py`` that sign students in from the LMS of ``lti`` (course.toml's [lti] of
    the course in ``course_root``), and fetch the assignment before a student's server starts. With
    ``linux_accounts`` (the folder of their homes), each user new to the hub gets a Linux account there."""
    cls = "LinuxAccountsLTI13Authenticator" if linux_accounts else "CourseLTI13Authenticator"
    a = "c.CourseLTI13Authenticator"
    lines = [
        "# the course inside an LMS: LTI 1.3 sign-in (course.toml [lti]; docs/lms.md)",
        f'c.JupyterHub.authenticator_class = "whole_transformer.course.lti.hub.{cls}"',
        f"{a}.course_root = {str(Path(course_root).resolve())!r}",
        f"{a}.issuer = {lti.issuer!r}",
        f"{a}.client_id = [{lti.client_id!r}]",
        f"{a}.authorize_url = {lti.login_url!r}",
        f"{a}.jwks_endpoint = {lti.jwks_url!r}",
        f'{a}.username_key = "email"  # a new student\'s name; the roster matches on the LMS id, then the email',
    ]
    if name_prefix:
        lines.append(f"{a}.name_prefix = {name_prefix!r}  # every student's hub (and Linux account) name starts so")
    if instructor_name:
        lines.append(f"{a}.instructor_name = {instructor_name!r}  # the account that holds the course folder")
    if linux_accounts:
        home = f"{Path(linux_accounts).resolve()}/USERNAME"
        lines += [
            "c.LocalAuthenticator.create_system_users = True  # a user new to the hub gets a Linux account",
            f'c.LocalAuthenticator.add_user_cmd = ["useradd", "--create-home", "--home-dir", {home!r}, '
            '"--shell", "/bin/bash", "--user-group", "-K", "HOME_MODE=0700"]',
        ]
    return "\n".join(
        [
            *lines,
            "c.Authenticator.allow_all = True  # who may sign in is the LMS's to say: everyone it launches",
            "from whole_transformer.course.lti.hub import fetch_assignment",
            "c.Spawner.pre_spawn_hook = fetch_assignment  # a student's copy of the assignment, before their server",
        ]
    )
