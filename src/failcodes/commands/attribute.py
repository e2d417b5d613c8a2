"""``attribute`` as a use case: the pipeline stage behind each disagreement (docs/attribution.md).

:class:`AttributeRequest` reads the disagreements (or traces) and the judge runs, attributes
every item, writes the tables under ``output`` and returns them (:class:`AttributeResult`).
"""

from __future__ import annotations

import csv
import functools
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from failcodes.annotations import includes_heuristic
from failcodes.attribution import (
    ATTRIBUTION_COLUMNS,
    AttributeNotes,
    CodeIndex,
    GoldFlags,
    RankGaps,
    SeenUnits,
    Strategy,
    attribute_item,
    attribution_row,
    coded_columns,
    coded_rows,
    count_rows,
    dominant_frame,
    passage_heads,
    rate_frame,
    rows_frame,
    stage_counts,
    step_heads,
)
from failcodes.commands.base import Note, Request, ignore_note, option, top_k_option
from failcodes.commands.ingest import EVIDENCE_HELP
from failcodes.csvcells import leads_like_a_formula, safe_frame, writes_raw
from failcodes.errors import InputError
from failcodes.fileio import AtomicBatch, check_output_dir, output_error
from failcodes.study import layout
from failcodes.traces import parse_evidence_declarations
from failcodes.units import UnitKind

if TYPE_CHECKING:  # pandas (~0.2 s) is imported where used, so --help does not pay for it
    from collections.abc import Mapping

    import pandas as pd

HEURISTIC_NOTE = (
    "note: codes from the offline judge are a heuristic baseline (rule-based, no model), "
    "not LLM or human judgements"
)

#: Tables written under the study layout's names (what ``failcodes report`` reads); the
#: others are written as ``<name>.csv``.
OUTPUT_FILES = {
    "per_passage_codes": layout.PER_PASSAGE,
    "per_trace_steps": layout.PER_TRACE,
    "attribution": layout.ATTRIBUTION_TABLE,
}


@dataclass
class AttributeResult:
    """How many items were attributed, the small tables, who coded the units.

    The large tables (per passage, per trace, per item) are written under ``output`` as they
    are made, not held: ``tables`` holds the summaries (stages, rates, dominant errors, panel
    agreement).
    """

    count: int
    tables: dict[str, pd.DataFrame]
    output: Path
    heuristic: bool
    coded_by: Counter[str] = field(default_factory=Counter)
    #: Some codes are a model's beside the heuristic baseline's (a cascade, or a panel of the
    #: offline judge and a model): "codes: heuristic baseline" would say all are heuristic.
    mixed: bool = False
    #: Systems read partly closed-book (``ItemSource.mixed_notes``), systems whose claims auto
    #: attributed both by gold evidence and by the judge's codes
    #: (:class:`~failcodes.attribution.GoldFlags`), and claims whose ranks skip within the
    #: top k (:class:`~failcodes.attribution.RankGaps`): said first, and by ``failcodes run``.
    gold_mix: list[str] = field(default_factory=list)

    def said(self) -> list[str]:
        """What ``failcodes run`` says on stderr too: a system attributed two ways.

        (A system read partly closed-book, partly retrieved was said in the step's log alone:
        its closed-book claims' disagreements went to verification with no word on the run's
        output.)

        In the step's log alone, a study whose data set flags its gold passages alone read its
        retrieval failures as verification (or undetermined) with no word on its output.
        """
        return list(self.gold_mix)

    def lines(self) -> list[str]:
        """The result as plain lines (a study step's log)."""
        out = [f"{self.count} items attributed; tables in {self.output}"]
        if len(self.coded_by) > 1:
            by = ", ".join(f"{coder}: {n}" for coder, n in sorted(self.coded_by.items()))
            out.append(f"units coded by: {by}")
        return out

    def json_text(self) -> str:
        """What ``attribute --format json`` prints (a rate of no coded row is null, not NaN)."""
        import pandas as pd

        def records(name: str) -> list[dict[Any, Any]]:
            frame = self.tables.get(name, pd.DataFrame())
            return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")

        summary = {
            "items": self.count,
            "heuristic_baseline": self.heuristic,
            "with_model_codes": self.mixed,
            "coded_by": dict(self.coded_by),
            "stages": records("attribution_summary"),
            "retriever_all_high": records("retriever_all_high"),
            "verifier_all_correct": records("verifier_all_correct"),
            "output": str(self.output),
        }
        return json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False)


