"""One writer per folder (issue 16): the advisory folder lock, its holder line, stale locks."""

from __future__ import annotations

import errno
import gc
import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from failcodes.errors import FailcodesError
from failcodes.runlock import LOCK_NAME, FolderLockedError, folder_lock, lock_holder

HOLD = """
import sys, time
from failcodes.runlock import folder_lock
with folder_lock(sys.argv[1], what="judge run"):
    print("locked", flush=True)
    time.sleep(60)
"""


def _holder(folder: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()


def test_second_writer_refused_naming_the_holder(tmp_path: Path) -> None:
    proc = _holder(tmp_path)
    try:
        started = time.perf_counter()
        with pytest.raises(FolderLockedError) as info, folder_lock(tmp_path, what="judge run"):
            pass
        assert time.perf_counter() - started < 0.5  # at once, no waiting
        assert f"this judge run is in use by process {proc.pid} (started " in str(info.value)
        assert lock_holder(tmp_path)["pid"] == proc.pid  # type: ignore[index]
    finally:
        _stop(proc)


def test_lock_of_a_killed_process_is_stale_and_taken_over(tmp_path: Path) -> None:
    proc = _holder(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    _stop(proc)
    assert lock_holder(tmp_path)["pid"] == proc.pid  # type: ignore[index]  # left behind
    with folder_lock(tmp_path):
        assert lock_holder(tmp_path)["pid"] == os.getpid()  # type: ignore[index]
    assert lock_holder(tmp_path) is None  # released: emptied, file kept
    assert (tmp_path / LOCK_NAME).exists()


def test_reentrant_in_one_process(tmp_path: Path) -> None:
    with folder_lock(tmp_path), folder_lock(tmp_path / "."):
        assert lock_holder(tmp_path)["pid"] == os.getpid()  # type: ignore[index]
    with folder_lock(tmp_path):  # free again after both exits
        pass


LATE_LINE = """
import fcntl, json, os, sys, time
fh = open(sys.argv[1], "a+")
fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
time.sleep(0.3)  # the window between a winner's flock and its holder line
fh.write(json.dumps({"pid": os.getpid(), "started": "now"}) + "\\n")
fh.flush()
time.sleep(60)
"""


def test_loser_arriving_before_the_holder_line_still_names_the_holder(tmp_path: Path) -> None:
    # CI failure of stop 23: the loser read the lock file between the winner's flock and its
    # write, found it empty and said "another process"; it now waits briefly for the line.
    proc = subprocess.Popen(
        [sys.executable, "-c", LATE_LINE, str(tmp_path / LOCK_NAME)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(FolderLockedError) as info, folder_lock(tmp_path, what="judge run"):
            pass
        assert f"in use by process {proc.pid} (started now)" in str(info.value)
    finally:
        _stop(proc)


TRY_WRITE = """
import sys
from failcodes.runlock import FolderLockedError, folder_lock
try:
    with folder_lock(sys.argv[1], what="study"):
        print("locked")
except FolderLockedError:
    print("refused")
"""


def test_reading_lock_excludes_writers_not_readers(tmp_path: Path) -> None:
    from failcodes.runlock import reading_lock

    busy = "busy: {holder}"
    with reading_lock(tmp_path, busy=busy):  # no lock file: never written, nothing created
        pass
    assert not (tmp_path / LOCK_NAME).exists()
    with folder_lock(tmp_path), reading_lock(tmp_path, busy=busy):  # a step of our own run
        pass
    with reading_lock(tmp_path, busy=busy), reading_lock(tmp_path, busy=busy):  # two readers
        proc = subprocess.run(
            [sys.executable, "-c", TRY_WRITE, str(tmp_path)], capture_output=True, text=True
        )
        assert proc.stdout.strip() == "refused"  # no writer while they read
    proc = _holder(tmp_path)
    try:
        with pytest.raises(FolderLockedError) as info, reading_lock(tmp_path, busy=busy):
            pass
        assert str(info.value).startswith(f"{tmp_path}: busy: process {proc.pid} (started ")
    finally:
        _stop(proc)
    with reading_lock(tmp_path, busy=busy):  # the writer gone, its lock with it
        pass


def test_report_on_a_study_mid_run_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `report` during `run` built silently from a half-judged study
    from failcodes.study import init_study
    from tests.cli_helpers import run_cli

    layout = init_study(tmp_path / "st")
    proc = _holder(layout.root)
    try:
        before = sorted(p.name for p in layout.report_dir.iterdir())
        code, out, err = run_cli(["report", str(layout.root)], capsys)
        assert code == 2 and out == ""
        assert err == (
            f"failcodes: error: {layout.root}: the study is mid-run (process {proc.pid} "
            f"(started {lock_holder(layout.root)['started']}) is running its steps): a "  # type: ignore[index]
            "report now would be built from a half-judged study; wait for the run to finish, "
            "then report\n"
        )
        assert sorted(p.name for p in layout.report_dir.iterdir()) == before
    finally:
        _stop(proc)
    code, _, err = run_cli(["report", str(layout.root)], capsys)
    assert code == 2 and "mid-run" not in err  # the run over: the study's own state speaks


def _unclosed_files(take: Callable[[], object], refused: str) -> list[str]:
    """Run ``take``, which must fail with ``refused``; the ResourceWarnings of files it left."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(FailcodesError, match=refused) as info:
            take()
        del info  # its traceback holds the frames, and through them the file
        gc.collect()
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


def _take(folder: Path, what: str = "folder") -> None:
    with folder_lock(folder, what=what):
        pass


def test_a_lock_file_that_cannot_be_written_is_one_line_and_leaves_no_file_open(
    tmp_path: Path,
) -> None:
    # the holder line not written (here: the lock file is a device that cannot be truncated):
    # the open lock file was left to the garbage collector, still locked (ResourceWarning:
    # unclosed file ... .failcodes.lock), and the OSError (no file name) was a traceback
    (tmp_path / LOCK_NAME).symlink_to("/dev/full")
    refused = rf"^{tmp_path / LOCK_NAME}: cannot lock the study \(Invalid argument\)$"
    assert _unclosed_files(lambda: _take(tmp_path, "study"), refused) == []


def test_a_file_system_without_locks_is_one_line_and_leaves_no_file_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    def no_locks(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    refused = r"\.failcodes\.lock: cannot lock the judge run \(No locks available\)$"
    assert _unclosed_files(lambda: _take(tmp_path, "judge run"), refused) == []


def test_a_refused_writer_leaves_no_file_open(tmp_path: Path) -> None:
    proc = _holder(tmp_path)
    try:
        assert _unclosed_files(lambda: _take(tmp_path), "in use by process") == []
    finally:
        _stop(proc)
