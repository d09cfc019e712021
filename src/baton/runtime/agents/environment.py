"""Environment contracts: exactly which variables an agent child receives, and which are secret.

A contract is an exact allowlist of variable names composed from shared groups (never a prefix,
never a wildcard): the small portable base every child gets, the user-config directories, the
network and proxy keys, and the provider's own keys. Each group also classifies its sensitive
keys; the values of those keys are redacted from every diagnostic Baton shows or stores.

Names match exactly and case-sensitively (POSIX environments are case-sensitive; the network
group lists both spellings of the proxy keys on purpose). Executable override keys
(``BATON_*_ACP_BIN``) are inputs of the resolver and never appear in a contract.

Discovery probes get even less: :func:`probe_environment` keeps only
:data:`PROBE_ENVIRONMENT_KEYS`, none of which carries a credential.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from baton.errors import ConfigurationError

if TYPE_CHECKING:
    from baton.runtime.agents.profiles import Profile

#: What an environment variable name may look like in a contract: a portable shell name.
#: Anything else (``*``, ``FOO_``-style prefixes written with a wildcard, ``=``) is refused, so an
#: allowlist can never turn into a pattern.
ENV_KEY_PATTERN: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Longest accepted variable name. Protects the contract (and the config file that declares
#: one) against absurd entries; real names are under 64 characters.
MAX_ENV_KEY_CHARS: Final = 128

#: Names reserved for Baton's own inputs (``BATON_*_ACP_BIN`` overrides, ``BATON_CONFIG``,
#: ``BATON_ACP_TOOLS``...): they configure Baton and are never passed to an agent.
RESERVED_KEY_PREFIX: Final = "BATON_"


def _valid_key(key: str) -> bool:
    return len(key) <= MAX_ENV_KEY_CHARS and ENV_KEY_PATTERN.fullmatch(key) is not None


@dataclass(frozen=True, slots=True)
class KeyGroup:
    """A named set of exact variable names, with the sensitive ones marked."""

    name: str
    keys: frozenset[str]
    sensitive: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        bad = sorted(k for k in self.keys if not _valid_key(k))
        if bad:
            raise ConfigurationError(f"environment group {self.name}: invalid key names {bad}")
        stray = sorted(self.sensitive - self.keys)
        if stray:
            raise ConfigurationError(
                f"environment group {self.name}: sensitive keys {stray} are not in the group"
            )


def group(name: str, keys: Iterable[str], sensitive: Iterable[str] = ()) -> KeyGroup:
    """Build a :class:`KeyGroup` from any iterables of names."""
    return KeyGroup(name, frozenset(keys), frozenset(sensitive))


# --- the shared groups ---------------------------------------------------------------------

#: Every child gets these (and nothing else unless its contract adds it). TERM is deliberately
#: absent: an agent's stdio are pipes, not a terminal (see docs/profiles.md).
BASE_GROUP: Final = group(
    "base", ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "LANG", "LC_ALL")
)

#: Where a user's per-application configuration and data live.
USER_CONFIG_GROUP: Final = group(
    "user-config",
    (
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "USERPROFILE",
        "APPDATA",
        "LOCALAPPDATA",
    ),
)

_PROXY_KEYS: Final = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)

#: Proxies and trust roots. Proxy URLs may embed a user and password, so they are sensitive.
NETWORK_GROUP: Final = group(
    "network",
    (*_PROXY_KEYS, "NO_PROXY", "no_proxy", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"),
    _PROXY_KEYS,
)

#: Amazon Bedrock credentials and configuration (used by Claude through Bedrock).
AWS_GROUP: Final = group(
    "aws",
    (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_ROLE_ARN",
        "AWS_ROLE_SESSION_NAME",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
        "AWS_EC2_METADATA_DISABLED",
    ),
    (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    ),
)

#: Google AI Studio and Vertex AI credentials and configuration (Gemini; Claude via Vertex).
GOOGLE_GROUP: Final = group(
    "google",
    (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_CLOUD_QUOTA_PROJECT",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
        "GOOGLE_GENAI_API_VERSION",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_VERTEX_BASE_URL",
    ),
    (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ),
)

#: Anthropic's own keys for Claude (API, OAuth token, gateways, Bedrock and Vertex switches).
ANTHROPIC_GROUP: Final = group(
    "anthropic",
    (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_CUSTOM_HEADERS",
        "ANTHROPIC_BEDROCK_BASE_URL",
        "ANTHROPIC_VERTEX_BASE_URL",
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL_AWS_REGION",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CONFIG_DIR",
        "CLAUDE_CODE_API_KEY_HELPER_TTL_MS",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_SKIP_VERTEX_AUTH",
        "CLOUD_ML_REGION",
        "DISABLE_PROMPT_CACHING",
        # Quieter, offline-friendly Claude Code (no telemetry, no self-update, no extra
        # traffic): switches that only take things away.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
    ),
    (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_CUSTOM_HEADERS",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CONFIG_DIR",
    ),
)

#: OpenAI and Codex keys for codex-acp. CODEX_HOME locates Codex's credential store (auth.json),
#: so it is sensitive like CLAUDE_CONFIG_DIR.
CODEX_GROUP: Final = group(
    "codex",
    ("OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME", "OPENAI_BASE_URL"),
    ("OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME"),
)

#: Cursor Agent's API key.
CURSOR_GROUP: Final = group("cursor", ("CURSOR_API_KEY",), ("CURSOR_API_KEY",))

#: xAI keys for Grok Build.
GROK_GROUP: Final = group(
    "grok",
    ("XAI_API_KEY", "GROK_API_KEY", "XAI_BASE_URL"),
    ("XAI_API_KEY", "GROK_API_KEY"),
)

#: OpenCode's own configuration locations only. OpenCode signs in through its own store
#: (``opencode auth login``, kept under the user data directory); third-party provider keys are
#: not passed by default. Config files may hold inline keys, so both paths are sensitive.
OPENCODE_GROUP: Final = group(
    "opencode",
    ("OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR"),
    ("OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR"),
)

_OTEL_HEADER_KEYS: Final = (
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
)

#: OpenTelemetry's standard SDK variables, for an agent that exports its own telemetry (ACP's
#: guidance: the client sets the standard ``OTEL_*`` variables). Never in a built-in contract:
#: a profile gets it only when the user names it (``env_groups = ["otel"]``, docs/tracing.md).
#: The OTLP headers usually carry an exporter's credentials, so they are sensitive.
OTEL_GROUP: Final = group(
    "otel",
    (
        "OTEL_SDK_DISABLED",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_PROPAGATORS",
        "OTEL_TRACES_EXPORTER",
        "OTEL_METRICS_EXPORTER",
        "OTEL_LOGS_EXPORTER",
        "OTEL_TRACES_SAMPLER",
        "OTEL_TRACES_SAMPLER_ARG",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_EXPORTER_OTLP_CERTIFICATE",
        *_OTEL_HEADER_KEYS,
    ),
    _OTEL_HEADER_KEYS,
)

#: The groups a user's config file may name (``env_groups``), by name. The base group is always
#: part of every contract and is not named.
SHARED_GROUPS: Final[Mapping[str, KeyGroup]] = {
    g.name: g
    for g in (
        USER_CONFIG_GROUP,
        NETWORK_GROUP,
        AWS_GROUP,
        GOOGLE_GROUP,
        ANTHROPIC_GROUP,
        CODEX_GROUP,
        CURSOR_GROUP,
        GROK_GROUP,
        OPENCODE_GROUP,
        OTEL_GROUP,
    )
}

#: The credential-free environment of a discovery probe: these keys only, never a secret.
PROBE_ENVIRONMENT_KEYS: Final = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TEMP",
    "TMP",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
)


# --- contracts -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EnvironmentContract:
    """A versioned, exact environment allowlist: ``name@v<version>`` is its identity.

    ``keys`` always includes the base group. ``sensitive`` is a subset of ``keys``. ``groups``
    names the groups it was composed from, in order, for documentation and diagnostics.
    """

    name: str
    version: int
    keys: frozenset[str]
    sensitive: frozenset[str]
    groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        bad = sorted(k for k in self.keys if not _valid_key(k))
        if bad:
            raise ConfigurationError(f"environment contract {self.name}: invalid keys {bad}")
        stray = sorted(self.sensitive - self.keys)
        if stray:
            raise ConfigurationError(
                f"environment contract {self.name}: sensitive keys {stray} are not allowed keys"
            )
        reserved = sorted(k for k in self.keys if k.startswith(RESERVED_KEY_PREFIX))
        if reserved:
            raise ConfigurationError(
                f"environment contract {self.name}: {reserved} are Baton's own inputs, never "
                "agent environment"
            )
        missing = sorted(BASE_GROUP.keys - self.keys)
        if missing:
            raise ConfigurationError(
                f"environment contract {self.name}: the base keys {missing} are missing"
            )
        if self.version < 1:
            raise ConfigurationError(f"environment contract {self.name}: version must be >= 1")

    @property
    def id(self) -> str:
        """The contract's stable identity, e.g. ``baton/claude-environment@v1``."""
        return f"{self.name}@v{self.version}"


