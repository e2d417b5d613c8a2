"""Review sampling plans: which judged units humans review, drawn so estimates stay unbiased.

A plan is drawn from a judged run's coded table (one row per trace x passage for retrieval,
one per trace for verification: :func:`failcodes.attribution.per_passage_codes` /
:func:`~failcodes.attribution.per_trace_steps`). Its population is the distinct scored units of
the table. The **estimation sample** is a seeded uniform random sample of them, optionally
stratified by system (the retriever or verifier column) and by the judge's code (one
dimension's code, or by default whether the judge found the unit high quality on every
dimension); each stratum records its size and inclusion probability, so the prediction-powered
estimates (:mod:`failcodes.stats.ppi`) can weight the strata. A **targeted sample** (units where
two judges, or the judge and the cascade, disagree) may be added; it is reviewed like the
rest but kept apart: it never enters the estimates.

Stratified allocation is proportional to stratum size (largest remainders), with at least two
units per stratum that has two (the estimates need two per stratum), never more than the
stratum holds.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import Codebook, UnitKind
from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError, InputError, choice

#: Column of the coded table that names the system, per part.
GROUP_COLUMN = {UnitKind.RETRIEVAL: "retriever", UnitKind.VERIFICATION: "verifier"}
#: Column of the coded table that says "high quality on every dimension", per part.
FLAG_COLUMN = {UnitKind.RETRIEVAL: "all_high", UnitKind.VERIFICATION: "all_correct"}


class StratifyBy(StrEnum):
    """What the estimation sample may be stratified by."""

    SYSTEM = "system"  # the retriever / verifier column
    CODE = "code"  # the judge's code (one dimension, or the all-high flag)


class Sample(StrEnum):
    """Which sample a planned unit belongs to."""

    ESTIMATION = "estimation"  # uniform within its stratum: used by the corrected estimates
    TARGETED = "targeted"  # chosen for a reason (judges disagree): reviewed, never estimated


class PlanStratum(FrozenModel):
    """One stratum of the estimation sample."""

    key: str = Field(description="Stable stratum id, e.g. 'retriever=bm25|code=False'.")
    system: str | None = Field(default=None, description="The system, if stratified by it.")
    judge_code: str | None = Field(
        default=None, description="The judge's code, if stratified by it."
    )
    population: int = Field(ge=1, description="Scored units in the stratum.")
    sampled: int = Field(ge=0, description="Units drawn for the estimation sample.")
    inclusion_probability: float = Field(ge=0, le=1, description="sampled / population.")

    @model_validator(mode="after")
    def _consistent(self) -> PlanStratum:
        if self.sampled > self.population:
            raise ValueError(
                f"stratum {self.key!r}: {self.sampled} sampled of a population of {self.population}"
            )
        if not math.isclose(self.inclusion_probability, self.sampled / self.population):
            raise ValueError(
                f"stratum {self.key!r}: inclusion probability {self.inclusion_probability} is "
                f"not sampled / population ({self.sampled}/{self.population})"
            )
        return self


class PlannedUnit(FrozenModel):
    """One unit to review."""

    unit_id: str
    sample: Sample
    stratum: str | None = Field(default=None, description="Stratum key (estimation sample).")
    inclusion_probability: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Probability the unit was drawn, in (0, 1] (None for targeted units).",
    )

    @model_validator(mode="after")
    def _sampled(self) -> PlannedUnit:
        estimation = self.sample is Sample.ESTIMATION
        if estimation and (self.inclusion_probability is None or self.stratum is None):
            raise ValueError(
                f"unit {self.unit_id!r}: an estimation unit needs its stratum and inclusion "
                "probability"
            )
        if not estimation and self.inclusion_probability is not None:
            raise ValueError(
                f"unit {self.unit_id!r}: a targeted unit has no inclusion probability (it "
                "never enters the estimates)"
            )
        return self


class ReviewPlan(FrozenModel):
    """A review sampling plan (stored as JSON under the run's ``review/plans/``)."""

    schema_version: Literal[1] = 1
    name: str = Field(description="Plan name (the file stem).")
    part: UnitKind
    source: str = Field(description="Coded table the plan was drawn from.")
    source_sha256: str = Field(description="SHA-256 of the coded table when drawn.")
    seed: int
    size: int = Field(description="Requested estimation sample size.")
    stratify: list[StratifyBy] = Field(default_factory=list)
    code_dimension: str | None = Field(
        default=None,
        description="Dimension whose judge code stratifies; None = the all-high flag.",
    )
    strata: list[PlanStratum]
    units: list[PlannedUnit]
    unit_strata: dict[str, str] = Field(
        description="Every population unit's stratum key (estimation sample or not)."
    )
    drawn_sha256: str | None = Field(
        default=None,
        description="draw_digest of the seed and estimation units `review plan` drew (None "
        "in plans written before it: the report then draws the plan again to compare).",
    )
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not value or not value.replace(".", "").replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"plan name {value!r}: use letters, digits, '.', '-', '_'")
        return value

    @field_validator("source")
    @classmethod
    def _inside(cls, value: str) -> str:
        # the coded table relative to the study folder, never outside it
        path = PurePosixPath(value)
        if not value or path.is_absolute() or ".." in path.parts or "\\" in value:
            raise ValueError(
                f"{value!r}: the coded table must be a path inside the study folder (as "
                "`review plan` writes it, e.g. attribution/DATASET/per_passage.csv)"
            )
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ReviewPlan:
        strata = {s.key: s for s in self.strata}
        if len(strata) != len(self.strata):
            raise ValueError("a stratum key given twice")
        seen: set[str] = set()
        drawn: dict[str, int] = dict.fromkeys(strata, 0)
        for unit in self.units:
            if unit.unit_id in seen:
                raise ValueError(f"unit {unit.unit_id!r} is planned twice")
            seen.add(unit.unit_id)
            if unit.sample is not Sample.ESTIMATION:
                continue
            stratum = strata.get(unit.stratum or "")
            if stratum is None:
                raise ValueError(f"unit {unit.unit_id!r}: no stratum {unit.stratum!r} in strata")
            if unit.inclusion_probability != stratum.inclusion_probability:
                raise ValueError(
                    f"unit {unit.unit_id!r}: inclusion probability {unit.inclusion_probability}"
                    f" is not its stratum's ({stratum.inclusion_probability})"
                )
            if self.unit_strata.get(unit.unit_id) != stratum.key:
                raise ValueError(f"unit {unit.unit_id!r}: not in unit_strata under {stratum.key!r}")
            drawn[stratum.key] += 1
        members: dict[str, int] = dict.fromkeys(strata, 0)
        for uid, key in self.unit_strata.items():
            if key not in members:
                raise ValueError(f"unit_strata: unit {uid!r} in no stratum of strata ({key!r})")
            members[key] += 1
        for key, stratum in strata.items():
            if drawn[key] != stratum.sampled or members[key] != stratum.population:
                raise ValueError(
                    f"stratum {key!r} says {stratum.sampled} sampled of {stratum.population}; "
                    f"the plan holds {drawn[key]} of {members[key]}"
                )
        return self

    def estimation_ids(self) -> set[str]:
        """Unit ids of the estimation sample."""
        return {u.unit_id for u in self.units if u.sample is Sample.ESTIMATION}

    def targeted_ids(self) -> set[str]:
        """Unit ids of the targeted sample (never in the estimates)."""
        return {u.unit_id for u in self.units if u.sample is Sample.TARGETED}

    def all_ids(self) -> list[str]:
        """Every planned unit id, in plan order."""
        return [u.unit_id for u in self.units]


