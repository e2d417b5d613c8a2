"""A left-out column that names a run or version of the pipeline (``model_version``, ``run``).

A long export of two runs of one system (a row per claim and version, the system column the
model's, ``model_version`` beside it) ingested with ``--option unmapped=drop`` (or ``--map
model_version=``) pooled each sentence's claims of the two versions into one sentence, their
claim ids or texts differing: gpt-4o scored TP 2, FP 1, TN 1 where version 2024-05 by hand
gives TP 1, FN 1, TN 2 and 2024-11 TP 2, FP 1, TN 1, exit 0, the note naming the column left
out. A sentence of one system whose rows give such a column two values is refused, as one
checked by two verifiers is (:func:`failcodes.ingest.table._one_verifier`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from failcodes.errors import InputError
from failcodes.traces import Trace

if TYPE_CHECKING:
    from failcodes.tracelines import TraceLine


class TableSpec(Protocol):
    """What :class:`RunColumns` reads of :class:`failcodes.ingest.table.TableSpec`."""

    @property
    def rows(self) -> object:
        """``--option rows``: nested rows (None: flat)."""

    @property
    def unmapped(self) -> str:
        """``--option unmapped``."""

    @property
    def column_map(self) -> Mapping[str, tuple[str, ...]]:
        """``--map``: each column's fields (empty: dropped)."""

    @property
    def passage_columns(self) -> Sequence[Any]:
        """``--passage-column``s."""

    @property
    def verdict_columns(self) -> Sequence[tuple[str, str]]:
        """``--verdict-column``s: (column, system)."""

    @property
    def label_rule(self) -> Any:
        """``--label-rule`` (None without one)."""


#: A word that names a run or version of a pipeline.
RUN_WORDS = frozenset(
    {"model", "models", "version", "versions", "run", "runs", "seed", "checkpoint", "ckpt"}
    | {"config", "configuration", "replicate", "replication", "trial", "epoch", "iteration"}
    | {"temperature", "variant", "experiment", "llm", "snapshot", "revision"}
)
#: Other words such a name may hold (``model_name``, ``run_id``, ``prompt_version``).
WITH_WORDS = frozenset({"id", "name", "no", "num", "number", "tag", "prompt"})


@lru_cache(maxsize=256)
def run_name(column: str) -> bool:
    """Whether every word of ``column`` names a run or version (at least one a run word).

    ``model_version``, ``run_id``, ``seed``, ``modelName``: yes; ``model_output``,
    ``run_time``, ``model_score`` (a value of each claim): no.
    """
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", column)
    words = [w for w in re.split(r"[^a-z]+", spaced.lower()) if w]
    return (
        bool(words)
        and any(w in RUN_WORDS for w in words)
        and all(w in RUN_WORDS or w in WITH_WORDS for w in words)
    )


@dataclass
class RunColumns:
    """Each sentence's first value of every left-out run column, refusing a second."""

    active: bool | None = None
    keys: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    #: (system, question, sentence, column) hash -> (value, file, line) first given
    first: dict[int, tuple[str, Path, int]] = field(default_factory=dict)

    def check(
        self,
        raw: Mapping[str, Any],
        trace: Trace | TraceLine,
        spec: TableSpec,
        path: Path,
        line: int,
    ) -> None:
        """Refuse ``trace``'s sentence given another value of a left-out run column before."""
        if self.active is None:
            self.active = spec.rows is None and (
                spec.unmapped == "drop" or any(not m for m in spec.column_map.values())
            )
        if not self.active:
            return
        keys = tuple(raw)
        if keys != self.keys:
            self.keys, self.runs = keys, tuple(k for k in keys if _left_out(k, spec))
        for column in self.runs:
            value = raw.get(column)
            if value is None or not str(value).strip():
                continue
            key = hash((trace.system, trace.question_id, trace.sentence_id, column))
            first = self.first.setdefault(key, (str(value), path, line))
            if first[0] == str(value):
                continue
            where = f"line {first[2]}" if first[1] == path else f"{first[1]}:{first[2]}"
            raise InputError(
                f"sentence {trace.sentence_id!r} of question {trace.question_id!r} (system "
                f"{trace.system!r}) has {column} {str(value)!r} here and {first[0]!r} at "
                f"{where}, a column left out: two runs or versions under one system name, "
                f"their claims pooled into one sentence; give each its own system: --map "
                f"{column}=system (a system column kept: --map system=verifier), or ingest "
                f"the rows of one {column} apart",
                path=path,
                line=line,
                field=column,
            )


def _left_out(column: str, spec: TableSpec) -> bool:
    """Whether ``column`` is a run column no field, ``--map`` or option reads."""
    mapped = spec.column_map.get(column)
    if mapped is not None:
        return not mapped and run_name(column)
    if spec.unmapped != "drop" or column in Trace.model_fields:
        return False
    read = {p.column for p in spec.passage_columns} | {c for c, _ in spec.verdict_columns}
    if spec.label_rule is not None:
        read.add(spec.label_rule.column)
    return column not in read and run_name(column)
