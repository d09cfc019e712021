"""The service's secrets: the API token, the login codes of the inspector's URL, and the
session cookies browsers get in exchange.

- The **API token** is 256 bits from the system's CSPRNG per start, or ``BATON_SERVE_TOKEN``
  when set (at least :data:`MIN_TOKEN_CHARS` characters, so a weak value is refused rather
  than used). It is for ``Authorization: Bearer`` and ``serve.json``, never for a URL.
- A **login code** is a separate 256-bit value for the ``?token=`` URL that ``baton serve``
  and ``baton inspect`` print: single-use and short-lived (:data:`LOGIN_CODE_SECONDS`), so a
  leaked inspector URL is worth nothing once used or a few minutes old. At most
  :data:`MAX_LOGIN_CODES` are live (the oldest is forgotten first).
- A **session cookie** is minted for each login (a code redeemed, or the token typed into the
  login page): its own random value, never the token, so the token does not sit in a
  browser's cookie jar. At most :data:`MAX_SESSIONS` are remembered (the oldest signs out).

- The **launch key**, a fourth random value, sits only in the owner-only runtime file: the
  CLI presents it to launch the user's own ad-hoc agent commands.

Every comparison is constant-time (:func:`hmac.compare_digest`), over every live value.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Final

from baton.errors import ConfigurationError

#: Bytes of randomness in a generated token, a login code and a cookie value (256 bits).
TOKEN_BYTES: Final = 32
#: Shortest ``BATON_SERVE_TOKEN`` accepted: 32 characters. A shorter shared secret is
#: guessable over a loopback connection that answers thousands of requests a second.
MIN_TOKEN_CHARS: Final = 32
#: Longest ``BATON_SERVE_TOKEN`` accepted (it travels in every request header).
MAX_TOKEN_CHARS: Final = 512
#: The environment variable that fixes the token.
TOKEN_ENV: Final = "BATON_SERVE_TOKEN"
#: The cookie's name.
COOKIE_NAME: Final = "baton_session"
#: Seconds a login code stays redeemable: long enough to click a URL just printed, short
#: enough that one found later in a terminal's scrollback or a shell history is dead.
LOGIN_CODE_SECONDS: Final = 300.0
#: Live login codes kept at most (each ``baton inspect`` asks for one). Bounds memory and
#: the constant-time scan of a redemption.
MAX_LOGIN_CODES: Final = 32
#: Session cookies remembered at most (one per login). Bounds memory and the scan of a check;
#: the oldest session signs out first.
MAX_SESSIONS: Final = 64


def token_from(environ: Mapping[str, str]) -> str:
    """``BATON_SERVE_TOKEN`` when set (checked), else a fresh 256-bit token."""
    given = environ.get(TOKEN_ENV)
    if given is None or given == "":
        return secrets.token_urlsafe(TOKEN_BYTES)
    if not MIN_TOKEN_CHARS <= len(given) <= MAX_TOKEN_CHARS or not given.isascii():
        raise ConfigurationError(
            f"{TOKEN_ENV} must be {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS} ASCII characters"
        )
    if any(c.isspace() or not c.isprintable() for c in given):
        raise ConfigurationError(f"{TOKEN_ENV} must not contain spaces or control characters")
    return given


def _matches(presented: str, expected: str) -> bool:
    return hmac.compare_digest(presented.encode(), expected.encode())


class Credentials:
    """The token, the live login codes and the signed-in sessions of one service."""

    def __init__(self, token: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.token = token
        self._clock = clock
        #: Live login codes and the monotonic time each expires at, oldest first.
        self._codes: OrderedDict[str, float] = OrderedDict()
        #: Session cookie values, oldest first.
        self._sessions: OrderedDict[str, None] = OrderedDict()
        #: The launch key: written only to the owner-only runtime file, never printed or sent
        #: to a browser. A request presenting it (the user's own CLI, which read that file)
        #: may name an ad-hoc agent command even without ``--allow-agent-command``.
        self.launch_key = secrets.token_urlsafe(TOKEN_BYTES)

    def token_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the API token (constant-time)."""
        return _matches(presented, self.token)

    def issue_login_code(self) -> str:
        """A fresh login code, redeemable once within :data:`LOGIN_CODE_SECONDS`."""
        self._forget_expired()
        code = secrets.token_urlsafe(TOKEN_BYTES)
        self._codes[code] = self._clock() + LOGIN_CODE_SECONDS
        while len(self._codes) > MAX_LOGIN_CODES:
            self._codes.popitem(last=False)
        return code

    def redeem_login_code(self, presented: str) -> bool:
        """Whether ``presented`` is a live login code; a match is used up (single use)."""
        self._forget_expired()
        found = None
        for code in self._codes:
            if _matches(presented, code):
                found = code
        if found is None:
            return False
        del self._codes[found]
        return True

    def new_session(self) -> str:
        """A fresh session cookie value (a login), remembered among the newest
        :data:`MAX_SESSIONS`."""
        value = secrets.token_urlsafe(TOKEN_BYTES)
        self._sessions[value] = None
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return value

    def session_matches(self, presented: str) -> bool:
        """Whether ``presented`` is a remembered session cookie value (constant-time)."""
        matched = False
        for value in self._sessions:
            matched |= _matches(presented, value)
        return matched

    def _forget_expired(self) -> None:
        now = self._clock()
        for code in [c for c, expires in self._codes.items() if expires <= now]:
            del self._codes[code]

    def launch_key_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the launch key (constant-time)."""
        return _matches(presented, self.launch_key)