def _units_frame(coded: pd.DataFrame, part: UnitKind, code_dimension: str | None) -> pd.DataFrame:
    """One row per distinct scored unit: unit_id, system (first in sort order), judge code."""
    group, flag = GROUP_COLUMN[part], FLAG_COLUMN[part]
    code_col = code_dimension or flag
    needed = ["unit_id", "status", group, code_col]
    missing = [c for c in needed if c not in coded.columns]
    if missing:
        raise InputError(
            f"the coded table lacks column(s) {missing}; expected the {part.value} table "
            f"({', '.join(needed)})",
            field=missing[0],
        )
    scored = coded[coded["status"] == Status.SCORED.value]
    if scored.empty:
        raise InputError("the coded table has no scored unit to sample")
    first = scored.sort_values([group, "unit_id"]).drop_duplicates("unit_id")
    return pd.DataFrame(
        {
            "unit_id": first["unit_id"].astype(str),
            "system": first[group].astype(str),
            "code": first[code_col].astype(str),
        }
    ).sort_values("unit_id", ignore_index=True)


def _allocate(sizes: Sequence[int], total: int) -> list[int]:
    """Proportional allocation by largest remainders, >= 2 per stratum that has 2, <= size."""
    population = sum(sizes)
    if total >= population:
        return list(sizes)
    floor = [min(2, s) for s in sizes]
    if sum(floor) > total:
        raise InputError(
            f"a stratified sample of {total} cannot give each of {len(sizes)} strata the 2 "
            "reviewed units the estimates need (a stratum of 1 unit: that one): it takes "
            f"--size {sum(floor)} at least; raise --size or stratify by less"
        )
    quotas = [total * s / population for s in sizes]
    alloc = [max(f, min(s, int(q))) for f, s, q in zip(floor, sizes, quotas, strict=True)]
    order = sorted(range(len(sizes)), key=lambda i: (-(quotas[i] - int(quotas[i])), i))
    while sum(alloc) < total:
        grew = False
        for i in order:
            if sum(alloc) >= total:
                break
            if alloc[i] < sizes[i]:
                alloc[i] += 1
                grew = True
        if not grew:
            break
    while sum(alloc) > total:  # floors pushed us over: take from the largest strata
        i = max(range(len(sizes)), key=lambda j: (alloc[j] - floor[j], -j))
        if alloc[i] <= floor[i]:
            break
        alloc[i] -= 1
    return alloc


