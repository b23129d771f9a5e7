"""The cluster secret: made at start, kept in an owner-only file, presented on every connection.

A job carries pickled Python that TaskManagers run, so an open port would be remote code execution:
every REST call, WebSocket, control and data connection must carry the token, and binding an
address other than loopback without one is refused.
"""
from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import socket

from runtime.errors import ConfigurationError

TOKEN_BYTES = 32
MIN_TOKEN_CHARS = 32  # 24 random bytes, base64-encoded
COOKIE_NAME = "flinkbench_token"


class SecurityError(ConfigurationError):
    """A start-up setting that would expose the cluster."""


def new_token() -> str:
    """A fresh random cluster token."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def write_token_file(path: str, token: str) -> None:
    """Write ``token`` so that only the owner can read it (created 0600, never widened)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token)
    os.chmod(path, 0o600)


def read_token_file(path: str) -> str:
    """The token in ``path``; SecurityError when it is missing, empty or too short."""
    try:
        with open(path, encoding="utf-8") as fh:
            token = fh.read().strip()
    except OSError as err:
        raise SecurityError(f"cannot read token file {path}: {err.strerror}") from None
    if not token:
        raise SecurityError(f"token file {path} is empty")
    if len(token) < MIN_TOKEN_CHARS:
        raise SecurityError(f"token in {path} is too short ({len(token)} characters): a cluster token "
                            f"needs at least {MIN_TOKEN_CHARS} characters (24 random bytes, base64)")
    return token


def ensure_token_file(path: str) -> str:
    """The token in ``path``; a new one written there first when there is no such file yet."""
    if os.path.exists(path):
        return read_token_file(path)
    token = new_token()
    write_token_file(path, token)
    return token


def tokens_match(expected: str, presented: str | None) -> bool:
    """Constant-time comparison; a missing token never matches."""
    if not presented or not expected:
        return False
    return hmac.compare_digest(expected.encode(), presented.encode())


def bearer(header: str | None) -> str | None:
    """The token from an ``Authorization: Bearer <token>`` header, if that is what it holds."""
    if header and header.lower().startswith("bearer "):
        return header[7:].strip()
    return None


def is_loopback(address: str) -> bool:
    """Whether ``address`` only reaches this host (127.0.0.0/8, ::1, localhost)."""
    if address in ("localhost", ""):
        return address == "localhost"
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        try:
            return ipaddress.ip_address(socket.gethostbyname(address)).is_loopback
        except OSError:
            return False


def check_bind(address: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token."""
    if not token and not is_loopback(address):
        raise SecurityError(f"refusing to bind {address} without a cluster token: "
                            "anyone who reaches the port could run code on this machine")
