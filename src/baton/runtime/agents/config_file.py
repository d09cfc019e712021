"""The user's config file: custom profiles and persisted executable overrides.

Where it is, first match wins: the ``--config FILE`` flag, the ``BATON_CONFIG`` variable, else
``config.toml`` in Baton's platform config directory (``~/.config/baton/config.toml`` on Linux,
from platformdirs). A file named by the flag or the variable must exist; the default file may
be absent (then there is nothing to add).

The format is TOML (docs/profiles.md has an example)::

    [executables]              # persisted overrides, by profile id
    claude = "/opt/claude/node_modules/.bin/claude-agent-acp"

    [store]                    # a shared run store (docs/fleet.md); default: the data dir
    url = "postgresql://baton@db.internal/baton"

    [profiles.my-agent]        # a custom profile
    argv = ["my-agent", "--acp"]
    probe_argv = ["--help"]
    probe_patterns = ['\\bUsage:\\s+my-agent\\b']
    idle_timeout = 1800        # optional: this agent's turn idle bound

    [turns]
    idle_timeout = 900         # every turn's idle bound (seconds, or "off"); default 600

    [turns.profiles]           # per profile, built-in or custom (seconds, or "off")
    codex = "off"

    [workspaces]               # where `--workspace worktree` puts worktrees (docs/workspaces.md)
    root = "/srv/baton-worktrees"   # default: <data dir>/worktrees

    [service]                  # the data directory's `baton serve` (docs/api.md)
    autostart = false          # default true: a named session's first turn starts it
    idle_stop = 1800           # an auto-started service's idle bound (seconds, or "off")

Everything is validated before use; a problem raises :class:`~baton.errors.ConfigFileError`
with a stable ``sub_code`` (the ``CONFIG_*`` constants below) naming the file and the key.
Unknown keys are errors, not ignored: a typo must not silently weaken a contract.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import platformdirs

from baton.errors import (
    ConfigFileError,
    ConfigurationError,
    InvalidArgument,
    StoreUrlInvalid,
    TurnBoundInvalid,
)
from baton.runtime.agents.environment import (
    ENV_KEY_PATTERN,
    MAX_ENV_KEY_CHARS,
    RESERVED_KEY_PREFIX,
    SHARED_GROUPS,
    KeyGroup,
    compose,
    group,
)
from baton.runtime.agents.profiles import (
    ALL_POLICIES,
    BUILTIN_OVERRIDE_KEYS,
    BUILTIN_PROFILES,
    MAX_ARG_CHARS,
    MAX_ARGV_ITEMS,
    PROFILE_ID_PATTERN,
    LaunchProbe,
    Policy,
    Profile,
    default_override_env,
)
from baton.store.location import check_store_url
from baton.wire.budget import BoundSetting, parse_bound_setting
from baton.wire.framing import DEFAULT_MAX_FRAME_BYTES
from baton.wire.version import AUTO_CHOICE, PROTOCOL_CHOICES, parse_protocol_choice

#: The variable that names the config file (after the ``--config`` flag, before the default).
CONFIG_ENV: Final = "BATON_CONFIG"

#: The config file's name inside Baton's platform config directory.
CONFIG_FILE_NAME: Final = "config.toml"

#: The application name platformdirs places the config directory under.
APP_NAME: Final = "baton"

#: Largest config file read. Protects memory and parse time against a wrong path (a log, a
#: binary); a real config is a few KiB.
MAX_CONFIG_BYTES: Final = 1024 * 1024

#: Most custom profiles in one file. Protects doctor and discovery (each profile may run two
#: probes of up to 5 s) against a generated file.
MAX_CUSTOM_PROFILES: Final = 64

#: Most keys in one custom profile's ``env`` (and ``sensitive``) list.
MAX_ENV_KEYS: Final = 256

#: Most regular expressions in one pattern list, and the longest one. Protects the probe check.
MAX_PATTERNS: Final = 16
MAX_PATTERN_CHARS: Final = 1024

#: Longest display name and executable override value.
MAX_DISPLAY_NAME_CHARS: Final = 128
MAX_EXECUTABLE_CHARS: Final = 4096

#: The environment contract version of every config-file profile. A profile's own contract is
#: identified as ``config/<id>-environment@v1``.
CUSTOM_CONTRACT_VERSION: Final = 1

# Stable sub-codes of ConfigFileError.
CONFIG_NOT_FOUND: Final = "CONFIG_NOT_FOUND"
CONFIG_UNREADABLE: Final = "CONFIG_UNREADABLE"
CONFIG_TOO_LARGE: Final = "CONFIG_TOO_LARGE"
CONFIG_SYNTAX: Final = "CONFIG_SYNTAX"
CONFIG_UNKNOWN_KEY: Final = "CONFIG_UNKNOWN_KEY"
CONFIG_MISSING_KEY: Final = "CONFIG_MISSING_KEY"
CONFIG_WRONG_TYPE: Final = "CONFIG_WRONG_TYPE"
CONFIG_INVALID_VALUE: Final = "CONFIG_INVALID_VALUE"
CONFIG_TOO_MANY: Final = "CONFIG_TOO_MANY"
CONFIG_BAD_PROFILE_ID: Final = "CONFIG_BAD_PROFILE_ID"
CONFIG_SHADOWS_BUILTIN: Final = "CONFIG_SHADOWS_BUILTIN"
CONFIG_UNKNOWN_PROFILE: Final = "CONFIG_UNKNOWN_PROFILE"
CONFIG_BAD_ENV_KEY: Final = "CONFIG_BAD_ENV_KEY"
CONFIG_RESERVED_ENV_KEY: Final = "CONFIG_RESERVED_ENV_KEY"
CONFIG_SENSITIVE_NOT_ALLOWED: Final = "CONFIG_SENSITIVE_NOT_ALLOWED"
CONFIG_UNKNOWN_GROUP: Final = "CONFIG_UNKNOWN_GROUP"
CONFIG_BAD_PATTERN: Final = "CONFIG_BAD_PATTERN"
CONFIG_BAD_POLICY: Final = "CONFIG_BAD_POLICY"
CONFIG_DUPLICATE_OVERRIDE_KEY: Final = "CONFIG_DUPLICATE_OVERRIDE_KEY"

#: Every sub-code, for documentation and tests.
CONFIG_SUB_CODES: Final = (
    CONFIG_NOT_FOUND,
    CONFIG_UNREADABLE,
    CONFIG_TOO_LARGE,
    CONFIG_SYNTAX,
    CONFIG_UNKNOWN_KEY,
    CONFIG_MISSING_KEY,
    CONFIG_WRONG_TYPE,
    CONFIG_INVALID_VALUE,
    CONFIG_TOO_MANY,
    CONFIG_BAD_PROFILE_ID,
    CONFIG_SHADOWS_BUILTIN,
    CONFIG_UNKNOWN_PROFILE,
    CONFIG_BAD_ENV_KEY,
    CONFIG_RESERVED_ENV_KEY,
    CONFIG_SENSITIVE_NOT_ALLOWED,
    CONFIG_UNKNOWN_GROUP,
    CONFIG_BAD_PATTERN,
    CONFIG_BAD_POLICY,
    CONFIG_DUPLICATE_OVERRIDE_KEY,
)

ConfigSource = Literal["flag", "env", "default"]

_TOP_KEYS: Final = frozenset({"executables", "profiles", "turns", "store", "workspaces", "service"})
#: Keys of the ``[service]`` table: ``autostart`` (a named session's turn starts the data
#: directory's service) and ``idle_stop`` (its idle bound).
_SERVICE_KEYS: Final = frozenset({"autostart", "idle_stop"})
#: Keys of the ``[workspaces]`` table (docs/workspaces.md): ``root``, where worktrees live.
_WORKSPACES_KEYS: Final = frozenset({"root"})
_TURNS_KEYS: Final = frozenset({"idle_timeout", "profiles"})
#: Keys of the ``[store]`` table (docs/fleet.md): ``url``, a shared PostgreSQL store.
_STORE_KEYS: Final = frozenset({"url"})
_PROFILE_KEYS: Final = frozenset(
    {
        "display_name",
        "argv",
        "env",
        "env_groups",
        "sensitive",
        "version_argv",
        "probe_argv",
        "probe_patterns",
        "policies",
        "override_env",
        "max_frame_bytes",
        "strict",
        "account_unsupported_patterns",
        "protocol",
        "v2_support",
        "idle_timeout",
    }
)
_REQUIRED_PROFILE_KEYS: Final = ("argv", "probe_argv", "probe_patterns")


@dataclass(frozen=True, slots=True)
class UserConfig:
    """A loaded config file. ``path`` is None when the default file does not exist."""

    path: Path | None
    source: ConfigSource
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    executables: Mapping[str, str] = field(default_factory=dict)
    #: ``[turns] idle_timeout``: every turn's idle bound unless a profile or the run sets one.
    idle_timeout: BoundSetting = None
    #: ``[turns.profiles]``: idle bounds by profile id (applied by :meth:`all_profiles`).
    profile_idle_timeouts: Mapping[str, float | Literal["off"]] = field(default_factory=dict)
    #: ``[store] url``: a shared PostgreSQL run store (after ``--store`` and BATON_STORE).
    store_url: str | None = None
    #: ``[workspaces] root``: the directory worktrees are created in (absolute, user-expanded);
    #: None: ``<data dir>/worktrees``.
    workspace_root: str | None = None
    #: ``[service] autostart``: whether `baton run --session`/`session new` start the data
    #: directory's service in the background when none runs (None: not said, on).
    service_autostart: bool | None = None
    #: ``[service] idle_stop``: an auto-started service's idle bound (None: the default).
    service_idle_stop: float | Literal["off"] | None = None

    def all_profiles(self) -> dict[str, Profile]:
        """Built-in profiles first, then the config file's, by id, each with the idle bound
        ``[turns.profiles]`` gives it."""
        merged = {**BUILTIN_PROFILES, **self.profiles}
        for profile_id, bound in self.profile_idle_timeouts.items():
            merged[profile_id] = dataclasses.replace(merged[profile_id], idle_timeout=bound)
        return merged

    def executable_override(self, profile_id: str) -> str | None:
        """The persisted executable override for ``profile_id``, if the file sets one."""
        return self.executables.get(profile_id)


def config_path(
    explicit: str | os.PathLike[str] | None, env: Mapping[str, str]
) -> tuple[Path, ConfigSource]:
    """Where the config file is and which rule chose it (flag, env, default)."""
    if explicit is not None:
        return Path(explicit), "flag"
    named = env.get(CONFIG_ENV)
    if named:
        return Path(named), "env"
    return platformdirs.user_config_path(APP_NAME) / CONFIG_FILE_NAME, "default"


def load_config(
    explicit: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> UserConfig:
    """Find, read and validate the config file (see the module docstring for the rules)."""
    path, source = config_path(explicit, os.environ if env is None else env)
    where = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        if source == "default":
            return UserConfig(path=None, source=source)
        origin = "--config" if source == "flag" else CONFIG_ENV
        raise ConfigFileError(
            CONFIG_NOT_FOUND, where, f"the config file named by {origin} does not exist"
        ) from None
    except OSError as exc:
        raise ConfigFileError(
            CONFIG_UNREADABLE, where, f"cannot read the config file: {exc.strerror or exc}"
        ) from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigFileError(
            CONFIG_TOO_LARGE, where, f"the config file is larger than {MAX_CONFIG_BYTES} bytes"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigFileError(CONFIG_SYNTAX, where, "the config file is not UTF-8") from None
    return parse_config(text, path=path, source=source)


def parse_config(
    text: str, *, path: Path | None = None, source: ConfigSource = "flag"
) -> UserConfig:
    """Validate config ``text`` (TOML) into a :class:`UserConfig`."""
    where = str(path) if path is not None else "<config>"
    import tomllib  # only with a config file to read (issue 34: start-up costs what it uses)

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(CONFIG_SYNTAX, where, f"not valid TOML: {exc}") from None
    _no_unknown_keys(raw, _TOP_KEYS, where)
    profiles_raw = _table(raw.get("profiles", {}), f"{where}: profiles")
    if len(profiles_raw) > MAX_CUSTOM_PROFILES:
        raise ConfigFileError(
            CONFIG_TOO_MANY, f"{where}: profiles", f"at most {MAX_CUSTOM_PROFILES} profiles"
        )
    profiles: dict[str, Profile] = {}
    override_keys: dict[str, str] = {key: "a built-in profile" for key in BUILTIN_OVERRIDE_KEYS}
    for profile_id, body in profiles_raw.items():
        profile = _parse_profile(profile_id, body, f"{where}: profiles.{profile_id}")
        owner = override_keys.get(profile.override_env)
        if owner is not None:
            raise ConfigFileError(
                CONFIG_DUPLICATE_OVERRIDE_KEY,
                f"{where}: profiles.{profile_id}.override_env",
                f"{profile.override_env} is already the override key of {owner}",
            )
        override_keys[profile.override_env] = f"profile {profile_id}"
        profiles[profile_id] = profile
    known = {*BUILTIN_PROFILES, *profiles}
    executables: dict[str, str] = {}
    for profile_id, value in _table(raw.get("executables", {}), f"{where}: executables").items():
        key_where = f"{where}: executables.{profile_id}"
        if profile_id not in known:
            raise ConfigFileError(
                CONFIG_UNKNOWN_PROFILE, key_where, f"no profile named {profile_id!r}"
            )
        if not isinstance(value, str):
            raise ConfigFileError(CONFIG_WRONG_TYPE, key_where, "must be a string (a path)")
        if not value or len(value) > MAX_EXECUTABLE_CHARS:
            raise ConfigFileError(
                CONFIG_INVALID_VALUE,
                key_where,
                f"must be a non-empty path of at most {MAX_EXECUTABLE_CHARS} characters",
            )
        # A NUL byte is kept here on purpose: the resolver refuses it as a rejected candidate,
        # so `baton doctor` shows the refusal next to the profile it breaks.
        executables[profile_id] = value
    idle_timeout, by_profile = _turns(raw.get("turns", {}), f"{where}: turns", known)
    return UserConfig(
        path=path,
        source=source,
        profiles=profiles,
        executables=executables,
        idle_timeout=idle_timeout,
        profile_idle_timeouts=by_profile,
        store_url=_store_url(raw.get("store", {}), f"{where}: store"),
        workspace_root=_workspace_root(raw.get("workspaces", {}), f"{where}: workspaces"),
        **_service(raw.get("service", {}), f"{where}: service"),
    )


def _service(raw: object, where: str) -> dict[str, Any]:
    """The ``[service]`` table: ``autostart`` (a boolean) and ``idle_stop`` (a bound)."""
    table = _table(raw, where)
    _no_unknown_keys(table, _SERVICE_KEYS, where)
    found: dict[str, Any] = {}
    if "autostart" in table:
        if not isinstance(table["autostart"], bool):
            raise ConfigFileError(CONFIG_WRONG_TYPE, f"{where}.autostart", "must be true or false")
        found["service_autostart"] = table["autostart"]
    if "idle_stop" in table:
        found["service_idle_stop"] = _bound(table["idle_stop"], f"{where}.idle_stop")
    return found


def _workspace_root(raw: object, where: str) -> str | None:
    """The ``[workspaces]`` table's ``root``: an absolute directory (``~`` expanded), or None."""
    table = _table(raw, where)
    _no_unknown_keys(table, _WORKSPACES_KEYS, where)
    value = table.get("root")
    if value is None:
        return None
    if not isinstance(value, str) or not value or "\x00" in value:
        raise ConfigFileError(CONFIG_WRONG_TYPE, f"{where}.root", "must be a path (a string)")
    expanded = os.path.expanduser(value)
    if not os.path.isabs(expanded):
        raise ConfigFileError(CONFIG_INVALID_VALUE, f"{where}.root", "must be an absolute path")
    return expanded


