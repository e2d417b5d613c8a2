"""One error path for output locations and SQLite files (issue 16): one line, nothing created."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from failcodes.errors import MissingPartError, OutputError
from failcodes.fileio import atomic_write_text, check_output_dir, check_output_file
from failcodes.judge.cache import ResponseCache, check_cache
from failcodes.judge.journal import Journal, check_run_dir


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder nothing can be created in: chmod 555, or ``chattr +i`` when running as root."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("root without chattr: cannot make a read-only folder")
    yield folder
    subprocess.run(["chattr", "-i", str(folder)], check=True)


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_output_dir_naming_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is a file, expected a folder"):
        check_output_dir(tmp_path / "f")
    with pytest.raises(OutputError, match="is a file where a folder is needed"):
        check_output_dir(tmp_path / "f" / "sub")


def test_output_file_naming_a_folder(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="is a folder, expected a file"):
        check_output_file(tmp_path)
    with pytest.raises(OutputError, match="is a folder, expected a file"):
        atomic_write_text(tmp_path, "x")


def test_read_only_folder(read_only: Path) -> None:
    before = _tree(read_only.parent)
    with pytest.raises(OutputError, match="permission denied") as info:
        check_output_dir(read_only / "run")
    assert info.value.path == str(read_only)
    with pytest.raises(OutputError, match="permission denied"):
        atomic_write_text(read_only / "x.json", "{}")
    with pytest.raises(OutputError, match="permission denied"):
        check_run_dir(read_only / "run")
    assert _tree(read_only.parent) == before


def test_corrupt_and_foreign_databases(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("this is not a database\n" * 10)
    with pytest.raises(OutputError, match="not a usable SQLite database") as info:
        check_cache(bad)
    assert info.value.one_line() == (
        f"{bad}: not a usable SQLite database (file is not a database); "
        "move it away or pass another --cache (or --no-cache)"
    )
    with pytest.raises(OutputError):
        ResponseCache(bad)
    run = tmp_path / "run"
    run.mkdir()
    (run / "journal.sqlite").write_bytes(bad.read_bytes())
    with pytest.raises(OutputError, match="pass another -o"):
        Journal(run)
    with pytest.raises(OutputError, match="is a folder, expected a SQLite file"):
        check_cache(run)
    assert sorted(p.name for p in run.iterdir()) == ["journal.sqlite"]  # no -wal/-shm made


def test_missing_part_is_one_line_and_still_a_key_error() -> None:
    from failcodes.codebook import Codebook, bundled
    from failcodes.units import UnitKind

    cb = bundled()
    only = Codebook.model_validate(
        {**cb.model_dump(), "parts": [p.model_dump() for p in cb.parts if p.id == "verification"]}
    )
    with pytest.raises(MissingPartError) as info:
        only.part(UnitKind.RETRIEVAL)
    assert isinstance(info.value, KeyError)
    assert str(info.value) == (
        f"codebook {cb.name}@{cb.version} has no 'retrieval' part (it has: verification); "
        "use a codebook with a 'retrieval' part"
    )
