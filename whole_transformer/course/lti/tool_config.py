"""``make lti-config``: what an LMS admin pastes to register the course as an LTI 1.3 tool.

Two forms from one set of values (course.toml's ``[lti] tool_url`` and the tool's key, ``keys.py``):

- Canvas (Admin ▸ Developer Keys ▸ + LTI Key ▸ Method "Paste JSON"): the JSON configuration, with
  the public key inline (``public_jwk``), the launch as an assignment link, and the AGS scopes the
  passback needs; the redirect URI goes into the key's "Redirect URIs" field.
- Moodle (Site administration ▸ Plugins ▸ External tool ▸ Manage tools ▸ configure a tool manually):
  the tool URL, the login initiation URL, the redirection URI, the public key ("RSA key"), and the
  services to turn on.

The URLs are JupyterHub's with its LTI 1.3 authenticator (``jupyterhub-ltiauthenticator``: its login
and callback handlers under ``/hub/lti13/``), which signs students in (docs/lms.md).
"""

from __future__ import annotations

import json

from .keys import public_jwk, public_pem

TITLE = "The whole Transformer"
DESCRIPTION = "A course of four notebooks: one complete decoder-only Transformer that reads numbers aloud"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPES = (
    SCORE_SCOPE,
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
)


def tool_urls(tool_url: str) -> dict[str, str]:
    """The tool's URLs, as JupyterHub's LTI 1.3 authenticator serves them under ``tool_url``."""
    hub = f"{tool_url}/hub/lti13"
    return {"login": f"{hub}/oauth_login", "redirect": f"{hub}/oauth_callback", "launch": f"{hub}/oauth_callback"}


def canvas_json(tool_url: str, key) -> dict:
    """Canvas's developer key configuration (the "Paste JSON" method)."""
    urls = tool_urls(tool_url)
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
                "platform": "canvas.instructure.com",
                "privacy_level": "public",  # name and email reach the course: the roster matches on them
                "settings": {"placements": [placement]},
            }
        ],
        "public_jwk": public_jwk(key),
        "custom_fields": {},
    }


def describe(tool_url: str, key) -> str:
    """The whole text ``make lti-config`` prints (it needs only [lti] tool_url and the key: the LMS's own values
    come once the admin has pasted these)."""
    urls = tool_urls(tool_url)
    return "\n".join(
        [
            f"The course as an LTI 1.3 tool at {tool_url} (course.toml [lti] tool_url)",
            "",
            "Canvas: Admin > Developer Keys > + LTI Key > Method: Paste JSON, then this JSON;",
            f"  Redirect URIs: {urls['redirect']}",
            json.dumps(canvas_json(tool_url, key), indent=2),
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
            "Then copy the LMS's values into course.toml's [lti]: issuer, client_id, deployment_id, jwks_url,",
            "login_url, token_url, and the assignment's line item (lineitem; a launch's AGS claim names it).",
        ]
    )
