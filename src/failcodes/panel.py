"""A judge panel: several coders' annotations of the same units, kept apart and combined.

Pure core (annotations in, tables out; :func:`failcodes.judge.run_panel` runs the members):

- :func:`consensus`: per unit and dimension, the code most members gave; ties, the primary
  judge, multi-label dimensions and two-member panels as docs/judge.md ("The consensus rule")
  says. Each vote records the rule that decided it (:data:`RULES`), the members that flagged
  their code uncertain, and whether the consensus rests on such a code (:func:`uncertain_units`).
- :func:`split_units`: units where the members disagree on at least one dimension, ties first
  (what ``review plan --panel-splits`` reviews).
- :func:`inter_judge_agreement`: agreement between the members per dimension (nominal, over
  the dimension's codes) and per code (binary: carries the code or not; this is also how a
  multi-label dimension is compared), with Fleiss' kappa, Krippendorff's alpha and Gwet's AC1
  from :mod:`failcodes.stats`. Units a member left unscored are missing for that member.
- :func:`quote_verification`: per member, the share of coded dimensions whose quote was found
  in the judged text.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from pydantic import Field

from failcodes.annotations import NOT_ASSESSABLE, Annotation, Status
from failcodes.codebook import Part
from failcodes.contract import FrozenModel
from failcodes.errors import StatisticsError
from failcodes.stats.agreement import agreements

if TYPE_CHECKING:
    from failcodes.annotationlines import AnnotationRead

#: The coefficients reported between panel members.
PANEL_STATISTICS = ("fleiss", "krippendorff", "gwet_ac1")

#: How a dimension's (and a unit's) consensus was decided, from strongest to weakest:
#: every member gave it; more than half did; a tie the primary judge broke; no consensus.
RULES = ("unanimous", "majority", "primary", "undecided")

Panel = Mapping[str, Sequence[Annotation]]
"""Member name (judge spec, or spec plus sample number) -> that member's annotations."""


class DimensionVote(FrozenModel):
    """How the members coded one dimension of one unit."""

    votes: dict[str, int] = Field(description="Code -> number of members that gave it.")
    members: int = Field(description="Members that coded this dimension of the unit.")
    consensus: list[str] = Field(
        default_factory=list, description="The majority code(s); empty on a tie."
    )
    tie: bool = False
    unanimous: bool = False
    decided_by: str | None = Field(
        default=None,
        description="unanimous | majority | primary (the primary judge broke a tie) | "
        "undecided; None in panel files written before the rule existed (a tie: undecided).",
    )
    uncertain: list[str] = Field(
        default_factory=list,
        description="Members that flagged their code of this dimension uncertain (panel order).",
    )
    consensus_uncertain: bool = Field(
        default=False,
        description="A member that gave a consensus code flagged it uncertain: the consensus "
        "rests on a code its judge doubted.",
    )

    @property
    def rule(self) -> str:
        """:attr:`decided_by`, read for files that predate it (a tie there is undecided)."""
        if self.decided_by is not None:
            return self.decided_by
        return "undecided" if self.tie else ("unanimous" if self.unanimous else "majority")


class PanelUnit(FrozenModel):
    """One unit's panel outcome."""

    unit_id: str
    dimensions: dict[str, DimensionVote]

    @property
    def split(self) -> bool:
        """True when the members disagree on at least one dimension."""
        return any(not v.unanimous for v in self.dimensions.values())

    @property
    def ties(self) -> list[str]:
        """Dimensions without a majority code (broken by the primary judge or not)."""
        return [d for d, v in self.dimensions.items() if v.tie]

    @property
    def undecided(self) -> list[str]:
        """Dimensions with no consensus code (a tie the primary judge did not break)."""
        return [d for d, v in self.dimensions.items() if v.rule == "undecided"]

    @property
    def rule(self) -> str:
        """The weakest rule that decided one of its dimensions (:data:`RULES`)."""
        rules = [v.rule for v in self.dimensions.values()] or ["undecided"]
        return max(rules, key=RULES.index)

    @property
    def uncertain(self) -> list[str]:
        """Dimensions whose consensus rests on a code a member flagged uncertain."""
        return [d for d, v in self.dimensions.items() if v.consensus_uncertain]


