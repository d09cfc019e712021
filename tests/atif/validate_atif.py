"""Validate ATIF files with Harbor's published models; run by the interpreter that holds
them (.venv-atif), never by Baton's. Prints one JSON object: the harbor version, the models'
newest schema version, and per file ``ok`` or the validation error."""

from __future__ import annotations

import importlib.metadata
import json
import sys

from harbor.models.trajectories import Trajectory


def main(paths: list[str]) -> int:
    results: dict[str, str] = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        try:
            Trajectory.model_validate(document)
        except ValueError as exc:
            results[path] = f"invalid: {exc}"
        else:
            results[path] = "ok"
    newest = Trajectory.model_fields["schema_version"].default
    loaded = sorted(m for m in sys.modules if m.split(".")[0] == "harbor")
    print(
        json.dumps(
            {
                "harbor": importlib.metadata.version("harbor"),
                "newest": newest,
                "modules": loaded,
                "results": results,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
