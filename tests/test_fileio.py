"""Atomic writes (failcodes.fileio): whole file or nothing, no temp files left behind."""

from __future__ import annotations

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
