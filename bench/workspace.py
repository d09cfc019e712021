"""The workspace comparison's cost (issue 31): on a repository of 10,000 files with 10
changed, the time of one turn's comparison (the after-snapshot with the fingerprint cache
the before-snapshot left, then the comparison against the turn's start and against the
base), and of a cold snapshot (no cache: every file hashed), each as a ratio to `git status`
on the same tree in the same run (the median of several repetitions of each).

    .venv/bin/python bench/workspace.py [--files 10000] [--changed 10] [--repeat 5]

No timing is asserted anywhere: the ratios are printed, to compare runs on one machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from baton.runtime.workspaces.changes import compare_trees
from baton.runtime.workspaces.snapshot import (
    FingerprintCache,
    commit_tree,
    repository_layout,
    take_snapshot,
)

#: Files per directory of the generated repository.
FILES_PER_DIRECTORY = 100
#: Seconds the generated files are aged by, past the snapshot's racy window.
AGE_SECONDS = 3600

ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "HOME": os.devnull,
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *SAFE, *args], cwd=repo, env=ENV, check=True, capture_output=True)


def _repository(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    old = time.time() - AGE_SECONDS
    for index in range(files):
        path = repo / f"d{index // FILES_PER_DIRECTORY:03d}" / f"f{index:05d}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"file {index}\n" + "line of text\n" * 20)
        os.utime(path, (old, old))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "bench")
    return repo


def _median(repeat: int, step: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        step()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="baton-bench-workspace-") as scratch:
        repo = _repository(Path(scratch), args.files)
        layout = repository_layout(str(repo), ENV)
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, env=ENV, capture_output=True, text=True
        ).stdout.strip()
        base_tree = commit_tree(layout, head, ENV)
        status = ["git", *SAFE, "status", "--porcelain"]
        baseline = _median(
            args.repeat, lambda: subprocess.run(status, cwd=repo, env=ENV, capture_output=True)
        )
        cold = _median(args.repeat, lambda: take_snapshot(layout, FingerprintCache(), ENV))
        cache = FingerprintCache()
        before = take_snapshot(layout, cache, ENV)
        targets = sorted(repo.glob("d*/f*.txt"))[: args.changed]
        rounds = iter(range(10**9))

        def turn() -> None:
            number = next(rounds)
            for path in targets:
                path.write_text(f"changed in round {number}\n")
            after = take_snapshot(layout, cache, ENV)
            compare_trees(layout, before.tree, after.tree, ENV, str)
            compare_trees(layout, base_tree, after.tree, ENV, str)

        # The edits of a turn are part of neither side: measured once and subtracted.
        def edits_only() -> None:
            for path in targets:
                path.write_text("edit only\n")

        edits = _median(args.repeat, edits_only)
        comparison = max(_median(args.repeat, turn) - edits, 0.0)
        changed = subprocess.run(status, cwd=repo, env=ENV, capture_output=True, text=True)
        assert len(changed.stdout.splitlines()) == args.changed
    print(f"repository: {args.files} files, {args.changed} changed; median of {args.repeat}")
    print(f"git status --porcelain          {baseline * 1000:8.1f} ms   1.00x")
    print(
        f"turn comparison (warm cache)    {comparison * 1000:8.1f} ms   {comparison / baseline:5.2f}x"
    )
    print(f"cold snapshot (every file read) {cold * 1000:8.1f} ms   {cold / baseline:5.2f}x")


if __name__ == "__main__":
    main()
