"""A local LMS for the LTI tests: an LTI 1.3 platform on 127.0.0.1, built with the ``lti1p3platform`` package.

What is the package's (``lti1p3platform`` 0.1.8): the registration (issuer, client id, deployment id, the
tool's key set), the platform's key pair and its JWKS, the OIDC login initiation URL (``OIDCLoginAbstract``),
the signed launch with its AGS claim (``LTIAdvantageMessageLaunchAbstract``), the token endpoint's logic
(``get_access_token``: the tool's JWT assertion checked against the tool's key set, a signed access token
issued) and the AGS score service's logic (``AssignmentsGradesService.handle_update_score``: the bearer
token and its scope checked, the score handed to ``update_score``).

What is this file's: the HTTP server around them (``http.server`` on a free port, started and stopped by
the tests, restartable on the same port), the platform's users, and the line item's store of scores
(each score the LMS accepted, in order; a score for a user the LMS does not know is not applied, and a
score older than the last one for that user is refused, as AGS says). For a browser (the JupyterHub term's
LTI act), the pages an LMS shows: a course page whose assignment link starts the launch (``/course``,
``/launch``), and the authorization answer as the form that posts the id_token to the tool's redirect URI,
which must be one the tool registered (``point_at``). ``forge`` makes the next launch a forgery.
"""

from __future__ import annotations

import html
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.exceptions import LtiException, LtiServiceException, MissingRequiredClaim, UnsupportedGrantType
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService

CLIENT_ID = "wt-tool-10001"
DEPLOYMENT_ID = "deployment-1"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


def rsa_pem() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private.decode(), public.decode()


class _Conf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs: Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        assert self._registration is not None
        return self._registration


class _Req(Request):
    def build_metadata(self, request: Any) -> TRequest:
        return request


class _Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


class _Launch(LTIAdvantageMessageLaunchAbstract):
    user: dict[str, Any] = {}

    def prepare_launch(self, preflight_response: dict[str, Any]) -> None:
        u = self.user
        self.set_user_data(u["id"], u["roles"], u.get("name"), u.get("email"))
        self.set_resource_link_claim("whole-transformer-link", title="The whole Transformer")
        self.set_launch_context_claim("course-1", context_title="Transformers, autumn term", context_label="TRF")

    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return launch_data  # a real LMS renders a form that posts it to the tool; the tests take it as it is


class _Scores(AssignmentsGradesService):
    """The line item's store: the package's service logic, the platform's (this file's) storage."""

    def __init__(self, request: Request, platform: Platform):
        super().__init__(request, platform.conf, platform.url + "/lineitems", platform.lineitem)
        self.platform = platform

    def update_score(self, line_item_id: str, score: Any) -> UpdateScoreStatus:
        p = self.platform
        if score.get("userId") not in p.users:
            return UpdateScoreStatus.NOTAPPLIED
        history = p.scores.setdefault(score["userId"], [])
        if history and score["timestamp"] <= history[-1]["timestamp"]:
            return UpdateScoreStatus.OLD_TIMESTAMP
        history.append(score)
        return UpdateScoreStatus.SUCCESS

    def find_lineitems(self, *a: Any, **k: Any) -> Any:
        return {"content": [{"id": self.platform.lineitem, "scoreMaximum": 100, "label": "whole"}], "has_next": False}

    def find_lineitem(self, line_item_id: str) -> Any:
        return {"id": self.platform.lineitem, "scoreMaximum": 100, "label": "The whole Transformer"}

    def create_lineitem(self, creation_data: Any) -> Any:
        raise LtiServiceException("line items are made in the LMS here", 403)

    update_lineitem = create_lineitem

    def delete_lineitem(self, line_item_id: str) -> None:
        raise LtiServiceException("line items are made in the LMS here", 403)

    def get_results(self, line_item_id: str, *a: Any, **k: Any) -> Any:
        return {"content": [h[-1] for h in self.platform.scores.values()], "has_next": False}


