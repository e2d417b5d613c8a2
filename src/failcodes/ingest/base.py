"""The adapter contract: files in, :class:`IngestResult` (traces, labels, sentences) out."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from failcodes.dropped import Dropped
from failcodes.errors import ConfigError, InputError
from failcodes.jsonio import with_json_line
from failcodes.labels import Label
from failcodes.sentences import Sentence
from failcodes.tracelines import TraceLine
from failcodes.traces import Trace
from failcodes.verdicts import Verdict


class Output(StrEnum):
    """What an adapter's main output (the ``-o`` file of ``failcodes ingest``) holds."""

    TRACES = "traces"
    LABELS = "labels"


@dataclass(frozen=True)
class AdapterOptions:
    """Options shared by every adapter, plus adapter-specific ``extra`` settings.

    ``column_map`` maps foreign fields to ours (foreign -> one or more of ours; an empty
    tuple drops the field), ``aliases`` adds raw-verdict spellings, ``system`` names the
    system for adapters whose files do not say it, ``passages`` is an explicit CSV passages
    table (generic adapter), and ``extra`` holds ``--option KEY=VALUE`` settings documented by
    each adapter. The generic adapter also takes ``passage_columns`` (column, source name),
    ``label_rule`` (``--label-rule`` text), ``verifier`` / ``retriever`` constants,
    ``verdict_columns`` ((column, system): one column per system's verdict, a row becoming one
    trace per system) and ``verdicts`` (system or ``"*"`` -> the verdict an asserting pipeline
    declares for every claim, ``--verdict``).
    """

    column_map: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    aliases: Mapping[str, Verdict] = field(default_factory=dict)
    system: str | None = None
    passages: Path | None = None
    extra: Mapping[str, str] = field(default_factory=dict)
    passage_columns: tuple[tuple[str, str | None], ...] = ()
    label_rule: str | None = None
    verifier: str | None = None
    retriever: str | None = None
    verdict_columns: tuple[tuple[str, str], ...] = ()
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)

    def renames(self) -> dict[str, str]:
        """``column_map`` as foreign -> ours ('' drops).

        A column copied to several fields is a :class:`ConfigError` (only the generic
        adapter's table reading copies).
        """
        out: dict[str, str] = {}
        for src, targets in self.column_map.items():
            if len(targets) > 1:
                raise ConfigError(
                    f"--map {src} names several fields ({', '.join(targets)}); copying one "
                    "column into several fields works for tables without a passages table"
                )
            out[src] = targets[0] if targets else ""
        return out

    def option(self, name: str, allowed: Sequence[str], default: str) -> str:
        """Return ``extra[name]`` (checked against ``allowed`` if non-empty) or ``default``."""
        value = self.extra.get(name, default)
        if allowed and value not in allowed:
            raise ConfigError(f"--option {name}={value!r} is not one of: {', '.join(allowed)}")
        return value

    def check_extra(self, adapter: str, known: Sequence[str]) -> None:
        """Raise :class:`ConfigError` for an ``--option`` the adapter does not understand."""
        for name in self.extra:
            if name not in known:
                hint = ", ".join(known) if known else "none"
                raise ConfigError(
                    f"adapter {adapter!r} has no option {name!r} (its options: {hint})"
                )


class TraceStream(Protocol):
    """Traces read one at a time; ``labels`` and ``notes`` are complete once it is consumed."""

    labels: list[Label]
    notes: list[str]
    #: rows left out for want of a verdict (``--option no_verdict=drop``)
    dropped: Dropped
    #: rows left out as their system is not among ``--option systems``, per system
    unlisted: dict[str, int]

    def __iter__(self) -> Iterator[Trace | TraceLine]:
        """Read the input (once), yielding each trace as it is validated (or vouched for)."""


