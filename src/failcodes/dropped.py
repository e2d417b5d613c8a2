"""Rows an ingest left out for want of a verdict (``--option no_verdict=drop``), carried on.

The ingest note said them once, on stderr (or in a study's step log); the traces written held
no trace of them, so ``metrics`` and the report's Table 5 counted the rows kept as if they were
all. The tool's own Parquet carries the count in its footer (key :data:`DROPPED_KEY`, beside
the engine's marker), which :func:`read_dropped` reads without decoding a row; JSONL and CSV
have no such field (the ingest says so).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: The ``what`` of :func:`dropped_line` for the P/R/F1 metrics (whose labels still count)
#: and for the disagreements (such a label is an FN 'with no claims' there).
METRICS = "the metrics"
DISAGREEMENTS = "the disagreements"

#: The Parquet footer key (key-value metadata) of the rows left out.
DROPPED_KEY = b"failcodes.no_verdict_dropped"


@dataclass(frozen=True)
class Dropped:
    """Rows left out at ingest (``rows``), the rows kept (``kept``), and per system."""

    rows: int
    kept: int = 0
    by_system: Mapping[str, int] = field(default_factory=dict)
    #: Systems whose every claims list was empty (nested rows): per system, its empty lists.
    #: No row of theirs was read, so no trace was written (:func:`vanished_systems`).
    hollow: Mapping[str, int] = field(default_factory=dict)

    def footer(self) -> dict[bytes, bytes]:
        """The footer metadata recording the rows left out (empty when none)."""
        if not self.rows and not self.hollow:
            return {}
        value: dict[str, object] = {
            "rows": self.rows,
            "by_system": dict(sorted(self.by_system.items())),
        }
        if self.hollow:
            value["hollow"] = dict(sorted(self.hollow.items()))
        return {DROPPED_KEY: json.dumps(value, sort_keys=True).encode("utf-8")}


def beside(path: Path) -> Path:
    """Where a study's JSONL part keeps the record its footer would (``PART.dropped.json``).

    A part is JSONL (the merge reads its lines without building a trace: 3.9x less CPU than
    from Parquet); its ingest writes this file beside it, always, so the merge carries a
    system the part lost every row of (:func:`carried`) and an earlier run's record is never
    left standing.
    """
    return path.with_name(path.name + ".dropped.json")


def record_text(record: Dropped) -> str:
    """The record :func:`beside` holds: the footer's value (zero rows when none)."""
    value = {
        "rows": record.rows,
        "by_system": dict(sorted(record.by_system.items())),
        "hollow": dict(sorted(record.hollow.items())),
    }
    return json.dumps(value, sort_keys=True) + "\n"


def _read_beside(path: Path) -> Dropped | None:
    """The record a study's JSONL part has beside it (None: none, or not the tool's)."""
    try:
        value = json.loads(beside(path).read_text(encoding="utf-8"))
        rows = int(value["rows"])
        systems = {str(k): int(v) for k, v in value["by_system"].items()}
        hollow = {str(k): int(v) for k, v in value.get("hollow", {}).items()}
    except (OSError, KeyError, ValueError, TypeError, AttributeError):
        return None
    return Dropped(rows, 0, systems, hollow) if rows or hollow else None


def read_dropped(path: Path) -> Dropped | None:
    """The rows left out at the ingest that wrote ``path`` (None: none recorded, or no footer).

    Only the footer is read, and only when its bytes hold the key (no library otherwise).
    """
    if path.suffix.lower() != ".parquet":  # JSONL, CSV: no footer, no engine to load
        return None
    from failcodes.engine import core, footer_holds, footer_of

    if not footer_holds(path, DROPPED_KEY):
        return None
    try:
        pairs, kept = footer_of(path)
        value = json.loads(pairs[DROPPED_KEY])
        rows, by_system = int(value["rows"]), value["by_system"]
        systems = {str(k): int(v) for k, v in by_system.items()}
        hollow = {str(k): int(v) for k, v in value.get("hollow", {}).items()}
    except (core().Error, KeyError, ValueError, TypeError, AttributeError):
        return None  # a footer the tool did not write: nothing is known of dropped rows
    return Dropped(rows, kept, systems, hollow)


