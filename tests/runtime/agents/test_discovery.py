"""Discovery: candidates, version command and launch-contract probe, bounds, redaction, cache."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import pytest

from baton.runtime.agents import discovery as d
from baton.runtime.agents.discovery import DiscoveryCache, discover, run_bounded
from baton.runtime.agents.environment import PROBE_ENVIRONMENT_KEYS
from baton.runtime.agents.profiles import (
    BUILTIN_PROFILES,
    CLAUDE,
    CODEX,
    CURSOR,
    GROK,
    OPENCODE,
    Profile,
)

_SUPPORT = Path(__file__).parents[1] / "fakes" / "support.py"
_spec = importlib.util.spec_from_file_location("baton_runtime_fakes_support", _SUPPORT)
assert _spec is not None and _spec.loader is not None
fakes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fakes)

#: A short probe timeout keeps the hanging-probe tests quick; the bound is what is tested.
SHORT = 1.0


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    path = tmp_path / "bin"
    path.mkdir()
    return path


def env_for(bin_dir: Path, **extra: str) -> dict[str, str]:
    return fakes.parent_env(bin_dir, bin_dir.parent, **extra)


@pytest.mark.parametrize("profile", list(BUILTIN_PROFILES.values()), ids=list(BUILTIN_PROFILES))
async def test_every_profile_is_discovered(bin_dir: Path, profile: Profile) -> None:
    path = fakes.make_fake(bin_dir, profile.id)
    result = await discover(profile, parent_env=env_for(bin_dir))
    assert result.found, result.rejected
    assert result.selected == str(path)
    assert result.source == "path"
    assert result.launch_argv == (str(path), *profile.launch_argv)
    assert result.rejected == ()
    assert result.explicit is False
    assert result.fingerprint is not None
    if profile.version_argv is None:
        assert result.version is None
    else:
        assert result.version and result.version != ""


async def test_versions_are_the_first_non_empty_line(bin_dir: Path) -> None:
    fakes.make_fake(bin_dir, "claude")
    result = await discover(CLAUDE, parent_env=env_for(bin_dir))
    assert result.version == "2.1.83 (Claude Code)"


async def test_an_npm_adapter_shows_its_own_version_before_the_bundled_cli(
    bin_dir: Path, tmp_path: Path
) -> None:
    # npm's layout: bin/claude-agent-acp -> ../lib/node_modules/@scope/pkg/dist/index.js, the
    # package's manifest at its root. `--cli --version` prints Claude Code's version; the
    # adapter's is the manifest's (issue 30, item 8).
    package = tmp_path / "lib" / "node_modules" / "@agentclientprotocol" / "claude-agent-acp"
    entry = fakes.make_fake(package / "dist", "claude", name="index.js")
    (package / "package.json").write_text(
        json.dumps({"name": "@agentclientprotocol/claude-agent-acp", "version": "0.23.1"}),
        encoding="utf-8",
    )
    (bin_dir / "claude-agent-acp").symlink_to(entry)
    result = await discover(CLAUDE, parent_env=env_for(bin_dir))
    assert result.found, result.rejected
    assert result.version == "claude-agent-acp 0.23.1, bundled 2.1.83 (Claude Code)"


async def test_a_manifest_of_another_package_is_not_the_adapters(
    bin_dir: Path, tmp_path: Path
) -> None:
    package = tmp_path / "lib" / "node_modules" / "something-else"
    entry = fakes.make_fake(package / "dist", "claude", name="index.js")
    (package / "package.json").write_text(
        json.dumps({"name": "something-else", "version": "9.9.9"}), encoding="utf-8"
    )
    (bin_dir / "claude-agent-acp").symlink_to(entry)
    result = await discover(CLAUDE, parent_env=env_for(bin_dir))
    assert result.version == "2.1.83 (Claude Code)"


async def test_codex_has_no_version_command(bin_dir: Path) -> None:
    # The fake, like codex-acp 0.16.0, exits 2 on --version: discovery must not run it.
    fakes.make_fake(bin_dir, "codex")
    result = await discover(CODEX, parent_env=env_for(bin_dir))
    assert result.found and result.version is None


async def test_not_installed(bin_dir: Path) -> None:
    result = await discover(CLAUDE, parent_env=env_for(bin_dir))
    assert not result.found
    assert result.rejected == ()
    assert result.searched == ("claude-agent-acp",)
    assert result.launch_form is None


async def test_generic_agent_on_path_is_never_run(bin_dir: Path) -> None:
    marker = bin_dir.parent / "ran"
    agent = bin_dir / "agent"
    agent.write_text(f"#!/bin/sh\ntouch {marker}\necho 'Usage: agent acp'\n", encoding="utf-8")
    agent.chmod(0o755)
    result = await discover(CURSOR, parent_env=env_for(bin_dir))
    assert not result.found
    assert not marker.exists()


async def test_generic_agent_when_configured_explicitly(bin_dir: Path) -> None:
    path = fakes.make_fake(bin_dir, "cursor", name="agent")
    env = env_for(bin_dir, BATON_CURSOR_AGENT_ACP_BIN="agent")
    result = await discover(CURSOR, parent_env=env)
    assert result.selected == str(path)
    assert result.source == "env"
    assert result.explicit and result.override_origin == "BATON_CURSOR_AGENT_ACP_BIN"


async def test_config_override(bin_dir: Path, tmp_path: Path) -> None:
    elsewhere = fakes.make_fake(tmp_path / "opt", "claude")
    result = await discover(CLAUDE, parent_env=env_for(bin_dir), config_override=str(elsewhere))
    assert result.selected == str(elsewhere)
    assert result.source == "config" and result.override_origin == "config"


async def test_env_override_beats_config(bin_dir: Path, tmp_path: Path) -> None:
    by_env = fakes.make_fake(tmp_path / "env", "claude")
    by_config = fakes.make_fake(tmp_path / "cfg", "claude")
    env = env_for(bin_dir, BATON_CLAUDE_AGENT_ACP_BIN=str(by_env))
    result = await discover(CLAUDE, parent_env=env, config_override=str(by_config))
    assert result.selected == str(by_env) and result.source == "env"


async def test_explicit_override_never_falls_back(bin_dir: Path, tmp_path: Path) -> None:
    fakes.make_fake(bin_dir, "claude")  # a good one on PATH
    missing = tmp_path / "nowhere" / "claude-agent-acp"
    env = env_for(bin_dir, BATON_CLAUDE_AGENT_ACP_BIN=str(missing))
    result = await discover(CLAUDE, parent_env=env)
    assert not result.found
    assert [r.reason for r in result.rejected] == [d.EXECUTABLE_NOT_FOUND]
    assert result.explicit


async def test_override_name_not_on_path(bin_dir: Path) -> None:
    env = env_for(bin_dir, BATON_GROK_ACP_BIN="grok-nightly")
    result = await discover(GROK, parent_env=env)
    assert [r.reason for r in result.rejected] == [d.EXECUTABLE_NOT_FOUND]


async def test_nul_byte_is_refused(bin_dir: Path) -> None:
    result = await discover(CLAUDE, parent_env=env_for(bin_dir), config_override="/opt/a\0b")
    assert [r.reason for r in result.rejected] == [d.EXECUTABLE_PATH_REFUSED]
    assert result.rejected[0].path == "/opt/a\\0b"


async def test_relative_override_is_made_absolute(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.make_fake(bin_dir, "claude")
    monkeypatch.chdir(bin_dir.parent)
    result = await discover(
        CLAUDE, parent_env=env_for(bin_dir), config_override="bin/claude-agent-acp"
    )
    assert result.selected == str(bin_dir / "claude-agent-acp")


@pytest.mark.parametrize("kind", ["not-executable", "directory", "no-shebang"])
async def test_not_executable(tmp_path: Path, bin_dir: Path, kind: str) -> None:
    target = tmp_path / "thing"
    if kind == "directory":
        target.mkdir()
    else:
        target.write_bytes(b"\x00\x01garbage\n")
        target.chmod(0o644 if kind == "not-executable" else 0o755)
    result = await discover(CLAUDE, parent_env=env_for(bin_dir), config_override=str(target))
    assert [r.reason for r in result.rejected] == [d.EXECUTABLE_NOT_EXECUTABLE]


async def test_wrong_help_is_a_contract_mismatch(bin_dir: Path) -> None:
    fakes.make_fake(bin_dir, "claude", "wrong-help")
    result = await discover(CLAUDE, parent_env=env_for(bin_dir))
    (rejection,) = result.rejected
    assert rejection.reason == d.LAUNCH_CONTRACT_MISMATCH
    assert "some-other-tool" in rejection.detail
    assert "Usage" in rejection.detail


@pytest.mark.parametrize("mode", ["version-fail", "version-empty"])
async def test_version_command_must_succeed(bin_dir: Path, mode: str) -> None:
    fakes.make_fake(bin_dir, "grok", mode)
    result = await discover(GROK, parent_env=env_for(bin_dir))
    assert [r.reason for r in result.rejected] == [d.VERSION_COMMAND_FAILED]


async def test_version_alone_proves_nothing(bin_dir: Path) -> None:
    # A program that answers --version but is not the agent (its help is someone else's).
    fakes.make_fake(bin_dir, "opencode", "wrong-help")
    result = await discover(OPENCODE, parent_env=env_for(bin_dir))
    assert not result.found
    assert result.rejected[0].reason == d.LAUNCH_CONTRACT_MISMATCH


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _exists(path: str) -> bool:
    return os.path.exists(path)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


async def test_a_hanging_probe_is_bounded_and_its_group_killed(bin_dir: Path) -> None:
    pidfile = bin_dir.parent / "pids"
    fakes.make_fake(bin_dir, "claude", f"hang-help:{pidfile}")
    result = await discover(CLAUDE, parent_env=env_for(bin_dir), timeout=SHORT)
    (rejection,) = result.rejected
    assert rejection.reason == d.PROBE_TIMEOUT
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2
    # discover() returns only after the whole group is gone (zombies count as gone).
    assert not any(_alive(p) for p in pids)


async def test_a_hanging_version_command_is_bounded(bin_dir: Path) -> None:
    fakes.make_fake(bin_dir, "gemini", "hang-version")
    result = await discover(BUILTIN_PROFILES["gemini"], parent_env=env_for(bin_dir), timeout=SHORT)
    assert [r.reason for r in result.rejected] == [d.PROBE_TIMEOUT]


async def test_output_is_bounded(bin_dir: Path) -> None:
    fakes.make_fake(bin_dir, "claude", "flood")
    result = await discover(CLAUDE, parent_env=env_for(bin_dir))
    assert [r.reason for r in result.rejected] == [d.PROBE_OUTPUT_TOO_LARGE]


async def test_run_bounded_caps_both_streams_together(tmp_path: Path) -> None:
    script = "import sys; sys.stdout.write('a' * 700); sys.stderr.write('b' * 700)"
    out = await run_bounded(
        [sys.executable, "-c", script], env={}, cwd=str(tmp_path), max_output=1000
    )
    assert out.overflowed and out.exit_code is None
    assert len(out.stdout) + len(out.stderr) == 1000


async def test_run_bounded_reports_exit_and_output(tmp_path: Path) -> None:
    script = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(7)"
    out = await run_bounded([sys.executable, "-c", script], env={}, cwd=str(tmp_path))
    assert out.exit_code == 7 and not out.timed_out and not out.overflowed
    assert out.stdout == "out\n" and out.stderr == "err\n"
    assert "out" in out.combined and "err" in out.combined


async def test_probe_output_on_stderr_counts(bin_dir: Path) -> None:
    fakes.make_fake(bin_dir, "opencode", "stderr-help")
    assert (await discover(OPENCODE, parent_env=env_for(bin_dir))).found


async def test_patterns_may_match_across_stdout_and_stderr(bin_dir: Path) -> None:
    fakes.make_fake(bin_dir, "grok", "split-help")
    assert (await discover(GROK, parent_env=env_for(bin_dir))).found


async def test_a_secret_printed_by_a_probe_does_not_leak(bin_dir: Path) -> None:
    secret = fakes.fake_secret()
    fakes.make_fake(bin_dir, "grok", "secret")
    result = await discover(GROK, parent_env=env_for(bin_dir))
    assert result.found
    assert result.version is not None and secret not in result.version
    assert "[REDACTED]" in result.version
    fakes.make_fake(bin_dir, "grok", "secret,wrong-help")
    result = await discover(GROK, parent_env=env_for(bin_dir))
    (rejection,) = result.rejected
    assert secret not in rejection.detail and "[REDACTED]" in rejection.detail


async def test_exact_secrets_are_redacted_too(bin_dir: Path, tmp_path: Path) -> None:
    tool = bin_dir / "claude-agent-acp"
    tool.write_text("#!/bin/sh\necho 'my-own-password-1234 is not claude'\n", encoding="utf-8")
    tool.chmod(0o755)
    result = await discover(CLAUDE, parent_env=env_for(bin_dir), secrets=["my-own-password-1234"])
    assert "my-own-password-1234" not in result.rejected[0].detail


async def test_probes_get_a_credential_free_environment(bin_dir: Path) -> None:
    dump = bin_dir.parent / "env.json"
    fakes.make_fake(bin_dir, "claude", f"envdump:{dump}")
    env = env_for(
        bin_dir,
        ANTHROPIC_API_KEY="sk-ant-parent-secret",
        HTTPS_PROXY="http://u:p@proxy",
        BATON_CLAUDE_AGENT_ACP_BIN=str(bin_dir / "claude-agent-acp"),
        TMP="/tmp",
        LC_CTYPE="C.UTF-8",
    )
    result = await discover(CLAUDE, parent_env=env)
    assert result.found
    seen = json.loads(dump.read_text())
    allowed = set(PROBE_ENVIRONMENT_KEYS)
    # The interpreter may add a few variables of its own (LC_CTYPE coercion); nothing else.
    assert set(seen) - allowed <= {"PWD", "SHLVL", "_"}
    assert "ANTHROPIC_API_KEY" not in seen and "HTTPS_PROXY" not in seen
    assert "BATON_CLAUDE_AGENT_ACP_BIN" not in seen
    assert seen["TMP"] == "/tmp"


async def test_probes_run_in_an_empty_temporary_directory(bin_dir: Path) -> None:
    dump = bin_dir.parent / "env.json"
    tool = bin_dir / "claude-agent-acp"
    tool.write_text(
        f"#!/bin/sh\nls -A > {dump}.ls\npwd > {dump}.pwd\necho 'Usage: claude'\n",
        encoding="utf-8",
    )
    tool.chmod(0o755)
    result = await discover(CLAUDE, parent_env=env_for(bin_dir))
    assert result.found
    cwd = _read(f"{dump}.pwd").strip()
    assert cwd != os.getcwd() and "baton-probe-" in cwd
    assert _read(f"{dump}.ls") == ""
    assert not _exists(cwd)


async def test_later_path_candidate_after_a_rejected_one(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    fakes.make_fake(first, "claude", "wrong-help")
    good = fakes.make_fake(second, "claude")
    env = fakes.parent_env(first, tmp_path)
    env["PATH"] = f"{first}{os.pathsep}{second}"
    result = await discover(CLAUDE, parent_env=env)
    assert result.selected == str(good)
    assert [r.path for r in result.rejected] == [str(first / "claude-agent-acp")]


async def test_symlinked_duplicates_are_probed_once(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    real = fakes.make_fake(first, "claude", "wrong-help")
    second.mkdir()
    (second / "claude-agent-acp").symlink_to(real)
    env = fakes.parent_env(first, tmp_path)
    env["PATH"] = f"{first}{os.pathsep}{second}"
    result = await discover(CLAUDE, parent_env=env)
    assert len(result.rejected) == 1


async def test_relative_path_entries_are_skipped(
    bin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.make_fake(bin_dir, "claude")
    monkeypatch.chdir(bin_dir)
    env = fakes.parent_env(bin_dir, bin_dir.parent)
    env["PATH"] = f".{os.pathsep}{os.pathsep}bin"
    result = await discover(CLAUDE, parent_env=env)
    assert not result.found


async def test_candidates_are_bounded(tmp_path: Path) -> None:
    dirs = [tmp_path / f"d{i}" for i in range(d.MAX_CANDIDATES + 2)]
    for path in dirs:
        fakes.make_fake(path, "codex", "wrong-help")
    env = fakes.parent_env(dirs[0], tmp_path)
    env["PATH"] = os.pathsep.join(str(p) for p in dirs)
    result = await discover(CODEX, parent_env=env)
    assert len(result.rejected) == d.MAX_CANDIDATES


# --- the cache ------------------------------------------------------------------------------


async def test_cache_reuses_until_something_changes(bin_dir: Path, tmp_path: Path) -> None:
    cache = DiscoveryCache()
    path = fakes.make_fake(bin_dir, "claude")
    env = env_for(bin_dir)
    first = await cache.discover(CLAUDE, parent_env=env)
    again = await cache.discover(CLAUDE, parent_env=env)
    assert again is first and cache.probe_runs == 1
    assert cache.cached("claude") is first

    # Replacing the executable (a rebuild) invalidates.
    fakes.make_fake(bin_dir, "claude", "wrong-help")
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
    changed = await cache.discover(CLAUDE, parent_env=env)
    assert cache.probe_runs == 2 and not changed.found

    # Changing the saved executable invalidates.
    other = fakes.make_fake(tmp_path / "other", "claude")
    saved = await cache.discover(CLAUDE, parent_env=env, config_override=str(other))
    assert cache.probe_runs == 3 and saved.selected == str(other)
    assert saved.fingerprint != first.fingerprint
    assert await cache.discover(CLAUDE, parent_env=env, config_override=str(other)) is saved

    # An explicit invalidation too.
    cache.invalidate("claude")
    await cache.discover(CLAUDE, parent_env=env, config_override=str(other))
    assert cache.probe_runs == 4
    cache.invalidate()
    assert cache.cached("claude") is None


async def test_cache_notices_a_newly_installed_executable(bin_dir: Path) -> None:
    cache = DiscoveryCache()
    env = env_for(bin_dir)
    assert not (await cache.discover(CLAUDE, parent_env=env)).found
    fakes.make_fake(bin_dir, "claude")
    assert (await cache.discover(CLAUDE, parent_env=env)).found
    assert cache.probe_runs == 2


async def test_cache_honours_its_bounds(bin_dir: Path) -> None:
    cache = DiscoveryCache(timeout=SHORT)
    fakes.make_fake(bin_dir, "claude", "hang-version")
    result = await cache.discover(CLAUDE, parent_env=env_for(bin_dir))
    assert [r.reason for r in result.rejected] == [d.PROBE_TIMEOUT]
