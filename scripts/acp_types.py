"""Generate ``src/baton/wire/acp_types.py``: ACP's message types as TypedDicts, from the pinned
stable schema (``tests/fixtures/schema/sdk-2.4.0/schema.json``).

Run at development time (``make acp-types``) when the pinned schema changes; the output is
committed. ``baton/wire`` and ``baton/connection`` import it under ``TYPE_CHECKING`` only, so
it costs nothing at run time: its use is that ``mypy --strict`` checks the field names of the
messages Baton builds and reads. ``tests/wire/test_acp_types.py`` regenerates it and fails when
the committed file differs (by syntax tree, so formatting does not count).

The mapping (the subset of JSON Schema the pinned schema uses):

- an object with ``properties`` is a TypedDict; a property not in ``required`` is
  ``NotRequired``; ``allOf`` references of such an object are its bases;
- ``oneOf`` / ``anyOf`` is a union; an inline object variant becomes its own TypedDict named
  after the union and the variant's ``const`` discriminator (``SessionUpdate`` ->
  ``SessionUpdateAgentMessageChunk``), with the variant's ``allOf`` references as bases;
- ``const`` and ``enum`` are ``Literal``; ``string``, ``integer``, ``number``, ``boolean``,
  ``null`` are ``str``, ``int``, ``float``, ``bool``, ``None``; ``array`` is ``list`` of its
  items; an object without properties is ``dict[str, V]`` (``V``: its
  ``additionalProperties`` or ``Any``); an empty schema is ``Any``. An object that has both
  properties and variants keeps its properties only.

Usage: ``python scripts/acp_types.py [OUTPUT]`` (default: the module above); ``--check``
exits 1 when the committed module is not what the schema generates.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
SCHEMA: Final = ROOT / "tests" / "fixtures" / "schema" / "sdk-2.4.0" / "schema.json"
OUTPUT: Final = ROOT / "src" / "baton" / "wire" / "acp_types.py"
#: The column the generated docstrings wrap at (the project's line length, less indentation).
WRAP: Final = 92

_SCALARS: Final = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
}


def _ref(schema: dict[str, Any]) -> str:
    return str(schema["$ref"]).rsplit("/", 1)[-1]


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", text))


def _summary(schema: dict[str, Any], fallback: str) -> str:
    text = str(schema.get("description") or fallback).strip().split("\n\n", 1)[0]
    return " ".join(text.split()).replace("\\", "\\\\").replace('"""', "'''")


def _docstring(text: str, indent: str) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > WRAP - len(indent):
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *(f"{indent}{x}" for x in lines[1:]), f'{indent}"""']