class AttributeRequest(Request):
    """Attribute each disagreement to retrieval, provided evidence or verification.

    The rule is failcodes' own (docs/attribution.md): closed-book pipelines are never blamed on
    retrieval, nor are pipelines whose evidence came with the item. --evidence overrides the
    traces' own evidence_source.
    """

    command: ClassVar[tuple[str, ...]] = ("attribute",)

    source: Path = option(
        flags=("--from",), help="Traces or disagreements (JSONL): the judge's input."
    )
    codebook: Path | None = option(
        None, help="Codebook file (YAML/JSON; default: the bundled codebook)."
    )
    retrieval: Path | None = option(None, help="Run dir of `judge retrieval`.")
    reasoning: Path | None = option(None, help="Run dir of `judge reasoning`.")
    strategy: Strategy = option(
        Strategy.AUTO, help="auto, codebook or verdict (docs/attribution.md)."
    )
    top_k: int | None = top_k_option()
    top: int = option(3, help="Dominant subcodes per group.", ge=1)
    output: Path = option(Path("reports") / "attribution", flags=("-o", "--output"))
    evidence: list[str] = option(default_factory=list, help=EVIDENCE_HELP)

    def run(self, *, note: Note = ignore_note) -> AttributeResult:
        """Attribute every item, write the tables and the items under ``output``."""
        from failcodes.commands.inputs import ItemSource, codebook_note, load_codebook, source_units
        from failcodes.judge.journal import refuse_stale_ids

        codebook = load_codebook(self.codebook)
        declared = parse_evidence_declarations(self.evidence)
        # a traces file is read (and checked) here; a disagreements file as it is attributed
        source = ItemSource(self.source, declared, top_k=self.top_k)
        runs = ((self.retrieval, UnitKind.RETRIEVAL), (self.reasoning, UnitKind.VERIFICATION))
        for run, kind in runs:
            if run is not None:  # an earlier failcodes' ids: refused, not found uncoded
                units = functools.partial(source_units, self.source, kind, self.top_k)
                refuse_stale_ids(run, units)
        r_codes = _codes(self.retrieval, codebook, UnitKind.RETRIEVAL)
        v_codes = _codes(self.reasoning, codebook, UnitKind.VERIFICATION)
        if self.strategy is Strategy.CODEBOOK and self.retrieval is None:
            raise InputError("the codebook strategy needs --retrieval RUN_DIR (judge retrieval)")
        check_output_dir(self.output)
        gold = GoldFlags()  # per system, claims with gold flags and without (auto: said)
        gaps = RankGaps(self.top_k)  # claims whose ranks skip within the top k (said)
        r_codes.check()
        if self.reasoning is not None:
            v_codes.check()
        try:
            # every file or none: an error in the disagreements (read as they are attributed)
            # leaves nothing, not even the folder
            with AtomicBatch() as batch:
                count, tables = self._write(batch, source, r_codes, v_codes, codebook, gold, gaps)
                self._write_notes(batch, source, gold, gaps)
            self._remove_leftovers(tables)
        except OSError as exc:
            raise output_error(exc, self.output) from None
        for line in source.mixed_notes():  # what the attribution assumed, first
            note(line)
        for line in gold.lines():  # a system's claims attributed two ways under auto
            note(line)
        skipped = gaps.line()
        if skipped:  # fewer passages in the top k than asked: the ranks skip
            note(skipped)
        said = codebook_note(self.codebook, codebook)  # after any error: the error is one line
        if said:
            note(said)
        heuristic = r_codes.heuristic() or v_codes.heuristic()
        mixed = heuristic and (r_codes.models() or v_codes.models())
        coded_by: Counter[str] = Counter()
        for codes in (r_codes, v_codes):  # a cascade mixes coders: say who coded how many units
            for (coder, kind), n in codes.coders.items():
                label = (
                    " (heuristic baseline)"
                    if kind == "heuristic"
                    else " (includes heuristic baseline)"
                    if includes_heuristic(coder)
                    else ""
                )
                coded_by[f"{coder}{label}"] += n
        if heuristic:
            note(HEURISTIC_NOTE)
        # said by `failcodes run` (a system read partly closed-book was in the step's log alone)
        first = [*source.mixed_notes(), *gold.lines(), *([skipped] if skipped else [])]
        return AttributeResult(count, tables, self.output, heuristic, coded_by, mixed, first)

    def _write_notes(self, batch: Any, source: Any, gold: GoldFlags, gaps: RankGaps) -> None:
        """Stage ``notes.json``: the first lines said, which the report reads back.

        The report counted the rank gaps again from the whole disagreements file (each claim's
        ranks; 2.1M passage rows at 10x) where this pass had counted them.
        """
        import os

        notes = AttributeNotes(
            source=os.path.relpath(self.source.resolve(), self.output.resolve()),
            top_k=self.top_k,
            strategy=self.strategy,
            rank_gaps=gaps.line(),
            gold_mix=gold.lines(),
            mixed_evidence=source.mixed_notes(),
        )
        path = self.output / layout.ATTRIBUTION_NOTES
        batch.stage(path).write_text(notes.model_dump_json(indent=2) + "\n", encoding="utf-8")

    def _remove_leftovers(self, tables: Mapping[str, object]) -> None:
        """Remove the tables of an earlier run into ``output`` that this run did not write.

        A pipeline declared closed-book after a run with its passages as retrieved (or a
        study's judge kinds narrowed) is attributed again without a retrieval run: the earlier
        ``per_passage.csv`` stayed, and the report showed its Table 8 as this study's.
        """
        written = {*tables, "attribution", "attribution_summary"}
        written |= {"per_passage_codes"} if self.retrieval is not None else set()
        written |= {"per_trace_steps"} if self.reasoning is not None else set()
        for name in _OWN_TABLES - written:
            self._path(name).unlink(missing_ok=True)

    def _path(self, name: str) -> Path:
        return self.output / OUTPUT_FILES.get(name, f"{name}.csv")

    def _write(
        self,
        batch: Any,
        source: Any,
        r_codes: Any,
        v_codes: Any,
        codebook: Any,
        gold: GoldFlags,
        gaps: RankGaps,
    ) -> tuple[int, dict[str, pd.DataFrame]]:
        """Attribute the items one at a time, each table written a chunk at a time."""
        import pandas as pd

        items = _CsvSink(batch, self._path("attribution"))
        jsonl = batch.stage(self.output / layout.ATTRIBUTION_ITEMS).open("wb")
        passages = _CsvSink(batch, self._path("per_passage_codes")) if self.retrieval else None
        steps = _CsvSink(batch, self._path("per_trace_steps")) if self.reasoning else None
        r_rates: dict[str, list[int]] = {}
        r_errors: dict[str, Any] = {}
        v_rates: dict[str, list[int]] = {}
        v_errors: dict[str, Any] = {}
        r_columns = coded_columns(r_codes, passage=True)
        v_columns = coded_columns(v_codes, passage=False)
        r_counts: dict[str, Any] = {"by": "retriever", "flag": "all_high"}
        # each (retriever, unit) once: a passage retrieved for several systems' claims is one
        # unit of the retriever's (retriever_all_high.csv counted it once per system)
        r_counts |= {"rates": r_rates, "errors": r_errors, "once": SeenUnits(r_codes)}
        v_counts: dict[str, Any] = {"by": "verifier", "flag": "all_correct"}
        v_counts |= {"rates": v_rates, "errors": v_errors}
        systems: list[str] = []
        stages: list[str] = []
        rows: list[tuple[object, ...]] = []
        claims: list[Any] = []

        def flush(final: bool = False) -> None:
            if rows or (final and not items.started):
                items.write(pd.DataFrame(rows or None, columns=list(ATTRIBUTION_COLUMNS)))
                rows.clear()
            if passages is not None:
                pp = coded_rows(*passage_heads(claims), r_codes)
                if pp or (final and not passages.started):
                    passages.write_rows(pp, r_columns, "assessed_dimensions")
                    count_rows(pp, r_columns, codebook, UnitKind.RETRIEVAL, **r_counts)
            if steps is not None:
                pt = coded_rows(*step_heads(claims), v_codes)
                if pt or (final and not steps.started):
                    steps.write_rows(pt, v_columns, "assessed_dimensions")
                    count_rows(pt, v_columns, codebook, UnitKind.VERIFICATION, **v_counts)
            claims.clear()

        count = 0
        try:
            for item, new in source:
                done = attribute_item(item, r_codes, strategy=self.strategy, top_k=self.top_k)
                if self.strategy is Strategy.AUTO:
                    gold.add(new)
                gaps.add(new)
                jsonl.write((done.model_dump_json() + "\n").encode("utf-8"))
                rows.append(attribution_row(done))
                systems.append(sys.intern(done.system))
                stages.append(done.stage.value)
                claims.extend(new)
                count += 1
                if len(claims) >= _CLAIMS_PER_CHUNK or len(rows) >= _ROWS_PER_CHUNK:
                    flush()
            flush(final=True)
        except BaseException:  # the batch deletes the files: close them first
            for sink in (items, passages, steps):
                if sink is not None:
                    sink.abandon()
            jsonl.close()
            raise
        for sink in (items, passages, steps):
            if sink is not None:
                sink.close()
        jsonl.close()
        summary = stage_counts(pd.DataFrame({"system": systems, "stage": stages}))
        tables: dict[str, pd.DataFrame] = {"attribution_summary": summary}
        if self.retrieval is not None:
            tables["retriever_all_high"] = rate_frame(r_rates, by="retriever", flag="all_high")
            tables["retrieval_dominant_errors"] = dominant_frame(
                r_errors, codebook, UnitKind.RETRIEVAL, by="retriever", top=self.top
            )
        if self.reasoning is not None:
            tables["verifier_all_correct"] = rate_frame(v_rates, by="verifier", flag="all_correct")
            tables["verification_dominant_errors"] = dominant_frame(
                v_errors, codebook, UnitKind.VERIFICATION, by="verifier", top=self.top
            )
        tables.update(self._panel_tables())
        for name, df in tables.items():
            path = self._path(name)
            batch.stage(path).write_text(safe_frame(df, path).to_csv(index=False), encoding="utf-8")
        return count, tables

    def _panel_tables(self) -> dict[str, pd.DataFrame]:
        import pandas as pd

        from failcodes.judge.panelrun import read_panel

        tables: dict[str, pd.DataFrame] = {}
        for kind_name, run_dir in (("retrieval", self.retrieval), ("reasoning", self.reasoning)):
            panel = read_panel(run_dir) if run_dir is not None else None
            if panel is not None:  # inter-judge agreement beside the tables on its consensus
                tables[f"{kind_name}_panel_agreement"] = pd.DataFrame(
                    [r.model_dump() for r in panel.agreement]
                )
        return tables


