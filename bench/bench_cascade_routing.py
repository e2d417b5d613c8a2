"""Cascade routing: send the stronger judge whole units, or only their doubtful dimensions?

Measured on the bundled data (SciFact dev x MultiVerS checkpoints and the RAGChecker example,
as `failcodes demo` uses them): the offline heuristic baseline codes every unit and flags
dimensions it doubts (per-dimension ``uncertain``); for the units it doubts, the stronger
judge's cost is estimated two ways with the engine's own token estimate (~4 characters per
token) and the bundled gpt-5-mini prices:

* unit routing (failcodes' choice): the whole unit, the usual schema; one cacheable prefix.
* dimension routing: only the doubtful dimensions, a schema holding just those; every distinct
  subset of dimensions is a distinct prefix (system prompt + schema), so each pays its own
  cache miss, and the codebook prompt is still sent whole (the judge needs every definition
  to tell the codes apart).

Run: PYTHONPATH=src python bench/bench_cascade_routing.py
"""

from __future__ import annotations

import json
from collections import Counter

from failcodes import bundled, codebook
from failcodes.codebook import Part
from failcodes.ingest import AdapterOptions, get_adapter
from failcodes.judge.estimate import sample_answer
from failcodes.judge.pricing import estimate_tokens, load_prices
from failcodes.judge.prompts import render_system, render_user
from failcodes.judge.providers.offline import OfflineCoder
from failcodes.judge.schema import answer_schema
from failcodes.traces import Trace
from failcodes.units import Unit, UnitKind, build_units

PRICE = load_prices().lookup("openai:gpt-5-mini")


def _traces() -> list[Trace]:
    rag = get_adapter("ragchecker").read(
        [bundled.path("ragchecker", "checking_outputs.json")], AdapterOptions()
    )
    return list(rag.traces)


def _subpart(part: Part, dims: tuple[str, ...]) -> Part:
    return part.model_copy(update={"dimensions": tuple(d for d in part.dimensions if d.id in dims)})


def main() -> None:
    assert PRICE is not None
    cb = codebook.bundled()
    coder = OfflineCoder()
    traces = _traces()
    print(
        f"{'part':<13}{'units':>7}{'doubtful':>9}{'dims':>6}{'doubt dims':>11}"
        f"{'unit $':>10}{'dim $':>10}{'prefixes':>9}{'dim/unit':>9}"
    )
    for kind in (UnitKind.RETRIEVAL, UnitKind.VERIFICATION):
        part = cb.part(kind)
        units: list[Unit] = build_units(traces, kind)
        system = render_system(cb, kind)
        full_schema = answer_schema(part)
        doubtful: list[tuple[Unit, tuple[str, ...]]] = []
        n_dims = 0
        for unit in units:
            result = coder.code(unit, part)
            if result.answer is None:
                doubtful.append((unit, tuple(d.id for d in part.dimensions)))
                continue
            dims = tuple(result.answer.uncertain_dimensions())
            if dims:
                doubtful.append((unit, dims))
                n_dims += len(dims)
        if not doubtful:
            print(f"{kind.value:<13}{len(units):>7}{0:>9}")
            continue

        def cost(prefix: str, user: str, out: int, cached: bool) -> float:
            p = estimate_tokens(prefix)
            tokens = p + estimate_tokens(user)
            assert PRICE is not None
            read = p if cached else 0
            return (
                (tokens - read) * PRICE.input
                + read * (PRICE.cached_input or PRICE.input)
                + out * PRICE.output
            ) / 1e6

        unit_total = 0.0
        unit_prefix = system + json.dumps(full_schema)
        unit_out = estimate_tokens(json.dumps(sample_answer(full_schema)))
        for i, (unit, _dims) in enumerate(doubtful):
            unit_total += cost(unit_prefix, render_user(unit), unit_out, cached=i > 0)
        dim_total = 0.0
        seen: Counter[tuple[str, ...]] = Counter()
        for unit, dims in doubtful:
            schema = answer_schema(_subpart(part, dims))
            out = estimate_tokens(json.dumps(sample_answer(schema)))
            dim_total += cost(system + json.dumps(schema), render_user(unit), out, seen[dims] > 0)
            seen[dims] += 1
        print(
            f"{kind.value:<13}{len(units):>7}{len(doubtful):>9}{len(part.dimensions):>6}"
            f"{n_dims:>11}{unit_total:>10.4f}{dim_total:>10.4f}{len(seen):>9}"
            f"{dim_total / unit_total:>9.2f}"
        )


if __name__ == "__main__":
    main()
