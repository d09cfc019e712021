"""Refresh tests/fixtures/adapters/ from the real adapters, by running Baton with the mocks.

    .venv/bin/python tests/qualification/capture.py [--adapter NAME]... [--out DIR] [--check]

For each pinned adapter (``claude``, ``codex``, ``fast-agent``; default all) this installs it
if needed (the qualification cache), starts the mock model server, and runs ``baton run`` through
the adapter's real profile. The profile's executable override points at a small recording
wrapper (written per capture, with its paths baked in, since the child environment is an exact
allowlist) that runs the real adapter and appends every JSON line crossing its stdio to a log:
Baton's own journal redacts stream text, fixtures must not.

Written into ``DIR/<adapter>-<version>/`` (``DIR`` defaults to tests/fixtures/adapters), in the
shapes tests/wire, tests/agents and tests/connection read:

- ``initialize.json``, ``session_new.json``: the agent's response frames, indented JSON;
- ``initialize.nocreds.json``, ``session_new.nocreds.json`` (codex, signed out) and
  ``session_prompt.noauth.json`` (claude, no key): the frames of the unauthenticated runs;
- ``transcript.baton-<scenario>.jsonl``: every frame of the main run, one JSON object a line,
  ``{"t": seconds, "dir": "client->agent" | "agent->client", "frame": {...}}``.

A refresh changes session ids (and tests that pin one need the new value). ``--check`` writes
nothing: it compares a fresh capture with the files in ``DIR`` apart from session ids and
JSON-RPC ids, prints every difference, and exits 1 on drift (the qualification run does this
on every run through :func:`compare`).
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from qualify_drivers import SPECS, AdapterSpec, Baton, Rig, reap  # noqa: E402
from qualify_installs import InstallFailed, ensure, executable  # noqa: E402
from qualify_mocks import AnthropicMock, MockServer, ResponsesMock  # noqa: E402

FIXTURES: Final = HERE.parent / "fixtures" / "adapters"

#: Values that differ on every capture and are ignored by :func:`compare`.
VOLATILE_KEYS: Final = frozenset({"sessionId"})

#: Keys of frames written to the fixture files, in this order (the captures' order).
FRAME_KEYS: Final = ("jsonrpc", "id", "method", "params", "result", "error")

WRAPPER: Final = '''#!{python}
"""Recording wrapper written by tests/qualification/capture.py: runs the real adapter and logs
every JSON line on its stdin and stdout."""
import json, subprocess, sys, threading, time
REAL = {real!r}
LOG = {log!r}
started = time.monotonic()
lock = threading.Lock()
child = subprocess.Popen([REAL, *sys.argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def record(direction, line):
    try:
        frame = json.loads(line)
    except ValueError:
        return
    if not isinstance(frame, dict):
        return
    entry = {{"t": round(time.monotonic() - started, 4), "dir": direction, "frame": frame}}
    with lock, open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps(entry, ensure_ascii=False) + "\\n")


def pump(source, sink, direction):
    for line in iter(source.readline, b""):
        record(direction, line)
        try:
            sink.write(line)
            sink.flush()
        except (BrokenPipeError, ValueError):
            break
    try:
        sink.close()
    except (BrokenPipeError, ValueError):
        pass


threading.Thread(target=pump, args=(sys.stdin.buffer, child.stdin, "client->agent"), daemon=True).start()
pump(child.stdout, sys.stdout.buffer, "agent->client")
sys.exit(child.wait())
'''


@dataclass
class Scenario:
    """One recorded ``baton run``: its prompt, flags, and whether it runs signed out."""

    name: str
    prompt: str
    flags: tuple[str, ...] = ()
    signed_out: bool = False


def scenarios(profile: str, work: Path) -> list[Scenario]:
    """What is recorded for ``profile``. The first scenario is the main transcript."""
    if profile == "claude":
        return [
            Scenario(
                "think-text-write-cancelled",
                f"[[think:planning the file]][[text:Hello from the capture.]]"
                f"[[write:{work / 'captured.txt'}:captured]][[text:the write was answered]]",
            ),
            Scenario("noauth", "[[text:unreachable]]", signed_out=True),
        ]
    if profile == "codex":
        return [
            Scenario(
                "effort-text-shell-patch",
                f"[[text:Hello from the capture.]][[bash:echo captured > shell.txt]]"
                f"[[write:{work / 'patched.txt'}:captured]][[text:done]]",
                ("--effort", "low", "--policy", "full"),
            ),
            Scenario("nocreds", "[[text:unreachable]]", signed_out=True),
        ]
    return [Scenario("passthrough", "Hello from the capture.")]


def write_wrapper(rig: Rig, log: Path) -> Path:
    """The recording wrapper for ``rig``'s adapter; returns its path."""
    path = rig.root / f"record-{rig.adapter.pin.name}"
    path.write_text(
        WRAPPER.format(python=sys.executable, real=str(executable(rig.adapter.pin)), log=str(log))
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def read_log(log: Path) -> list[dict[str, Any]]:
    """The recorded frames, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def answer_to(records: list[dict[str, Any]], method: str) -> dict[str, Any] | None:
    """The agent's response frame to the first client request ``method``."""
    request_id: object = None
    for record in records:
        frame = record["frame"]
        if request_id is None:
            if record["dir"] == "client->agent" and frame.get("method") == method:
                request_id = frame.get("id")
            continue
        if (
            record["dir"] == "agent->client"
            and "method" not in frame
            and frame.get("id") == request_id
        ):
            return frame
    return None


def ordered(frame: dict[str, Any]) -> dict[str, Any]:
    """``frame`` with its top-level keys in the fixtures' order."""
    keys = [k for k in FRAME_KEYS if k in frame] + [k for k in frame if k not in FRAME_KEYS]
    return {k: frame[k] for k in keys}


def signed_out_rig(rig: Rig) -> Rig:
    """``rig`` without its credential (codex: its own provider, which needs a sign-in)."""
    if rig.profile == "codex":
        from qualify_drivers import codex_config

        (rig.root / "codex-home" / "config.toml").write_text(codex_config(None))
    return rig.without(*rig.adapter.credential_keys)


def capture(spec: AdapterSpec, root: Path, mock: MockServer | None) -> dict[str, Any]:
    """Run ``spec``'s scenarios under ``root``; return ``{file name: content}`` where content is
    a frame (``.json``) or a list of records (``.jsonl``)."""
    files: dict[str, Any] = {}
    rig = spec.rig(root, mock.url if mock is not None else None)
    try:
        for index, scenario in enumerate(scenarios(rig.profile, rig.work)):
            log = root / f"frames-{scenario.name}.jsonl"
            wrapper = write_wrapper(rig, log)
            run_rig = signed_out_rig(rig) if scenario.signed_out else rig
            run_rig.env[spec.pin.override_env] = str(wrapper)
            outcome = Baton(run_rig).run(scenario.prompt, *scenario.flags)
            records = read_log(log)
            if not records:
                raise RuntimeError(
                    f"{spec.pin.key} {scenario.name}: nothing recorded\n{outcome.describe()}"
                )
            if index == 0 and outcome.returncode != 0:
                raise RuntimeError(
                    f"{spec.pin.key} {scenario.name}: the run failed\n{outcome.describe()}"
                )
            if index == 0:
                for method, name in (
                    ("initialize", "initialize.json"),
                    ("session/new", "session_new.json"),
                ):
                    frame = answer_to(records, method)
                    if frame is None or "result" not in frame:
                        raise RuntimeError(
                            f"{spec.pin.key}: no {method} result\n{outcome.describe()}"
                        )
                    files[name] = ordered(frame)
                files[f"transcript.baton-{scenario.name}.jsonl"] = records
            elif rig.profile == "codex":
                for method, name in (
                    ("initialize", "initialize.nocreds.json"),
                    ("session/new", "session_new.nocreds.json"),
                ):
                    frame = answer_to(records, method)
                    if frame is None:
                        raise RuntimeError(
                            f"{spec.pin.key}: no {method} answer signed out\n{outcome.describe()}"
                        )
                    files[name] = ordered(frame)
            else:
                frame = answer_to(records, "session/prompt")
                if frame is None or "error" not in frame:
                    raise RuntimeError(
                        f"{spec.pin.key}: no session/prompt error without a key\n{outcome.describe()}"
                    )
                files["session_prompt.noauth.json"] = ordered(frame)
    finally:
        reap(spec.pin, rig.home)  # what a failed run left behind (its own processes only)
    return files


def write_files(directory: Path, files: dict[str, Any]) -> None:
    """Write captured ``files`` into ``directory`` (created)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = directory / name
        if path.exists() and not os.access(path, os.W_OK):
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        if name.endswith(".jsonl"):
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in content))
        else:
            path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n")


def _differences(fresh: Any, old: Any, where: str) -> Iterator[str]:
    if isinstance(fresh, dict) and isinstance(old, dict):
        for key in sorted(set(fresh) | set(old)):
            if key in VOLATILE_KEYS:
                continue
            if key not in old:
                yield f"{where}.{key}: new in the fresh capture"
            elif key not in fresh:
                yield f"{where}.{key}: missing from the fresh capture"
            else:
                yield from _differences(fresh[key], old[key], f"{where}.{key}")
    elif isinstance(fresh, list) and isinstance(old, list):
        if len(fresh) != len(old):
            yield f"{where}: {len(old)} items before, {len(fresh)} now"
        for index, (a, b) in enumerate(zip(fresh, old, strict=False)):
            yield from _differences(a, b, f"{where}[{index}]")
    elif fresh != old:
        yield f"{where}: {old!r} before, {fresh!r} now"


def compare(files: dict[str, Any], directory: Path) -> list[str]:
    """Differences between fresh ``files`` and the fixtures in ``directory``: for each ``.json``
    file, the frame's ``result`` or ``error`` apart from session ids (transcripts are new
    recordings every time and are not compared)."""
    found: list[str] = []
    for name, frame in files.items():
        if not name.endswith(".json"):
            continue
        path = directory / name
        if not path.exists():
            found.append(f"{name}: no committed fixture to compare with")
            continue
        old = json.loads(path.read_text())
        for part in ("result", "error"):
            found += [f"{name}: {d}" for d in _differences(frame.get(part), old.get(part), part)]
    return found


def mock_for(spec: AdapterSpec) -> MockServer | None:
    """A started mock server for ``spec``'s API (None when it needs none)."""
    if spec.api == "anthropic":
        return AnthropicMock().start()
    if spec.api == "responses":
        return ResponsesMock().start()
    return None


