"""Synthetic retrieval workloads with realistic overlap (bench_judge_scale and its tests).

:func:`overlapping_traces` builds ``claims x retrievers`` traces with ``top_k`` passages each,
of which ``shared`` appear in every retriever's list (at different ranks, as real retrievers
return overlapping documents in different orders) and the rest are the retriever's own.
Deterministic: the same arguments give the same traces.
"""

from __future__ import annotations

from collections.abc import Iterator

from failcodes.traces import Passage, Trace
from failcodes.verdicts import Verdict

_WORDS = [
    "metformin",
    "lowers",
    "glycated",
    "haemoglobin",
    "in",
    "adults",
    "with",
    "type",
    "two",
    "diabetes",
    "over",
    "twelve",
    "weeks",
    "of",
    "treatment",
    "compared",
    "with",
    "placebo",
    "in",
    "a",
    "randomised",
    "controlled",
    "trial",
    "of",
    "outpatients",
    "with",
    "renal",
    "impairment",
    "where",
    "lactic",
    "acidosis",
    "was",
    "rare",
    "and",
    "gastrointestinal",
    "effects",
    "were",
    "common",
]


_OFF_TOPIC = [
    "cinnamon",
    "tea",
    "is",
    "a",
    "popular",
    "winter",
    "drink",
    "and",
    "walking",
    "outdoors",
    "improves",
    "mood",
    "in",
    "many",
    "older",
    "people",
    "according",
    "to",
    "a",
    "survey",
    "of",
    "households",
    "about",
    "seasonal",
    "habits",
    "and",
    "sleep",
]


def _text(seed: int, n_words: int) -> str:
    """On-topic, loosely related or off-topic text, by seed (so judges see a mix)."""
    kind = seed % 3
    vocab = _OFF_TOPIC if kind == 2 else _WORDS
    words = [vocab[(seed * 7 + i * 13) % len(vocab)] for i in range(n_words)]
    lead = "Metformin lowers HbA1c in adults with type 2 diabetes. " if kind == 0 else ""
    return f"{lead}Study {seed}: " + " ".join(words) + "."


def overlapping_traces(
    claims: int,
    retrievers: int = 4,
    top_k: int = 10,
    shared: int = 5,
    *,
    passage_words: int = 60,
) -> Iterator[Trace]:
    """Yield ``claims * retrievers`` traces; ``shared`` of each top-k list is common to all."""
    for c in range(claims):
        claim = f"Metformin lowers HbA1c in adults with type 2 diabetes (claim {c})."
        for r in range(retrievers):
            passages = []
            for i in range(top_k):
                if i < shared:
                    pid, seed = f"c{c}-s{i}", c * 1000 + i
                else:
                    pid, seed = f"c{c}-r{r}-o{i}", c * 1000 + 100 * (r + 1) + i
                # shared passages are ranked in a different order by each retriever
                rank = (i + r) % shared + 1 if i < shared else i + 1
                passages.append(
                    Passage(
                        passage_id=pid,
                        rank=rank,
                        text=_text(seed, passage_words),
                        source="pubmed",
                    )
                )
            passages.sort(key=lambda p: p.rank)
            yield Trace(
                system=f"sys{r}",
                question_id=f"q{c}",
                sentence_id=f"q{c}-s1",
                claim_id=f"q{c}-c1",
                claim=claim,
                verdict=Verdict.SUPPORTED,
                retriever=f"retriever{r}",
                verifier="verifier",
                passages=tuple(passages),
            )
