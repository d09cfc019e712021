"""Which names (JSON keys, ``key=value`` keys, env and header names) mark a credential.

A name is normalized before it is classified: lower-cased, with ``-``, ``_``, ``.`` and spaces
removed, so ``api_key``, ``apiKey``, ``API-KEY`` and ``x-api-key`` compare as ``apikey`` and
``xapikey``. A name is credential-like when its normalized form is one of
:data:`CREDENTIAL_NAMES` or ends with one of :data:`CREDENTIAL_SUFFIXES`
(``OPENAI_API_KEY``, ``githubToken``, ``client_secret``).

The rules are deliberately suffix rules, not substring rules: the routing fields ACP needs
(``sessionId``, ``toolCallId``, ``optionId``, ``configId``, ``methodId``, ``authMethods``) and
usage counters (``inputTokens``, ``totalTokens``) never match, while every ``*_TOKEN``,
``*_SECRET``, ``*_API_KEY`` and ``*_PASSWORD`` does.
"""

from __future__ import annotations

from typing import Final

#: Characters removed by :func:`normalize_name`.
_SEPARATORS: Final = {ord(c): None for c in "-_. "}

#: Normalized names that are credentials on their own (besides the suffix rule).
CREDENTIAL_NAMES: Final = frozenset(
    {
        "auth",
        "bearer",
        "cookie",
        "cookies",
        "jwt",
        "passphrase",
        "pwd",
        "setcookie",
        "sig",  # an Azure shared access signature (``...&sig=...`` in a SAS URL)
        # Claude Code on Bedrock's API key variable: its name does not end in TOKEN.
        "awsbearertokenbedrock",
    }
)

#: Normalized suffixes that make a name a credential (``apikey`` covers ``x-api-key`` and
#: ``OPENAI_API_KEY``; ``token`` covers ``access_token`` and ``GITHUB_TOKEN``).
CREDENTIAL_SUFFIXES: Final = (
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "privatekey",
    "secretkey",
    "accesskey",
    "accesskeyid",
    "credential",
    "credentials",
    "authorization",
    "cookie",
    "sessionkey",
    "signingkey",
    "encryptionkey",
    "accountkey",  # Azure storage connection strings (``AccountKey=...;``)
    "sharedaccesskey",  # Azure Service Bus / Event Hubs (``SharedAccessKey=...;``)
)

#: Normalized header names whose value runs to the end of the line in text (``Authorization:
#: Bearer x``, ``Cookie: a=1; b=2``), not to the next space.
HEADER_CREDENTIAL_NAMES: Final = frozenset(
    {"authorization", "proxyauthorization", "cookie", "setcookie"}
)

#: Normalized suffixes of names that hold an environment or a header set (ACP ``env`` and
#: ``headers`` arrays of ``{name, value}``, terminal-auth ``env`` maps, ``ANTHROPIC_CUSTOM_HEADERS``):
#: every value inside is redacted, whatever its name.
ENV_HEADER_CONTAINER_SUFFIXES: Final = (
    "env",
    "environment",
    "envvars",
    "environmentvariables",
    "headers",
)

#: Normalized keys that name the entry in a paired ``{name: X, value: V}`` object.
PAIR_NAME_KEYS: Final = frozenset(
    {
        "name",
        "key",
        "header",
        "headername",
        "env",
        "envvar",
        "envname",
        "variable",
        "var",
        "id",
        "configid",
        "field",
    }
)

#: Normalized keys that hold the value of a paired entry.
PAIR_VALUE_KEYS: Final = frozenset({"value", "currentvalue"})


#: The last two characters of every normalized credential name and suffix: a name whose
#: normalized form ends otherwise cannot be credential-like (a cheap necessary check).
CREDENTIAL_ENDINGS: Final = frozenset(n[-2:] for n in (*CREDENTIAL_NAMES, *CREDENTIAL_SUFFIXES))

#: :data:`CREDENTIAL_ENDINGS` in every ASCII letter case, to check a pair without lowering it.
_CASED_ENDINGS: Final = frozenset(
    a + b
    for ending in CREDENTIAL_ENDINGS
    for a in {ending[0], ending[0].upper()}
    for b in {ending[1], ending[1].upper()}
)

#: Characters removed from the end of a text before :func:`may_end_with_credential_name`
#: looks at its last two: spaces and tabs, quotes and backslashes that may close a key.
_TRAILING_NON_NAME: Final = " \t\"'\\"

#: The separators :func:`normalize_name` removes that can sit inside a key.
_KEY_SEPARATORS: Final = "-_."


def may_end_with_credential_name(text: str) -> bool:
    """False only when no credential-like name can end ``text`` (before trailing spaces,
    quotes and backslashes): the last two characters a normalized name ending there would have
    are no credential name's. True means "maybe" (the caller decides exactly)."""
    end = text.rstrip(_TRAILING_NON_NAME).rstrip(_KEY_SEPARATORS)
    pair = end[-2:]
    if pair in _CASED_ENDINGS:
        return True
    if len(pair) < 2:
        return False  # every credential name is longer than one character
    if not pair.isascii():
        # Lower-casing may map a non-ASCII character to ASCII (the Kelvin sign to "k"), or
        # to more than one character: decide on the lowered pair, as normalization would.
        return pair[0] in _KEY_SEPARATORS or pair.lower()[-2:] in CREDENTIAL_ENDINGS
    return pair[0] in _KEY_SEPARATORS  # separators inside the name: only all of it can tell


def normalize_name(name: str) -> str:
    """Return ``name`` lower-cased without ``-``, ``_``, ``.`` and spaces."""
    return name.lower().translate(_SEPARATORS)


def is_credential_name(name: str) -> bool:
    """True when ``name`` (a key, a header or an environment variable name) names a credential."""
    normalized = normalize_name(name)
    return normalized in CREDENTIAL_NAMES or normalized.endswith(CREDENTIAL_SUFFIXES)


def is_header_credential_name(name: str) -> bool:
    """True for ``Authorization``, ``Proxy-Authorization``, ``Cookie`` and ``Set-Cookie``."""
    return normalize_name(name) in HEADER_CREDENTIAL_NAMES


def is_email_name(name: str) -> bool:
    """True when ``name`` names an e-mail address (``email``, ``userEmail``, ``email_address``)."""
    normalized = normalize_name(name)
    return normalized.endswith(("email", "emailaddress"))


def is_env_header_container(name: str) -> bool:
    """True when ``name`` holds an environment or a set of headers (``env``, ``headers``)."""
    return normalize_name(name).endswith(ENV_HEADER_CONTAINER_SUFFIXES)