def main(argv: list[str]) -> int:
    """Capture (or check) the named adapters."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--adapter", action="append", choices=sorted(SPECS), help="default: all")
    parser.add_argument(
        "--out", type=Path, default=FIXTURES, help="default: tests/fixtures/adapters"
    )
    parser.add_argument("--check", action="store_true", help="compare with DIR instead of writing")
    args = parser.parse_args(argv)
    drift = False
    for profile in args.adapter or list(SPECS):
        spec = SPECS[profile]
        try:
            ensure(spec.pin)
        except InstallFailed as exc:
            print(f"capture: INSTALL FAILED: {exc}", file=sys.stderr)
            return 1
        mock = mock_for(spec)
        try:
            with tempfile.TemporaryDirectory(prefix=f"baton-capture-{profile}-") as tmp:
                files = capture(spec, Path(tmp), mock)
        finally:
            if mock is not None:
                mock.stop()
        target = args.out / spec.pin.key
        if args.check:
            differences = compare(files, target)
            for line in differences:
                print(f"capture: {spec.pin.key}: DRIFT {line}")
            drift = drift or bool(differences)
            print(f"capture: {spec.pin.key}: {'drift' if differences else 'matches'} {target}")
        else:
            write_files(target, files)
            print(f"capture: {spec.pin.key}: wrote {', '.join(sorted(files))} to {target}")
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