class Platform:
    """The LMS: registration, keys, users, the OIDC login, signed launches, the token endpoint, one line item."""

    def __init__(self, tool_jwks: dict | None = None, tool_url: str = "http://127.0.0.1:9/hub/lti13"):
        self.private_pem, self.public_pem = rsa_pem()
        self.server: ThreadingHTTPServer | None = None
        self.port = 0
        self.start()
        self.tool_url = tool_url
        self.registration = (
            Registration()
            .set_iss(self.url)
            .set_client_id(CLIENT_ID)
            .set_deployment_id(DEPLOYMENT_ID)
            .set_launch_url(f"{tool_url}/oauth_callback")
            .set_oidc_login_url(f"{tool_url}/oauth_login")
            .set_tool_key_set(tool_jwks or {"keys": []})  # the tool's public key, pasted by the LMS admin
            .set_platform_public_key(self.public_pem)
            .set_platform_private_key(self.private_pem)
        )
        self.conf = _Conf(registration=self.registration)
        self.users: dict[str, dict[str, Any]] = {}
        self.scores: dict[str, list[dict]] = {}  # LMS user id → each score accepted, in order
        self.tokens_issued = 0
        self.redirect_uris: list[str] = []  # the tool's redirect URIs (point_at); empty: any
        self.forge: str | None = None  # "bad signature": the next launch's id_token signed with another key

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def lineitem(self) -> str:
        return self.url + "/lineitems/1"

    def point_at(self, hub_url: str, target_link_uri: str) -> None:
        """The tool registered at ``hub_url``, as its admin pastes make lti-config's URLs: JupyterHub's LTI login and
        callback, and the link a launch opens (the course's notebook)."""
        self.registration.set_oidc_login_url(f"{hub_url}/hub/lti13/oauth_login").set_launch_url(target_link_uri)
        self.redirect_uris = [f"{hub_url}/hub/lti13/oauth_callback"]

    def lti_table(self, tool_url: str = "http://127.0.0.1:9") -> str:
        """course.toml's [lti] for this platform, as its admin would copy it."""
        return (
            f'[lti]\nissuer = "{self.url}"\nclient_id = "{CLIENT_ID}"\ndeployment_id = "{DEPLOYMENT_ID}"\n'
            f'jwks_url = "{self.url}/jwks"\nlogin_url = "{self.url}/auth"\ntoken_url = "{self.url}/token"\n'
            f'tool_url = "{tool_url}"\n'
        )

    # ---------------------------------------------------------------- the server, started and stopped
    def start(self) -> None:
        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self))
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    # ---------------------------------------------------------------- a launch, as the LMS and the tool make it
    def login_initiation(self, user_id: str) -> str:
        """The OIDC login initiation URL the LMS sends the user's browser to (the tool's login URL)."""
        login = _Login(None, self.conf)
        login.set_lti_message_hint(hint="whole-transformer-link")
        return login.initiate_login(user_id)

    def launch(self, user_id: str, nonce: str | None = None) -> dict[str, Any]:
        """A launch of ``user_id``: the login initiation, the tool's authorization request (a fresh state and
        nonce, as the tool's login handler makes), and the platform's signed answer {id_token, state, launch_url}."""
        start = dict(parse_qsl(urlsplit(self.login_initiation(user_id)).query))
        auth = {
            "scope": "openid",
            "response_type": "id_token",
            "response_mode": "form_post",
            "prompt": "none",
            "client_id": start["client_id"],
            "redirect_uri": start["target_link_uri"],
            "login_hint": start["login_hint"],
            "lti_message_hint": start["lti_message_hint"],
            "state": secrets.token_urlsafe(16),
            "nonce": nonce or secrets.token_urlsafe(16),
        }
        from urllib.request import urlopen

        with urlopen(f"{self.url}/auth?{urlencode(auth)}", timeout=10) as r:
            return json.loads(r.read())

    def authorize(self, params: dict[str, str]) -> dict[str, Any]:
        if self.redirect_uris and params.get("redirect_uri") not in self.redirect_uris:
            raise LtiException(f"redirect_uri {params.get('redirect_uri')!r} is not one the tool registered")
        user = self.users[params["login_hint"]]
        launch = _Launch(_Req({"get_data": params, "form_data": {}}), self.conf)
        launch.user = user
        launch.set_ags(self.url + "/lineitems", self.lineitem, allow_creating_lineitems=False)
        answer = launch.lti_launch()
        if self.forge == "bad signature":  # the same claims under the platform's key id, signed by another key
            self.forge = None
            forger, _ = rsa_pem()
            claims = jwt.decode(answer["id_token"], options={"verify_signature": False})
            kid = jwt.get_unverified_header(answer["id_token"])["kid"]
            answer["id_token"] = jwt.encode(claims, forger, algorithm="RS256", headers={"kid": kid})
        return answer

    def course_page(self, user_id: str) -> str:
        """The LMS's course page for ``user_id``: the assignment, a link that starts the launch."""
        link = html.escape(f"/launch?{urlencode({'user': user_id})}")
        return (
            "<!doctype html><html><head><title>Transformers, autumn term</title></head><body>"
            f"<h1>Transformers, autumn term</h1><p>Signed in as {html.escape(user_id)}</p>"
            f'<ul><li><a id="assignment" href="{link}">The whole Transformer (assignment)</a></li></ul></body></html>'
        )


