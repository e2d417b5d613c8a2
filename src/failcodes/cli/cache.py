"""``failcodes cache stats|prune``: inspect and trim the judge's response cache."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from failcodes.cli.main import command_group
from failcodes.cli.options import data_console
from failcodes.commands.judge import DEFAULT_CACHE
from failcodes.errors import ConfigError, InputError
from failcodes.judge.cache import ResponseCache, check_cache

CacheOpt = Annotated[Path, typer.Option("--cache", help="Response cache (SQLite).")]

cache_app = command_group("cache")


def _open(path: Path) -> ResponseCache:
    if not path.is_file():
        raise InputError("no cache file here", path=path)
    check_cache(path)
    return ResponseCache(path)


@cache_app.command("stats")
def stats(
    cache: CacheOpt = DEFAULT_CACHE,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Entries per provider:model, hits and size."""
    c = _open(cache)
    try:
        st = c.stats()
    finally:
        c.close()
    out = data_console(soft_wrap=True)
    if as_json:
        out.print_json(json.dumps(asdict(st)))
        return
    out.print(
        f"{st.path}: {st.entries} entries, {st.hits} hits, {st.size_bytes / 1e6:.2f} MB",
        highlight=False,
    )
    for model, n in st.by_model.items():
        out.print(f"  {model}: {n}", highlight=False)


@cache_app.command("prune")
def prune(
    cache: CacheOpt = DEFAULT_CACHE,
    older_than: Annotated[float | None, typer.Option("--older-than", min=0, help="Days.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="MODEL or provider:MODEL.")] = None,
    codebook_hash: Annotated[
        str | None, typer.Option("--codebook-hash", help="Hash prefix.")
    ] = None,
    everything: Annotated[bool, typer.Option("--all", help="Delete every entry.")] = False,
) -> None:
    """Delete entries matching every filter given (or all with --all)."""
    if not everything and older_than is None and model is None and codebook_hash is None:
        raise ConfigError("say what to prune: --older-than DAYS, --model, --codebook-hash or --all")
    c = _open(cache)
    try:
        n = c.prune(older_than_days=older_than, model=model, codebook_hash=codebook_hash)
    finally:
        c.close()
    data_console(soft_wrap=True).print(f"pruned {n} entries from {cache}")
