"""A fake agent executable for every built-in profile (and one custom profile).

Invoked through a small shell wrapper (see support.py) as::

    python fake_agent.py PROFILE MODES [ARGS...]

``ARGS`` are what Baton passed. When they are the profile's version argv it prints a version,
when they are its probe argv it prints help text, and when they are its launch argv it speaks
ACP on stdio. ``MODES`` is a comma-separated list of flags (``flag`` or ``flag:param``) that
change that behaviour, so one script reaches every readiness state:

help and version: wrong-help, version-fail, version-empty, hang-help:PIDFILE, hang-version,
flood, secret, envdump:FILE, stderr-help, split-help
live: auth, terminal-auth, hang-live, crash, bad-version, malformed-init, malformed-session,
account, session-error, leak-env:VAR, init-error, noisy, violation, empty-models, models, ignore-term,
live-envdump:FILE, auth-status:STATE (advertise auth.status and answer auth/status with STATE)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

SECRET = "sk-ant-api03-" + "Q7x9" * 22 + "AA"

PROFILES = {
    "claude": {
        "version": ["--cli", "--version"],
        "probe": ["--cli", "--help"],
        "launch": [],
        "version_text": "2.1.83 (Claude Code)",
        "help": "Usage: claude [options] [command] [prompt]\n\nClaude Code - starts an interactive session",
    },
    "codex": {
        # codex-acp's probe is --version: 2.6.0 prints its package and version (0.16.0 rejects
        # it, printing its usage line; see tests/runtime/fakes/real/codex-acp-*.version.txt).
        "version": None,
        "probe": ["--version"],
        "launch": [],
        "help": "@agentclientprotocol/codex-acp 2.6.0",
    },
    "cursor": {
        "version": ["--version"],
        "probe": ["help", "acp"],
        "launch": ["acp"],
        "version_text": "2025.11.25-fake",
        "help": "Usage: cursor-agent acp [options]\n\nStart the Cursor Agent as an ACP server.",
    },
    "gemini": {
        "version": ["--version"],
        "probe": ["--help"],
        "launch": ["--acp"],
        "version_text": "0.61.0",
        "help": (
            "Usage: gemini [options] [command]\n\nOptions:\n"
            "      --acp                       Starts the agent in ACP mode  [boolean]\n"
            "      --experimental-acp          Starts the agent in ACP mode (deprecated)\n"
        ),
    },
    "grok": {
        "version": ["--version"],
        "probe": ["--no-auto-update", "--permission-mode", "default", "agent", "stdio", "--help"],
        "launch": ["--no-auto-update", "--permission-mode", "default", "agent", "stdio"],
        "version_text": "grok 0.9.0",
        "help": "Usage: grok agent stdio [OPTIONS]\n\nRun the agent over stdio",
    },
    "opencode": {
        "version": ["--version"],
        "probe": ["acp", "--help"],
        "launch": ["acp"],
        "version_text": "1.18.33",
        "help": "opencode acp\n\nstart ACP (Agent Client Protocol) server\n",
    },
    "custom": {
        "version": ["--version"],
        "probe": ["--help"],
        "launch": ["--acp"],
        "version_text": "my-agent 1.0",
        "help": "Usage: my-agent [--acp]\n\n  --acp  speak the Agent Client Protocol",
    },
}


def parse_modes(text: str) -> dict[str, str]:
    modes: dict[str, str] = {}
    for item in filter(None, text.split(",")):
        flag, _, param = item.partition(":")
        modes[flag] = param
    return modes


def hang(pidfile: str = "") -> None:
    if pidfile:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(pidfile, "w") as handle:
            handle.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(600)


def print_help(spec: dict, modes: dict[str, str]) -> int:
    if "hang-help" in modes:
        hang(modes["hang-help"])
    if "flood" in modes:
        chunk = "x" * 1023 + "\n"
        for _ in range(2048):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        return 0
    if "envdump" in modes:
        with open(modes["envdump"], "w") as handle:
            json.dump(dict(os.environ), handle)
    text = spec["help"]
    if "wrong-help" in modes:
        text = "Usage: some-other-tool [options]\n\nNothing to see here."
    if "secret" in modes:
        text = f"configured key: {SECRET}\n{text}\n"
        sys.stderr.write(f"warning: token {SECRET} found in config\n")
    if "stderr-help" in modes:
        sys.stderr.write(text + "\n")
    elif "split-help" in modes:
        first, _, rest = text.partition("\n")
        sys.stdout.write(first + "\n")
        sys.stderr.write(rest + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


def print_version(spec: dict, modes: dict[str, str]) -> int:
    if "hang-version" in modes:
        hang()
    if "version-fail" in modes:
        sys.stderr.write("error: unknown option '--version'\n")
        return 1
    if "version-empty" in modes:
        return 0
    if "secret" in modes:
        sys.stdout.write(f"\n{spec['version_text']} key={SECRET}\n")
        return 0
    sys.stdout.write(f"\n{spec['version_text']}\n")
    return 0


# --- ACP ---------------------------------------------------------------------------------


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request_id: object, value: object) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def error(request_id: object, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def initialize_result(modes: dict[str, str]) -> object:
    if "malformed-init" in modes:
        return "not an object"
    methods: list[dict] = []
    if "auth" in modes:
        methods = [
            {"id": "fake-login", "name": "Log in with Fake"},
            {"id": "fake-api-key", "name": "Use FAKE_API_KEY", "type": "env_var"},
        ]
    if "terminal-auth" in modes:
        methods = [{"id": "fake-terminal", "name": "Run fake login", "type": "terminal"}]
    capabilities: dict = {"loadSession": False}
    if "auth-status" in modes:
        capabilities["auth"] = {"status": {}}
    return {
        "protocolVersion": 99 if "bad-version" in modes else 1,
        "agentCapabilities": capabilities,
        "authMethods": methods,
        "agentInfo": {"name": "fake-agent", "title": "Fake", "version": "9.9.9"},
    }


def session_result(modes: dict[str, str]) -> object:
    if "malformed-session" in modes:
        return {"notASession": True}
    body: dict = {"sessionId": "fake-session-1"}
    if "empty-models" in modes:
        body["models"] = {"currentModelId": "none", "availableModels": []}
    if "models" in modes:
        body["models"] = {
            "currentModelId": "fake-1",
            "availableModels": [{"modelId": "fake-1", "name": "Fake One"}],
        }
    return body


def serve(modes: dict[str, str]) -> int:
    if "ignore-term" in modes:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "live-envdump" in modes:
        with open(modes["live-envdump"], "w") as handle:
            json.dump({"env": dict(os.environ), "cwd": os.getcwd()}, handle)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        method = message.get("method")
        request_id = message.get("id")
        if method == "initialize":
            if "hang-live" in modes:
                continue
            if "crash" in modes:
                sys.stderr.write(f"fatal: provider exploded (key {SECRET})\n")
                sys.stderr.flush()
                return 3
            if "init-error" in modes:
                error(request_id, -32603, "initialization blew up")
                continue
            if "noisy" in modes:
                sys.stdout.write("Loading fake agent... done\n")
            if "violation" in modes:
                result(999, {})
            result(request_id, initialize_result(modes))
        elif method == "auth/status" and "auth-status" in modes:
            result(request_id, {"state": modes["auth-status"], "accounts": [{"label": "Fake"}]})
        elif method == "session/new":
            if "auth" in modes or "terminal-auth" in modes:
                error(request_id, -32000, "Authentication required")
            elif "account" in modes:
                error(request_id, -32603, "Upgrade your plan to continue")
            elif "leak-env" in modes:
                leaked = os.environ.get(modes["leak-env"], "<unset>")
                error(request_id, -32603, f"cannot use key {leaked}")
            elif "session-error" in modes:
                error(request_id, -32603, f"backend unavailable ({SECRET})")
            else:
                result(request_id, session_result(modes))
        elif request_id is not None:
            error(request_id, -32601, f"Method not found: {method}")
    if "ignore-term" in modes:
        time.sleep(600)
    return 0


def main() -> int:
    profile, modes_text, *args = sys.argv[1:]
    spec = PROFILES[profile]
    modes = parse_modes(modes_text)
    if spec["version"] is not None and args == spec["version"]:
        return print_version(spec, modes)
    if args == spec["probe"]:
        return print_help(spec, modes)
    if args == spec["launch"]:
        return serve(modes)
    sys.stderr.write(f"error: unexpected arguments {args!r}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
