"""JupyterHub signing the course's students in from the LMS: ``CourseLTI13Authenticator`` and its hub settings.

``CourseLTI13Authenticator`` is ``jupyterhub-ltiauthenticator``'s LTI 1.3 authenticator (its login and
callback handlers check the OIDC state, the nonce against the browser's cookie, the signature against the
LMS's key set, issuer, audience and the required claims), with the course's own checks after it
(``lti/launch.py``'s ``accept_claims``: a deployment of course.toml's ``[lti]``, the nonce never seen
before, a role the course knows) and the launched student put on the roster (``lti/roster_link.py``).
Instructors (by their LMS role) are the hub's admins. A refused launch is logged with its reason; the
student's page says only to launch again from the LMS.

``hub_config(course)`` is the ``jupyterhub_config.py`` text that sets it up from ``[lti]``
(``make lti-hub`` prints it; docs/lms.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ltiauthenticator.lti13.auth import LTI13Authenticator
from tornado import web
from traitlets import Unicode

from ..layout import Course
from ..term.settings import load
from .launch import LaunchRefused, NonceStore, accept_claims
from .roster_link import enrol
from .settings import read_lti


class CourseLTI13Authenticator(LTI13Authenticator):
    """The LTI 1.3 authenticator, with the course's checks and roster after its own."""

    course_root = Unicode(config=True, help="The course folder: its course.toml's [lti] and its roster.")

    async def authenticate(self, handler: Any, data: dict[str, str] | None = None) -> dict[str, Any]:
        course = Course(Path(self.course_root))
        claims = dict(data or {})
        try:
            launch = accept_claims(read_lti(load(course)), claims, NonceStore(course.root))
            name = self.get_username(claims)
            student = enrol(course, launch, name, log=self.log.info)
        except LaunchRefused as e:
            self.log.warning("LTI 1.3 launch refused: %s", e.log)
            refused = web.HTTPError(403, "LTI 1.3 launch refused: %s", e.log)
            refused.jupyterhub_message = e.student  # type: ignore[attr-defined]  # what JupyterHub's page shows
            raise refused from None
        return {
            "name": student or name,
            "admin": launch.role == "instructor",
            "auth_state": {"lms_user_id": launch.lms_user_id, "role": launch.role, "lineitem": launch.lineitem},
        }


def hub_config(course: Course, notebook: str = "whole-transformer/01-whole-machine.ipynb") -> str:
    """The lines of ``jupyterhub_config.py`` that sign students in from the LMS of course.toml's [lti]."""
    lti = read_lti(load(course))
    a = "c.CourseLTI13Authenticator"
    return "\n".join(
        [
            "# the course inside an LMS: LTI 1.3 sign-in (course.toml [lti]; docs/lms.md)",
            'c.JupyterHub.authenticator_class = "whole_transformer.course.lti.hub.CourseLTI13Authenticator"',
            f"{a}.course_root = {str(Path(course.root).resolve())!r}",
            f"{a}.issuer = {lti.issuer!r}",
            f"{a}.client_id = [{lti.client_id!r}]",
            f"{a}.authorize_url = {lti.login_url!r}",
            f"{a}.jwks_endpoint = {lti.jwks_url!r}",
            f'{a}.username_key = "email"  # the roster matches on the LMS id, then the email',
            "c.Authenticator.allow_all = True  # who may sign in is the LMS's to say: everyone it launches",
            "c.Authenticator.enable_auth_state = True  # each user's LMS id and line item, kept by the hub",
            f"c.Spawner.default_url = {('/lab/tree/' + notebook)!r}  # a launch opens the course's first notebook",
        ]
    )
