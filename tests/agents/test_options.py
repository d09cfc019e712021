"""Flags, capability forms and profiles (pure: no process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.agents.scripted.app import build_parser, main
from baton.agents.scripted.options import (
    apply_capability,
    default_state_dir,
    is_advertised,
    options_from_namespace,
)
from baton.agents.scripted.profiles import PROFILE_NAMES, profile_options
from baton.errors import ConfigurationError


def options(*argv: str):  # type: ignore[no-untyped-def]
    return options_from_namespace(build_parser().parse_args(argv))


def test_defaults_come_from_the_profile_and_flags_override() -> None:
    codex = options("--profile", "codex")
    assert (codex.request_ids, codex.exit_on_eof, codex.reject_ends_turn) == ("uuid", False, True)
    changed = options(
        "--profile", "codex", "--request-ids", "int", "--eof", "exit", "--no-reject-ends-turn"
    )
    assert (changed.request_ids, changed.exit_on_eof, changed.reject_ends_turn) == (
        "int",
        True,
        False,
    )
    assert options().profile == "baton"
    assert set(PROFILE_NAMES) == {"baton", "claude", "codex", "fast-agent", "grok", "cursor"}


def test_capability_forms() -> None:
    base = {"a": {"b": {}}, "c": True}
    assert apply_capability(base, "a.b=omit") == {"a": {}, "c": True}
    assert apply_capability(base, "a.b=false") == {"a": {"b": False}, "c": True}
    assert apply_capability(base, "x.y={}") == {"a": {"b": {}}, "c": True, "x": {"y": {}}}
    assert apply_capability(base, "c=null") == {"a": {"b": {}}, "c": None}
    assert apply_capability(base, "nope.deeper=omit") == base
    assert base == {"a": {"b": {}}, "c": True}  # copies, never edits
    for bad in ["a.b", "=true", "a..b=true", "a=tru"]:
        with pytest.raises(ConfigurationError):
            apply_capability(base, bad)


def test_is_advertised() -> None:
    caps = {"t": True, "f": False, "n": None, "o": {}, "nested": {"x": {"y": 1}}}
    assert [is_advertised(caps, k) for k in ["t", "f", "n", "o", "missing"]] == [
        True,
        False,
        False,
        True,
        False,
    ]
    assert is_advertised(caps, "nested.x.y") and not is_advertised(caps, "t.deeper")


def test_bad_flags(tmp_path: Path) -> None:
    for argv in [
        ("--protocol-version", "-1"),
        ("--protocol-version", "70000"),
        ("--max-frame-bytes", "10"),
        ("--auth-method", ":agent"),
    ]:
        with pytest.raises(ConfigurationError):
            options(*argv)
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(ConfigurationError):
        options("--state-dir", str(file))
    assert main(["--cap", "broken"]) == 2


def test_the_default_state_dir_is_the_users_cache(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    assert default_state_dir({"XDG_CACHE_HOME": str(xdg)}) == xdg / "baton" / "scripted-agent"
    assert (xdg / "baton" / "scripted-agent").stat().st_mode & 0o777 == 0o700
    home = tmp_path / "home"
    fallback = default_state_dir({"XDG_CACHE_HOME": "relative", "HOME": str(home)})
    assert fallback == home / ".cache" / "baton" / "scripted-agent"
    assert default_state_dir({}) is None and default_state_dir({"HOME": "rel"}) is None
    blocked = tmp_path / "blocked"
    blocked.write_text("")  # a file where the cache directory should be: memory only
    assert default_state_dir({"XDG_CACHE_HOME": str(blocked)}) is None


def test_state_dir_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert options().state_dir == tmp_path / "cache" / "baton" / "scripted-agent"
    assert options("--no-state-dir").state_dir is None
    assert options("--state-dir", str(tmp_path / "s")).state_dir == tmp_path / "s"
    with pytest.raises(ConfigurationError, match="exclude each other"):
        options("--state-dir", str(tmp_path / "s"), "--no-state-dir")


def test_startup_delay_is_bounded() -> None:
    assert options().startup_delay == 0.0
    assert options("--startup-delay", "1.5").startup_delay == 1.5
    assert options("--startup-delay", "60").startup_delay == 60.0
    for bad in ("-1", "60.5", "soon", "nan"):
        with pytest.raises(ConfigurationError, match="--startup-delay"):
            options("--startup-delay", bad)


def test_profiles_are_fresh_objects() -> None:
    first = profile_options("baton")
    first.capabilities["loadSession"] = False
    assert profile_options("baton").capabilities["loadSession"] is True
    with pytest.raises(ConfigurationError):
        profile_options("nope")
