"""Login codes are single-use and short-lived, sessions are bounded: the service's secrets."""

from __future__ import annotations

from baton.service.tokens import LOGIN_CODE_SECONDS, MAX_LOGIN_CODES, MAX_SESSIONS, Credentials

TOKEN = "t" * 43


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_login_code_expires() -> None:
    clock = Clock()
    credentials = Credentials(TOKEN, clock=clock)
    fresh, stale = credentials.issue_login_code(), credentials.issue_login_code()
    clock.now += LOGIN_CODE_SECONDS - 0.001
    assert credentials.redeem_login_code(fresh)
    clock.now += 0.001
    assert not credentials.redeem_login_code(stale)


def test_a_login_code_is_single_use_and_never_the_token() -> None:
    credentials = Credentials(TOKEN)
    code = credentials.issue_login_code()
    assert code != TOKEN and not credentials.redeem_login_code(TOKEN)
    assert credentials.redeem_login_code(code)
    assert not credentials.redeem_login_code(code)


def test_live_codes_and_sessions_are_bounded_oldest_first() -> None:
    credentials = Credentials(TOKEN)
    codes = [credentials.issue_login_code() for _ in range(MAX_LOGIN_CODES + 1)]
    assert not credentials.redeem_login_code(codes[0])
    assert credentials.redeem_login_code(codes[1]) and credentials.redeem_login_code(codes[-1])
    sessions = [credentials.new_session() for _ in range(MAX_SESSIONS + 1)]
    assert not credentials.session_matches(sessions[0])
    assert credentials.session_matches(sessions[1]) and credentials.session_matches(sessions[-1])
    assert not credentials.session_matches("")
