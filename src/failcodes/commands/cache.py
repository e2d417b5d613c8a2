"""``cache stats|prune`` as use cases: inspect and trim the judge's response cache."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import ClassVar, Self

from pydantic import model_validator

from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.commands.judge import DEFAULT_CACHE
from failcodes.contract import FrozenModel
from failcodes.errors import InputError
from failcodes.judge.cache import CacheStats, ResponseCache, check_cache

CACHE_HELP = "Response cache (SQLite)."


def _open(path: Path) -> ResponseCache:
    if not path.is_file():
        raise InputError("no cache file here", path=path)
    check_cache(path)
    return ResponseCache(path)


class CacheStatsRequest(Request):
    """Entries per provider:model, hits and size."""

    command: ClassVar[tuple[str, ...]] = ("cache", "stats")

    cache: Path = option(DEFAULT_CACHE, help=CACHE_HELP)

    def run(self, *, note: Note = ignore_note) -> CacheStats:
        """Read the cache's stats."""
        del note
        with closing(_open(self.cache)) as c:
            return c.stats()


class CachePruneResult(FrozenModel):
    """How many entries were deleted from which cache."""

    pruned: int
    cache: Path

    def lines(self) -> list[str]:
        """The result as the CLI prints it."""
        return [f"pruned {self.pruned} entries from {self.cache}"]


class CachePruneRequest(Request):
    """Delete entries matching every filter given (or all with --all)."""

    command: ClassVar[tuple[str, ...]] = ("cache", "prune")

    cache: Path = option(DEFAULT_CACHE, help=CACHE_HELP)
    older_than: float | None = option(None, help="Days.", ge=0)
    model: str | None = option(None, help="MODEL or provider:MODEL.")
    codebook_hash: str | None = option(None, help="Hash prefix.")
    everything: bool = option(False, flags=("--all",), help="Delete every entry.")

    @model_validator(mode="after")
    def _some_filter(self) -> Self:
        if not self.everything and {self.older_than, self.model, self.codebook_hash} == {None}:
            raise ValueError(
                "say what to prune: --older-than DAYS, --model, --codebook-hash or --all"
            )
        return self

    def run(self, *, note: Note = ignore_note) -> CachePruneResult:
        """Delete the matching entries."""
        del note
        with closing(_open(self.cache)) as c:
            n = c.prune(
                older_than_days=self.older_than, model=self.model, codebook_hash=self.codebook_hash
            )
        return CachePruneResult(pruned=n, cache=self.cache)