@dataclass
class IngestResult:
    """What an adapter produced. ``notes`` are human-readable facts worth printing.

    A reader that streams sets ``stream`` instead of ``traces``; :meth:`each_trace` gives the
    traces either way, and :meth:`settle` takes the stream's labels and notes once it has
    been consumed.
    """

    traces: list[Trace] = field(default_factory=list)
    labels: Sequence[Label] = field(default_factory=list)
    sentences: list[Sentence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stream: TraceStream | None = None
    #: rows the reader left out for want of a verdict (the stream's, once consumed)
    dropped: Dropped = field(default_factory=lambda: Dropped(0))
    #: rows left out by ``--option systems``, per system (the stream's, once consumed)
    unlisted: dict[str, int] = field(default_factory=dict)

    def each_trace(self) -> Iterable[Trace | TraceLine]:
        """The traces: the stream's as they are read (models or vouched lines), else the list."""
        return self.stream if self.stream is not None else self.traces

    def settle(self) -> None:
        """After the traces were consumed: the stream's labels and notes become this result's."""
        if self.stream is not None:
            self.labels = self.stream.labels
            self.notes = [*self.notes, *self.stream.notes]
            self.dropped = self.stream.dropped
            self.unlisted = self.stream.unlisted


class Adapter(Protocol):
    """An ingest adapter: ``name``, a one-line ``description``, its ``output`` kind, a reader."""

    name: str
    output: Output

    @property
    def description(self) -> str:
        """One line: what the adapter reads and what it makes of it."""

    def read(self, paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
        """Read ``paths`` into core models; user errors raise InputError/ConfigError."""


#: An adapter's reader: ``paths`` and the options (``--option`` names already checked) in.
Reader = Callable[[Sequence[Path], AdapterOptions], IngestResult]


@dataclass
class FileAdapter:
    """An :class:`Adapter` made of its registry facts and a reader function.

    The description is the first line of the reader's docstring (as a command's help is its
    docstring). ``read`` rejects an ``--option`` name outside ``options`` before calling
    ``reader``, so no reader repeats that check. ``json_document`` marks readers of whole JSON
    documents: an :class:`InputError` naming a JSON field path (e.g. ``results[1].claims[0]``)
    is re-raised with the line where that field starts. ``streamer``, if any, reads the same
    traces as a stream (:meth:`open`; what ``failcodes ingest`` uses, writing each trace as it
    comes). ``reads_folders`` marks readers that take a folder (a data set's layout) as PATH.
    """

    name: str
    output: Output
    reader: Reader
    options: tuple[str, ...] = ()
    json_document: bool = False
    streamer: Reader | None = None
    reads_folders: bool = False

    @property
    def description(self) -> str:
        """The first line of the reader's docstring, without its final period."""
        doc = (self.reader.__doc__ or self.name).strip()
        return doc.splitlines()[0].removesuffix(".")

    def open(self, paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
        """:meth:`read`, but through ``streamer`` when there is one (traces as a stream)."""
        if self.streamer is None:
            return self.read(paths, options)
        options.check_extra(self.name, self.options)
        return self.streamer(paths, options)

    def read(self, paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
        """Check the ``--option`` names, then read ``paths`` with ``reader``."""
        options.check_extra(self.name, self.options)
        if not self.json_document:
            return self.reader(paths, options)
        try:
            return self.reader(paths, options)
        except InputError as exc:
            raise with_json_line(exc) from None


def check_unique(seen: dict[str, Path], key: str, path: Path, *, what: str, field: str) -> None:
    """Record that ``key`` is read from ``path``; a key read before is an :class:`InputError`.

    The error reads ``{what} (also in FIRST_PATH)`` and names ``field`` in ``path``.
    """
    if key in seen:
        raise InputError(f"{what} (also in {seen[key]})", path=path, field=field)
    seen[key] = path


def only_path(paths: Sequence[Path], message: str) -> Path:
    """Return the one path of ``paths``; more or none is a :class:`ConfigError` (``message``)."""
    if len(paths) != 1:
        raise ConfigError(message)
    return paths[0]
