"""Issue 20's features against the newest real adapters, without credentials.

The feature captures (record_features.py) are re-recorded and compared with the committed ones
in tests/fixtures/adapters, and what can be checked through Baton's real profiles without a
sign-in is: the ``--add-dir`` gate (sent where advertised, refused before anything is sent
where not), session/list through ``baton sessions --remote``, and a signed-out v2 turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pytest
from qualify_checks import aftermath
from qualify_drivers import (
    EXIT_AUTH,
    SPECS,
    AdapterSpec,
    Baton,
    Outcome,
    Rig,
    codex_config,
    journal_messages,
    reap,
)
from qualify_installs import CLAUDE_NEWEST, CODEX_NEWEST, FAST_AGENT, Pin
from record_features import FIXTURES, capture_all, compare

#: Exit status of a usage or configuration error (a gate refused before anything was sent).
EXIT_USAGE: Final = 2


class SignedOutClaude(AdapterSpec):
    """The newest claude-agent-acp with throw-away config and no key."""

    pin = CLAUDE_NEWEST

    def prepare(self, rig: Rig) -> None:
        """Only its config directory (in the claude environment contract)."""
        config_dir = rig.root / "claude-config"
        config_dir.mkdir(exist_ok=True)
        rig.env["CLAUDE_CONFIG_DIR"] = str(config_dir)


class SignedOutCodex(AdapterSpec):
    """The newest codex-acp with a throw-away CODEX_HOME, OpenAI's own provider and no key."""

    pin = CODEX_NEWEST

    def prepare(self, rig: Rig) -> None:
        """CODEX_HOME (it must exist before start) with a config naming no mock provider."""
        codex_home = rig.root / "codex-home"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(codex_config(None))
        rig.env["CODEX_HOME"] = str(codex_home)


def _check_capture(pin: Pin, tmp_path: Path) -> None:
    files = capture_all(pin)
    drift = [d for name, doc in files.items() for d in compare(doc, FIXTURES / pin.key / name)]
    assert not drift, f"{pin.key} no longer answers like its feature captures:\n" + "\n".join(drift)


def _session_new_params(baton: Baton, run_id: str) -> dict[str, Any]:
    server = baton.show(run_id)["serverInstanceId"]
    for direction, message in journal_messages(baton.journal(server)):
        if direction == "outbound" and message.get("method") == "session/new":
            params: dict[str, Any] = message["params"]
            return params
    raise AssertionError(f"no session/new in the journal of {server}")


def _listed(outcome: Outcome) -> list[str]:
    assert outcome.returncode == 0, outcome.describe()
    return [str(row["sessionId"]) for row in outcome.events()]


@pytest.mark.qualify(CLAUDE_NEWEST.key, "features: fresh capture (protocol 1 and auto) matches")
def test_claude_feature_capture(tmp_path: Path) -> None:
    _check_capture(CLAUDE_NEWEST, tmp_path)


@pytest.mark.qualify(CODEX_NEWEST.key, "features: fresh capture (protocol 1 and auto) matches")
def test_codex_feature_capture(tmp_path: Path) -> None:
    _check_capture(CODEX_NEWEST, tmp_path)


@pytest.mark.qualify("fast-agent", "features: fresh capture (protocol 1 and auto) matches")
def test_fast_agent_feature_capture(tmp_path: Path) -> None:
    _check_capture(FAST_AGENT, tmp_path)


@pytest.mark.qualify(
    CLAUDE_NEWEST.key,
    "signed out, --protocol 2 (v2): --add-dir sent, turn AUTHENTICATION_REQUIRED (exit 4), "
    "sessions --remote lists it",
)
def test_claude_add_dir_and_session_list(tmp_path: Path) -> None:
    rig = SignedOutClaude().rig(tmp_path / "claude", None)
    baton = Baton(rig)
    extra = rig.root / "extra"
    extra.mkdir()
    try:
        # The claude profile pins ACP 1 (subagents) and auto offers 1 (issue 29); this step
        # checks the v2 signed-out turn, so it opts in to the draft.
        outcome = baton.run("Say hello.", "--add-dir", str(extra), "--protocol", "2")
        result = outcome.result()
        assert outcome.returncode == EXIT_AUTH, outcome.describe()
        # v2: acknowledged, then idle with the error stop reason carrying -32000.
        assert result["errorCode"] == "AUTHENTICATION_REQUIRED", outcome.describe()
        assert result["stopReason"] == "error", outcome.describe()
        assert any(e.get("state") == "idle" for e in outcome.of_type("state")), outcome.describe()
        params = _session_new_params(baton, result["runId"])
        assert params.get("additionalDirectories") == [str(extra.resolve())], params
        listed = baton.command(
            "sessions", "--remote", "--agent", "claude", "--json", "--data-dir", str(rig.data)
        )
        assert result["providerSessionId"] in _listed(listed), listed.describe()
        aftermath(baton, CLAUDE_NEWEST)
    finally:
        reap(CLAUDE_NEWEST, rig.home)


@pytest.mark.qualify(
    "fast-agent",
    "--add-dir refused before anything is sent (not advertised; exit 2), "
    "sessions --remote lists through session/list",
)
def test_fast_agent_add_dir_refused_and_session_list(tmp_path: Path) -> None:
    rig = SPECS["fast-agent"].rig(tmp_path / "fast-agent", None)
    baton = Baton(rig)
    extra = rig.root / "extra"
    extra.mkdir()
    try:
        refused = baton.run("Say hello.", "--add-dir", str(extra), "--config", str(rig.config))
        assert refused.returncode == EXIT_USAGE, refused.describe()
        assert "CAPABILITY_NOT_ADVERTISED" in refused.stdout + refused.stderr, refused.describe()
        assert "sessionCapabilities.additionalDirectories" in refused.stdout + refused.stderr
        done = baton.run("Say hello.", "--config", str(rig.config))
        result = done.result()
        assert done.returncode == 0, done.describe()
        listed = baton.command(
            "sessions",
            "--remote",
            "--agent",
            "fast-agent",
            "--json",
            "--config",
            str(rig.config),
            "--data-dir",
            str(rig.data),
        )
        assert result["providerSessionId"] in _listed(listed), listed.describe()
        aftermath(baton, FAST_AGENT)
    finally:
        reap(FAST_AGENT, rig.home)


@pytest.mark.qualify(
    CODEX_NEWEST.key,
    "signed out through the codex profile: doctor finds it (probe --version), run and "
    "sessions --remote AUTHENTICATION_REQUIRED (exit 4)",
)
def test_codex_profile_launches_the_newest_codex_signed_out(tmp_path: Path) -> None:
    rig = SignedOutCodex().rig(tmp_path / "codex", None)
    baton = Baton(rig)
    extra = rig.root / "extra"
    extra.mkdir()
    try:
        found = baton.command("doctor", "codex", "--json", "--data-dir", str(rig.data))
        assert "AGENT_NOT_INSTALLED" not in found.stdout, found.describe()
        outcome = baton.run("Say hello.", "--add-dir", str(extra))
        assert outcome.returncode == EXIT_AUTH, outcome.describe()
        assert outcome.result()["errorCode"] == "AUTHENTICATION_REQUIRED", outcome.describe()
        listed = baton.command(
            "sessions", "--remote", "--agent", "codex", "--json", "--data-dir", str(rig.data)
        )
        assert listed.returncode == EXIT_AUTH, listed.describe()
        assert "AUTHENTICATION_REQUIRED" in listed.stdout + listed.stderr, listed.describe()
        aftermath(baton, CODEX_NEWEST)
    finally:
        reap(CODEX_NEWEST, rig.home)
