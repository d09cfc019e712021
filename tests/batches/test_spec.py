"""The batch spec: TOML and JSONL read to the same spec, its canonical form and hash, the
matrix, and every refusal naming the file, line and field (never a traceback); the JSON
schema in docs/ lists exactly the fields the parser reads and accepts the documented example."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import jsonschema
import orjson
import pytest

from baton.batches.spec import SECTIONS, BatchSpec, load_spec, parse_document
from baton.errors import BatchSpecInvalid

DOCS = Path(__file__).resolve().parents[2] / "docs"

TOML = """
[batch]
name = "demo"
max_cost = 2.5

[run]
policy = "auto-edits"
allow_unattended = true
timeout = 600

[matrix]
repeats = 2

[[tasks]]
id = "fix"
prompt = "Fix the typo"
repo = "repo"
base = "main"
attachments = ["notes.md"]

[[tasks]]
id = "explain"
prompt = "Explain"

[[agents]]
id = "claude"
profile = "claude"
model = "sonnet"

[[agents]]
id = "scripted"
command = "baton agent scripted"
protocol = 2
[agents.options]
thinking = true
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_toml_and_jsonl_read_to_the_same_spec(tmp_path: Path) -> None:
    from_toml = load_spec(_write(tmp_path, "s.toml", TOML))
    document = tomllib.loads(TOML)
    lines = [{"batch": document["batch"]}, {"run": document["run"]}, {"matrix": document["matrix"]}]
    lines += [{"task": t} for t in document["tasks"]] + [{"agent": a} for a in document["agents"]]
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(b"\n".join(orjson.dumps(line) for line in lines))
    from_jsonl = load_spec(jsonl)
    assert from_toml == from_jsonl and from_toml.digest == from_jsonl.digest
    assert from_toml.tasks[0].repo == str(tmp_path / "repo")
    assert from_toml.tasks[0].workspace == "worktree"
    assert from_toml.tasks[0].attachments == (str(tmp_path / "notes.md"),)
    assert from_toml.tasks[1].cwd == str(tmp_path) and from_toml.tasks[1].workspace == "none"
    assert (
        from_toml.agents[1].options == {"thinking": "true"} and from_toml.agents[1].protocol == "2"
    )
    assert from_toml.max_cost == 2.5 and from_toml.run.timeout == 600
    cells = from_toml.cells()
    assert len(cells) == 8
    assert [(c.task, c.agent, c.repeat) for c in cells[:3]] == [
        ("fix", "claude", 1),
        ("fix", "claude", 2),
        ("fix", "scripted", 1),
    ]
    # The canonical form reads back to the same spec, with the same hash.
    again = BatchSpec.from_json(from_toml.to_json())
    assert again == from_toml and again.digest == from_toml.digest
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", from_toml.digest)


