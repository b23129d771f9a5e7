"""Which JobManager the server extension forwards to, and how to authenticate to it.

The token is read from the token file on every use rather than cached, so a cluster restarted with a
fresh token is picked up without reconnecting. It is only ever put into requests to the JobManager.
"""
from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from runtime import tls
from runtime.config import ConfigError
from runtime.errors import ClusterError
from runtime.security import SecurityError, read_token_file


class TargetError(ClusterError):
    """No usable JobManager: none configured, a malformed URL, or an unreadable token file."""


def default_token_file() -> str:
    """Where ``flinkbench jobmanager`` writes its token when no working directory is configured."""
    return os.path.join(tempfile.gettempdir(), f"flinkbench-{os.getuid()}", "token")


def normalise_url(url: str) -> str:
    url = (url or "").strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise TargetError(f"JobManager URL must look like http://host:port, got {url!r}")
    return url


@dataclass(frozen=True)
class JobManagerTarget:
    url: str
    token_file: str
    source: str  # "settings", "environment", "server config" or "local cluster": shown in the panel
    trust_cert: str = ""  # PEM CA certificates an https JobManager is verified against; "": the system's

    @classmethod
    def make(cls, url: str, token_file: str | None, source: str, trust_cert: str | None = None) -> JobManagerTarget:
        trust = os.path.expanduser(trust_cert or "") or tls.trust_from_environment() or ""
        return cls(normalise_url(url), os.path.expanduser(token_file or "") or default_token_file(), source, trust)

    def ssl_context(self) -> ssl.SSLContext:
        """How the proxy verifies the JobManager's certificate and host name (used for https only)."""
        try:
            return tls.client_context(self.trust_cert or None)
        except ConfigError as err:
            raise TargetError(f"{err}; set the CA certificate of the JobManager at {self.url} in the Flinkbench "
                              "settings") from None

    def token(self) -> str:
        try:
            return read_token_file(self.token_file)
        except SecurityError as err:
            raise TargetError(f"{err}; set the token file of the JobManager at {self.url} in the Flinkbench "
                              "settings") from None

    @property
    def ws_url(self) -> str:
        return "ws" + self.url[len("http"):]

    def public(self) -> dict:
        """What the browser may know: where the JobManager is and which file holds its token, not the token."""
        return {"url": self.url, "token_file": self.token_file, "source": self.source, "trust_cert": self.trust_cert}


NOT_CONFIGURED = ("no JobManager configured: connect to one from the Flinkbench panel, start a local cluster "
                  "there, or set FLINKBENCH_JOBMANAGER_URL before starting Jupyter")


class Connection:
    """The JobManager the panel talks to: the one it chose, else the server's default (config or env)."""

    def __init__(self, default: JobManagerTarget | None):
        self.default = default
        self.chosen: JobManagerTarget | None = None
        self.known: list[str] = []  # every JobManager of the cluster the event stream named (HA standbys)
        self._before: tuple[JobManagerTarget | None, list[str]] = (None, [])  # what choose() replaced

    def current(self) -> JobManagerTarget:
        target = self.chosen or self.default
        if target is None:
            raise TargetError(NOT_CONFIGURED)
        return target

    def choose(self, target: JobManagerTarget | None) -> None:
        self._before = (self.chosen, self.known)
        self.chosen = target
        self.known = []

    def remember(self, urls: list[str]) -> None:
        """The cluster's JobManagers, as its event stream lists them: where to look when this one goes."""
        self.known = [u.rstrip("/") for u in urls if u]

    def follow(self, leader_url: str) -> JobManagerTarget:
        """Talk to ``leader_url`` from now on: the same cluster (token file, source), its new leader."""
        target = replace(self.current(), url=normalise_url(leader_url))
        self.chosen = target
        return target

    def forget(self, source: str) -> None:
        """Drop the chosen target if it came from ``source`` (e.g. a local cluster that stopped): back to the
        one it replaced, as last followed (with HA, a leader other than the configured address)."""
        if self.chosen is not None and self.chosen.source == source:
            self.chosen, self.known = self._before
            self._before = (None, [])

    def describe(self) -> dict:
        target = self.chosen or self.default
        return {"configured": target is not None, **(target.public() if target else
                                                     {"url": None, "token_file": None, "source": None, "trust_cert": None})}
