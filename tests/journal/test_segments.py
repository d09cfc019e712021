"""Writing segment files: every byte of a write buffer, in order, through short writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baton.journal import segments


@pytest.mark.parametrize("step", [1, 7, 4096])
def test_write_all_resumes_short_writes_across_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int
) -> None:
    real_writev = os.writev
    calls: list[int] = []

    def short_writev(fd: int, buffers: list[bytes | memoryview]) -> int:
        calls.append(len(buffers))
        assert len(buffers) <= segments.MAX_WRITE_PARTS
        data = b"".join(bytes(buffer) for buffer in buffers)[:step]
        return real_writev(fd, [data])

    parts = [bytes([65 + n % 26]) * (n % 5) for n in range(segments.MAX_WRITE_PARTS + 50)]
    monkeypatch.setattr(os, "writev", short_writev)
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT)
    try:
        segments.write_all(fd, parts)
    finally:
        os.close(fd)
    assert (tmp_path / "out").read_bytes() == b"".join(parts)
    assert len(calls) >= sum(map(len, parts)) // step