def draw_plan(
    coded: pd.DataFrame,
    part: UnitKind,
    *,
    name: str,
    size: int,
    seed: int,
    source: str,
    source_sha256: str,
    stratify: Iterable[StratifyBy] = (),
    code_dimension: str | None = None,
    targeted: Iterable[str] = (),
) -> ReviewPlan:
    """Draw the estimation sample (and add the targeted units) from a coded table."""
    # from Python: stratify="system" was read letter by letter ("'e' is not in list"), a
    # part or stratum misspelt a KeyError / ValueError, seed=1.5 or size="4" a TypeError
    part = choice(UnitKind, part, "part")
    for what, number in (("size", size), ("seed", seed)):
        if isinstance(number, bool) or not isinstance(number, int | np.integer):
            raise ConfigError(f"{what}: expected a whole number, not {number!r}")
    if size < 2:
        raise InputError("the estimation sample needs at least 2 units", field="size")
    asked = [stratify] if isinstance(stratify, str) else list(stratify)
    by = sorted({choice(StratifyBy, s, "stratify") for s in asked}, key=list(StratifyBy).index)
    units = _units_frame(coded, part, code_dimension)
    group, flag = GROUP_COLUMN[part], FLAG_COLUMN[part]
    keys: list[str] = []
    for row in units.itertuples(index=False):
        parts = []
        if StratifyBy.SYSTEM in by:
            parts.append(f"{group}={row.system}")
        if StratifyBy.CODE in by:
            parts.append(f"{code_dimension or flag}={row.code}")
        keys.append("|".join(parts) or "all")
    units["stratum"] = keys
    if seed < 0:  # numpy refuses it with a ValueError
        raise ConfigError(f"--seed must be a non-negative integer, got {seed}")
    rng = np.random.default_rng(seed)
    strata: list[PlanStratum] = []
    planned: list[PlannedUnit] = []
    groups = sorted(units.groupby("stratum"), key=lambda kv: str(kv[0]))
    alloc = _allocate([len(g) for _, g in groups], size)
    for (key, members), n_h in zip(groups, alloc, strict=True):
        ids = sorted(members["unit_id"])
        picked = sorted(rng.choice(len(ids), size=n_h, replace=False)) if n_h else []
        prob = n_h / len(ids)
        first = members.iloc[0]
        strata.append(
            PlanStratum(
                key=str(key),
                system=str(first["system"]) if StratifyBy.SYSTEM in by else None,
                judge_code=str(first["code"]) if StratifyBy.CODE in by else None,
                population=len(ids),
                sampled=n_h,
                inclusion_probability=prob,
            )
        )
        planned.extend(
            PlannedUnit(
                unit_id=ids[i],
                sample=Sample.ESTIMATION,
                stratum=str(key),
                inclusion_probability=prob,
            )
            for i in picked
        )
    chosen = {u.unit_id for u in planned}
    known = set(units["unit_id"])
    extra: list[str] = []
    for uid in targeted:
        if uid not in known:
            raise InputError(
                f"targeted unit {uid!r} is not a scored unit of the coded table", field="unit_id"
            )
        if uid not in chosen and uid not in extra:
            extra.append(uid)
    planned.extend(PlannedUnit(unit_id=uid, sample=Sample.TARGETED) for uid in extra)
    return ReviewPlan(
        name=name,
        part=part,
        source=source,
        source_sha256=source_sha256,
        seed=seed,
        size=size,
        stratify=by,
        code_dimension=code_dimension,
        strata=strata,
        units=planned,
        unit_strata=dict(zip(units["unit_id"], units["stratum"], strict=True)),
        drawn_sha256=draw_digest(
            seed, (u.unit_id for u in planned if u.sample is Sample.ESTIMATION)
        ),
    )


