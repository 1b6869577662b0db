"""``make lti-config``: what an LMS admin pastes to register the course as an LTI 1.3 tool.

Two forms from one set of values (course.toml's ``[lti] tool_url`` and the tool's key, ``keys.py``):

- Canvas (Admin ▸ Developer Keys ▸ + LTI Key ▸ Method "Paste JSON"): the JSON configuration as Canvas's
  developer key takes it (title, description, ``oidc_initiation_url``, ``target_link_uri``, the AGS scopes the
  passback needs, an ``assignment_selection`` placement, ``privacy_level`` "public" so that name and email
  reach the roster, and the public key inline as ``public_jwk``); the redirect URI goes into the key's
  "Redirect URIs" field.
- Moodle (Site administration ▸ Plugins ▸ External tool ▸ Manage tools ▸ configure a tool manually): its
  fields by name: Tool URL, LTI version, Public key type, Public key, Initiate login URL, Redirection URI(s),
  the AGS service and the privacy settings.

The URLs are JupyterHub's with its LTI 1.3 authenticator (``jupyterhub-ltiauthenticator``: its login and
callback handlers under ``/hub/lti13/``, ``lti/hub.py``). The target link (Moodle's Tool URL) is where a
launch ends: the course's notebook in the student's own server, through the hub's ``/hub/user-redirect/``
(the authenticator sends the browser there once the launch is accepted); a link of the LMS may name another
notebook of the course the same way (``notebook_url``).
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from ..layout import ASSIGNMENT
from .keys import public_jwk, public_pem

TITLE = "The whole Transformer"
DESCRIPTION = "A course of four notebooks: one complete decoder-only Transformer that reads numbers aloud"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
COURSE_FOLDER = ASSIGNMENT  # where nbgrader fetches the assignment: <home>/whole-transformer/
SCOPES = (
    SCORE_SCOPE,
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
)


def notebook_url(tool_url: str, notebook: str) -> str:
    """Where a launch opens ``notebook``: the student's copy of it in their own server (fetched for them if they
    have none yet: ``lti/hub.py``'s ``fetch_assignment``)."""
    return f"{tool_url}/hub/user-redirect/lab/tree/{COURSE_FOLDER}/{notebook}"


def tool_urls(tool_url: str, notebook: str) -> dict[str, str]:
    """The tool's URLs, as JupyterHub's LTI 1.3 authenticator serves them under ``tool_url``; a launch opens
    ``notebook``."""
    hub = f"{tool_url}/hub/lti13"
    return {
        "login": f"{hub}/oauth_login",
        "redirect": f"{hub}/oauth_callback",
        "launch": notebook_url(tool_url, notebook),
    }


def canvas_json(tool_url: str, key, notebook: str) -> dict:
    """Canvas's developer key configuration (the "Paste JSON" method); a launch opens ``notebook``."""
    urls = tool_urls(tool_url, notebook)
    placement = {
        "placement": "assignment_selection",
        "message_type": "LtiResourceLinkRequest",
        "target_link_uri": urls["launch"],
        "text": TITLE,
    }
    return {
        "title": TITLE,
        "description": DESCRIPTION,
        "oidc_initiation_url": urls["login"],
        "target_link_uri": urls["launch"],
        "scopes": list(SCOPES),
        "extensions": [
            {
                "domain": urlsplit(tool_url).hostname,
                "platform": "canvas.instructure.com",
                "privacy_level": "public",  # name and email reach the course: the roster matches on them
                "settings": {"text": TITLE, "placements": [placement]},
            }
        ],
        "public_jwk": public_jwk(key),
        "custom_fields": {},
    }


def describe(tool_url: str, key, notebooks: list[str]) -> str:
    """The whole text ``make lti-config`` prints (it needs only [lti] tool_url and the key: the LMS's own values
    come once the admin has pasted these); a launch opens the first of ``notebooks``, the course's notebooks."""
    urls = tool_urls(tool_url, notebooks[0])
    return "\n".join(
        [
            f"The course as an LTI 1.3 tool at {tool_url} (course.toml [lti] tool_url)",
            "",
            "Canvas: Admin > Developer Keys > + LTI Key > Method: Paste JSON, then this JSON;",
            f"  Redirect URIs: {urls['redirect']}",
            json.dumps(canvas_json(tool_url, key, notebooks[0]), indent=2),
            "",
            "Moodle: Site administration > Plugins > External tool > Manage tools > configure a tool manually:",
            f"  Tool URL:                 {urls['launch']}",
            "  LTI version:              LTI 1.3",
            "  Public key type:          RSA key (below)",
            f"  Initiate login URL:       {urls['login']}",
            f"  Redirection URI(s):       {urls['redirect']}",
            "  Services: IMS LTI Assignment and Grade Services: Use this service for grade sync only",
            "  Privacy: Share launcher's name with tool: Always; Share launcher's email with tool: Always",
            "  Public key:",
            public_pem(key).rstrip(),
            "",
            "A launch opens the first notebook; an LMS link (Canvas: the assignment's URL; Moodle: the activity's",
            "Tool URL) may open another of the course's notebooks instead:",
            *(f"  {notebook_url(tool_url, nb)}" for nb in notebooks),
            "",
            "Then copy the LMS's values into course.toml's [lti]: issuer, client_id, deployment_id, jwks_url,",
            "login_url, token_url, and the assignment's line item (lineitem; a launch's AGS claim names it).",
        ]
    )