class Generator:
    """Turns the schema's ``$defs`` into Python source, one definition at a time."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        #: name -> (its bases, its source lines), in the order they were made.
        self.blocks: dict[str, tuple[list[str], list[str]]] = {}

    def annotation(self, schema: Any) -> str:
        """The Python type of a property or alias schema."""
        if not isinstance(schema, dict) or not schema:
            return "Any"
        if "$ref" in schema:
            return _ref(schema)
        if "const" in schema:
            return f"Literal[{schema['const']!r}]"
        if "enum" in schema:
            return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
        for key in ("oneOf", "anyOf"):
            if key in schema:
                return self._union([self.annotation(v) for v in schema[key]])
        if "allOf" in schema and len(schema["allOf"]) == 1:
            return self.annotation(schema["allOf"][0])
        kind = schema.get("type")
        if isinstance(kind, list):
            return self._union([self.annotation({**schema, "type": k}) for k in kind])
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            return f"list[{self.annotation(schema.get('items'))}]"
        if kind == "object":
            extra = schema.get("additionalProperties")
            return f"dict[str, {self.annotation(extra) if isinstance(extra, dict) else 'Any'}]"
        return "Any"

    @staticmethod
    def _union(parts: list[str]) -> str:
        unique = list(dict.fromkeys(parts))
        if "Any" in unique:
            return "Any"
        return " | ".join([p for p in unique if p != "None"] + ["None"] * ("None" in unique))

    def typed_dict(self, name: str, schema: dict[str, Any], bases: list[str]) -> None:
        """A TypedDict for an object schema with properties."""
        required = set(schema.get("required", ()))
        lines = [f"class {name}({', '.join(bases) or 'TypedDict'}):"]
        lines += _docstring(_summary(schema, name), "    ")
        for prop, sub in schema.get("properties", {}).items():
            kind = self.annotation(sub)
            lines.append(f"    {prop}: {kind if prop in required else f'NotRequired[{kind}]'}")
        self.blocks[name] = (bases, lines)

    def variant_name(self, union: str, index: int, variant: dict[str, Any]) -> str:
        """``union`` and the variant's discriminator (``Case`` added where that names a
        definition already: ``McpServer`` + ``http`` is ``McpServerHttpCase``)."""
        name = f"{union}Variant{index}"
        for sub in variant.get("properties", {}).values():
            if isinstance(sub, dict) and isinstance(sub.get("const"), str):
                name = union + _camel(sub["const"])
                break
        return f"{name}Case" if name in self.defs or name in self.blocks else name

    def definition(self, name: str, schema: dict[str, Any]) -> None:
        """The source of one ``$defs`` entry: a TypedDict, or an alias with its variants."""
        bases = [_ref(b) for b in schema.get("allOf", ()) if "$ref" in b]
        if schema.get("properties") or (schema.get("type") == "object" and bases):
            self.typed_dict(name, schema, bases)
            return
        variants = schema.get("oneOf") or schema.get("anyOf")
        if variants:
            members = []
            for index, variant in enumerate(variants):
                if isinstance(variant, dict) and variant.get("properties"):
                    own = self.variant_name(name, index, variant)
                    own_bases = [_ref(b) for b in variant.get("allOf", ()) if "$ref" in b]
                    self.typed_dict(own, variant, own_bases)
                    members.append(own)
                else:
                    members.append(self.annotation(variant))
            alias = self._union(members)
        else:
            alias = self.annotation(schema)
        lines = [f'{name}: TypeAlias = "{alias}"']
        lines += _docstring(_summary(schema, name), "")
        self.blocks[name] = ([], lines)

    def ordered(self) -> list[list[str]]:
        """The blocks, each class after its bases (a class statement evaluates its bases)."""
        done: dict[str, list[str]] = {}

        def place(name: str) -> None:
            if name in done or name not in self.blocks:
                return
            bases, lines = self.blocks[name]
            for base in bases:
                place(base)
            done[name] = lines

        for name in self.blocks:
            place(name)
        return list(done.values())


def generate(schema_path: Path = SCHEMA) -> str:
    """The module's source for the schema at ``schema_path``."""
    document = json.loads(schema_path.read_text())
    generator = Generator(document["$defs"])
    for name in sorted(document["$defs"]):
        generator.definition(name, document["$defs"][name])
    relative = schema_path.relative_to(ROOT)
    head = [
        f'"""ACP message types: TypedDicts generated from the pinned schema ({relative}).',
        "",
        "Generated by scripts/acp_types.py; do not edit (``make acp-types`` regenerates it). Baton",
        "imports it under ``TYPE_CHECKING`` only: mypy checks the field names of the messages",
        "Baton builds and reads, and nothing is imported at run time.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal, NotRequired, TypeAlias, TypedDict",
    ]
    body = ["\n".join(block) for block in generator.ordered()]
    return "\n".join(head) + "\n\n\n" + "\n\n\n".join(body) + "\n"


def same_module(a: str, b: str) -> bool:
    """Whether two sources are the same module once formatting is ignored."""
    return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))


def main(argv: list[str] | None = None) -> int:
    """Write (or, with ``--check``, compare) the generated module."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("output", nargs="?", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    source = generate()
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if not same_module(source, current):
            print(f"{args.output} is stale: run `make acp-types`", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
