"""Atomic writes (failcodes.fileio): whole file or nothing, no temp files left behind."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from failcodes.fileio import AtomicBatch, atomic_path, atomic_write_bytes, atomic_write_text


def test_write_text_and_bytes_create_folders_and_leave_no_temp(tmp_path: Path) -> None:
    text_path = atomic_write_text(tmp_path / "a" / "b.txt", "héllo\n")
    bytes_path = atomic_write_bytes(tmp_path / "a" / "c.bin", b"\x00\x01")
    assert text_path.read_bytes() == "héllo\n".encode()
    assert bytes_path.read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b.txt", "c.bin"]
    synced = atomic_write_text(tmp_path / "a" / "b.txt", "new\n", fsync=True)
    assert synced.read_text(encoding="utf-8") == "new\n"


def test_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    dest = atomic_write_text(tmp_path / "out.txt", "old")
    with pytest.raises(RuntimeError), atomic_path(dest) as tmp:
        tmp.write_text("half", encoding="utf-8")
        raise RuntimeError("boom")
    assert dest.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_batch_moves_all_or_nothing(tmp_path: Path) -> None:
    with AtomicBatch() as batch:
        batch.stage(tmp_path / "x.txt").write_text("x", encoding="utf-8")
        batch.stage(tmp_path / "y.txt").write_text("y", encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt", "y.txt"]
    with pytest.raises(RuntimeError), AtomicBatch() as batch:
        batch.stage(tmp_path / "x.txt").write_text("new", encoding="utf-8")
        raise RuntimeError("boom")
    assert (tmp_path / "x.txt").read_text(encoding="utf-8") == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt", "y.txt"]


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_outputs_honour_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    # mkstemp makes 0600 files; every output used to keep that mode whatever the umask.
    old = os.umask(umask)
    try:
        text = atomic_write_text(tmp_path / "a" / "t.txt", "x")
        with AtomicBatch() as batch:
            staged = batch.stage(tmp_path / "b.csv")
            staged.write_text("y")
        with atomic_path(tmp_path / "c.bin") as tmp:
            tmp.write_bytes(b"z")
    finally:
        os.umask(old)
    for path in (text, tmp_path / "b.csv", tmp_path / "c.bin"):
        assert stat.S_IMODE(path.stat().st_mode) == mode, path


def test_cli_outputs_honour_the_umask(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(
        json.dumps(
            {"system": "s", "question_id": "q", "sentence_id": "s1", "claim_id": "c1",
             "claim": "x", "verdict": "supported"}
        ) + "\n"
    )  # fmt: skip
    for umask, mode in ((0o022, 0o644), (0o027, 0o640)):
        out = tmp_path / f"o{umask:o}"
        proc = subprocess.run(
            [sys.executable, "-m", "failcodes", "ingest", "generic", str(src), "-o",
             str(out / "t.csv")],
            capture_output=True, text=True, timeout=60, preexec_fn=lambda m=umask: os.umask(m),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        for name in ("t.csv", "t.passages.csv"):
            assert stat.S_IMODE((out / name).stat().st_mode) == mode, (umask, name)


def test_json_writers_write_what_the_strict_reader_reads(tmp_path: Path) -> None:
    # one set of JSON writers (issue 17/16): models at any depth, UTF-8, no NaN
    import math

    import pytest
    from pydantic import BaseModel

    from failcodes.fileio import write_json, write_jsonl
    from failcodes.jsonio import iter_jsonl, read_json

    class M(BaseModel):
        name: str
        score: float

    write_json(tmp_path / "a.json", {"items": [M(name="β", score=0.5)], "n": 1})
    assert read_json(tmp_path / "a.json") == {"items": [{"name": "β", "score": 0.5}], "n": 1}
    assert "β" in (tmp_path / "a.json").read_text(encoding="utf-8")  # not \u03b2
    write_jsonl(tmp_path / "a.jsonl", [M(name="x", score=1.0), {"name": "y", "score": 2}])
    assert [r for _, r in iter_jsonl(tmp_path / "a.jsonl")] == [
        {"name": "x", "score": 1.0},
        {"name": "y", "score": 2},
    ]
    with pytest.raises(ValueError, match="JSON compliant"):
        write_json(tmp_path / "nan.json", {"x": math.nan})
    assert not (tmp_path / "nan.json").exists()