#: Every table ``attribute`` may write (by :meth:`AttributeRequest._path` name).
_OWN_TABLES = frozenset(
    {
        "per_passage_codes",
        "per_trace_steps",
        "retriever_all_high",
        "retrieval_dominant_errors",
        "verifier_all_correct",
        "verification_dominant_errors",
        "retrieval_panel_agreement",
        "reasoning_panel_agreement",
    }
)

#: Claims whose table rows are made and written at a time (~10 passage rows each).
_CLAIMS_PER_CHUNK = 2_000
#: Attributed items whose table rows are written at a time.
_ROWS_PER_CHUNK = 5_000


class _CsvSink:
    """A table written to a staged CSV a chunk at a time, as its whole frame's ``to_csv``.

    pandas formats each chunk; the one column whose text depends on the whole table (whole
    numbers with a missing value among them are floats: ``5.0``) is written as the whole
    table would have it: once a chunk shows a missing value the rest are written as floats,
    and chunks written before as integers are rewritten at :meth:`close`.
    """

    def __init__(self, batch: Any, path: Path) -> None:
        self.path = path
        self.tmp = batch.stage(path)
        self._fh = self.tmp.open("w", encoding="utf-8", newline="")
        #: The header is written.
        self.started = False
        self._lines = 0
        self._column: str | None = None
        self._missing = False  # a missing value seen in the column
        self._as_int = False  # whole numbers written as integers in some chunk

    def write(self, frame: pd.DataFrame, whole: str | None = None) -> None:
        """Write ``frame``'s rows (the header first); ``whole``: the whole-number column."""
        if whole is not None:
            self._column = whole
            values = frame[whole]
            if values.isna().any():
                self._missing = True
            if self._missing and values.notna().any():
                frame = frame.assign(**{whole: values.astype("float64")})
            elif values.dtype.kind == "i":
                self._as_int = True
        safe = safe_frame(frame, self.path, first_line=self._lines + 2)
        self._fh.write(safe.to_csv(index=False, header=not self.started))
        self.started = True
        self._lines += len(frame)

    def write_rows(
        self, rows: list[tuple[object, ...]], columns: list[str], whole: str | None = None
    ) -> None:
        """:meth:`write` of the table of ``rows``, by ``csv`` where that is the same text.

        pandas writes such rows with ``csv.writer`` too: text as it is, None empty, a bool
        ``True``/``False``, an integer as ``str`` and a float of a column with missing
        values as ``repr``; a chunk with a NUL or a cell to neutralise goes through
        :meth:`write`.
        """
        cells = [v for row in rows for v in row if v.__class__ is str]
        joined = "\n".join(cells)
        if "\x00" in joined or (not writes_raw() and leads_like_a_formula(joined)):
            self.write(rows_frame(rows, columns), whole)
            return
        if whole is not None:
            self._column = whole
            at = columns.index(whole)
            values = [row[at] for row in rows]
            self._missing = self._missing or None in values
            if self._missing and any(v is not None for v in values):
                rows = [(*row[:at], _float(row[at]), *row[at + 1 :]) for row in rows]
            elif any(v.__class__ is int for v in values):
                self._as_int = True
        writer = csv.writer(self._fh, lineterminator="\n")
        if not self.started:
            writer.writerow(columns)
            self.started = True
        writer.writerows(rows)
        self._lines += len(rows)

    def abandon(self) -> None:
        """Close the file unfinished (an error: the batch deletes it)."""
        self._fh.close()

    def close(self) -> None:
        """Finish the file (rewriting integer chunks as floats if a value was missing)."""
        self._fh.close()
        if self._column is not None and self._missing and self._as_int:
            _as_floats(self.tmp, self._column)