def draw_digest(seed: int, units: Iterable[str]) -> str:
    """SHA-256 of a draw: its seed and its estimation units (in sorted order)."""
    import hashlib

    text = "\n".join([str(seed), *sorted(units)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def draw_reason(plan: ReviewPlan, coded: pd.DataFrame) -> str | None:
    """Why ``plan``'s estimation sample is not its seed's draw (None when it is).

    A plan written or edited by hand (the units two judges split on, the disagreements,
    with no panel.json to compare with) reached the corrected shares as a random draw:
    those units' shares with intervals said to cover the data set. Its units must be
    :data:`drawn_sha256`'s, or the ones :func:`draw_plan` draws again from ``coded`` (the
    plan's own table: plans written before the digest).
    """
    drawn = plan.estimation_ids()
    if plan.drawn_sha256 == draw_digest(plan.seed, drawn):
        return None
    try:
        again = draw_plan(
            coded,
            plan.part,
            name=plan.name,
            size=plan.size,
            seed=plan.seed,
            source=plan.source,
            source_sha256=plan.source_sha256,
            stratify=plan.stratify,
            code_dimension=plan.code_dimension,
        ).estimation_ids()
    except (InputError, ConfigError):
        again = set()
    if again == drawn:
        return None
    return (
        f"review plan {plan.name!r} is not its seed's draw: {len(drawn - again)} of its "
        f"{len(drawn)} estimation units are not among those `review plan` draws with seed "
        f"{plan.seed}: written or edited by hand (the disagreements?), its shares would be "
        "those units', not the data set's, so its tables are shown uncorrected (give chosen "
        "units as a targeted sample: --targeted FILE)"
    )


class PlanProgress(FrozenModel):
    """How far the human review of a plan has come."""

    estimation_planned: int
    estimation_reviewed: int
    targeted_planned: int
    targeted_reviewed: int
    outside_plan: int = Field(description="Reviewed units the plan does not hold (ignored).")


def human_codes(annotations: Iterable[Annotation], part: UnitKind) -> dict[str, Annotation]:
    """One scored human annotation per unit of ``part``.

    If several: the review of a coder named like a consensus (:func:`settles`), else the
    first coder by name; a dimension it left without a code is taken from the next review in
    that order that coded it (alice left scope empty where bob coded it: the unit counted as
    not reviewed on scope, bob's review left out).
    """
    out: dict[str, Annotation] = {}
    for ann in sorted(annotations, key=lambda a: (a.unit_id, not settles(a.coder), a.coder)):
        if ann.unit_kind is not part or ann.status is not Status.SCORED:
            continue
        first = out.get(ann.unit_id)
        if first is None:
            out[ann.unit_id] = ann
            continue
        gaps = {d: c for d, c in ann.codes.items() if d not in first.codes}
        if gaps:
            sets = {d: v for d, v in ann.code_sets.items() if d in gaps}
            out[ann.unit_id] = first.model_copy(
                update={
                    "codes": {**first.codes, **gaps},
                    "code_sets": {**first.code_sets, **sets},
                }
            )
    return out


def settles(coder: str) -> bool:
    """Whether a reviewer is named like a consensus (``adjudicated``, ``consensus``...).

    Its review settles the others' disagreements: in review/ beside them (alice, bob and
    their adjudication), the corrected shares took the first coder by name (alice), and
    reviewer vs reviewer agreement read it as one more reviewer (Fleiss 0.308 for alice and
    bob's -0.021).
    """
    from failcodes.stats.summaries import consensus_word

    return consensus_word(coder) is not None


def _codes_key(ann: Annotation) -> tuple[object, ...]:
    sets = tuple(sorted((dim, tuple(sorted(v))) for dim, v in ann.code_sets.items()))
    return (tuple(sorted(ann.codes.items())), sets)


def repeated_reviews(
    annotations: Iterable[Annotation], part: UnitKind, units: AbstractSet[str]
) -> tuple[int, int, list[str]]:
    """Units of ``units`` reviewed more than once (several coders, or one coder twice).

    Returns how many, how many of them differ in their codes, and the coders involved.
    :func:`human_codes` keeps one of them (the first coder by name); the report says so.
    """
    seen: dict[str, list[Annotation]] = {}
    for ann in annotations:
        if ann.unit_kind is part and ann.status is Status.SCORED and ann.unit_id in units:
            seen.setdefault(ann.unit_id, []).append(ann)
    several = {uid: anns for uid, anns in seen.items() if len(anns) > 1}
    differ = sum(len({_codes_key(a) for a in anns}) > 1 for anns in several.values())
    coders = sorted({a.coder for anns in several.values() for a in anns})
    return len(several), differ, coders


def people_only(path: Path, reviews: list[Annotation]) -> None:
    """Refuse a review file holding a coder that is not a person (an LLM or the heuristic).

    review/ is read as human review: a second judge's annotations saved there were the
    "human-only" shares and the human side of PPI++ and of human vs judge agreement, with
    no word (an LLM coder's copy of the judge's codes read 0 disagreements on 20 units).
    """
    odd = next((i for i, a in enumerate(reviews) if a.coder_kind is not CoderKind.HUMAN), None)
    if odd is None:
        return
    from failcodes.jsonio import iter_jsonl  # (the file was read: its lines are known)

    line = next(n for i, (n, _) in enumerate(iter_jsonl(path)) if i == odd)
    ann = reviews[odd]
    raise InputError(
        f"coder {ann.coder!r} is {ann.coder_kind.value}, not a person: review/ holds human "
        "reviews (the human side of the corrected shares and of human vs judge agreement); "
        "a judge's codes belong in judge/",
        path=path,
        line=line,
        field="coder_kind",
    )


def one_spelling(files: Mapping[Path, Sequence[Annotation]]) -> None:
    """Refuse two reviewer names that differ only in case, spaces or Unicode form.

    ``alice@x.org`` in one review file and ``Alice@x.org `` in another (written by hand) were
    two reviewers: her correction of 10 units was a second review of each, the first coder by
    name counted (the correction or the original, by the sort of a capital letter), and her
    agreement with herself was reported as two reviewers'.
    """
    from failcodes.jsonio import iter_jsonl
    from failcodes.spelling import spelling_key

    def line(path: Path, index: int) -> int:  # the file was read: its lines are known
        return next(n for j, (n, _) in enumerate(iter_jsonl(path)) if j == index)

    first: dict[str, tuple[str, Path, int]] = {}
    for path, reviews in files.items():
        for i, ann in enumerate(reviews):
            name, at, k = first.setdefault(spelling_key(ann.coder), (ann.coder, path, i))
            if name == ann.coder:
                continue
            where = f"line {line(at, k)}" if at == path else f"{at}:{line(at, k)}"
            raise InputError(
                f"coder {ann.coder!r} and {name!r} ({where}) differ only in case, spaces or "
                "Unicode form: one reviewer under two spellings? write one (as two they are "
                "two reviewers: the first by name counts, the other's reviews left out)",
                path=path,
                line=line(path, i),
                field="coder",
            )


def known_dimensions(
    path: Path, reviews: list[Annotation], cb: Codebook, part: UnitKind | None = None
) -> None:
    """Refuse a review made under ``cb`` that codes a dimension its part does not have.

    ``part``: check only the reviews of that part (`review status` says the others apart).

    A review file written by hand or from a spreadsheet with ``"Scope"`` (or ``"scope "``)
    for ``scope``: the codes under it were read as no code on scope, and the report's scope
    cells said "24 reviewed unit(s) with no code on scope counted as not reviewed" of units
    the reviewer did code (human and corrected shares left out, exit 0).
    """
    for i, ann in enumerate(reviews):
        if ann.codebook.hash != cb.hash or part not in (None, ann.unit_kind):
            continue  # another version's: migrated (or stale) first
        dims = [d.id for d in cb.part(ann.unit_kind).dimensions]
        odd = next((d for d in sorted({*ann.codes, *ann.code_sets}) if d not in dims), None)
        if odd is None:
            continue
        from failcodes.jsonio import iter_jsonl
        from failcodes.spelling import unseen_note

        near = next((d for d in dims if d.casefold() == " ".join(odd.split()).casefold()), None)
        hint = f" (is it {near!r}?)" if near is not None else ""
        line = next(n for j, (n, _) in enumerate(iter_jsonl(path)) if j == i)
        raise InputError(
            f"{odd!r} is not a dimension of the {ann.unit_kind.value} part of {cb.name} "
            f"v{cb.version}{unseen_note(odd)} (its dimensions: {', '.join(dims)}): its code "
            f"would be read as no code on any of them{hint}",
            path=path,
            line=line,
            field=f"codes.{odd}",
        )


def match_reviews(plan: ReviewPlan, reviews: Mapping[str, Annotation]) -> PlanProgress:
    """Match pulled human reviews (by unit id) back to the plan."""
    est, tgt = plan.estimation_ids(), plan.targeted_ids()
    return PlanProgress(
        estimation_planned=len(est),
        estimation_reviewed=len(est & reviews.keys()),
        targeted_planned=len(tgt),
        targeted_reviewed=len(tgt & reviews.keys()),
        outside_plan=len(reviews.keys() - est - tgt),
    )


def redraw_command(plan: ReviewPlan, run_dir: str) -> str:
    """The ``failcodes review plan`` command that draws ``plan`` again on today's coded table.

    Same part, size, seed, strata and name; the data set is the coded table's folder. Without
    ``--stratify code`` and with the same scored units, the redraw picks the same units (the
    draw depends only on the units, their systems and the seed), so their reviews count again
    if they were made under the coded table's codebook version.
    """
    parts = [
        "failcodes review plan",
        shlex.quote(run_dir),
        f"-p {plan.part.value}",
        f"-n {plan.size}",
        f"--seed {plan.seed}",
        f"--dataset {shlex.quote(PurePosixPath(plan.source).parent.name)}",
        *(f"--stratify {by.value}" for by in plan.stratify),
    ]
    if plan.code_dimension is not None:
        parts.append(f"--code-dimension {shlex.quote(plan.code_dimension)}")
    parts.append(f"--name {shlex.quote(plan.name)}")
    if plan.targeted_ids():
        parts.append("[--targeted FILE | --panel-splits, as before]")
    return " ".join(parts)


def stale_reason(plan: ReviewPlan, source_sha256: str) -> str | None:
    """Why ``plan`` no longer fits its coded table (None when it does): one line with the fix."""
    if source_sha256 == plan.source_sha256:
        return None
    return (
        f"review plan {plan.name!r} is stale: {plan.source} changed since it was drawn (e.g. a "
        "codebook bump re-coded the units), so its tables are shown uncorrected"
    )


#: Below this chance of drawing so many panel splits, a plan's sample is not its draw.
SPLITS_P = 1e-3


def splits_reason(plan: ReviewPlan, splits: AbstractSet[str]) -> str | None:
    """Why ``plan``'s estimation sample is no random draw (None when it may be one).

    An audit of the units a judge panel split on, written into a plan file by hand, reached
    the corrected shares as a random sample: the shares of those units, the hard ones, with
    intervals said to cover the data set. Drawn within each stratum without replacement, the
    split units drawn follow a sum of hypergeometric laws; fewer than :data:`SPLITS_P` of
    draws hold as many as the plan does.
    """
    from scipy.stats import hypergeom  # lazy: scipy costs time at start-up

    drawn = plan.estimation_ids()
    held = len(drawn & splits)
    if held == 0:
        return None
    law = np.ones(1)
    for stratum in plan.strata:
        members = [u for u, key in plan.unit_strata.items() if key == stratum.key]
        split = sum(u in splits for u in members)
        pmf = hypergeom.pmf(np.arange(split + 1), len(members), split, stratum.sampled)
        law = np.convolve(law, pmf)
    chance = float(law[held:].sum())
    if chance >= SPLITS_P:
        return None
    expected = float(np.dot(np.arange(law.size), law))
    return (
        f"review plan {plan.name!r} is no random draw: {held} of its {len(drawn)} estimation "
        f"units are units the judge panel split on, where a draw holds {expected:.1f} (p = "
        f"{chance:.1g}): drawn from the disagreements? its shares would be theirs, not the "
        "data set's, so its tables are shown uncorrected (give the splits as a targeted "
        "sample: --panel-splits)"
    )


def plans_dir(run_dir: str | Path) -> Path:
    """Where a run keeps its review plans: ``RUN_DIR/review/plans/`` (the study layout's)."""
    from failcodes.study.layout import StudyLayout

    return StudyLayout.of(run_dir).review_plans_dir


def read_plan(path: str | Path) -> ReviewPlan:
    """Load a plan file; bad content is one :class:`~failcodes.errors.InputError` line.

    Every field is checked (probabilities in (0, 1], sample sizes within their strata, unit
    ids once), naming the file, the line and the field.
    """
    from failcodes.tableio import read_model_json

    return read_model_json(path, ReviewPlan, what="not a review plan")


def plan_source(plan: ReviewPlan, root: str | Path, path: str | Path) -> Path:
    """The plan's coded table, which must lie inside the study folder ``root``.

    A link out of the study (to a system file) is refused as a path with ``..`` is.
    """
    base = Path(root).resolve()
    source = Path(root) / plan.source
    if not source.resolve().is_relative_to(base):
        raise InputError(
            f"the coded table {plan.source!r} lies outside the study folder ({base}); a plan "
            "reads only the study's own tables",
            path=path,
            field="source",
        )
    return source
