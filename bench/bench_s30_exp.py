"""claim_unit_ids: each string encoded once for both ids vs main's two passes (issue 30).

``attribute`` computes, for every claim, its passages' retrieval unit ids and its
verification unit id. Main computed them as two calls (``retrieval_unit_digests`` and
``unit_id``), JSON-encoding the claim and every passage's text, source and title twice.
This prints the CPU of both over the claims (with a reasoning trace) of a disagreements file,
alternated in one run, and checks they give the same ids.

    PYTHONPATH=src python bench/bench_s30_exp.py DISAGREEMENTS.jsonl [--rounds 4]

5 December 2026, 1x bench study (29,580 claims, ~10 passages each), load 7-9 (other
sessions running): old 0.70-0.74, new 0.54-0.56 CPU-s (new/old 0.75-0.80).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from failcodes.disagreementio import iter_disagreement_claims
from failcodes.units import UnitKind, claim_unit_ids, retrieval_unit_digests, unit_id
from failcodes.verdicts import Verdict


def two_passes(claim: str, passages: Any, reasoning: str | None, verdict: Verdict) -> Any:
    """Main's claim_unit_ids (before this change)."""
    step = unit_id(UnitKind.VERIFICATION, claim, passages, reasoning, verdict)
    return retrieval_unit_digests(claim, passages), step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("disagreements")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    claims = [c for _, c in iter_disagreement_claims(args.disagreements) if c.reasoning.strip()]
    print(f"{len(claims)} claims, {sum(len(c.passages) for c in claims)} passages")
    for r in range(args.rounds):
        got = {}
        for name, ids in (("old", two_passes), ("new", claim_unit_ids)):
            t0 = time.process_time()
            got[name] = [ids(c.claim, c.passages, c.reasoning, Verdict(c.verdict)) for c in claims]
            took = time.process_time() - t0
            got[name + " s"] = took
        same = got["old"] == got["new"]
        print(
            f"round {r}: old {got['old s']:.3f} new {got['new s']:.3f} CPU-s "
            f"(new/old {got['new s'] / got['old s']:.2f}); same ids: {same}"
        )
        assert same


if __name__ == "__main__":
    main()
