"""Base classes of the contract models: the pydantic configuration written once.

Every record failcodes reads or writes (traces, units, annotations, codebooks, reports, ...)
is a pydantic model that refuses unknown fields, so a typo in a file is an error rather than
a silently dropped value. Most are also frozen: a validated record is a value, not a buffer.

- :class:`FrozenModel`: ``extra="forbid"``, ``frozen=True`` (the default for contracts).
- :class:`StrictModel`: ``extra="forbid"`` but mutable, for the few models built up step by
  step (run summaries, report sections).

A subclass may add settings of its own (``model_config = ConfigDict(allow_inf_nan=False)``);
pydantic merges them with the base's.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

_K = TypeVar("_K", bound=Hashable)


class FrozenModel(BaseModel):
    """A contract model: unknown fields are refused and instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class StrictModel(BaseModel):
    """A contract model that refuses unknown fields but may be changed after validation."""

    model_config = ConfigDict(extra="forbid")


def first_repeat(keys: Iterable[_K]) -> _K | None:
    """The first key that occurs a second time, or None: for validators of unique fields."""
    seen: set[_K] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return None