class PanelAgreement(FrozenModel):
    """One inter-judge coefficient for one dimension, or one code of it (binary)."""

    dimension: str
    code: str | None = Field(default=None, description="None: the whole dimension (nominal).")
    statistic: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = Field(
        default=None,
        description="How the interval was made (AgreementResult.ci_method: a panel's are "
        "wald); None in a panel.json written before it was recorded.",
    )
    n_units: int
    n_members: int
    undefined_reason: str | None = None
    warning: str | None = None


def _scored(panel: Panel) -> dict[str, dict[str, Annotation]]:
    return {
        member: {a.unit_id: a for a in anns if a.status is Status.SCORED}
        for member, anns in panel.items()
    }


def _vote(
    part_dim_multi: bool,
    code_sets: list[tuple[str, ...]],
    primary: tuple[str, ...] | None,
    size: int,
) -> DimensionVote:
    """One dimension's vote; ``primary``: the primary judge's codes (None: it gave none).

    ``size`` members sit on the panel; those that left the unit unscored (a refusal, invalid
    answers) are ``size - len(code_sets)`` missing votes: a code wins only where they could not
    have changed it. One judge's code, the other's missing, was "unanimous" (and no split).
    """
    n = len(code_sets)
    missing = size - n
    counts: Counter[str] = Counter()
    for codes in code_sets:
        counts.update(set(codes))
    votes = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    distinct = {tuple(sorted(c)) for c in code_sets}
    unanimous = len(distinct) == 1 and not missing
    if part_dim_multi:
        chosen = [c for c, k in votes.items() if 2 * k > size]
        halves = [c for c, k in votes.items() if 2 * k <= size <= 2 * (k + missing)]
        tie = bool(halves) or not chosen
        rule = "unanimous" if unanimous else "majority"
        if tie:
            kept = [c for c in halves if primary is not None and c in primary]
            chosen = [c for c in votes if c in chosen or c in kept]
            rule = "primary" if primary is not None and chosen else "undecided"
        return DimensionVote(
            votes=votes,
            members=n,
            consensus=chosen if rule != "undecided" else [],
            tie=tie,
            unanimous=unanimous,
            decided_by=rule,
        )
    top = max(votes.values())
    leaders = [c for c, k in votes.items() if k + missing >= top]
    tie = len(leaders) > 1 or top <= missing
    rule = "unanimous" if unanimous else "majority"
    chosen = leaders
    if tie:  # the primary judge breaks it when its code is one of the tied ones
        chosen = [primary[0]] if primary and primary[0] in leaders else []
        rule = "primary" if chosen else "undecided"
    return DimensionVote(
        votes=votes, members=n, consensus=chosen, tie=tie, unanimous=unanimous, decided_by=rule
    )


def consensus(panel: Panel, part: Part, primary: str | None = None) -> list[PanelUnit]:
    """Every unit some member scored, with its votes and consensus per dimension.

    ``primary`` names the member whose codes break ties (None: ties stay undecided).
    """
    if primary is not None and primary not in panel:
        raise StatisticsError(
            f"the primary judge {primary!r} is not a panel member ({', '.join(panel)})"
        )
    scored = _scored(panel)
    size = len(scored)
    unit_ids = list(dict.fromkeys(u for by_unit in scored.values() for u in by_unit))
    out: list[PanelUnit] = []
    for uid in unit_ids:
        dims: dict[str, DimensionVote] = {}
        for dim in part.dimensions:
            sets = [
                by_unit[uid].code_set(dim.id)
                for by_unit in scored.values()
                if uid in by_unit and by_unit[uid].code_set(dim.id)
            ]
            first = scored[primary].get(uid) if primary is not None else None
            own = first.code_set(dim.id) if first is not None else ()
            if sets:
                vote = _vote(dim.multi_label, sets, own or None, size)
                dims[dim.id] = _doubts(vote, scored, uid, dim.id)
        out.append(PanelUnit(unit_id=uid, dimensions=dims))
    return out


