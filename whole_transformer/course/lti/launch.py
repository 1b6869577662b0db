"""The tool's side of an LTI 1.3 launch: the platform's id_token checked, or refused with its reason.

``validate(lti, id_token, nonces)`` accepts a launch only if every one of these holds, in this order:
the token is a JWT signed RS256 by a key of the platform's key set (``[lti] jwks_url``; a key id it
does not list makes it fetch the set again once), its issuer is ``[lti] issuer``, its audience holds
``[lti] client_id`` (and ``azp`` names it when there are several), it has not expired and was not
issued in the future or long ago, its deployment id is one of ``[lti] deployment_id``, it is a
resource link launch of LTI 1.3.0, its nonce is new (``NonceStore``: a file in the course folder, each
nonce kept until its token expires), it names the user (``sub``) and a role the course knows.

A refusal is a ``LaunchRefused``: ``log`` for the hub's log (what was wrong, the values compared),
``student`` for the page the student sees (launch again from the LMS; nothing of anyone else).
Roles map to ``instructor`` (Instructor, Administrator, TeachingAssistant, ContentDeveloper) or
``student`` (Learner).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

import jwt

from .settings import LtiSettings

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NONCE_FILE = "lti-nonces.json"
MAX_AGE = 3600  # seconds: a token issued longer ago is refused, whatever its exp
LEEWAY = 60  # seconds of clock difference allowed between the LMS and this machine
PAGE_TITLE = "Launch not accepted"  # a refused launch's page: this, then STUDENT_TEXT; the why is the log's alone
STUDENT_TEXT = (
    "This launch could not be accepted. Go back to the course in your LMS and open the assignment again "
    "from there. If it happens again, tell your instructor."
)
_INSTRUCTOR = ("#Instructor", "#Administrator", "#TeachingAssistant", "#ContentDeveloper", "#SysAdmin")
_STUDENT = ("#Learner", "#Student")


class LaunchRefused(Exception):
    """A launch not accepted: ``log`` says why for the hub's log, ``student`` what the student is told."""

    def __init__(self, log: str):
        super().__init__(log)
        self.log = log
        self.student = STUDENT_TEXT


@dataclass(frozen=True)
class Launch:
    """An accepted launch: who, in which role, and the line item the LMS offers for their score."""

    lms_user_id: str  # the LTI user id (sub): what AGS knows them by
    role: str  # "instructor" or "student"
    roles: tuple[str, ...]
    email: str = ""
    given_name: str = ""
    family_name: str = ""
    lineitem: str = ""  # the AGS claim's line item ("" if the LMS sent none)
    claims: dict = field(default_factory=dict, compare=False)


class NonceStore:
    """The nonces already used, in a JSON file of the course folder (git-ignored), each until it expires."""

    def __init__(self, root: Path):
        self.path = Path(root) / NONCE_FILE

    def use(self, nonce: str, expires: float) -> float | None:
        """Record ``nonce``; None if new, else the time it was first used (the launch is a replay)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two hub processes checking at once see each other's nonces
            seen = json.loads(self.path.read_text()) if self.path.is_file() else {}
            now = time.time()
            seen = {n: v for n, v in seen.items() if v["expires"] + LEEWAY > now}
            if nonce in seen:
                return float(seen[nonce]["used"])
            seen[nonce] = {"used": now, "expires": expires}
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(seen))
            os.replace(tmp, self.path)
        return None


class KeySet:
    """The platform's public keys (its JWKS), fetched when first needed and again for a key id it lacks."""

    def __init__(self, url: str):
        self.url = url
        self.keys: dict[str, jwt.PyJWK] = {}

    def fetch(self) -> None:
        try:
            with urlopen(self.url, timeout=10) as r:  # an http(s) URL: lti/settings.py checks it
                data = json.loads(r.read())
            self.keys = {k.get("kid", ""): jwt.PyJWK(k) for k in data["keys"] if k.get("kty") == "RSA"}
        except (URLError, OSError, ValueError, KeyError, jwt.PyJWKError) as e:
            raise LaunchRefused(f"the platform's key set {self.url} could not be read: {e}") from None

    def key(self, kid: str | None) -> jwt.PyJWK:
        for attempt in (0, 1):
            if attempt or not self.keys:
                self.fetch()
            if kid and kid in self.keys:
                return self.keys[kid]
            if not kid and len(self.keys) == 1:
                return next(iter(self.keys.values()))
        raise LaunchRefused(
            f"bad signature: the id_token is signed with key id {kid!r}, which the platform's key set "
            f"{self.url} does not hold ({len(self.keys)} key(s): {', '.join(sorted(self.keys)) or 'none'})"
        )