def launch_form(answer: dict[str, Any]) -> str:
    """The authorization answer as an LMS sends it to the browser: a form that posts itself to the tool."""
    fields = "".join(
        f'<input type="hidden" name="{name}" value="{html.escape(str(answer[name]))}">'
        for name in ("id_token", "state")
    )
    return (
        '<!doctype html><html><body><p>Opening the tool…</p><form id="launch" method="post" '
        f'action="{html.escape(answer["launch_url"])}">{fields}</form>'
        "<script>document.getElementById('launch').submit()</script></body></html>"
    )


def _handler(platform: Platform) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet: the tests print what they need
            pass

        def _send(self, code: int, body: Any, kind: str = "application/json") -> None:
            data = body.encode() if kind == "text/html" else json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = dict(parse_qsl(parts.query))
            browser = "text/html" in self.headers.get("Accept", "")
            if parts.path == "/jwks":
                self._send(200, platform.conf.get_jwks())
            elif parts.path == "/auth":
                try:
                    answer = platform.authorize(query)
                except LtiException as e:
                    self._send(400, {"error": "invalid_request", "error_description": str(e)})
                    return
                self._send(
                    200, launch_form(answer) if browser else answer, "text/html" if browser else "application/json"
                )
            elif parts.path == "/course":
                self._send(200, platform.course_page(query["user"]), "text/html")
            elif parts.path == "/launch":  # the assignment's link: the OIDC login initiation, at the tool
                self.send_response(302)
                self.send_header("Location", platform.login_initiation(query["user"]))
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            if self.path == "/token":
                try:
                    token = platform.conf.get_access_token(dict(parse_qsl(body)))
                except (LtiException, MissingRequiredClaim, UnsupportedGrantType, ValueError, jwt.PyJWTError) as e:
                    self._send(401, {"error": "invalid_client", "error_description": str(e) or type(e).__name__})
                    return
                platform.tokens_issued += 1
                self._send(200, token)
            elif self.path == "/lineitems/1/scores":
                req = {
                    "method": "POST",
                    "headers": dict(self.headers),
                    "json": json.loads(body or "{}"),
                    "content_type": self.headers.get("Content-Type"),
                    "path": self.path,
                    "get_data": {},
                    "form_data": {},
                }
                service = _Scores(_Req(req), platform)
                resp = service.handle_resp(service.handle_update_score, line_item_id="1")
                self._send(resp.code, {"message": resp.message}, resp.media_type)
            else:
                self._send(404, {"error": "not found"})

    return Handler