def _doubts(
    vote: DimensionVote, scored: dict[str, dict[str, Annotation]], uid: str, dim: str
) -> DimensionVote:
    """``vote`` with the members that flagged their code of ``dim`` uncertain.

    A consensus code one of them gave rests on a doubt (``consensus_uncertain``): the panel's
    code read as certain where its primary judge, deciding a tie, doubted it.
    """
    doubting = [
        member
        for member, by_unit in scored.items()
        if uid in by_unit and dim in by_unit[uid].uncertain_dimensions()
    ]
    if not doubting:
        return vote
    chosen = set(vote.consensus)
    rests = any(chosen & set(scored[m][uid].code_set(dim)) for m in doubting)
    return vote.model_copy(update={"uncertain": doubting, "consensus_uncertain": rests})


def uncertain_units(units: Iterable[PanelUnit]) -> list[str]:
    """Ids of the units whose consensus rests on a code a member flagged uncertain."""
    return [u.unit_id for u in units if u.uncertain]


def uncertain_line(members: Sequence[str], units: Iterable[PanelUnit]) -> str | None:
    """How many units each member flagged uncertain, and how many consensus codes rest on one.

    None when no member flagged any. Said beside the panel's agreement and consensus counts:
    a consensus code read as certain where the member that gave it doubted it.
    """
    units = list(units)
    flagged = Counter(
        m for u in units for m in {m for v in u.dimensions.values() for m in v.uncertain}
    )
    if not flagged:
        return None
    rests = uncertain_units(units)
    who = ", ".join(f"{m} on {flagged[m]}" for m in members if flagged[m])
    first = f" (first: {rests[0]})" if rests else ""
    return (
        f"members flagged their code uncertain ({who} unit(s)); the consensus rests on such a "
        f"code on {len(rests)} of {len(units)} unit(s){first}"
    )


def decided_counts(units: Iterable[PanelUnit]) -> dict[str, int]:
    """How many units each rule decided (a unit counts under its weakest dimension's rule)."""
    counts = dict.fromkeys(RULES, 0)
    for unit in units:
        counts[unit.rule] += 1
    return counts


def panel_warnings(members: Sequence[str], primary: str | None) -> list[str]:
    """What the reader of a panel's consensus must know about its rule."""
    out = []
    copies = [m for m in members if m.partition("#")[0] == "offline"]
    if len(copies) > 1:  # the heuristic baseline is deterministic: its copies never differ
        out.append(
            f"{', '.join(copies)} are one deterministic heuristic baseline coding every unit "
            "alike: their agreement is 1 and their consensus unanimous by construction, not "
            "a measurement; a panel's agreement needs LLM judges (or one model sampled at a "
            "temperature)"
        )
    if len(members) == 2:
        who = f"the primary judge ({primary})" if primary else "no one (no primary judge)"
        out.append(
            "a two-judge panel has no majority: every unit the two judges code differently is "
            f"a tie, decided by {who}; the consensus is then that judge's code, not an "
            "agreement. Add a third judge for a majority"
        )
    return out


def split_units(units: Iterable[PanelUnit]) -> list[str]:
    """Ids of the units where the panel splits (ties first, then other disagreements)."""
    units = list(units)
    tied = [u.unit_id for u in units if u.ties]
    split = [u.unit_id for u in units if u.split and not u.ties]
    return [*tied, *split]


def _matrix(
    scored: dict[str, dict[str, Annotation]],
    unit_ids: list[str],
    value: Callable[[Annotation], float],
) -> npt.NDArray[np.float64]:
    rows = [
        [
            math.nan if (ann := by_unit.get(uid)) is None else value(ann)
            for by_unit in scored.values()
        ]
        for uid in unit_ids
    ]
    return np.asarray(rows, dtype=np.float64).reshape(len(unit_ids), len(scored))


