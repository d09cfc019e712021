"""The floor of ``baton journal verify``: a plain loop over every segment of a journal
directory that parses each record line and recomputes the SHA-256 of its raw text, nothing
else (no field checks, no chain). bench/suite.py measures verify against it.

Usage: python bench/verify_floor.py JOURNALS_DIR
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import orjson


def main() -> None:
    """Parse and hash every record; fail on a hash that does not match."""
    records = 0
    loads, sha256 = orjson.loads, hashlib.sha256
    for segment in sorted(Path(sys.argv[1]).glob("*.ndjson")):
        with segment.open("rb") as lines:
            for line in lines:
                record = loads(line)
                body = record.get("raw")
                if body is not None and sha256(body.encode()).hexdigest() != record["sha256"]:
                    raise SystemExit(f"{segment}: a hash does not match")
                records += 1
    print(records)


if __name__ == "__main__":
    main()
