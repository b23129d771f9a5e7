"""The dashboard's login page: ``/dashboard/login``, the one path of the dashboard open without the token.

- ``GET ?code=<code>`` redeems a one-time code (runtime.jobmanager.logins), sets the token cookie
  (HTTP-only, so no script on the page reads it) and goes on to the page ``next`` names.
- ``GET`` alone shows how to get in; a browser that opens a dashboard page without the token is sent
  here by the front door (runtime.jobmanager.rest.gate), so it reads what to do instead of raw JSON.
- ``POST token=...`` logs in with the token pasted into the page's form, as Jupyter's login page does.

Plain tornado, no Bokeh: the page answers at once, also on a JobManager whose dashboard never started.
"""
from __future__ import annotations

import tornado.web

from runtime.jobmanager.dashboard.html import esc
from runtime.jobmanager.logins import LOGIN_PATH, LoginCodes, dashboard_page
from runtime.jobmanager.rest.gate import Authenticator
from runtime.security import COOKIE_NAME

USED_OR_EXPIRED = ("This login link was used already or has expired (links open once, within a few minutes). "
                   "Ask for a new one as below.")
WRONG_TOKEN = "That is not this cluster's token, nor a token of one of its users."
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Flinkbench dashboard · log in</title>
<style>
body{{font-family:system-ui,sans-serif;margin:40px auto;max-width:640px;color:#222;line-height:1.45}}
.fb-message{{color:#c00;font-weight:600}} code{{background:#f3f3f3;padding:1px 4px}}
label{{display:block;margin-top:18px}} input[type=password]{{width:100%;padding:6px;margin:6px 0}}
</style></head>
<body><main class="fb-login">
<h1>Flinkbench dashboard</h1>
{message}
<p>This JobManager's dashboard is open to whoever holds the cluster's token. To open it without copying the token:</p>
<ul>
<li>in JupyterLab, click <b>Dashboard</b> in the Flinkbench panel (the wave icon in the left bar), or the
<i>web dashboard</i> link that <code>%flink local</code> printed;</li>
<li>in a shell, <code>flinkbench dashboard --jobmanager URL --token-file FILE</code> prints a link that opens it once.</li>
</ul>
<form method="post" action="{action}">
<label>Or paste the cluster token (what the cluster's token file holds), or your own user token:
<input type="password" name="token" autocomplete="off" autofocus></label>
<input type="hidden" name="next" value="{next}">
<button type="submit">Log in</button>
</form>
</main></body></html>
"""


def login_page(next_page: str, message: str = "") -> str:
    """The page's HTML; ``message`` says what went wrong, if anything."""
    shown = f"<p class='fb-message' role='alert'>{esc(message)}</p>" if message else ""
    return PAGE.format(message=shown, action=esc(LOGIN_PATH), next=esc(next_page))


class LoginHandler(tornado.web.RequestHandler):
    """Logs a browser in: a one-time code or the pasted token becomes the token cookie."""

    def initialize(self, auth: Authenticator, logins: LoginCodes) -> None:
        self.auth, self.logins = auth, logins

    def get(self) -> None:
        next_page = dashboard_page(self.get_query_argument("next", None))
        code = self.get_query_argument("code", None)
        if code is None:
            self._page(200, next_page)
        elif (token := self.logins.redeem(code)) is not None:
            self._log_in(next_page, token)
        else:
            self._page(401, next_page, USED_OR_EXPIRED)

    def post(self) -> None:
        next_page = dashboard_page(self.get_body_argument("next", None))
        token = self.get_body_argument("token", "").strip()
        if self.auth.identify(token) is not None:
            self._log_in(next_page, token)
        else:
            self._page(401, next_page, WRONG_TOKEN)

    def _log_in(self, next_page: str, token: str) -> None:
        # Lax, not Strict: the login is reached by a redirect from another site (JupyterLab's server), and
        # a Strict cookie would not come with the redirect to the dashboard that follows it.
        self.set_cookie(COOKIE_NAME, token, httponly=True, samesite="Lax", path="/",
                        secure=self.request.protocol == "https")
        self.set_header("Cache-Control", "no-store")
        self.redirect(next_page)

    def _page(self, status: int, next_page: str, message: str = "") -> None:
        self.set_status(status)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(login_page(next_page, message))
