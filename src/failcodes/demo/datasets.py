"""The bundled datasets the demo loads (each skipped when its files are absent)."""

from __future__ import annotations

from collections.abc import Callable

from failcodes.demo._base import Dataset
from failcodes.traces import Trace


def _scifact() -> Dataset | None:
    from failcodes.ingest import scifact

    root = scifact.bundled_dir()
    if not (root / "claims_dev.jsonl").is_file():
        return None
    traces, labels = scifact.load(root)
    return Dataset(
        "scifact-dev",
        traces,
        labels,
        "SciFact dev claims (CC BY 4.0) x 4 MultiVerS checkpoints' predictions; "
        "has_error = gold CONTRADICT",
    )


def _adapter_dataset(
    name: str, adapter: str, folder: str, file: str, source: str
) -> Dataset | None:
    from failcodes import bundled
    from failcodes.ingest import AdapterOptions, get_adapter

    if folder not in bundled.names():
        return None
    result = get_adapter(adapter).read([bundled.path(folder, file)], AdapterOptions())
    notes = "; ".join(result.notes)
    return Dataset(name, result.traces, result.labels, f"{source}; {notes}" if notes else source)


def _ragchecker() -> Dataset | None:
    return _adapter_dataset(
        "ragchecker-example",
        "ragchecker",
        "ragchecker",
        "checking_outputs.json",
        "RAGChecker example checking outputs (Apache-2.0); labels from answer2response",
    )


def _medexpert() -> Dataset | None:
    return _adapter_dataset(
        "medexpert-sample",
        "medexpert",
        "medexpert-sample",
        "sample_data_export_from_JSL.json",
        "MedExpert sample (MIT): clinician error spans -> sentence labels, no system traces yet",
    )


#: Loaders of bundled datasets, in demo order; each returns None when its files are absent.
BUNDLED_DATASETS: list[tuple[str, Callable[[], Dataset | None]]] = [
    ("scifact-dev", _scifact),
    ("ragchecker-example", _ragchecker),
    ("medexpert-sample", _medexpert),
]


def ragchecker_traces() -> list[Trace]:
    """Traces of the bundled RAGChecker example (claims x retrieved chunks), if bundled."""
    from failcodes import bundled
    from failcodes.errors import ConfigError
    from failcodes.ingest import get_adapter
    from failcodes.ingest.base import AdapterOptions

    try:
        path = bundled.path("ragchecker", "checking_outputs.json")
    except ConfigError:
        return []
    return get_adapter("ragchecker").read([path], AdapterOptions()).traces
