"""The ``generic`` adapter: files already in the trace format (JSONL, CSV, Parquet).

Foreign column names are renamed with ``AdapterOptions.column_map`` (CLI ``--map
claim_text=claim``; ``--map notes=`` drops a column) and extra raw verdict spellings are
accepted with ``aliases`` (CLI ``--alias Yes=supported``). ``system`` (CLI ``--system``) fills
the ``system`` field of records that have none. ``generic-labels`` does the same for clinical
label files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from failcodes import dataio
from failcodes.errors import ConfigError
from failcodes.ingest.base import AdapterOptions, IngestResult, Output
from failcodes.labels import Label
from failcodes.traces import Trace


class GenericTraces:
    """Read traces in failcodes' own format, with optional column renaming and aliases."""

    name = "generic"
    description = "traces in the failcodes trace format (JSONL, CSV + passages table, Parquet)"
    output = Output.TRACES

    def read(self, paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
        """Read and concatenate ``paths``; (system, claim_id) must be unique across all."""
        options.check_extra(self.name, ())
        if options.passages is not None and len(paths) != 1:
            raise ConfigError("--passages goes with exactly one CSV traces file")
        seen: dict[tuple[str, str], tuple[Path, int]] = {}
        traces: list[Trace] = []
        for path in paths:
            traces.extend(
                dataio.read_traces(
                    path,
                    passages_path=options.passages,
                    aliases=options.aliases,
                    column_map=options.column_map,
                    seen=seen,
                    default_system=options.system,
                )
            )
        return IngestResult(traces=traces)


class GenericLabels:
    """Read clinical labels in failcodes' label format, with optional column renaming."""

    name = "generic-labels"
    description = "clinical labels in the failcodes label format (JSONL, CSV, Parquet)"
    output = Output.LABELS

    def read(self, paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
        """Read and concatenate label files."""
        options.check_extra(self.name, ())
        labels: list[Label] = []
        seen: dict[tuple[str, str, str | None], tuple[Path, int]] = {}
        for path in paths:
            labels.extend(dataio.read_labels(path, column_map=options.column_map, seen=seen))
        return IngestResult(labels=labels)


ADAPTER = GenericTraces()
ADAPTERS = {ADAPTER.name: ADAPTER, "generic-labels": GenericLabels()}
