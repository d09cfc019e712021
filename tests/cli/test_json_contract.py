"""One JSON contract: --json on every verb, camelCase keys, a schema version; run ids by
unique prefix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.cli import exit_codes
from baton.views.contract import SCHEMA_VERSION, camel_key

from .helpers import AGENT, baton, json_lines

OPAQUE = {"content", "toolCall", "offeredOptions", "payload", "nativeState"}


def snake_keys(value: Any, path: str = "") -> list[str]:
    """Keys with an inner underscore, outside the agent payloads kept verbatim."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if "_" in key.strip("_"):
                found.append(f"{path}.{key}")
            if key not in OPAQUE:
                found += snake_keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            found += snake_keys(item, path)
    return found


def test_camel_key() -> None:
    assert camel_key("server_instance_id") == "serverInstanceId"
    assert camel_key("runId") == "runId" and camel_key("_meta") == "_meta"


def test_every_verb_speaks_the_same_json(tmp_path: Path) -> None:
    first = json_lines(
        baton(tmp_path, "run", "--agent-command", AGENT, "--json", "echo hi; crash 9").stdout
    )
    run_id = first[-1]["runId"]
    assert first[-1]["schemaVersion"] == SCHEMA_VERSION
    documents = [
        *json_lines(baton(tmp_path, "runs", "--json").stdout),
        *json_lines(baton(tmp_path, "show", run_id, "--json").stdout),
        *json_lines(baton(tmp_path, "recover", run_id, "--json").stdout),
        *json_lines(baton(tmp_path, "journal", "verify", run_id, "--json").stdout),
        *json_lines(baton(tmp_path, "journal", "show", run_id, "--json").stdout),
    ]
    assert len(documents) >= 5
    for document in documents:
        assert document["schemaVersion"] == SCHEMA_VERSION, document
        assert snake_keys(document) == [], document
    shown = json_lines(baton(tmp_path, "show", run_id, "--json").stdout)[0]
    assert shown["status"] == "RECOVERY_REQUIRED" and shown["agent"] == "custom"
    assert shown["serverInstance"]["state"] == "LOST"


def test_journal_verify_json(tmp_path: Path) -> None:
    baton(tmp_path, "run", "--agent-command", AGENT, "echo hi")
    done = baton(tmp_path, "journal", "verify", "--all", "--json")
    assert done.returncode == 0
    [report] = json_lines(done.stdout)
    assert report["ok"] is True and report["error"] is None
    assert report["servers"][0]["records"] > 0 and report["citedReferences"] > 0


def test_run_ids_by_unique_prefix(tmp_path: Path) -> None:
    for _ in range(2):
        assert baton(tmp_path, "run", "--agent-command", AGENT, "echo hi").returncode == 0
    ids = [r["id"] for r in json_lines(baton(tmp_path, "runs", "--json").stdout)]
    a, b = ids
    common = 4
    while a[: common + 1] == b[: common + 1]:
        common += 1
    unique = a[: common + 1]
    for verb in (["show"], ["recover"], ["journal", "show"], ["journal", "verify"]):
        done = baton(tmp_path, *verb, unique)
        assert done.returncode == 0, (verb, done.stderr)
    shown = json_lines(baton(tmp_path, "show", unique[4:], "--json").stdout)[0]
    assert shown["id"] == a  # without the run- prefix too
    ambiguous = baton(tmp_path, "show", a[:common])
    assert ambiguous.returncode == exit_codes.USAGE
    assert (
        "RUN_ID_AMBIGUOUS" in ambiguous.stderr and a in ambiguous.stderr and b in ambiguous.stderr
    )
    missing = baton(tmp_path, "show", "run-zzzz")
    assert missing.returncode == exit_codes.USAGE and "RUN_NOT_FOUND" in missing.stderr


def test_runs_columns_and_limit(tmp_path: Path) -> None:
    for text in ("echo one", "echo two", "echo three"):
        baton(tmp_path, "run", "--agent-command", AGENT, text)
    table = baton(tmp_path, "runs", "--limit", "2").stdout.splitlines()
    assert table[0].split()[:5] == ["RUN", "STATUS", "STOP", "AGENT", "TIME"]
    assert "CWD" in table[0] and len(table) == 3
    assert "echo three" in table[1] and "custom" in table[1] and str(tmp_path)[-10:] in table[1]
    assert baton(tmp_path, "runs", "--limit", "0").returncode == exit_codes.USAGE
    [record] = json_lines(baton(tmp_path, "runs", "--json", "--limit", "1").stdout)
    assert record["promptText"] == "echo three" and record["durationSeconds"] is not None


