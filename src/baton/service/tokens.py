"""The service's secrets: the API token and the cookie a browser gets in exchange for it.

The token is 256 bits from the system's CSPRNG per start, or ``BATON_SERVE_TOKEN`` when set
(at least :data:`MIN_TOKEN_CHARS` characters, so a weak value is refused rather than used).
The cookie holds a second random value, never the token, so the token does not sit in a
browser's cookie jar. A third, the launch key, sits only in the owner-only runtime file: the
CLI presents it to launch the user's own ad-hoc agent commands. Every comparison is constant-time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from baton.errors import ConfigurationError

#: Bytes of randomness in a generated token and in the cookie value (256 bits).
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


@dataclass(frozen=True)
class Credentials:
    """The token clients present and the cookie value browsers get in exchange."""

    token: str
    cookie: str = field(default_factory=lambda: secrets.token_urlsafe(TOKEN_BYTES))
    #: The launch key: written only to the owner-only runtime file, never printed or sent to a
    #: browser. A request presenting it (the user's own CLI, which read that file) may name an
    #: ad-hoc agent command even without ``--allow-agent-command``.
    launch_key: str = field(default_factory=lambda: secrets.token_urlsafe(TOKEN_BYTES))

    def token_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the token (constant-time)."""
        return hmac.compare_digest(presented.encode(), self.token.encode())

    def launch_key_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the launch key (constant-time)."""
        return hmac.compare_digest(presented.encode(), self.launch_key.encode())

    def cookie_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the cookie value (constant-time)."""
        return hmac.compare_digest(presented.encode(), self.cookie.encode())
