"""One-time login codes for the web dashboard: how a browser gets in without anyone copying the token.

Whoever holds a token (the cluster's, or a user's: runtime.users) asks for a code with ``POST
/login-links`` (the JupyterLab server extension, a kernel, the ``flinkbench`` command); the browser opens
``/dashboard/login?code=<code>``, which redeems the code, sets the cookie to the token the code was issued
for (HTTP-only, so the page's scripts never read it) and goes on to the dashboard, as Jupyter's own
``?token=`` login does: a user's link opens the dashboard as that user. A code opens once and only for a while, so a
link left in a notebook's output or a shell history grants nothing later.

Codes live in the JobManager's memory only: a JobManager that restarts (or a standby that takes over)
knows none of the codes issued before, and the login page says to ask for a new link.
"""
from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from urllib.parse import urlencode

DASHBOARD_PATH = "/dashboard"
LOGIN_PATH = DASHBOARD_PATH + "/login"
CODE_TTL_S = 600.0  # a link printed in a notebook stays usable for a coffee break, not for a day
MAX_OUTSTANDING = 64  # codes issued and not yet redeemed; the oldest is forgotten beyond this


class LoginCodes:
    """Codes issued and not yet redeemed or expired. Runs on the JobManager's loop (no locks)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, ttl_s: float = CODE_TTL_S,
                 limit: int = MAX_OUTSTANDING):
        self._clock, self.ttl_s, self._limit = clock, ttl_s, limit
        self._expiry: OrderedDict[str, tuple[float, str]] = OrderedDict()  # code -> (expiry, token it logs in with)

    def issue(self, token: str) -> str:
        """A fresh code, good for one login with ``token`` within ``ttl_s``."""
        self._forget_expired()
        code = secrets.token_urlsafe(24)
        self._expiry[code] = (self._clock() + self.ttl_s, token)
        while len(self._expiry) > self._limit:
            self._expiry.popitem(last=False)
        return code

    def redeem(self, code: str | None) -> str | None:
        """The token once for a code issued here and not expired, else None; the code is used up either way."""
        self._forget_expired()
        if not code:
            return None
        # The lookup is by value, but the value is secret and random: timing tells nothing useful.
        found = self._expiry.pop(code, None)
        return found[1] if found is not None else None

    def _forget_expired(self) -> None:
        now = self._clock()
        for code in [c for c, (expiry, _) in self._expiry.items() if expiry <= now]:
            del self._expiry[code]


def dashboard_page(next_path: str | None) -> str:
    """``next_path`` when it is a page of this dashboard, else the dashboard's first page: a login never
    sends the browser anywhere else (no open redirect through ``next``)."""
    if next_path and next_path.startswith(DASHBOARD_PATH) and not next_path.startswith(LOGIN_PATH):
        rest = next_path[len(DASHBOARD_PATH):]
        if rest == "" or rest[0] in "?#":
            return next_path
    return DASHBOARD_PATH


def login_path(next_path: str | None = None, code: str | None = None) -> str:
    """The login page, which redeems ``code`` when given, then opens ``next_path`` (a dashboard page)."""
    query = {"code": code} if code else {}
    page = dashboard_page(next_path)
    if page != DASHBOARD_PATH:
        query["next"] = page
    return LOGIN_PATH + ("?" + urlencode(query) if query else "")