def carried(own: Dropped, inputs: Iterable[Path], present: Iterable[str]) -> Dropped:
    """``own`` plus the record each input carries: a Parquet footer's, a part's :func:`beside`.

    A study data set of several ingests writes each ingest's traces as a part, then merges
    the parts: a part that left out every row of system B recorded it in its footer alone, so
    the merged traces must carry it on, or metrics and the report show the other systems with
    no word of B. ``present``: the systems the merged rows hold (a system empty in one part
    but read in another is no hollow system of the merge).
    """
    have = set(present)
    rows, by_system, hollow = own.rows, dict(own.by_system), dict(own.hollow)
    for path in inputs:
        parquet = path.suffix.lower() == ".parquet"
        record = read_dropped(path) if parquet else _read_beside(path)
        if record is None:
            continue
        rows += record.rows
        for system, n in record.by_system.items():
            by_system[system] = by_system.get(system, 0) + n
        for system, n in record.hollow.items():
            if system not in have:
                hollow[system] = hollow.get(system, 0) + n
    return Dropped(rows, own.kept, by_system, hollow)


def dropped_line(found: Sequence[Dropped], what: str) -> str | None:
    """``N row(s) without a verdict dropped at ingest (...; gpt 2): WHAT cover M of N+M rows``.

    ``found``: each file's (or data set's) record, its systems named as its table rows are.
    """
    rows = sum(d.rows for d in found)
    if not rows:
        return None
    kept = sum(d.kept for d in found)
    by = ", ".join(f"{s} {n:,}" for d in found for s, n in d.by_system.items())
    # a dropped row's LABEL may still count: by default its sentence, left with no claim of
    # that system, is one the system flagged no error in (sysB's 50 dropped HealthFC-shaped
    # claims: FN 73, TN 484, where "cover 1,450 of 1,500 rows" read as left out: FN 62, TN 445)
    scored = (
        " (their claims); a labelled sentence they leave with no claim of its system counts "
        "as the 'Assumed' line's --without-claims and --question-scope say (--without-claims "
        "exclude leaves it out, as a sentence every system's row of which was dropped is: "
        "it has no label)"
        if what in (METRICS, DISAGREEMENTS)
        else ""
    )
    return (
        f"{rows:,} row(s) without a verdict dropped at ingest (--option no_verdict=drop"
        f"{'; ' + by if by else ''}): {what} cover {kept:,} of {rows + kept:,} rows{scored}"
    )


def vanished_systems(found: Sequence[Dropped], present: Iterable[str]) -> dict[str, str]:
    """Systems of the input with no row left, each with why (every row dropped at ingest).

    ``found``: each file's record; ``present``: the systems the traces hold (a system dropped
    from one file but traced in another is there).
    """
    have = set(present)
    dropped: dict[str, int] = {}
    hollow: dict[str, int] = {}
    for record in found:
        for into, counts in ((dropped, record.by_system), (hollow, record.hollow)):
            for system, n in counts.items():
                if system not in have:
                    into[system] = into.get(system, 0) + n
    why = {
        s: f"{n:,} row(s) without a verdict, dropped: --option no_verdict=drop"
        for s, n in dropped.items()
    }
    for system, n in hollow.items():
        said = f"{n:,} claims list(s), every one empty"
        why[system] = f"{why[system]}; {said}" if system in why else said
    return dict(sorted(why.items()))


def vanished_line(gone: Mapping[str, str], shown: Iterable[str]) -> str | None:
    """``no row of system(s) X (why) of the input: every table shows Y only`` (None: none gone).

    The ingest said such a system once, in its log; metrics, their JSON and the report then
    showed the others with no word (llama's 6 rows, all without a verdict: a 2-system table
    read as the whole study).
    """
    if not gone:
        return None
    names = ", ".join(f"{s} ({why})" for s, why in gone.items())
    others = ", ".join(sorted(set(shown))) or "no other system"
    return (
        f"no row of system(s) {names} of the input: left out at ingest, so every table shows "
        f"{others} only"
    )
