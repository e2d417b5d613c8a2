"""Atomic file writes: no reader ever sees a half-written output file.

Every output goes to a temporary file in the destination's folder (so the final
:func:`os.replace` is a rename on one file system) and is moved into place only once it is
complete; on an exception the temporary file is deleted and the destination is untouched.

- :func:`atomic_write_text` / :func:`atomic_write_bytes`: one file from a string or bytes.
- :func:`atomic_path`: a context manager yielding a temporary path for writers that want a
  path (``DataFrame.to_csv``, ``Figure.savefig``, ...).
- :class:`AtomicBatch`: several files moved into place together, or none of them.

Output files get the mode a plain ``open(path, "w")`` would give them: ``0o666`` minus the
process umask (the temporary file :func:`tempfile.mkstemp` creates is ``0o600``, which the
rename would otherwise carry onto every output, so a report could not be served or shared).
"""

from __future__ import annotations

import os
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "AtomicBatch",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "current_umask",
    "new_file_mode",
    "temp_path",
]


def current_umask() -> int:
    """The process umask (read by setting it and putting it back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode a newly created regular file gets: ``0o666`` minus the umask."""
    return 0o666 & ~current_umask()


def temp_path(dest: str | Path) -> Path:
    """Create (empty) and return a fresh temporary file beside ``dest``; make its folder.

    The file gets :func:`new_file_mode` (not ``mkstemp``'s ``0o600``), so the output it
    becomes honours the umask.
    """
    target = Path(dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, new_file_mode())
    finally:
        os.close(fd)
    return Path(tmp)


@contextmanager
def atomic_path(dest: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``dest``; on success move it onto ``dest``.

    On an exception inside the block the temporary file is deleted and ``dest`` is untouched.
    """
    target = Path(dest)
    tmp = temp_path(target)
    try:
        yield tmp
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str, *, fsync: bool = False) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically (parent folders created); return the path.

    With ``fsync`` the data reach the disk before the rename (survives a power cut).
    """
    return atomic_write_bytes(path, text.encode("utf-8"), fsync=fsync)


def atomic_write_bytes(path: str | Path, data: bytes, *, fsync: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically (parent folders created); return the path.

    With ``fsync`` the data reach the disk before the rename (survives a power cut).
    """
    target = Path(path)
    with atomic_path(target) as tmp, tmp.open("wb") as fh:
        fh.write(data)
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())
    return target


class AtomicBatch:
    """Stage several output files and move them into place together (or not at all).

    Use as a context manager; :meth:`stage` returns a temporary path in the destination's
    folder. On normal exit every staged file is moved onto its destination with
    :func:`os.replace`; on an exception all temporary files are deleted and no destination is
    touched.
    """

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []

    def stage(self, dest: str | Path) -> Path:
        """Return a fresh temporary path that will replace ``dest`` on commit."""
        tmp = temp_path(dest)
        self._staged.append((tmp, Path(dest)))
        return tmp

    def commit(self) -> None:
        """Move every staged file onto its destination."""
        for tmp, target in self._staged:
            tmp.replace(target)
        self._staged.clear()

    def abort(self) -> None:
        """Delete every staged temporary file."""
        for tmp, _ in self._staged:
            tmp.unlink(missing_ok=True)
        self._staged.clear()

    def __enter__(self) -> AtomicBatch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        if exc_type is None:
            try:
                self.commit()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()