def _float(value: object) -> object:
    """A whole number as the float pandas writes for it (``5.0``); anything else as it is."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _as_floats(tmp: Path, column: str) -> None:
    """Rewrite ``column`` of the staged CSV ``tmp``: each whole number as pandas writes a float.

    The rows were written by pandas (``csv.writer``, minimal quoting, newline-ended lines), so
    reading and writing them again with ``csv`` gives the same bytes for every other cell.
    """
    fixed = tmp.with_name(tmp.name + ".fixed")
    try:
        with (
            tmp.open(newline="", encoding="utf-8") as src,
            fixed.open("w", newline="", encoding="utf-8") as dst,
        ):
            reader = csv.reader(src)
            writer = csv.writer(dst, lineterminator="\n")
            header = next(reader)
            writer.writerow(header)
            at = header.index(column)
            for row in reader:
                cell = row[at]
                if cell and "." not in cell:
                    row[at] = cell + ".0"
                writer.writerow(row)
        fixed.replace(tmp)
    finally:
        fixed.unlink(missing_ok=True)


def _codes(run_dir: Path | None, codebook: Any, kind: Any) -> Any:
    """The run's codes (a panel's consensus) of ``kind`` by unit id, slim (CodeIndex).

    Attribution reads a unit's status, coder and codes only; a judge annotation is mostly its
    per-dimension rationale and quote (a paper-scale study's 240k annotations held whole took
    gigabytes, and ~4 KB each even without their text). Each annotation is read (and
    checked) one at a time, a journal row msgspec vouches for as its struct (no model), and
    only its small shared code record kept.
    """
    codes = CodeIndex(codebook, kind)
    if run_dir is not None:
        from failcodes.judge.panelrun import iter_run_codes

        kinds: Counter[str] = Counter()
        for ann in iter_run_codes(run_dir, codebook):
            kinds[ann.unit_kind.value] += 1
            codes.add(ann)
        _check_kind(run_dir, kind.value, kinds)
    return codes


#: The option and the judge command of each unit kind.
_KIND_WORDS = {
    "retrieval": ("--retrieval", "retrieval"),
    "verification": ("--reasoning", "reasoning"),
}


def _check_kind(run_dir: Path, kind: str, kinds: Counter[str]) -> None:
    """Refuse a run folder holding only the other kind's units (the two options swapped).

    Its annotations were skipped: every unit uncoded and every item undetermined, at exit 0.
    """
    if kinds[kind] or not kinds:
        return
    other = next(iter(kinds))
    given, _ = _KIND_WORDS[kind]
    _, other_judge = _KIND_WORDS.get(other, ("", other))
    _, own_judge = _KIND_WORDS[kind]
    raise InputError(
        f"given as {given}, it holds {kinds[other]} {other} annotation(s) (failcodes judge "
        f"{other_judge}) and no {kind} one: give {given} the run of failcodes judge {own_judge}",
        path=run_dir,
    )