def _results(
    matrix: npt.NDArray[np.float64],
    dimension: str,
    code: str | None,
    n_members: int,
    n_categories: int,
) -> list[PanelAgreement]:
    try:
        results = agreements(matrix, PANEL_STATISTICS, categories=list(range(n_categories)))
        found = [r.model_dump(include=_OF_RESULT) for r in results]
    except StatisticsError as exc:
        found = [
            {"statistic": stat, "value": None, "n_units": 0, "undefined_reason": str(exc)}
            for stat in PANEL_STATISTICS
        ]
    return [PanelAgreement(dimension=dimension, code=code, n_members=n_members, **f) for f in found]


#: The fields of a PanelAgreement that come from its AgreementResult.
_OF_RESULT = {
    "statistic",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "n_units",
    "undefined_reason",
    "warning",
}


def inter_judge_agreement(panel: Panel, part: Part) -> list[PanelAgreement]:
    """Agreement between the panel members, per dimension and (binary) per code.

    A single-label dimension's codes are its categories (all of them, so Gwet's AC1 counts
    the codes nobody gave; codebook order), and ``not_assessable`` where a member gave it
    there, as `agree` counts it (an answer, not a missing code: two members who both found 6
    of 10 units not assessable read Fleiss 0.000 over the other 4, where `agree RUN_DIR` read
    0.643 over 10); a multi-label
    dimension is compared per code only. Only units at least two members scored count (the
    coefficients are computed over the units both/all coded, see :mod:`failcodes.stats`).
    """
    if len(panel) < 2:
        raise StatisticsError("a panel needs at least two members to measure their agreement")
    scored = _scored(panel)
    n_members = len(scored)
    unit_ids = list(dict.fromkeys(u for by_unit in scored.values() for u in by_unit))
    out: list[PanelAgreement] = []
    for dim in part.dimensions:
        ids = dim.code_ids()
        coded = [u for u in unit_ids if sum(1 for s in scored.values() if u in s) >= 2]
        coded = [u for u in coded if any(s[u].code_set(dim.id) for s in scored.values() if u in s)]
        if not dim.multi_label:
            used = any(s[u].codes.get(dim.id) == NOT_ASSESSABLE for s in scored.values() for u in s)
            cats = [*ids, NOT_ASSESSABLE] if used else ids

            def index(ann: Annotation, dim_id: str = dim.id, cats: list[str] = cats) -> float:
                code = ann.codes.get(dim_id)
                return float(cats.index(code)) if code in cats else math.nan

            matrix = _matrix(scored, coded, index)
            out += _results(matrix, dim.id, None, n_members, len(cats))
        for code in ids:

            def carries(ann: Annotation, dim_id: str = dim.id, code: str = code) -> float:
                codes = ann.code_set(dim_id)
                return float(code in codes) if codes else math.nan

            out += _results(_matrix(scored, coded, carries), dim.id, code, n_members, 2)
    return out


class QuoteShare(FrozenModel):
    """One coder's per-dimension quote checks."""

    coder: str
    dimensions_coded: int = Field(description="Coded dimensions with per-dimension evidence.")
    quoted: int = Field(description="Of those, dimensions that quoted something.")
    verified: int = Field(description="Quotes found in the judged text.")

    @property
    def share_verified(self) -> float | None:
        """Share of coded dimensions whose quote was found (None without evidence)."""
        return self.verified / self.dimensions_coded if self.dimensions_coded else None


def quote_verification(annotations: Iterable[AnnotationRead]) -> list[QuoteShare]:
    """Per coder: dimensions coded with evidence, quoted, and quotes verified in the text."""
    counts: dict[str, list[int]] = {}
    for ann in annotations:
        if ann.status is not Status.SCORED or not ann.evidence:
            continue
        c = counts.setdefault(ann.coder, [0, 0, 0])
        for ev in ann.evidence.values():
            c[0] += 1
            c[1] += int(ev.quote_found is not None)
            c[2] += int(ev.quote_found is True)
    return [
        QuoteShare(coder=coder, dimensions_coded=n, quoted=q, verified=v)
        for coder, (n, q, v) in sorted(counts.items())
    ]