def compose(name: str, version: int, *groups: KeyGroup) -> EnvironmentContract:
    """A contract of the base group plus ``groups``, their keys and sensitive keys united."""
    keys: set[str] = set(BASE_GROUP.keys)
    sensitive: set[str] = set(BASE_GROUP.sensitive)
    for g in groups:
        keys |= g.keys
        sensitive |= g.sensitive
    return EnvironmentContract(
        name=name,
        version=version,
        keys=frozenset(keys),
        sensitive=frozenset(sensitive),
        groups=("base", *(g.name for g in groups)),
    )


def _provider(name: str, *groups: KeyGroup) -> EnvironmentContract:
    return compose(f"baton/{name}-environment", 1, USER_CONFIG_GROUP, NETWORK_GROUP, *groups)


#: The built-in contracts, one per built-in profile.
CLAUDE_ENVIRONMENT: Final = _provider("claude", ANTHROPIC_GROUP, AWS_GROUP, GOOGLE_GROUP)
CODEX_ENVIRONMENT: Final = _provider("codex", CODEX_GROUP)
CURSOR_ENVIRONMENT: Final = _provider("cursor", CURSOR_GROUP)
GEMINI_ENVIRONMENT: Final = _provider("gemini", GOOGLE_GROUP)
GROK_ENVIRONMENT: Final = _provider("grok", GROK_GROUP)
OPENCODE_ENVIRONMENT: Final = _provider("opencode", OPENCODE_GROUP)


