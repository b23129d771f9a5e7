"""One-time dashboard login codes: each opens once, only for a while, and only ever leads to a dashboard page."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from runtime.jobmanager.logins import LOGIN_PATH, LoginCodes, dashboard_page, login_path


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


TOKEN = "t" * 43


def test_a_code_opens_once_with_the_token_it_was_issued_for():
    codes = LoginCodes(Clock())
    code, users = codes.issue(TOKEN), codes.issue("u" * 43)
    assert codes.redeem(code) == TOKEN and codes.redeem(users) == "u" * 43
    assert codes.redeem(code) is None, "a used code is gone"
    assert codes.redeem(None) is None and codes.redeem("") is None and codes.redeem("made-up") is None


def test_a_code_expires():
    clock = Clock()
    codes = LoginCodes(clock, ttl_s=60)
    early, late = codes.issue(TOKEN), codes.issue(TOKEN)
    assert codes.redeem(early) == TOKEN
    clock.now += 60
    assert codes.redeem(late) is None, "a code is refused once its time is up"


def test_codes_are_distinct_and_the_oldest_go_beyond_the_limit():
    codes = LoginCodes(Clock(), limit=3)
    issued = [codes.issue(TOKEN) for _ in range(5)]
    assert len(set(issued)) == 5 and all(len(c) >= 32 for c in issued)
    assert [codes.redeem(c) is not None for c in issued] == [False, False, True, True, True]


def test_next_leads_only_to_dashboard_pages():
    assert dashboard_page("/dashboard?job=abc&tab=graph") == "/dashboard?job=abc&tab=graph"
    assert dashboard_page("/dashboard") == "/dashboard"
    for elsewhere in (None, "", "https://example.com/", "//example.com/dashboard", "/overview",
                      "/dashboardx", "/dashboard/login?code=x", "/dashboard/../overview"):
        assert dashboard_page(elsewhere) == "/dashboard", elsewhere


def test_login_paths_carry_the_code_and_the_page():
    assert login_path() == LOGIN_PATH
    split = urlsplit(login_path("/dashboard?job=abc", "the-code"))
    assert split.path == LOGIN_PATH
    assert parse_qs(split.query) == {"code": ["the-code"], "next": ["/dashboard?job=abc"]}
    assert login_path("https://example.com/", "c") == f"{LOGIN_PATH}?code=c"
