"""Deduplicate proposed patterns against the codebook, earlier decisions and each other.

The rule (names normalised, equal names anywhere in the part, within a dimension a Jaccard
similarity of name and name + definition tokens against the project's threshold,
:data:`~failcodes.saturation.models.DEFAULT_SIMILARITY_THRESHOLD` by default) and the order
drafts are compared in: docs/saturation.md, step 4 ("Deduplicate").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from failcodes.annotations import CoderKind
from failcodes.codebook import Codebook
from failcodes.saturation.models import Proposal, ProposalDraft, ProposalStatus
from failcodes.units import UnitKind

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just
    me more most my no nor not now of off on once only or other our out over own same she should
    so some such than that the their them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    whose via per vs versus whereas however also although though thus therefore may might must
    shall among within without upon across""".split()  # noqa: SIM905
)

_SPLIT = re.compile(r"[\W_]+")


def _stem(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def _fold(text: str) -> str:
    """``text`` case-folded, its accents dropped (NFKD, combining marks removed).

    Split on anything but a-z and 0-9, 'Sjögren' was 'sj gren': a reviewer's 'Sjögren
    syndrome population' beside the codebook's 'Sjogren syndrome population' was a new
    pattern, counted in the stop rule and the accumulation curve (leaf sj_gren_...), and
    a name in another script normalised to nothing.
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    """Normalised content tokens of ``text``, in order (duplicates kept)."""
    return [_stem(t) for t in _SPLIT.split(_fold(text)) if t and t not in STOPWORDS]


def normalise_name(name: str) -> str:
    """The normalised form of a pattern name (tokens joined by one space)."""
    return " ".join(tokens(name))


def slug(name: str) -> str:
    """An id-safe form of a name: normalised tokens joined by underscores."""
    ascii_tokens = (re.sub(r"[^0-9a-z]", "", t) for t in tokens(name))  # ids: [a-z0-9_]
    return "_".join(t for t in ascii_tokens if t) or "pattern"


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def similarity(
    name_a: str,
    definition_a: str,
    name_b: str,
    definition_b: str,
    *,
    ignore: frozenset[str] = frozenset(),
) -> float:
    """Similarity of two patterns in [0, 1] (see the module docstring).

    ``ignore`` holds the tokens of the proposed parent subcode, removed before the overlaps.
    """
    norm_a, norm_b = normalise_name(name_a), normalise_name(name_b)
    if norm_a and norm_a == norm_b:
        return 1.0
    names_a, names_b = set(norm_a.split()) - ignore, set(norm_b.split()) - ignore
    if not names_a & names_b:
        return 0.0
    j_name = _jaccard(names_a, names_b)
    j_all = _jaccard(
        set(tokens(f"{name_a} {definition_a}")) - ignore,
        set(tokens(f"{name_b} {definition_b}")) - ignore,
    )
    return max(j_name, (j_name + j_all) / 2)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance of ``a`` and ``b`` (insertions, deletions, substitutions)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, start=1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


#: Most edits at which a name is said to be close to another (and at most one per 5 letters).
CLOSE_EDITS = 2


def close_names(name: str, others: Iterable[tuple[str, str]]) -> list[tuple[str, str, int]]:
    """The ``(ref, name)`` of ``others`` whose normalised name is a few edits from ``name``.

    A spelling variant ('Paediatric'/'Pediatric', 'Tumour'/'Tumor') normalises apart, so it
    was a new pattern without a word; it is not joined (hypertension/hypotension are two
    edits apart too), only said: ``(ref, name, edits)`` for each, closest first.
    """
    norm = normalise_name(name)
    out = []
    for ref, other in others:
        theirs = normalise_name(other)
        if not norm or not theirs or norm == theirs:
            continue
        n = edit_distance(norm, theirs)
        if n <= CLOSE_EDITS and 5 * n <= min(len(norm), len(theirs)):
            out.append((ref, other, n))
    return sorted(out, key=lambda hit: hit[2])


def _close_note(proposal: Proposal, near: Sequence[KnownPattern]) -> tuple[str, ...]:
    """Notes for an open proposal whose name is a few edits from a code or another proposal."""
    by_ref = {k.ref: k for k in near}
    notes = []
    for ref, other, n in close_names(proposal.name, ((k.ref, k.name) for k in near)):
        known = by_ref[ref]
        if ref.startswith(("leaf:", "subcode:")):
            what = f"existing code {ref[ref.index(':') + 1 :]!r} ({other!r})"
            how = (
                f"merge with target {ref} if it is the same pattern"
                if known.dimension == proposal.dimension
                else f"reject it if it is the same pattern (dimension {known.dimension})"
            )
        elif not ref.startswith(f"r{proposal.round:04d}-"):
            what = f"proposal {ref} ({other!r}), rejected or merged in an earlier round"
            how = "reject it if it is the same pattern"
        else:
            what = f"proposal {ref} ({other!r}) of this round"
            how = "accept one and merge or reject the other if they are the same pattern"
        notes.append(
            f"new pattern {proposal.name!r} is close to {what} (edit distance {n}): a "
            f"spelling variant is not joined by itself; {how}"
        )
    return tuple(notes)


@dataclass(frozen=True)
class KnownPattern:
    """Something a draft may repeat: an existing leaf/subcode or an earlier proposal."""

    ref: str  # "leaf:ID", "subcode:ID" or a proposal id
    name: str
    definition: str
    dimension: str


def codebook_patterns(codebook: Codebook, kind: UnitKind) -> list[KnownPattern]:
    """Every leaf and subcode of the codebook part for ``kind``."""
    out: list[KnownPattern] = []
    for dim in codebook.part(kind).dimensions:
        for sub in dim.subcodes:
            out.append(KnownPattern(f"subcode:{sub.id}", sub.label, sub.definition, dim.id))
            out.extend(
                KnownPattern(f"leaf:{leaf.id}", leaf.label, leaf.definition, dim.id)
                for leaf in sub.leaves
            )
    return out


def _best(
    draft: ProposalDraft,
    candidates: Iterable[KnownPattern],
    threshold: float,
    ignore: frozenset[str],
) -> tuple[KnownPattern, float] | None:
    best: tuple[KnownPattern, float] | None = None
    for cand in candidates:
        if cand.dimension == draft.dimension:
            sim = similarity(
                draft.name, draft.definition, cand.name, cand.definition, ignore=ignore
            )
        elif normalise_name(draft.name) == normalise_name(cand.name):
            sim = 1.0
        else:
            continue
        if sim >= threshold and (best is None or sim > best[1]):
            best = (cand, sim)
    return best


def _parent_tokens(codebook: Codebook, kind: UnitKind, draft: ProposalDraft) -> frozenset[str]:
    if draft.parent_subcode is None:
        return frozenset()
    try:
        dim = codebook.part(kind).dimension(draft.dimension)
    except KeyError:
        return frozenset()
    for sub in dim.subcodes:
        if sub.id == draft.parent_subcode:
            return frozenset(tokens(f"{sub.id} {sub.label}"))
    return frozenset()


def deduplicate(
    drafts: Sequence[ProposalDraft],
    *,
    codebook: Codebook,
    kind: UnitKind,
    round_number: int,
    proposer: str,
    proposer_kind: CoderKind,
    threshold: float,
    prior: Sequence[KnownPattern] = (),
) -> list[Proposal]:
    """Turn a round's drafts into proposals, marking duplicates (see module docstring).

    ``prior`` holds patterns of earlier rounds that reviewers rejected or merged; a draft that
    repeats one is a duplicate of it. Returned proposals keep the drafts' order and get ids
    ``rNNNN-pNN`` in that order.
    """
    existing = codebook_patterns(codebook, kind)
    taken = set(codebook.codes())  # every id in the codebook: a new code avoids them
    kept: list[Proposal] = []
    for index, draft in enumerate(drafts, start=1):
        pid = f"r{round_number:04d}-p{index:02d}"
        base_id = slug(draft.name)
        leaf_id, n = base_id, 2
        while leaf_id in taken:
            leaf_id, n = f"{base_id}_{n}", n + 1
        proposal = Proposal(
            **draft.model_dump(),
            id=pid,
            round=round_number,
            leaf_id=leaf_id,
            proposer=proposer,
            proposer_kind=proposer_kind,
        )
        ignore = _parent_tokens(codebook, kind, draft)
        match = _best(draft, existing, threshold, ignore) or _best(draft, prior, threshold, ignore)
        if match is not None:
            kept.append(
                proposal.model_copy(
                    update={
                        "status": ProposalStatus.DUPLICATE,
                        "duplicate_of": match[0].ref,
                        "similarity": round(match[1], 4),
                    }
                )
            )
            continue
        open_same_round = [
            KnownPattern(p.id, p.name, p.definition, p.dimension)
            for p in kept
            if p.status is ProposalStatus.OPEN
        ]
        twin = _best(draft, open_same_round, threshold, ignore)
        if twin is not None:
            pos = next(i for i, p in enumerate(kept) if p.id == twin[0].ref)
            first = kept[pos]
            examples = tuple(dict.fromkeys([*first.example_unit_ids, *draft.example_unit_ids]))
            kept[pos] = first.model_copy(
                update={"example_unit_ids": examples, "merged_from": (*first.merged_from, pid)}
            )
            kept.append(
                proposal.model_copy(
                    update={
                        "status": ProposalStatus.DUPLICATE,
                        "duplicate_of": first.id,
                        "similarity": round(twin[1], 4),
                    }
                )
            )
            continue
        taken.add(leaf_id)
        near = _close_note(proposal, [*existing, *prior, *open_same_round])
        kept.append(proposal.model_copy(update={"notes": (*proposal.notes, *near)}))
    return kept