# --- applying a contract -------------------------------------------------------------------


def filter_environment(
    keys: Iterable[str], parent_env: Mapping[str, str], *, exclude: Iterable[str] = ()
) -> dict[str, str]:
    """The entries of ``parent_env`` whose names are exactly in ``keys`` and not in ``exclude``.

    An entry whose name or value holds a NUL byte is dropped (it cannot be passed to a child).
    """
    allowed = set(keys) - set(exclude)
    return {
        key: value
        for key, value in parent_env.items()
        if key in allowed and "\0" not in key and "\0" not in value
    }


def child_environment(profile: Profile, parent_env: Mapping[str, str]) -> dict[str, str]:
    """The environment an agent child of ``profile`` gets: its contract's keys, nothing else.

    Override keys (``profile.override_env``) never pass, even if a contract lists them.
    """
    return filter_environment(profile.environment.keys, parent_env, exclude=(profile.override_env,))


def probe_environment(parent_env: Mapping[str, str]) -> dict[str, str]:
    """The credential-free environment a discovery probe runs with."""
    return filter_environment(PROBE_ENVIRONMENT_KEYS, parent_env)


def sensitive_values(profile: Profile, parent_env: Mapping[str, str]) -> list[str]:
    """The non-empty values of ``profile``'s sensitive keys in ``parent_env``, for exact-value
    redaction (:class:`baton.redaction.SecretValues`, which also drops values too short
    to mask safely): deduplicated, longest first."""
    contract = profile.environment
    values = {value for key, value in parent_env.items() if key in contract.sensitive and value}
    return sorted(values, key=lambda v: (-len(v), v))