def test_the_matrix_selects_tasks_and_agents(tmp_path: Path) -> None:
    text = TOML.replace("repeats = 2", 'repeats = 1\ntasks = ["explain"]\nagents = ["scripted"]')
    spec = load_spec(_write(tmp_path, "s.toml", text))
    assert [(c.task, c.agent) for c in spec.cells()] == [("explain", "scripted")]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('id = "fix"', 'id = "-fix"'), "tasks[0].id: letters"),
        (('id = "explain"', 'id = "fix"'), "tasks[1].id: 'fix' is used twice"),
        (('prompt = "Explain"', 'prompt = ""'), "tasks[1].prompt: must be a non-empty string"),
        (('repo = "repo"', 'repo = "repo"\ncwd = "."'), "tasks[0]: takes repo or cwd, not both"),
        (('prompt = "Explain"', 'prompt = "Explain"\nbase = "x"'), "tasks[1].base: a base ref"),
        (
            ('profile = "claude"', 'profile = "claude"\ncommand = "x"'),
            "agents[0]: takes exactly one",
        ),
        (("repeats = 2", "repeats = 0"), "matrix.repeats: must be between 1 and"),
        (("repeats = 2", 'repeats = "2"'), "matrix.repeats: must be an integer"),
        (('policy = "auto-edits"', 'policy = "yolo"'), "run.policy: one of"),
        (("timeout = 600", "timeout = -1"), "run.timeout: must be more than 0"),
        (("max_cost = 2.5", "max_cost = -1"), "batch.max_cost: must be 0 or more"),
        (("protocol = 2", "protocol = 7"), "agents[1].protocol: one of"),
        (("[matrix]", '[matrix]\ntasks = ["nope"]'), "matrix.tasks[0]: no task 'nope'"),
        (("[run]", "[run]\nretries = 3"), "run.retries: unknown field"),
        (("[batch]", "[extra]\n[batch]"), "extra: unknown section"),
        (("thinking = true", "thinking = [1]"), "agents[1].options: must be a table"),
    ],
)
def test_bad_toml_specs_name_the_field(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in TOML
    path = _write(tmp_path, "s.toml", TOML.replace(old, new, 1))
    with pytest.raises(BatchSpecInvalid) as raised:
        load_spec(path)
    assert raised.value.code == "BATCH_SPEC_INVALID"
    assert raised.value.message.startswith(f"{path}: "), raised.value.message
    assert message in raised.value.message


def test_bad_jsonl_specs_name_the_line(tmp_path: Path) -> None:
    good_task = orjson.dumps({"task": {"id": "t", "prompt": "p"}}).decode()
    good_agent = orjson.dumps({"agent": {"id": "a", "profile": "claude"}}).decode()
    cases = {
        f"{good_task}\nnot json\n": ":2: not a JSON object",
        f'{good_task}\n{good_agent}\n{{"tasks": 1}}\n': ":3: unknown section 'tasks'",
        f'{good_task}\n{good_agent}\n{{"run": {{}}, "batch": {{}}}}\n': ":3: each line is one object",
        f'{good_task}\n{{"agent": {{"id": "a", "profile": "x", "mode": 3}}}}\n': ":2: agents[0].mode",
        '{"run": {}}\n{"run": {}}\n': ":2: a second 'run' line",
        f"{good_task}\n": "agents: a batch needs at least one agent",
        "\n\n": "tasks: a batch needs at least one task",
    }
    for index, (text, message) in enumerate(cases.items()):
        path = _write(tmp_path, f"s{index}.jsonl", text)
        with pytest.raises(BatchSpecInvalid) as raised:
            load_spec(path)
        assert message in raised.value.message, (text, raised.value.message)


def test_files_that_are_not_specs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BatchSpecInvalid, match="cannot read"):
        load_spec(tmp_path / "missing.toml")
    with pytest.raises(BatchSpecInvalid, match="not valid TOML"):
        load_spec(_write(tmp_path, "x.toml", "[[tasks]\n"))
    path = tmp_path / "bin.toml"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(BatchSpecInvalid, match="not UTF-8"):
        load_spec(path)
    many = {
        "tasks": [{"id": f"t{i}", "prompt": "p"} for i in range(400)],
        "agents": [{"id": "a", "profile": "x"}],
        "matrix": {"repeats": 400},
    }
    with pytest.raises(BatchSpecInvalid, match="more than 100000 cells"):
        parse_document(many, source="s", base_dir=None)


def test_the_json_schema_lists_the_parsers_fields_and_accepts_the_example(tmp_path: Path) -> None:
    schema = orjson.loads((DOCS / "batch-spec.schema.json").read_bytes())
    jsonschema.Draft202012Validator.check_schema(schema)
    properties = schema["properties"]
    for section, keys in SECTIONS.items():
        node = properties[section]
        node = node.get("items", node)
        assert set(node["properties"]) == set(keys), section
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(tomllib.loads(TOML))
    # The worked example of docs/batches.md is valid for the schema and the parser alike.
    example = (DOCS / "batches.md").read_text().split("```toml\n", 1)[1].split("```", 1)[0]
    validator.validate(tomllib.loads(example))
    load_spec(_write(tmp_path, "example.toml", example))
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"tasks": [{"id": "t", "prompt": "p", "repos": "."}], "agents": []})
