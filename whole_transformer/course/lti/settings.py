"""course.toml's ``[lti]``: the course registered in an LMS as an LTI 1.3 tool (``LtiSettings``).

``read_lti(settings)`` checks the table the LMS's registration filled in: the platform's issuer, the
client id and deployment id(s) it gave the tool, its key set (JWKS), OIDC login and token URLs, and
the AGS line item the scores go to; then where the course is served (``tool_url``, for the tool
configuration an LMS admin pastes), the tool's private key file and whether grading posts the scores
(``after_grading.py``). Each value missing or wrong stops with the key and what to write (``SettingsError``,
as every section of course.toml does: ``term/toml_values.py``).

    >>> from whole_transformer.course.term.settings import parse
    >>> s = read_lti(parse('[lti]\\nissuer = "https://canvas.instructure.com"\\nclient_id = "10000000000001"\\n'
    ...     'deployment_id = "1:abc"\\njwks_url = "https://sso.canvaslms.com/api/lti/security/jwks"\\n'
    ...     'login_url = "https://sso.canvaslms.com/api/lti/authorize_redirect"\\n'
    ...     'token_url = "https://sso.canvaslms.com/login/oauth2/token"\\ntool_url = "https://hub.example.edu"'))
    >>> s.deployment_ids, s.lineitem, s.key_file
    (('1:abc',), '', 'lti-tool-key.pem')
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..term.settings import Settings
from ..term.toml_values import SettingsError, where

KEYS = (
    "issuer",
    "client_id",
    "deployment_id",
    "jwks_url",
    "login_url",
    "token_url",
    "lineitem",
    "tool_url",
    "key_file",
    "post_after_grading",
)
REQUIRED = ("issuer", "client_id", "deployment_id", "jwks_url", "login_url", "token_url", "tool_url")
_URLS = ("issuer", "jwks_url", "login_url", "token_url", "lineitem", "tool_url")
# what each required key is and where an instructor finds it, said when it is missing
_FIND = {
    "issuer": 'the platform\'s issuer: "https://canvas.instructure.com" for Canvas cloud, the site URL for Moodle',
    "client_id": "the client id the LMS gave the tool (Canvas: the developer key's number; Moodle: the tool's "
    '"Client ID")',
    "deployment_id": 'the deployment id the LMS shows for the tool (a string, or a list ["1", "2"])',
    "jwks_url": 'the LMS\'s public key set: Canvas "https://sso.canvaslms.com/api/lti/security/jwks", Moodle '
    '"<site>/mod/lti/certs.php"',
    "login_url": 'the LMS\'s OIDC authorization URL: Canvas "https://sso.canvaslms.com/api/lti/authorize_redirect", '
    'Moodle "<site>/mod/lti/auth.php"',
    "token_url": 'the LMS\'s token URL: Canvas "https://sso.canvaslms.com/login/oauth2/token", Moodle '
    '"<site>/mod/lti/token.php"',
    "tool_url": 'where students reach the course\'s JupyterHub, e.g. "https://hub.example.edu"',
}
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class LtiSettings:
    """[lti]: the LMS registration, read from course.toml."""

    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    jwks_url: str
    login_url: str
    token_url: str
    tool_url: str
    lineitem: str = ""  # the AGS line item's URL ("": the one the last launch named)
    key_file: str = "lti-tool-key.pem"  # the tool's private key, in the course folder, never in git
    post_after_grading: bool = False  # make autograde, make grades and the grading service send the scores
    path: Path | None = None  # the course.toml read (for messages)


def _url(value, path, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where(path, f'[lti] {key}')}: expected a URL as a string, got {value!r}")
    parts = urlsplit(value.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise SettingsError(
            f"{where(path, f'[lti] {key}')}: {value!r} is not a URL; write it whole, as the LMS shows it, "
            'starting with "https://"'
        )
    if parts.scheme == "http" and parts.hostname not in LOOPBACK:
        raise SettingsError(
            f"{where(path, f'[lti] {key}')}: {value!r} is plain http; LTI 1.3 sends keys and tokens over it, "
            "so only https is accepted (plain http only on this machine: 127.0.0.1 or localhost)"
        )
    if key == "issuer" and (parts.query or parts.fragment):
        raise SettingsError(f"{where(path, '[lti] issuer')}: {value!r} has a query or fragment; an issuer has none")
    return value.strip()


def _text(value, path, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise SettingsError(f"{where(path, f'[lti] {key}')}: expected the LMS's value as a string, got {value!r}")
    return str(value).strip()


def _deployments(value, path) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise SettingsError(f"{where(path, '[lti] deployment_id')}: an empty list; give at least one deployment id")
    return tuple(_text(v, path, "deployment_id") for v in values)


def _table(settings: Settings, need: tuple[str, ...]) -> dict:
    """[lti] as read, its keys known and those in ``need`` present."""
    path = settings.path
    table = settings.raw.get("lti")
    if table is None:
        if not need:
            return {}
        raise SettingsError(
            f"{path or 'course.toml'} has no [lti] table: add one with "
            f"{', '.join(need)} (see the comment at the top of course.toml and docs/lms.md)"
        )
    if not isinstance(table, dict):
        raise SettingsError(f"{where(path, 'lti')}: expected a table [lti] with its keys, got {table!r}")
    extra = sorted(set(table) - set(KEYS))
    if extra:
        raise SettingsError(
            f"{where(path, '[lti]')}: unknown key(s) {', '.join(extra)}; the keys are {', '.join(KEYS)}"
        )
    for key in need:
        if key not in table:
            raise SettingsError(f"{where(path, f'[lti] {key}')}: missing; set it to {_FIND[key]}")
    return table


def read_key_file(settings: Settings) -> str:
    """[lti] key_file: the tool's private key's file name (``make lti-key`` needs nothing else of [lti])."""
    key_file = _table(settings, ()).get("key_file", "lti-tool-key.pem")
    if not isinstance(key_file, str) or "/" in key_file or not key_file.strip().endswith(".pem"):
        raise SettingsError(
            f"{where(settings.path, '[lti] key_file')}: expected a file name ending in .pem in the course folder (git "
            f'ignores *.pem: the private key never reaches the repository), such as "lti-tool-key.pem", '
            f"got {key_file!r}"
        )
    return key_file.strip()


def read_tool_url(settings: Settings) -> str:
    """[lti] tool_url: where the hub is (``make lti-config`` needs it before the LMS has given any value)."""
    return _url(_table(settings, ("tool_url",))["tool_url"], settings.path, "tool_url").rstrip("/")


def read_lti(settings: Settings) -> LtiSettings:
    """[lti] of course.toml, checked; a ``SettingsError`` naming the key and the fix if anything is off."""
    path = settings.path
    table = _table(settings, REQUIRED)
    urls = {k: _url(table[k], path, k) for k in _URLS if k in table}
    post = table.get("post_after_grading", False)
    if not isinstance(post, bool):
        raise SettingsError(f"{where(path, '[lti] post_after_grading')}: expected true or false, got {post!r}")
    return LtiSettings(
        issuer=urls["issuer"],
        client_id=_text(table["client_id"], path, "client_id"),
        deployment_ids=_deployments(table["deployment_id"], path),
        jwks_url=urls["jwks_url"],
        login_url=urls["login_url"],
        token_url=urls["token_url"],
        tool_url=urls["tool_url"].rstrip("/"),
        lineitem=urls.get("lineitem", ""),
        key_file=read_key_file(settings),
        post_after_grading=post,
        path=path,
    )