def test_runs_and_show_name_the_host_and_the_column_appears_with_two_hosts(
    tmp_path: Path,
) -> None:
    baton(tmp_path, "run", "--agent-command", AGENT, "echo here", BATON_HOST="host-one")
    one_host = baton(tmp_path, "runs").stdout.splitlines()
    assert "HOST" not in one_host[0]  # one host, the data directory's own store: no column
    [record] = json_lines(baton(tmp_path, "runs", "--json").stdout)
    assert record["host"] == "host-one"
    baton(tmp_path, "run", "--agent-command", AGENT, "echo there", BATON_HOST="host-two")
    table = baton(tmp_path, "runs").stdout.splitlines()
    assert table[0].split()[:6] == ["RUN", "STATUS", "STOP", "AGENT", "HOST", "TIME"]
    hosts = {line.split()[0]: line.split()[4] for line in table[1:]}
    rows = json_lines(baton(tmp_path, "runs", "--json").stdout)
    assert hosts == {row["id"]: row["host"] for row in rows}
    assert sorted(hosts.values()) == ["host-one", "host-two"]
    shown = baton(tmp_path, "show", record["id"]).stdout
    assert "host       host-one" in shown.splitlines()
    assert json_lines(baton(tmp_path, "show", record["id"], "--json").stdout)[0]["host"] == (
        "host-one"
    )


#: Verbs with --json and a usage error each can make (a bad value, an unknown flag).
USAGE_ERRORS = [
    ("runs", "--json", "--limit", "0"),
    ("runs", "--json", "--bogus"),
    ("show", "--json"),
    ("sessions", "--json", "--status", "nope"),
    ("session", "show", "--json"),
    ("journal", "show", "--json", "--limit", "x"),
    ("recover", "--json"),
    ("run", "--json"),
    ("run", "--format", "json", "--timeout", "-1", "--agent-command", AGENT, "hi"),
]


def test_every_json_verb_prints_a_json_error_line_for_a_usage_error(tmp_path: Path) -> None:
    for argv in USAGE_ERRORS:
        done = baton(tmp_path, *argv)
        assert done.returncode == exit_codes.USAGE, (argv, done.stderr)
        [line] = json_lines(done.stdout)
        assert line["type"] == "error" and line["exitCode"] == exit_codes.USAGE, argv
        assert line["schemaVersion"] == SCHEMA_VERSION and line["errorCode"], argv
        assert "error:" in done.stderr  # the usage text stays on stderr


def test_a_failing_json_verb_prints_its_error_code_as_json(tmp_path: Path) -> None:
    done = baton(tmp_path, "show", "run-nope", "--json")
    assert done.returncode == exit_codes.USAGE
    [line] = json_lines(done.stdout)
    assert line["errorCode"] == "DATA_DIR_NOT_FOUND" and line["exitCode"] == exit_codes.USAGE
    assert not json_lines(baton(tmp_path, "show", "run-nope").stdout)  # text: stderr only


def test_a_missing_agent_exits_5_however_it_is_named(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--json", "--agent-command", "nonexistent-agent-x", "hi")
    assert done.returncode == exit_codes.NOT_INSTALLED, done.stderr
    [line] = json_lines(done.stdout)
    assert (line["errorCode"], line["exitCode"]) == ("AGENT_LAUNCH_FAILED", 5)


def test_a_program_that_is_not_an_acp_agent_says_so_and_exits_5(tmp_path: Path) -> None:
    for program in ("true", "ls /"):
        done = baton(tmp_path, "run", "--agent-command", program, "hi")
        assert done.returncode == exit_codes.NOT_INSTALLED, (program, done.stderr)
        assert "NOT_AN_ACP_AGENT: not an ACP agent" in done.stderr
        assert "does not speak ACP" in done.stderr  # the next step
    crashed = baton(tmp_path, "run", "--agent-command", "sh -c 'exit 3'", "hi")
    assert crashed.returncode == exit_codes.TURN_FAILED  # an agent that crashed is reported so
    assert "TRANSPORT_CLOSED" in crashed.stderr