def _turns(
    value: object, where: str, known: set[str]
) -> tuple[BoundSetting, dict[str, float | Literal["off"]]]:
    """The ``[turns]`` table: the idle bound of every turn and of each profile."""
    table = _table(value, where)
    _no_unknown_keys(table, _TURNS_KEYS, where)
    idle: BoundSetting = None
    if "idle_timeout" in table:
        idle = _bound(table["idle_timeout"], f"{where}.idle_timeout")
    by_profile: dict[str, float | Literal["off"]] = {}
    for profile_id, setting in _table(table.get("profiles", {}), f"{where}.profiles").items():
        key_where = f"{where}.profiles.{profile_id}"
        if profile_id not in known:
            raise ConfigFileError(
                CONFIG_UNKNOWN_PROFILE, key_where, f"no profile named {profile_id!r}"
            )
        by_profile[profile_id] = _bound(setting, key_where)
    return idle, by_profile


def _bound(value: object, where: str) -> float | Literal["off"]:
    """A bound setting (positive seconds or "off"), as a config-file error when it is not."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigFileError(
            CONFIG_WRONG_TYPE, where, 'must be a number of seconds or the string "off"'
        )
    try:
        return parse_bound_setting(value, where)
    except TurnBoundInvalid:
        raise ConfigFileError(
            CONFIG_INVALID_VALUE,
            where,
            'must be a positive, finite number of seconds or the string "off"',
        ) from None


def _store_url(raw: object, where: str) -> str | None:
    """The ``[store]`` table's ``url``: a PostgreSQL URL (validated), or None."""
    table = _table(raw, where)
    _no_unknown_keys(table, _STORE_KEYS, where)
    value = table.get("url")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigFileError(CONFIG_WRONG_TYPE, f"{where}.url", "must be a string (a URL)")
    try:
        return check_store_url(value, "config")
    except StoreUrlInvalid as exc:
        raise ConfigFileError(CONFIG_INVALID_VALUE, f"{where}.url", exc.message) from None


