"""One writer per folder: an advisory lock on a judge run, study or saturation project.

:func:`folder_lock` takes an exclusive, non-blocking ``flock`` on ``path/.failcodes.lock``
(re-entrant within a process); :func:`reading_lock` the shared one for a reader that must not
see the folder half-written. Stale locks, re-entrancy and readers: docs/architecture.md,
"Module notes".
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from failcodes.errors import FailcodesError

try:  # pragma: no cover - always present on Linux/macOS
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: Name of the lock file inside a locked folder.
LOCK_NAME = ".failcodes.lock"


class FolderLockedError(FailcodesError):
    """Another live process is writing to the same folder."""


#: Folders this process holds: the lock file, the depth of nested holds and the thread
#: holding it. Re-entrant within that thread alone: two threads of a notebook
#: (``failcodes.run`` from a thread pool) on one judge run wrote one journal at once
#: (sqlite3.IntegrityError) and two ``run_study`` on one study ran every step twice
#: together (KeyError from the second's release).
_held: dict[Path, tuple[IO[str], int, int]] = {}
_guard = threading.Lock()


def _other_thread(key: Path, what: str) -> FolderLockedError:
    return FolderLockedError(
        f"{key}: this {what} is in use by another thread of this process; wait for it to "
        "finish, or write to another folder"
    )


def lock_holder(folder: str | Path) -> dict[str, Any] | None:
    """The holder recorded in ``folder``'s lock file (pid, started, command), or None."""
    try:
        text = (Path(folder) / LOCK_NAME).read_text(encoding="utf-8")
        data = json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _live_holder(folder: Path, *, wait: float = 1.0) -> dict[str, Any] | None:
    """The holder of a lock we just failed to take, waiting briefly for its line.

    The winner writes its line right after its ``flock``; a loser arriving in between reads an
    empty file (or a dead process's line), so it looks again for up to ``wait`` seconds.
    """
    deadline = time.monotonic() + wait
    while True:
        holder = lock_holder(folder)
        if holder is not None and alive(holder.get("pid")):
            return holder
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.02)


def alive(pid: object) -> bool:
    """Whether process ``pid`` runs on this host (another user's counts; unsure: alive)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, someone else's
        return True
    return True


def _describe(holder: dict[str, Any] | None) -> str:
    if not holder:
        return "another process"
    return f"process {holder.get('pid', '?')} (started {holder.get('started', '?')})"


@contextlib.contextmanager
def folder_lock(folder: str | Path, *, what: str = "folder") -> Iterator[Path]:
    """Hold the write lock on ``folder`` (which must exist) for the ``with`` block.

    ``what`` names the folder in the error ("judge run", "study", "saturation project").
    Raises :class:`FolderLockedError` immediately when another live process holds it.
    """
    key = Path(folder).resolve()
    me = threading.get_ident()
    with _guard:
        if key in _held:
            fh, depth, owner = _held[key]
            if owner != me:
                raise _other_thread(key, what)
            _held[key] = (fh, depth + 1, owner)
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield key
        finally:
            with _guard:
                fh, depth, owner = _held[key]
                _held[key] = (fh, depth - 1, owner)
        return
    try:
        fh = _acquire(key, what)
    except FolderLockedError:
        with _guard:  # taken by another thread between the look above and the flock
            if key in _held:
                raise _other_thread(key, what) from None
        raise
    with _guard:
        _held[key] = (fh, 1, me)
    try:
        yield key
    finally:
        with _guard:
            del _held[key]
        _release(fh)


@contextlib.contextmanager
def reading_lock(folder: str | Path, *, busy: str) -> Iterator[Path]:
    """Hold the shared lock on ``folder`` for the ``with`` block (notes: docs/architecture.md).

    Raises :class:`FolderLockedError` at once while another process holds the write lock:
    ``busy`` says why that stops the reader ("{holder}" stands for the process). Inside this
    process's own write lock (a study step), it holds already.
    """
    key = Path(folder).resolve()
    with _guard:
        owner = _held[key][2] if key in _held else None
    if owner is not None and owner != threading.get_ident():
        raise FolderLockedError(
            f"{key}: " + busy.replace("{holder}", "another thread of this process")
        )
    held = owner is not None
    path = key / LOCK_NAME
    if held or fcntl is None or not path.is_file():
        yield key
        return
    try:
        fh = path.open("r", encoding="utf-8")
    except OSError:  # unreadable: no writer can be told apart; read as before
        yield key
        return
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _live_holder(key)
            raise FolderLockedError(
                f"{key}: " + busy.replace("{holder}", _describe(holder))
            ) from None
        yield key
    finally:
        fh.close()  # closing drops the lock


def _acquire(key: Path, what: str) -> IO[str]:
    path = key / LOCK_NAME
    try:
        fh = path.open("a+", encoding="utf-8")
    except OSError as exc:
        raise FailcodesError(
            f"{key}: cannot create the {what} lock file ({exc.strerror}); "
            "check the folder's permissions"
        ) from None
    if fcntl is None:  # pragma: no cover - Windows: no advisory locks
        return fh
    try:  # every way out but the return closes the file (an open one would keep the lock)
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        fh.seek(0)
        fh.truncate()
        holder = {
            "pid": os.getpid(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            # the subcommand only: arguments can hold secrets (URLs with user:pass@)
            "command": " ".join(sys.argv[1:3])[:200],
        }
        fh.write(json.dumps(holder) + "\n")
        fh.flush()
    except BaseException as exc:
        with contextlib.suppress(OSError):  # a full disk fails the close's flush too
            fh.close()
        if isinstance(exc, BlockingIOError):
            raise FolderLockedError(
                f"{key}: this {what} is in use by {_describe(_live_holder(key))}; wait for it "
                "to finish or stop it, or write to another folder"
            ) from None
        if isinstance(exc, OSError):  # ENOLCK (a file system without locks), ENOSPC, EIO
            raise FailcodesError(f"{path}: cannot lock the {what} ({exc.strerror})") from None
        raise
    return fh


def _release(fh: IO[str]) -> None:
    with contextlib.suppress(OSError):
        fh.seek(0)
        fh.truncate()
        fh.flush()
    if fcntl is not None:
        with contextlib.suppress(OSError):
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    fh.close()
