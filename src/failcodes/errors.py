"""The one exception hierarchy of failcodes.

Every error a user can cause (bad input, a missing key, an unreachable server) is a
:class:`FailcodesError`. The CLI turns it into one line on stderr and exit code 2; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TypeVar

_E = TypeVar("_E", bound=Enum)


def choice(kind: type[_E], value: object, name: str) -> _E:
    """``kind(value)``; a value not among ``kind``'s is a :class:`ConfigError` naming ``name``.

    ``compute_metrics(level="question")`` raised Enum's bare ValueError from Python.
    """
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(str(m.value) for m in kind)
        raise ConfigError(f"{name}: {value!r} is not one of {allowed}") from None


def objects_not_a_file(name: str, given: object) -> None:
    """Refuse a DataFrame or a path given for in-memory ``traces`` / ``labels``.

    A DataFrame's column names were read as rows, a path letter by letter ('str' object has
    no attribute 'system'); the notebook functions (compute_metrics, find_disagreements)
    take the objects the readers return.
    """
    if hasattr(given, "to_parquet"):
        raise ConfigError(f"{name}: a DataFrame; read the file with failcodes.read_{name}")
    if isinstance(given, str | Path):
        raise ConfigError(
            f"{name}: a path ({str(given)!r}); read the file with failcodes.read_{name}"
        )


def clip(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters, ending "...", for a one-line message."""
    return text if len(text) <= width else text[: width - 3] + "..."


def mb(size: float) -> str:
    """A size in bytes as megabytes for a message: ``1,234.5 MB``."""
    return f"{size / (1 << 20):,.1f} MB"


def listed(names: Sequence[str], limit: int = 6) -> str:
    """The first ``limit`` of ``names``, comma-separated, then "and N more" for the rest."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


class FailcodesError(Exception):
    """Base class of every user-facing failcodes error."""

    def one_line(self) -> str:
        """Return the message as a single line, as the CLI prints it."""
        return " ".join(str(self).split())


class InputError(FailcodesError):
    """Bad input data: names the file, the line (1-based) and the field that is wrong."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if self.path is not None:
            where.append(self.path if line is None else f"{self.path}:{line}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class CodebookError(InputError):
    """A codebook file breaks a rule (duplicate id, missing parent, bad version...).

    ``rule`` names the rule (see ``failcodes.codebook.RULES``); the message starts with it.
    """

    def __init__(
        self,
        message: str,
        *,
        rule: str | None = None,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.rule = rule
        super().__init__(
            f"{rule}: {message}" if rule else message, path=path, line=line, field=field
        )


class OutputError(FailcodesError):
    """An output location cannot be written; the message names the path and what to do.

    Permission denied, a file where a folder is needed (or the reverse), a full disk, a
    corrupt or read-only database.
    """

    def __init__(self, message: str, *, path: str | Path) -> None:
        self.path = str(path)
        self.reason = message
        super().__init__(f"{self.path}: {message}")


class FileSystemError(FailcodesError):
    """The file system refused a file (permission denied, read-only, full disk): names it."""

    def __init__(self, exc: OSError) -> None:
        self.path = str(exc.filename)
        self.errno = exc.errno
        reason = (exc.strerror or str(exc)).lower()
        super().__init__(f"{exc.filename}: {reason}; check the path and its permissions")


@contextmanager
def file_errors() -> Iterator[None]:
    """An :class:`OSError` naming its file, raised inside: a :class:`FileSystemError`.

    The line the CLI prints for it. One that names no file is a bug and propagates as it is.
    """
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise
        raise FileSystemError(exc) from exc


class LeafError(InputError, ValueError):
    """Leaf codes that do not roll up to one subcode (``codebook.roll_up``).

    Not a leaf of the codebook, another dimension's, or several subcodes; a ValueError too,
    for old callers.
    """


class MissingPartError(InputError, KeyError):
    """A codebook has no part for the unit kind asked for (a KeyError too, for old callers)."""

    __str__ = Exception.__str__


class ConfigError(FailcodesError):
    """A missing or invalid setting: API key, model name, option combination."""


class UndeclaredSystemError(ConfigError):
    """An evidence declaration names a system the input does not hold (``--evidence B=...``).

    ``system`` the name declared, ``systems`` those the input holds, ``hint`` a near spelling
    (or ''): a study names its ``[[datasets.pipelines]]`` entry from them, where the user
    wrote no ``--evidence``.
    """

    def __init__(self, system: str, systems: Sequence[str], hint: str = "") -> None:
        self.system = system
        self.systems = list(systems)
        self.hint = hint
        have = ", ".join(self.systems) or "none"
        super().__init__(
            f"--evidence names system {system!r}, not in the input (systems: {have}){hint}"
        )


class ProviderError(FailcodesError):
    """A judge provider failed in a way retries could not fix."""


class BudgetExceededError(FailcodesError):
    """The spending limit given with --budget was reached; finished work is kept."""


class LabelStudioError(FailcodesError):
    """Label Studio is unreachable, rejects the token, or returned unexpected data."""


class StatisticsError(FailcodesError):
    """A statistic cannot be computed from the data given (and says why)."""


class MixedCodebookError(StatisticsError):
    """Annotations made under different codebook versions/hashes were about to be pooled."""