# --- one custom profile --------------------------------------------------------------------


def _parse_profile(profile_id: str, body: object, where: str) -> Profile:
    if PROFILE_ID_PATTERN.fullmatch(profile_id) is None:
        raise ConfigFileError(
            CONFIG_BAD_PROFILE_ID,
            where,
            f"profile ids must match {PROFILE_ID_PATTERN.pattern} (lowercase, digits, dashes)",
        )
    if profile_id in BUILTIN_PROFILES:
        raise ConfigFileError(
            CONFIG_SHADOWS_BUILTIN,
            where,
            f"{profile_id!r} is a built-in profile; pick another id (set its executable in "
            "[executables] instead)",
        )
    table = _table(body, where)
    _no_unknown_keys(table, _PROFILE_KEYS, where)
    for key in _REQUIRED_PROFILE_KEYS:
        if key not in table:
            raise ConfigFileError(CONFIG_MISSING_KEY, f"{where}.{key}", "is required")

    argv = _argv(table["argv"], f"{where}.argv")
    if not argv:
        raise ConfigFileError(CONFIG_INVALID_VALUE, f"{where}.argv", "must not be empty")
    name = argv[0]
    if not name or "/" in name:
        raise ConfigFileError(
            CONFIG_INVALID_VALUE,
            f"{where}.argv[0]",
            "must be a command name looked up on PATH; put a path in [executables]",
        )
    version_argv: tuple[str, ...] | None = ("--version",)
    if "version_argv" in table:
        version_argv = _argv(table["version_argv"], f"{where}.version_argv") or None

    override_env = default_override_env(profile_id)
    if "override_env" in table:
        override_env = _string(table["override_env"], f"{where}.override_env")
        if not _is_env_key(override_env):
            raise ConfigFileError(
                CONFIG_BAD_ENV_KEY, f"{where}.override_env", "must be a variable name"
            )

    groups = _groups(table.get("env_groups", []), f"{where}.env_groups")
    keys = _env_keys(table.get("env", []), f"{where}.env")
    sensitive = _env_keys(table.get("sensitive", []), f"{where}.sensitive")
    allowed = set(keys).union(*(g.keys for g in groups))
    stray = sorted(set(sensitive) - allowed)
    if stray:
        raise ConfigFileError(
            CONFIG_SENSITIVE_NOT_ALLOWED,
            f"{where}.sensitive",
            f"{stray} are not in env or env_groups (only allowed keys can be sensitive)",
        )
    # The profile's own keys, plus the sensitive marks it adds (to its keys or a group's).
    own = group(f"config/{profile_id}", (*keys, *sensitive), sensitive)
    environment = compose(f"config/{profile_id}-environment", CUSTOM_CONTRACT_VERSION, *groups, own)

    policies = _policies(table.get("policies", ["ask"]), f"{where}.policies")
    frame_cap = table.get("max_frame_bytes", DEFAULT_MAX_FRAME_BYTES)
    if isinstance(frame_cap, bool) or not isinstance(frame_cap, int):
        raise ConfigFileError(CONFIG_WRONG_TYPE, f"{where}.max_frame_bytes", "must be an integer")
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise ConfigFileError(CONFIG_WRONG_TYPE, f"{where}.strict", "must be true or false")
    display_name = profile_id
    if "display_name" in table:
        display_name = _string(table["display_name"], f"{where}.display_name")
        if not display_name or len(display_name) > MAX_DISPLAY_NAME_CHARS:
            raise ConfigFileError(
                CONFIG_INVALID_VALUE,
                f"{where}.display_name",
                f"must be 1 to {MAX_DISPLAY_NAME_CHARS} characters",
            )
    protocol = AUTO_CHOICE
    if "protocol" in table:
        try:
            protocol = parse_protocol_choice(table["protocol"], source=f"{where}.protocol")
        except InvalidArgument:
            raise ConfigFileError(
                CONFIG_INVALID_VALUE,
                f"{where}.protocol",
                f"must be one of {', '.join(PROTOCOL_CHOICES)} (a string or 1 or 2)",
            ) from None
    v2_support = table.get("v2_support", False)
    if not isinstance(v2_support, bool):
        raise ConfigFileError(CONFIG_WRONG_TYPE, f"{where}.v2_support", "must be true or false")
    protocol = protocol.declaring_v2(v2_support)
    probe = _probe(table, where)
    account = _patterns(
        table.get("account_unsupported_patterns", []),
        f"{where}.account_unsupported_patterns",
        required=False,
    )
    idle_timeout: BoundSetting = None
    if "idle_timeout" in table:
        idle_timeout = _bound(table["idle_timeout"], f"{where}.idle_timeout")
    try:
        return Profile(
            id=profile_id,
            display_name=display_name,
            executables=(name,),
            override_env=override_env,
            launch_argv=argv[1:],
            version_argv=version_argv,
            probe=probe,
            environment=environment,
            allowed_policies=policies,
            max_frame_bytes=frame_cap,
            strict_mode=strict,
            account_unsupported_patterns=account,
            builtin=False,
            protocol=protocol,
            idle_timeout=idle_timeout,
        )
    except ConfigurationError as exc:
        raise ConfigFileError(CONFIG_INVALID_VALUE, where, exc.message) from None


