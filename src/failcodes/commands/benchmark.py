"""``benchmark scifact|covidfact|healthver|atomic`` as use cases: closed-benchmark evaluators.

Each request's ``run()`` returns a :class:`BenchmarkResult`: titled tables of rows, printed
tab-separated (``lines()``) or as JSON (``json_text()``), as the CLI prints them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import field_validator

from failcodes.commands.base import Note, Request, ignore_note, int_list, option
from failcodes.contract import FrozenModel

#: Bounds of --k: cut-offs past the longest retrieved list add nothing; each one is a pass.
MAX_K = 1000
MAX_KS = 20
K_HELP = "Comma-separated cut-offs."


def _fmt(x: object) -> str:
    return f"{x:.4f}" if isinstance(x, float) else ("-" if x is None else str(x))


class BenchmarkTable(FrozenModel):
    """One titled table of metric rows."""

    title: str
    rows: list[dict[str, Any]]

    def lines(self) -> list[str]:
        """``# title``, then the rows' flat columns, tab-separated."""
        if not self.rows:
            return [f"# {self.title}", "(no rows)"]
        cols = [c for c in self.rows[0] if not isinstance(self.rows[0][c], dict)]
        return [
            f"# {self.title}",
            "\t".join(cols),
            *("\t".join(_fmt(r[c]) for c in cols) for r in self.rows),
        ]


class BenchmarkResult(FrozenModel):
    """The tables of one benchmark command (and what its JSON holds instead, if other)."""

    tables: list[BenchmarkTable]
    #: the JSON of ``benchmark scifact`` (official, evidence, fixture); else the one table
    data: dict[str, Any] | None = None
    #: lines after the tables (the atomic metrics' per-system detection and outcomes)
    after: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The tables and the lines after them, as the CLI prints them."""
        return [*(line for t in self.tables for line in t.lines()), *self.after]

    def json_text(self) -> str:
        """What ``--format json`` prints."""
        if self.data is not None:
            return json.dumps(self.data, indent=2)
        return "\n".join(json.dumps(t.model_dump(mode="json"), indent=2) for t in self.tables)


class _CutOffs(FrozenModel):
    """``--k``: the cut-offs of an evidence table (a mixin of the requests that have one)."""

    k: str = option("1,3,5", help=K_HELP)

    @field_validator("k")
    @classmethod
    def _cut_offs(cls, value: str) -> str:
        int_list(value, "--k", high=MAX_K, most=MAX_KS)  # a ConfigError, before any work
        return value

    def ks(self) -> tuple[int, ...]:
        """The cut-offs."""
        return int_list(self.k, "--k", high=MAX_K, most=MAX_KS)


class BenchmarkScifactRequest(Request, _CutOffs):
    """Official SciFact metrics + rationale evidence P/R@k of the four MultiVerS systems."""

    command: ClassVar[tuple[str, ...]] = ("benchmark", "scifact")

    root: Path | None = option(
        None, argument=True, help="SciFact folder (default: the bundled copy)."
    )

    def run(self, *, note: Note = ignore_note) -> BenchmarkResult:
        """The official metrics, the evidence table and (if present) the evaluator fixture."""
        from failcodes.benchmarks import run as bench
        from failcodes.ingest.scifact import bundled_dir

        del note
        base = self.root or bundled_dir()
        official = bench.scifact_official(base)
        evidence = bench.scifact_evidence(base, self.ks())
        fixture = bench.scifact_fixture(base) if (base / "evaluator_fixture").is_dir() else None
        tables = [
            BenchmarkTable(
                title="SciFact official evaluator (abstract / sentence P, R, F1)", rows=official
            ),
            BenchmarkTable(title="Rationale-sentence evidence P/R/hit@k", rows=evidence),
        ]
        if fixture is not None:
            title = "scifact-evaluator fixture (must equal expected_metrics_small.json)"
            tables.append(BenchmarkTable(title=title, rows=[fixture]))
        data = {"official": official, "evidence": evidence, "fixture": fixture}
        return BenchmarkResult(tables=tables, data=data)


class BenchmarkCovidfactRequest(Request, _CutOffs):
    """Evidence P/R/hit@k of COVID-Fact's top-5 retrieval, plus the published recall flag."""

    command: ClassVar[tuple[str, ...]] = ("benchmark", "covidfact")

    root: Path = option(argument=True, help="COVID-Fact folder (or recall TSV).")

    def run(self, *, note: Note = ignore_note) -> BenchmarkResult:
        """The evidence table."""
        from failcodes.benchmarks import run as bench

        del note
        rows = bench.covidfact_evidence(self.root, self.ks())
        return BenchmarkResult(
            tables=[BenchmarkTable(title="COVID-Fact retrieval evidence", rows=rows)]
        )


class BenchmarkHealthverRequest(Request, _CutOffs):
    """Evidence P/R/hit@k of HealthVer's retrieved passages (gold = Supports/Refutes)."""

    command: ClassVar[tuple[str, ...]] = ("benchmark", "healthver")

    path: Path = option(argument=True, help="healthver_dev.csv or healthver_test.csv.")

    def run(self, *, note: Note = ignore_note) -> BenchmarkResult:
        """The evidence table."""
        from failcodes.benchmarks import run as bench

        del note
        rows = bench.healthver_evidence(self.path, self.ks())
        title = "HealthVer retrieved-passage evidence"
        return BenchmarkResult(tables=[BenchmarkTable(title=title, rows=rows)])


class BenchmarkAtomicRequest(Request):
    """Seed-003 metrics: sensitivity, precision, balanced accuracy, detection, outcomes, chunks."""

    command: ClassVar[tuple[str, ...]] = ("benchmark", "atomic")

    path: Path = option(argument=True, help="Atomic fact-check JSONL (docs/atomic-format.md).")

    def run(self, *, note: Note = ignore_note) -> BenchmarkResult:
        """The metrics table, and each system's detection rates and answer outcomes."""
        from failcodes.benchmarks import run as bench

        del note
        rows = bench.atomic_rows(self.path)
        after: list[str] = []
        for r in rows:
            det = ", ".join(f"{c} {_fmt(v)}" for c, v in r["detection_rate"].items())
            out = ", ".join(f"{o} {_fmt(v)}" for o, v in r["outcome_shares"].items())
            after.append(f"{r['system']}: detection rate: {det}; answer outcomes: {out}")
        table = BenchmarkTable(title="Atomic fact-check metrics", rows=rows)
        return BenchmarkResult(tables=[table], after=tuple(after))
