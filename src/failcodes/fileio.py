"""Atomic file writes: no reader ever sees a half-written output file.

Every output goes to a temporary file in the destination's folder (so the final
:func:`os.replace` is a rename on one file system) and is moved into place only once it is
complete; on an exception the temporary file is deleted and the destination is untouched.

- :func:`atomic_write_text` / :func:`atomic_write_bytes`: one file from a string or bytes.
- :func:`atomic_path`: a context manager yielding a temporary path for writers that want a
  path (``DataFrame.to_csv``, ``Figure.savefig``, ...).
- :class:`AtomicBatch`: several files moved into place together, or none of them.
- :func:`write_json` / :func:`write_jsonl`: THE JSON writers (one document, one object per
  line), atomic, UTF-8, never ``NaN``/``Infinity`` (the strict reader,
  :func:`failcodes.jsonio.parse_json`, refuses them).

Output files get the mode a plain ``open(path, "w")`` would give them: ``0o666`` minus the
process umask (the temporary file :func:`tempfile.mkstemp` creates is ``0o600``, which the
rename would otherwise carry onto every output, so a report could not be served or shared).

Every operating-system failure on the way (permission denied, a file where a folder is needed
or the reverse, a read-only or full disk) becomes one :class:`~failcodes.errors.OutputError`
naming the path and what to do (:func:`output_error`); :func:`check_output_dir` and
:func:`check_output_file` run the same checks up front, before a command does any work, and
create nothing.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from failcodes.errors import ConfigError, InputError, OutputError
from failcodes.runlock import alive

#: Write buffer of the streamed writers: items (a task ~10 kB) are gathered into 1 MB writes,
#: not one write call each.
_WRITE_BUFFER = 1 << 20


def current_umask() -> int:
    """The process umask (read by setting it and putting it back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode a newly created regular file gets: ``0o666`` minus the umask."""
    return 0o666 & ~current_umask()


def output_error(exc: OSError, path: str | Path) -> OutputError:
    """Turn an OS error met while writing ``path`` into one line saying what to do."""
    where = Path(exc.filename) if isinstance(exc.filename, str) else Path(path)
    code = exc.errno
    if isinstance(exc, PermissionError) or code == errno.EROFS:
        why = "permission denied (read-only?); choose a writable location or fix its permissions"
    elif isinstance(exc, IsADirectoryError):
        why = "is a folder, expected a file; name a file (or move the folder away)"
    elif isinstance(exc, NotADirectoryError | FileExistsError):
        why = "is a file where a folder is needed; choose another location"
    elif code == errno.ENOSPC:
        why = "no space left on the device; free some space or write elsewhere"
    else:
        why = f"cannot write ({exc.strerror or exc}); check the location"
    return OutputError(why, path=where)


def a_path(path: object) -> Path:
    """``path`` as a Path; a file object or a frame is one :class:`ConfigError` line.

    From Python, ``read_traces(open("t.jsonl"))`` was a TypeError traceback ("expected str,
    bytes or os.PathLike object, not TextIOWrapper").
    """
    if not isinstance(path, str | os.PathLike):
        raise ConfigError(
            f"path: expected a file's path (str or pathlib.Path), not {type(path).__name__}"
            + (" (give its .name)" if isinstance(getattr(path, "name", None), str) else "")
        )
    return Path(path)


def not_found(path: Path) -> InputError:
    """``PATH: file not found``; a relative path names the working folder it was looked for in.

    A notebook's ``os.chdir`` moves that folder after a request was built with a relative
    path: "r.csv: file not found" named no folder.
    """
    where = "" if path.is_absolute() else f" (a relative path: looked in {Path.cwd()})"
    return InputError(f"file not found{where}", path=path)


def check_regular_file(path: str | Path) -> Path:
    """Refuse an input that is not a regular file: THE check of every reader.

    A missing file, a broken link, a folder, or a FIFO, socket or device (or a link to one:
    a FIFO waits for a writer, so the command hung without a word; ``/dev/zero`` reads
    forever) is one :class:`InputError` naming the path.
    """
    target = Path(path)
    try:
        mode = target.stat().st_mode
    except (OSError, ValueError):
        if target.is_symlink():
            raise InputError("a broken symbolic link (or a link loop)", path=target) from None
        raise not_found(target) from None
    if stat.S_ISDIR(mode):
        raise InputError("is a folder, expected a file", path=target)
    if not stat.S_ISREG(mode):
        raise InputError("not a regular file (a FIFO, socket or device); give a file", path=target)
    return target


#: The first bytes of an OLE2 compound file: a password-protected .xlsx or an old .xls.
_OLE2 = bytes.fromhex("D0CF11E0A1B11AE1")


def kind_hint(path: Path) -> str:
    """What a workbook or Parquet file that is none most likely is, from its first bytes.

    ``"; it is text (a CSV renamed .parquet?): name it .csv"``; "" when unsure (or when it is
    the kind its name says: a zip named .xlsx, a Parquet file named .parquet).
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(512)
    except OSError:
        return ""
    suffix = path.suffix.lower()
    if not head:
        return "; the file is empty"
    if head.startswith(_OLE2):
        return (
            "; it is a password-protected workbook or an old .xls: save it in Excel as .xlsx "
            "without a password"
        )
    if head.startswith(b"PK"):
        return (
            ""
            if suffix in (".xlsx", ".xlsm")
            else "; it is a zip archive (an Excel workbook? name it .xlsx)"
        )
    if head.startswith(b"PAR1"):
        return "" if suffix == ".parquet" else "; it is a Parquet file: name it .parquet"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return f"; it is text (a CSV renamed {suffix}?): name it .csv"


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path()  # pragma: no cover - "." always exists


def utf16_hint(path: Path) -> str:
    """``"; UTF-16 text ..."`` when ``path`` starts with a UTF-16 byte-order mark, else ``""``.

    Excel's "Unicode text" and some Windows tools save UTF-16; every failcodes reader wants
    UTF-8. UTF-32's marks (``FF FE 00 00`` begins as UTF-16's) are said as UTF-32: the first
    was said to be UTF-16, the second as "'þ' in Windows-1252" at line 1. A gzip, Parquet or
    zip file (a workbook) under a text file's name is said as such too (no line or field of
    it is named: its bytes have none).
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
    except OSError:
        return ""
    if head == b"PAR1":
        return "; it is a Parquet file: name it .parquet"
    if head == b"PK\x03\x04":
        return "; it is a zip archive (an Excel workbook? name it .xlsx)"
    utf8 = "'CSV UTF-8'" if path.suffix.lower() in (".csv", ".tsv") else "UTF-8"
    if head in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):  # (before UTF-16's: FF FE ...)
        return f"; it is UTF-32: save it as {utf8}"
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return f"; it is UTF-16 (Excel's 'Unicode text'?): save it as {utf8}"
    if head[:2] == b"\x1f\x8b":
        return "; it is gzip-compressed: decompress it (gunzip) and give the file it holds"
    return ""


def probe_dir(folder: Path, *, shown: Path | None = None) -> None:
    """Raise :class:`OutputError` unless a file can be created in the existing ``folder``.

    Creates and removes an anonymous temporary file: permission bits, read-only mounts and
    immutable folders all show, for root too (``os.access`` says yes to root).
    """
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        exc.filename = str(shown or folder)
        raise output_error(exc, shown or folder) from None


def probe_file(path: Path) -> None:
    """Raise :class:`OutputError` unless the existing file ``path`` can be opened for writing."""
    try:
        with path.open("r+b"):
            pass
    except OSError as exc:
        raise output_error(exc, path) from None


def _check_creatable(path: Path) -> None:
    """The nearest existing ancestor of ``path`` is a folder files can be created in."""
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise OutputError("is a file where a folder is needed; choose another location", path=base)
    probe_dir(base)


def check_output_dir(path: str | Path) -> Path:
    """Check, creating nothing, that ``path`` is (or can become) a writable folder.

    Raises :class:`OutputError` when it names an existing file, a folder that cannot be
    written, or sits under a file or a read-only folder.
    """
    target = Path(path)
    if target.exists():
        if not target.is_dir():
            raise OutputError(
                "is a file, expected a folder; choose another -o (or move the file away)",
                path=target,
            )
        probe_dir(target)
        return target
    if target.is_symlink():  # a dangling link or a link loop: no folder can be made there
        raise OutputError(
            "is a broken symbolic link (or a link loop), expected a folder; choose another -o",
            path=target,
        )
    _check_creatable(target)
    return target


def check_output_file(path: str | Path) -> Path:
    """Check, creating nothing, that ``path`` can be written as a file.

    Raises :class:`OutputError` when it names an existing folder, a read-only file, or sits
    under a file or a read-only folder.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(
            "is a folder, expected a file; name a file (or move the folder away)", path=target
        )
    if target.exists():
        probe_file(target)
    _check_creatable(target)
    return target


def check_not_input(
    outputs: Iterable[str | Path | None], inputs: Iterable[str | Path | None]
) -> None:
    """Refuse an output that is one of the command's inputs, or another of its outputs.

    The atomic rename would replace the input with the result (``disagreements -o`` on the
    traces file destroyed them); two outputs on one path would keep only the last.
    """
    seen: dict[str, Path] = {}
    for path in inputs:
        if path is not None:
            seen[_identity(Path(path))] = Path(path)
    for path in outputs:
        if path is None:
            continue
        key = _identity(Path(path))
        if key in seen:
            other = "" if str(seen[key]) == str(path) else f" ({seen[key]})"
            raise OutputError(
                f"is also an input or another output of this command{other}; the result "
                "would replace it: write it elsewhere",
                path=path,
            )
        seen[key] = Path(path)


def _identity(path: Path) -> str:
    """The file ``path`` names: (device, inode) when it exists, else its absolute path."""
    try:
        st = path.stat()
    except OSError:  # missing, or a symlink loop (Path.resolve raises RuntimeError there)
        return os.path.realpath(path)
    return f"{st.st_dev}:{st.st_ino}"


def made_dir(path: str | Path) -> Path:
    """Create the folder ``path`` (and its parents) if needed; OS errors as :class:`OutputError`."""
    target = Path(path)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(exc, target) from None
    return target


def temp_path(dest: str | Path) -> Path:
    """Create (empty) and return a fresh temporary file beside ``dest``; make its folder.

    The file gets :func:`new_file_mode` (not ``mkstemp``'s ``0o600``), so the output it
    becomes honours the umask.
    """
    target = Path(dest)
    if target.is_dir():
        raise OutputError(
            "is a folder, expected a file; name a file (or move the folder away)", path=target
        )
    # a device or FIFO (-o /dev/null, /dev/stdout): staged elsewhere, then written through
    folder = Path(tempfile.gettempdir()) if _special_file(target) else target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        sweep_stale(folder)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{run_tag()}-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise output_error(exc, target.parent) from None
    try:
        os.fchmod(fd, new_file_mode())
    finally:
        os.close(fd)
    return Path(tmp)


@functools.cache
def run_tag() -> str:
    """``{host}-{pid}``: in a temporary file's name, whose process (a short hash of the host).

    A run killed (``kill -9``, a power cut) leaves its temporary files; the tag tells a later
    run on this host they are stale (their process gone), so :func:`sweep_stale` removes them:
    they accumulated beside the outputs, hidden, one per killed run.
    """
    host = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]
    return f"{host}-{os.getpid()}"


#: A name :func:`run_tag` marks: ``.{output}.{host}-{pid}-{random}.tmp`` (mkstemp's 8 random
#: characters), or the DuckDB spill folder ``failcodes-duckdb-{host}-{pid}``.
_TAGGED = re.compile(r"(?:\..+\.|failcodes-duckdb-)([0-9a-f]{6})-(\d+)(?:-[a-z0-9_]{8}\.tmp)?")
#: The names failcodes gave them before :func:`run_tag`: ``.{output}.{random}.tmp``,
#: ``failcodes-duckdb-{pid}``. Nothing tells a killed run's from a live one's (of an earlier
#: version, or on another host), or from a user's own file so named: said, never removed.
_UNTAGGED = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp|failcodes-duckdb-\d+")
_swept: set[Path] = set()


#: The caller's ``note`` (and the lines said) while :func:`notes_to` holds it; else stderr.
_NOTE_TO: ContextVar[tuple[Callable[[str], None], set[str]] | None] = ContextVar("note_to")


@contextmanager
def notes_to(note: Callable[[str], None]) -> Iterator[None]:
    """Notes on the files read in this block (a workbook's other sheets) go to ``note``, once.

    ``failcodes.run``, a study step: they went to stderr, once per file and process.
    """
    token = _NOTE_TO.set((note, set()))
    try:
        yield
    finally:
        _NOTE_TO.reset(token)


def say_note(text: str) -> bool:
    """Say ``failcodes: note: TEXT`` to the ``note`` :func:`notes_to` holds (False: none)."""
    held = _NOTE_TO.get(None)
    if held is None:
        return False
    note, said = held
    line = f"failcodes: note: {text}"
    if line not in said:
        said.add(line)
        note(line)
    return True


def sweep_stale(folder: Path) -> None:
    """Remove the temporary files (and spill folders) in ``folder`` of this host's dead runs.

    Once per folder and process; what cannot be removed stays, said nowhere (a temporary file).
    Those an earlier failcodes named without a tag (:data:`_UNTAGGED`), this user's, are kept
    and said in one note on stderr: they were never swept, and nothing said they were there.
    """
    if folder in _swept:
        return
    _swept.add(folder)
    host = run_tag().partition("-")[0]
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    untagged: list[os.DirEntry[str]] = []
    for entry in entries:
        found = _TAGGED.fullmatch(entry.name)
        if found is None:
            if _UNTAGGED.fullmatch(entry.name) and _owned(entry):
                untagged.append(entry)
            continue
        if found[1] != host or alive(int(found[2])):
            continue
        with suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                Path(entry.path).unlink()
    if untagged and not say_note(text := _untagged_note(folder, untagged)):
        print(f"failcodes: note: {text}", file=sys.stderr)


def _owned(entry: os.DirEntry[str]) -> bool:
    """Whether this user owns ``entry`` (another user's files in /tmp are not ours to say)."""
    try:
        return entry.stat(follow_symlinks=False).st_uid == os.getuid()
    except OSError:
        return False


def _untagged_note(folder: Path, entries: list[os.DirEntry[str]]) -> str:
    """The note on the temporary files an earlier failcodes left in ``folder``."""
    names = sorted(e.name for e in entries)
    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    size = 0
    for entry in entries:
        with suppress(OSError):
            size += entry.stat(follow_symlinks=False).st_size
    many = len(names) > 1
    return (
        f"{folder}: {len(names)} temporary {'files' if many else 'file'} named as an earlier "
        f"failcodes named its own ({shown}; {size / 1e6:.1f} MB) {'are' if many else 'is'} "
        "kept: nothing tells a killed run's from one still writing; remove "
        f"{'them' if many else 'it'} when no failcodes run writes into this folder"
    )


def _special_file(target: Path) -> bool:
    """Whether ``target`` exists and is neither a regular file nor a folder (a device, FIFO)."""
    try:
        mode = target.stat().st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _replace(tmp: Path, target: Path) -> None:
    try:
        if _special_file(target):
            # a rename would replace the device itself (root's -o /dev/null made it a file)
            with tmp.open("rb") as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            tmp.unlink()
            return
        tmp.replace(target)
    except OSError as exc:
        raise output_error(exc, target) from None


@contextmanager
def atomic_path(dest: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``dest``; on success move it onto ``dest``.

    On an exception inside the block the temporary file is deleted and ``dest`` is untouched.
    """
    target = Path(dest)
    tmp = temp_path(target)
    try:
        yield tmp
        _replace(tmp, target)
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
    return _write_chunks(path, (data,), fsync=fsync)


def _write_chunks(path: str | Path, chunks: Iterable[bytes], *, fsync: bool) -> Path:
    """Write ``chunks`` one after another to ``path`` atomically (streamed); return the path."""
    target = Path(path)
    with atomic_path(target) as tmp:
        try:
            with tmp.open("wb", buffering=_WRITE_BUFFER) as fh:
                for chunk in chunks:
                    fh.write(chunk)
                if fsync:
                    fh.flush()
                    os.fsync(fh.fileno())
        except OSError as exc:
            raise output_error(exc, target) from None
    return target


class AtomicBatch:
    """Stage several output files and move them into place together (or not at all).

    Use as a context manager; :meth:`stage` returns a temporary path in the destination's
    folder. On normal exit every staged file is moved onto its destination with
    :func:`os.replace`; on an exception all temporary files are deleted, and the folders
    staging made (if still empty), and no destination is touched.
    """

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []
        self._made: list[Path] = []

    def stage(self, dest: str | Path) -> Path:
        """Return a fresh temporary path that will replace ``dest`` on commit."""
        folder = Path(dest).parent
        missing = []
        while not folder.exists() and folder != folder.parent:
            missing.append(folder)
            folder = folder.parent
        tmp = temp_path(dest)
        self._made.extend(missing)
        self._staged.append((tmp, Path(dest)))
        return tmp

    def commit(self) -> None:
        """Move every staged file onto its destination."""
        for tmp, target in self._staged:
            _replace(tmp, target)
        self._staged.clear()
        self._made.clear()

    def abort(self) -> None:
        """Delete every staged temporary file and the folders made for them (if empty)."""
        for tmp, _ in self._staged:
            tmp.unlink(missing_ok=True)
        self._staged.clear()
        for folder in sorted(set(self._made), key=lambda p: len(p.parts), reverse=True):
            with suppress(OSError):  # not empty (something was put there) or gone
                folder.rmdir()
        self._made.clear()

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


def _plain(obj: Any) -> Any:
    """JSON data with pydantic models (at any depth) dumped to plain values."""
    from pydantic import BaseModel  # (not at the top: a labels ingest imports no pydantic)

    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def _json_text(obj: Any, indent: int | None) -> str:
    from pydantic import BaseModel

    if isinstance(obj, BaseModel):
        return obj.model_dump_json(indent=indent)
    return json.dumps(_plain(obj), indent=indent, ensure_ascii=False, allow_nan=False, default=str)


def write_json(path: str | Path, obj: Any, *, fsync: bool = False) -> Path:
    """Write ``obj`` (a pydantic model or JSON data, models allowed inside) atomically.

    Indented UTF-8 JSON with a final newline; ``NaN``/``Infinity`` raise ``ValueError`` (JSON
    has no such numbers). With ``fsync`` the data reach the disk before the rename.
    """
    return atomic_write_text(path, _json_text(obj, 2) + "\n", fsync=fsync)


def write_json_items(path: str | Path, texts: Iterable[bytes], *, fsync: bool = False) -> int:
    """Write JSON texts as the items of one list, as :func:`write_json` writes the list.

    Each text is an item as it stands in that list: indented by 2 (its lines after the
    first begin with two more spaces than :func:`write_json` would give it alone). Streamed
    (a paper-scale Label Studio task file is ~1 GB of JSON);
    an exception from ``texts`` leaves ``path`` untouched. Returns how many were written.
    """
    count = 0

    def chunks() -> Iterator[bytes]:
        nonlocal count
        for text in texts:
            yield b",\n  " if count else b"[\n  "
            yield text  # as it is (joined to its separator: a copy of every item)
            count += 1
        yield b"\n]\n" if count else b"[]\n"

    _write_chunks(path, chunks(), fsync=fsync)
    return count


def write_jsonl(path: str | Path, records: Iterable[Any], *, fsync: bool = False) -> Path:
    """Write one JSON object per line, streamed, atomically.

    A record is a pydantic model, a dict, or its JSON text already (bytes, written as given).
    """
    lines = (
        record + b"\n" if isinstance(record, bytes) else (_json_text(record, None) + "\n").encode()
        for record in records
    )
    return _write_chunks(path, lines, fsync=fsync)