def _probe(table: Mapping[str, Any], where: str) -> LaunchProbe:
    argv = _argv(table["probe_argv"], f"{where}.probe_argv")
    patterns = _patterns(table["probe_patterns"], f"{where}.probe_patterns", required=True)
    return LaunchProbe(argv, patterns)


# --- value helpers -------------------------------------------------------------------------


def _table(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigFileError(CONFIG_WRONG_TYPE, where, "must be a table")
    return value


def _no_unknown_keys(table: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigFileError(
            CONFIG_UNKNOWN_KEY,
            where,
            f"unknown keys {unknown}; allowed: {sorted(allowed)}",
        )


def _string(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigFileError(CONFIG_WRONG_TYPE, where, "must be a string")
    if "\0" in value:
        raise ConfigFileError(CONFIG_INVALID_VALUE, where, "must not contain a NUL byte")
    return value


def _string_list(value: object, where: str, limit: int) -> list[str]:
    if not isinstance(value, list):
        raise ConfigFileError(CONFIG_WRONG_TYPE, where, "must be a list of strings")
    if len(value) > limit:
        raise ConfigFileError(CONFIG_TOO_MANY, where, f"at most {limit} items")
    return [_string(item, f"{where}[{index}]") for index, item in enumerate(value)]


def _argv(value: object, where: str) -> tuple[str, ...]:
    items = _string_list(value, where, MAX_ARGV_ITEMS)
    for index, item in enumerate(items):
        if len(item) > MAX_ARG_CHARS:
            raise ConfigFileError(
                CONFIG_INVALID_VALUE, f"{where}[{index}]", f"longer than {MAX_ARG_CHARS} chars"
            )
    return tuple(items)


def _is_env_key(key: str) -> bool:
    return len(key) <= MAX_ENV_KEY_CHARS and ENV_KEY_PATTERN.fullmatch(key) is not None


def _env_keys(value: object, where: str) -> tuple[str, ...]:
    keys = _string_list(value, where, MAX_ENV_KEYS)
    for index, key in enumerate(keys):
        if not _is_env_key(key):
            raise ConfigFileError(
                CONFIG_BAD_ENV_KEY,
                f"{where}[{index}]",
                f"{key[:MAX_ENV_KEY_CHARS]!r} is not an exact variable name (no wildcards, "
                "no prefixes)",
            )
        if key.startswith(RESERVED_KEY_PREFIX):
            raise ConfigFileError(
                CONFIG_RESERVED_ENV_KEY,
                f"{where}[{index}]",
                f"{key} is one of Baton's own inputs and is never passed to an agent",
            )
    return tuple(keys)


def _groups(value: object, where: str) -> tuple[KeyGroup, ...]:
    names = _string_list(value, where, len(SHARED_GROUPS))
    groups: list[KeyGroup] = []
    for index, name in enumerate(names):
        found = SHARED_GROUPS.get(name)
        if found is None:
            raise ConfigFileError(
                CONFIG_UNKNOWN_GROUP,
                f"{where}[{index}]",
                f"no environment group {name!r}; known: {sorted(SHARED_GROUPS)}",
            )
        groups.append(found)
    return tuple(groups)


def _patterns(value: object, where: str, *, required: bool) -> tuple[re.Pattern[str], ...]:
    sources = _string_list(value, where, MAX_PATTERNS)
    if required and not sources:
        raise ConfigFileError(CONFIG_BAD_PATTERN, where, "at least one pattern is required")
    compiled: list[re.Pattern[str]] = []
    for index, source in enumerate(sources):
        if not source or len(source) > MAX_PATTERN_CHARS:
            raise ConfigFileError(
                CONFIG_BAD_PATTERN, f"{where}[{index}]", f"must be 1 to {MAX_PATTERN_CHARS} chars"
            )
        try:
            compiled.append(re.compile(source, re.IGNORECASE))
        except re.error as exc:
            raise ConfigFileError(
                CONFIG_BAD_PATTERN, f"{where}[{index}]", f"not a valid regular expression: {exc}"
            ) from None
    return tuple(compiled)


def _policies(value: object, where: str) -> tuple[Policy, ...]:
    names = _string_list(value, where, len(ALL_POLICIES))
    chosen: list[Policy] = []
    for index, name in enumerate(names):
        policy = next((p for p in ALL_POLICIES if p == name), None)
        if policy is None:
            raise ConfigFileError(
                CONFIG_BAD_POLICY,
                f"{where}[{index}]",
                f"unknown policy {name!r}; choose from {list(ALL_POLICIES)}",
            )
        if policy not in chosen:
            chosen.append(policy)
    if "ask" not in chosen:
        raise ConfigFileError(CONFIG_BAD_POLICY, where, "must include 'ask'")
    return tuple(chosen)
