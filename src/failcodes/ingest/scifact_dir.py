"""The ``scifact`` adapter: a SciFact + MultiVerS folder -> traces of four systems + labels.

A thin registry entry over :func:`failcodes.ingest.scifact.load` (whose docstring documents
the verdict and label rules). PATH is a folder in the shared-data or bundled layout
(``claims_dev.jsonl`` + ``multivers_predictions_dev/``); the bundled copy is
``failcodes.bundled.path("scifact")``. System names come from the checkpoints
(``multivers-scifact`` ...), so ``--system`` is not accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from failcodes.errors import ConfigError, InputError
from failcodes.ingest import scifact
from failcodes.ingest.base import AdapterOptions, FileAdapter, IngestResult, Output, only_path


def _ingest(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """SciFact claims + MultiVerS predictions folder -> 4 systems' traces + labels.

    Reads exactly one folder.
    """
    if options.system is not None:
        raise ConfigError("the scifact adapter names its systems itself; drop --system")
    root = only_path(paths, "the scifact adapter reads exactly one folder")
    if not root.is_dir():
        raise InputError("expected a SciFact folder (claims_dev.jsonl + predictions)", path=root)
    traces, labels = scifact.load(root)
    claims = len({t.claim_id for t in traces})
    notes = (
        [
            f"{claims - len(labels):,} of {claims:,} claims carry no evidence field (no gold "
            "label, as SciFact's test split): no label for them"
        ]
        if len(labels) < claims
        else []
    )
    return IngestResult(traces=traces, labels=labels, notes=notes)


ADAPTER = FileAdapter("scifact", Output.TRACES, _ingest, reads_folders=True)
