"""Reading the inputs of ``judge`` and ``attribute``: traces or disagreements, and a codebook.

A ``--from`` file is either a disagreements table (``failcodes disagreements`` output, JSONL
or Parquet) or a traces file in any format :func:`failcodes.traceio.read_traces` reads.
"""

from __future__ import annotations

from pathlib import Path

from failcodes import codebook as codebook_mod
from failcodes.codebook import Codebook
from failcodes.disagreementio import read_disagreement_traces, read_disagreements
from failcodes.disagreements import Disagreement
from failcodes.errors import InputError, MissingPartError
from failcodes.jsonio import peek_jsonl
from failcodes.judge.cache import check_cache
from failcodes.judge.colestimate import UnitSizes, read_unit_sizes
from failcodes.judge.journal import check_run_dir
from failcodes.traceio import read_traces
from failcodes.traces import Trace
from failcodes.units import UnitKind, disagreement_traces


def is_disagreements_file(path: Path) -> bool:
    """True if ``path`` holds disagreements (records with ``kind`` and ``claims``)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        rec = peek_jsonl(path)  # None when unreadable: the trace reader reports it
        return rec is not None and "claims" in rec and "kind" in rec
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        try:
            names = set(pq.read_schema(path).names)
        except Exception:
            return False
        return {"claims", "kind"} <= names
    return False


def load_inputs(path: str | Path) -> tuple[list[Trace], list[Disagreement] | None]:
    """Read ``--from``: the traces to judge, and the disagreements when the file holds them."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=p)
    if is_disagreements_file(p):
        items = read_disagreements(p)
        traces = disagreement_traces(items)
        if not traces:
            raise InputError("the disagreements carry no claims to judge", path=p)
        return traces, items
    traces = read_traces(p)
    if not traces:
        raise InputError("no traces found", path=p)
    return traces, None


def load_traces(path: str | Path) -> list[Trace]:
    """Read the traces of ``--from`` (from disagreements or a traces file)."""
    p = Path(path)
    if p.is_file() and is_disagreements_file(p):
        traces = read_disagreement_traces(p)
        if not traces:
            raise InputError("the disagreements carry no claims to judge", path=p)
        return traces
    return load_inputs(path)[0]


def load_unit_sizes(
    path: str | Path, kind: UnitKind, *, top_k: int | None, grouped: bool = False
) -> UnitSizes | None:
    """The units of ``--from`` as columns (the dry run's fast path), or None.

    None unless ``path`` is a disagreements or traces JSONL file its fast reader vouches for:
    the caller then reads traces with :func:`load_traces` (same result, or the one-line
    error).
    """
    p = Path(path)
    if not p.is_file():
        return None
    if not is_disagreements_file(p):  # a traces JSONL file (every unit of every trace)
        sizes = read_unit_sizes(p, kind, top_k=top_k, grouped=grouped, traces=True)
        return sizes if sizes is not None and sizes.traces else None
    sizes = read_unit_sizes(p, kind, top_k=top_k, grouped=grouped)
    if sizes is not None and not sizes.traces:
        raise InputError("the disagreements carry no claims to judge", path=p)
    return sizes


def check_run_outputs(run_dir: Path, cache_path: Path | None) -> None:
    """Check the run folder and the cache before anything is created or called."""
    if cache_path is not None:
        check_cache(cache_path)
    check_run_dir(run_dir)


def load_codebook(path: str | Path | None, kind: UnitKind | None = None) -> Codebook:
    """Read and validate a codebook file (errors name file, line and rule).

    ``None``: the bundled codebook (latest version); :func:`note_codebook` says so once the
    inputs are read. With ``kind``, a codebook without that part is refused here, naming the
    file, before any output is touched.
    """
    if path is None:
        return codebook_mod.bundled()
    cb = codebook_mod.load(path)
    if kind is not None:
        try:
            cb.part(kind)
        except MissingPartError as exc:
            raise InputError(exc.reason, path=path, field="parts") from None
    return cb


def codebook_note(path: str | Path | None, cb: Codebook) -> str | None:
    """What to say when the bundled codebook codes the data (``path`` None), else None.

    Said once the inputs are read, so a bad input still gets its error as the only line.
    """
    if path is None:
        return f"codebook: the bundled {cb.name} v{cb.version} (give --codebook for your own)"
    return None
