"""The tool's own key pair: ``make lti-key`` makes it, the passback signs its token requests with it.

An RSA key (2048 bits): the private key in PEM in the course folder (``[lti] key_file``, by default
``lti-tool-key.pem``, git-ignored, readable by its owner only), the public half as a JSON Web Key Set
(``lti-tool-jwks.json``, public: the LMS is given it). The key id (``kid``) is the key's RFC 7638
thumbprint, so the same key always has the same id and a new key another.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

JWKS_FILE = "lti-tool-jwks.json"


class KeyError_(ValueError):
    """The tool's key is missing or unreadable; the message says which command makes it."""


def _b64(n: int) -> str:
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def public_jwk(key: rsa.RSAPrivateKey | rsa.RSAPublicKey) -> dict[str, str]:
    """The public JWK of ``key``, with its thumbprint as ``kid``, for RS256 signatures."""
    numbers = (key.public_key() if isinstance(key, rsa.RSAPrivateKey) else key).public_numbers()
    jwk = {"e": _b64(numbers.e), "kty": "RSA", "n": _b64(numbers.n)}
    digest = hashlib.sha256(json.dumps(jwk, separators=(",", ":"), sort_keys=True).encode()).digest()
    kid = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return {**jwk, "kid": kid, "alg": "RS256", "use": "sig"}


def make_key(root: Path, key_file: str, replace: bool = False) -> tuple[Path, Path]:
    """A new key pair in ``root``: the private key (mode 600) and the public JWKS; refuses to replace a key
    unless ``replace`` (the LMS knows the old public key: it must be given the new one)."""
    private = Path(root) / key_file
    if private.exists() and not replace:
        raise KeyError_(
            f"{private} exists: the LMS already has its public key. To make a new one (and paste the new public "
            "key into the LMS), run make lti-key REPLACE=1"
        )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    tmp = private.with_name(f".{private.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    os.replace(tmp, private)
    jwks = Path(root) / JWKS_FILE
    jwks.write_text(json.dumps({"keys": [public_jwk(key)]}, indent=2) + "\n", encoding="utf-8")
    return private, jwks


def load_key(root: Path, key_file: str) -> rsa.RSAPrivateKey:
    """The tool's private key, or a ``KeyError_`` saying to run make lti-key."""
    private = Path(root) / key_file
    if not private.is_file():
        raise KeyError_(f"no tool key {private}: make it with make lti-key, then run make lti-config for the LMS")
    try:
        key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    except (ValueError, TypeError) as e:
        raise KeyError_(
            f"{private} is not an unencrypted PEM private key ({e}); make a new one: make lti-key REPLACE=1"
        ) from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise KeyError_(f"{private} is not an RSA key; LTI 1.3 signs with RS256: make lti-key REPLACE=1")
    return key


def public_pem(key: rsa.RSAPrivateKey) -> str:
    """The public key in PEM, as Moodle's "Public key" field takes it."""
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def private_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