def decode(lti: LtiSettings, token: str, keys: KeySet) -> dict:
    """The id_token's claims once its signature, issuer, audience and times are checked; else ``LaunchRefused``
    saying which of them is wrong and the values compared."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.DecodeError as e:
        raise LaunchRefused(f"the id_token is not a JWT: {e}") from None
    if header.get("alg") != "RS256":
        raise LaunchRefused(f"the id_token is signed with {header.get('alg')!r}; LTI 1.3 launches are RS256")
    key = keys.key(header.get("kid"))
    try:
        return jwt.decode(
            token,
            key,
            algorithms=["RS256"],
            audience=lti.client_id,
            issuer=lti.issuer,
            leeway=LEEWAY,
            options={"require": ["exp", "iat", "iss", "aud", "sub", "nonce"]},
        )
    except jwt.InvalidSignatureError:
        raise LaunchRefused(
            f"bad signature: the id_token does not verify with the platform's key {header.get('kid')!r} "
            f"({lti.jwks_url}): it was not signed by the LMS, or was changed on the way"
        ) from None
    except jwt.InvalidAudienceError:
        aud = jwt.decode(token, options={"verify_signature": False}).get("aud")
        raise LaunchRefused(
            f"another audience: the id_token is for {aud!r}, not for this tool's client id {lti.client_id!r} "
            "(course.toml [lti] client_id)"
        ) from None
    except jwt.InvalidIssuerError:
        iss = jwt.decode(token, options={"verify_signature": False}).get("iss")
        msg = f"another issuer: the id_token is from {iss!r}, not {lti.issuer!r} ([lti] issuer)"
        raise LaunchRefused(msg) from None
    except jwt.ExpiredSignatureError:
        raise LaunchRefused("the id_token has expired (its exp is past): an old launch sent again") from None
    except jwt.ImmatureSignatureError:
        raise LaunchRefused("the id_token was issued in the future (its iat): the LMS's clock or a forgery") from None
    except jwt.MissingRequiredClaimError as e:
        raise LaunchRefused(f"the id_token lacks the {e.claim!r} claim every LTI 1.3 launch has") from None
    except jwt.InvalidTokenError as e:
        raise LaunchRefused(f"the id_token is not valid: {e}") from None


def role_of(roles: list[str]) -> str | None:
    """``instructor``, ``student`` or None (no role the course knows) from the LTI roles claim."""
    if any(r.endswith(_INSTRUCTOR) for r in roles):
        return "instructor"
    if any(r.endswith(_STUDENT) for r in roles):
        return "student"
    return None


def _check_claims(lti: LtiSettings, claims: dict) -> None:
    if not claims.get("nonce") or not claims.get("sub"):
        raise LaunchRefused(f"the id_token lacks {'the nonce' if claims.get('sub') else 'the user (sub)'}")
    if claims.get("iat", 0) < time.time() - MAX_AGE:
        raise LaunchRefused(f"the id_token was issued {int(time.time() - claims['iat'])} s ago: too old to accept")
    aud = claims.get("aud")
    if isinstance(aud, list) and len(aud) > 1 and claims.get("azp") != lti.client_id:
        raise LaunchRefused(f"the id_token has several audiences and its azp {claims.get('azp')!r} is not this tool")
    deployment = claims.get(CLAIM + "deployment_id")
    if deployment not in lti.deployment_ids:
        raise LaunchRefused(
            f"unknown deployment: {deployment!r} is not among course.toml's [lti] deployment_id "
            f"({', '.join(lti.deployment_ids)}); add it there if the LMS deployed the tool again"
        )
    kind = claims.get(CLAIM + "message_type")
    if kind != "LtiResourceLinkRequest":
        raise LaunchRefused(f"the message type is {kind!r}; the course takes only LtiResourceLinkRequest launches")
    version = claims.get(CLAIM + "version")
    if version != "1.3.0":
        raise LaunchRefused(f"the LTI version is {version!r}; the course speaks LTI 1.3.0")


def validate(lti: LtiSettings, id_token: str, nonces: NonceStore, keys: KeySet | None = None) -> Launch:
    """The launch ``id_token`` stands for, or ``LaunchRefused`` saying what is wrong (see the module's doc)."""
    return accept_claims(lti, decode(lti, id_token, keys or KeySet(lti.jwks_url)), nonces)


def accept_claims(lti: LtiSettings, claims: dict, nonces: NonceStore) -> Launch:
    """The launch of claims whose signature, issuer, audience and times are checked already (by ``validate``, or
    by the hub's LTI 1.3 authenticator: ``lti/hub.py``): the rest checked, the nonce used up."""
    _check_claims(lti, claims)
    roles = claims.get(CLAIM + "roles")
    first = nonces.use(str(claims.get("nonce", "")), float(claims.get("exp", time.time() + MAX_AGE)))
    if first is not None:
        raise LaunchRefused(
            f"replayed nonce: {claims['nonce']!r} was used by a launch at "
            f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(first))}; a launch is accepted once"
        )
    if not isinstance(roles, list) or not roles:
        raise LaunchRefused(
            f"no role: the launch of user {claims['sub']!r} names no role (the roles claim is "
            f"{roles!r}); the LMS must send Learner or Instructor"
        )
    role = role_of(roles)
    if role is None:
        raise LaunchRefused(
            f"no role the course knows: user {claims['sub']!r} has {', '.join(roles)}; "
            "Learner, Instructor, TeachingAssistant or Administrator are"
        )
    ags = claims.get(AGS_CLAIM) or {}
    return Launch(
        lms_user_id=str(claims["sub"]),
        role=role,
        roles=tuple(roles),
        email=str(claims.get("email", "")),
        given_name=str(claims.get("given_name", "")),
        family_name=str(claims.get("family_name", "")),
        lineitem=str(ags.get("lineitem", "")),
        claims=claims,
    )
