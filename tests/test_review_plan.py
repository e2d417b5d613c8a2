"""Review sampling plans, `failcodes review`, and the corrected Tables 8-9 in the report."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import beta as beta_dist

from failcodes import codebook as codebooks
from failcodes.annotations import Annotation, CoderKind
from failcodes.cli.main import main
from failcodes.codebook import UnitKind
from failcodes.errors import InputError
from failcodes.hashing import file_sha256
from failcodes.report.build import ReportInputs, build_report
from failcodes.report.rundir import load_run_dir
from failcodes.reviewplan import (
    PlannedUnit,
    PlanStratum,
    ReviewPlan,
    Sample,
    StratifyBy,
    draw_digest,
    draw_plan,
    human_codes,
    match_reviews,
    read_plan,
)
from failcodes.study.layout import ATTRIBUTION_ITEMS, StudyLayout

HIGH = {
    "scope": "exact_scope",
    "trustworthy": "trustworthy_source",
    "evidence_polarity": "direct_polarity",
    "chunking": "well_chunked",
}


def coded_table(entity: dict[str, str], groups: dict[str, str]) -> pd.DataFrame:
    rows = []
    for uid, code in entity.items():
        rows.append(
            {
                "retriever": groups[uid],
                "unit_id": uid,
                "status": "scored",
                "entity_match": code,
                **HIGH,
                "all_high": code == "exact_entity",
            }
        )
    return pd.DataFrame(rows)


def big_table() -> pd.DataFrame:
    entity = {f"u{i:03d}": ("exact_entity" if i % 3 else "partial_entity") for i in range(90)}
    groups = {uid: ("bm25" if i < 60 else "dense") for i, uid in enumerate(entity)}
    return coded_table(entity, groups)


def plan_of(table: pd.DataFrame, **kw: object) -> ReviewPlan:
    args: dict[str, object] = {
        "name": "p",
        "size": 20,
        "seed": 3,
        "source": "attribution/ds/per_passage.csv",
        "source_sha256": "0" * 64,
    }
    args.update(kw)
    return draw_plan(table, UnitKind.RETRIEVAL, **args)  # type: ignore[arg-type]


def write_half_plan(
    root: Path,
    name: str,
    part: UnitKind,
    table: Path,
    sample: list[str],
    population: list[str],
    targeted: Sequence[str] = (),
) -> None:
    """Write ``review/plans/NAME.json``: ``sample`` drawn uniformly from ``population`` (p=1/2)."""
    plan = ReviewPlan(
        name=name,
        part=part,
        source=table.relative_to(root).as_posix(),
        source_sha256=file_sha256(table),
        seed=0,
        size=len(sample),
        strata=[
            PlanStratum(
                key="all",
                population=len(population),
                sampled=len(sample),
                inclusion_probability=0.5,
            )
        ],
        units=[
            PlannedUnit(
                unit_id=u, sample=Sample.ESTIMATION, stratum="all", inclusion_probability=0.5
            )
            for u in sample
        ]
        + [PlannedUnit(unit_id=u, sample=Sample.TARGETED) for u in targeted],
        unit_strata=dict.fromkeys(population, "all"),
        drawn_sha256=draw_digest(0, sample),  # the fixture's premise: a random draw
    )
    plans = root / "review" / "plans"
    plans.mkdir(parents=True)
    (plans / f"{name}.json").write_text(plan.model_dump_json())


def test_uniform_plan_is_seeded_and_records_inclusion_probability() -> None:
    plan = plan_of(big_table())
    assert len(plan.estimation_ids()) == 20
    assert [s.key for s in plan.strata] == ["all"]
    assert plan.strata[0].inclusion_probability == pytest.approx(20 / 90)
    assert all(u.inclusion_probability == pytest.approx(20 / 90) for u in plan.units)
    assert plan.estimation_ids() == plan_of(big_table()).estimation_ids()
    assert plan.estimation_ids() != plan_of(big_table(), seed=4).estimation_ids()
    assert len(plan.unit_strata) == 90


def test_stratified_plan_allocates_proportionally() -> None:
    plan = plan_of(big_table(), stratify=[StratifyBy.SYSTEM, StratifyBy.CODE], size=30)
    by_key = {s.key: s for s in plan.strata}
    # bm25: 60 units (40 exact, 20 partial); dense: 30 (20 exact, 10 partial); 30/90 = 1/3
    assert {k: (s.population, s.sampled) for k, s in by_key.items()} == {
        "retriever=bm25|all_high=True": (40, 13),
        "retriever=bm25|all_high=False": (20, 7),
        "retriever=dense|all_high=True": (20, 7),
        "retriever=dense|all_high=False": (10, 3),
    }
    for s in plan.strata:
        assert s.inclusion_probability == pytest.approx(s.sampled / s.population)
        drawn = [u for u in plan.units if u.stratum == s.key]
        assert len(drawn) == s.sampled
        assert all(plan.unit_strata[u.unit_id] == s.key for u in drawn)


def test_small_strata_get_two_units_and_too_small_a_sample_is_refused() -> None:
    plan = plan_of(big_table(), stratify=[StratifyBy.SYSTEM], size=4)
    assert sorted(s.sampled for s in plan.strata) == [2, 2]
    with pytest.raises(InputError, match="cannot give each of 4 strata"):
        plan_of(big_table(), stratify=[StratifyBy.SYSTEM, StratifyBy.CODE], size=6)


def test_targeted_units_are_kept_apart() -> None:
    plan = plan_of(big_table(), targeted=["u001", "u002", "u001"])
    est = plan.estimation_ids()
    assert plan.targeted_ids() == {"u001", "u002"} - est
    assert all(u.inclusion_probability is None for u in plan.units if u.sample is Sample.TARGETED)
    with pytest.raises(InputError, match="not a scored unit"):
        plan_of(big_table(), targeted=["nope"])


def write_reviews(path: Path, reviews: Sequence[Annotation]) -> None:
    """One review file: an annotation a line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(a.model_dump_json() + "\n" for a in reviews), encoding="utf-8")


def half_reviewed_study(
    root: Path,
    entity: dict[str, str],
    sample: list[str],
    reviews: Sequence[Annotation],
    *,
    groups: dict[str, str] | None = None,
    name: str = "p",
    targeted: Sequence[str] = (),
) -> Path:
    """A study at ``root``: the coded table of ``entity`` (data set 'ds'; retriever per unit
    ``groups``, else 'A'), plan ``name`` drawing ``sample`` (p=1/2, :func:`write_half_plan`),
    alice's ``reviews``. Returns the table's path."""
    table = StudyLayout.of(root).per_passage("ds")
    table.parent.mkdir(parents=True)
    coded_table(entity, groups or dict.fromkeys(entity, "A")).to_csv(table, index=False)
    write_half_plan(root, name, UnitKind.RETRIEVAL, table, sample, list(entity), targeted)
    write_reviews(root / "review" / "alice.jsonl", reviews)
    return table


def hand_study(root: Path) -> None:
    """The study of the hand-computed PPI test: retrievers A (a0..a19) and B (b0..b3).

    Judge entity_match (exact=1) of A: reviewed a0..a9 [1]*6 + [0]*4, unreviewed a10..a19
    [1]*4 + [0]*6; alice's (exact=1) of a0..a9: [1, 1, 1, 1, 1, 0, 1, 0, 0, 0]. B: all
    exact, b0 and b1 drawn, reviewed exact and partial. a19 targeted, reviewed irrelevant.
    """
    judge_a = ["exact_entity"] * 6 + ["partial_entity"] * 4
    judge_a += ["exact_entity"] * 4 + ["partial_entity"] * 6
    human_a = ["exact_entity"] * 5 + ["partial_entity", "exact_entity"] + ["irrelevant"] * 3
    entity = {f"a{i}": c for i, c in enumerate(judge_a)}
    entity |= {f"b{i}": "exact_entity" for i in range(4)}
    groups = {uid: uid[0].upper() for uid in entity}
    sample = [f"a{i}" for i in range(10)] + ["b0", "b1"]
    reviews = [human(f"a{i}", c) for i, c in enumerate(human_a)]
    reviews += [human("b0", "exact_entity"), human("b1", "partial_entity")]
    reviews.append(human("a19", "irrelevant"))  # targeted: reviewed, never in the estimates
    half_reviewed_study(root, entity, sample, reviews, groups=groups, name="hand", targeted=["a19"])


def human(uid: str, entity: str, coder: str = "alice") -> Annotation:
    cb = codebooks.bundled()
    return Annotation(
        unit_id=uid,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=cb.ref(),
        coder=coder,
        coder_kind=CoderKind.HUMAN,
        codes={"entity_match": entity, **HIGH},
    )


def test_reviews_are_matched_back_to_the_plan() -> None:
    plan = plan_of(big_table(), targeted=["u001"])
    est = sorted(plan.estimation_ids())
    reviews = human_codes(
        [human(est[0], "exact_entity"), human("u001", "irrelevant"), human("u089", "irrelevant")],
        UnitKind.RETRIEVAL,
    )
    progress = match_reviews(plan, reviews)
    assert (progress.estimation_planned, progress.estimation_reviewed) == (20, 1)
    assert (progress.targeted_planned, progress.targeted_reviewed) == (
        len(plan.targeted_ids()),
        int("u001" in plan.targeted_ids()),
    )
    assert progress.outside_plan == 1 + int("u001" not in plan.targeted_ids())


# ------------------------------------------------------------------ CLI


def run_cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_plan_writes_the_plan_and_status_matches_reviews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    big_table().to_csv(table, index=False)
    targeted = tmp_path / "split.txt"
    targeted.write_text("u005\n\n" + json.dumps({"unit_id": "u006"}) + "\n")
    code, out, err = run_cli(
        capsys,
        "review",
        "plan",
        tmp_path,
        "-p",
        "retrieval",
        "-n",
        "12",
        "--stratify",
        "system",
        "--seed",
        "7",
        "--targeted",
        targeted,
    )
    assert code == 0, err
    path = tmp_path / "review" / "plans" / "ds.retrieval.json"
    plan = read_plan(path)
    assert plan.source == "attribution/ds/per_passage.csv"
    assert plan.source_sha256 == file_sha256(table)
    assert [(s.key, s.sampled) for s in plan.strata] == [
        ("retriever=bm25", 8),
        ("retriever=dense", 4),
    ]
    assert "12 of 90 retrieval units" in out
    reviews = tmp_path / "review" / "alice.jsonl"
    ids = sorted(plan.estimation_ids())[:3]
    reviews.write_text("".join(human(u, "exact_entity").model_dump_json() + "\n" for u in ids))
    code, out, err = run_cli(capsys, "review", "status", path, "--reviews", reviews)
    assert code == 0, err
    assert "estimation sample 3/12 reviewed" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--stratify", "colour"], "--stratify expects 'system' or 'code'"),
        (["--code-dimension", "scope"], "--code-dimension needs --stratify code"),
        (["--dataset", "other"], "no retrieval coded table for data set 'other'"),
        (["--stratify", "code", "--code-dimension", "nope"], "lacks column(s) ['nope']"),
    ],
)
def test_cli_plan_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    big_table().to_csv(table, index=False)
    code, _, err = run_cli(capsys, "review", "plan", tmp_path, "-p", "retrieval", "-n", "5", *extra)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "review").exists()


# ------------------------------------------------------------------ corrected report


def _cp(x: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95%: Beta(x, n - x + 1) at 2.5%, Beta(x + 1, n - x) at 97.5%."""
    low = 0.0 if x == 0 else float(beta_dist.ppf(0.025, x, n - x + 1))
    high = 1.0 if x == n else float(beta_dist.ppf(0.975, x + 1, n - x))
    return low, high


def hand_corrected() -> tuple[float, float, float, float]:
    """``(lam, point, low, high)`` of the hand-computed cell of the two report tests below."""
    # Hand-computed PPI++ for the cell (retriever or verifier A, the code):
    # n = N = 10; mean y = mean yhat = 0.6; E[y yhat] = 0.5 -> cov = 0.14;
    # yhat over all 20 units: 10 ones, sample variance (10 - 100/20) / 19 = 5/19;
    # lam = 0.14 / ((1 + 10/10) * 5/19) = 0.266; PPI++'s point lam * 0.4 + 0.6 - lam * 0.6
    # = 0.5468 (54.7), which the table printed until session 30. It prints (t30ppi) the
    # post-stratified point its interval is built around, M below: 0.5417 (54.2).
    lam = 0.266
    # The interval: the units split by the judge's code. Judge 1: 6 reviewed (5 with the
    # code) + 4 unreviewed = 10 units; judge 0: 4 reviewed (1 with the code) + 6 = 10 units.
    # M = 0.5 x 5/6 + 0.5 x 1/4 = 0.5417; each part's Clopper-Pearson interval, combined by
    # MOVER: M -+ sqrt(sum (W (a - bound))^2 + B), B = z^2 sum W (a - M)^2 / 20 units.
    z = 1.959963984540054
    parts = [(5 / 6, _cp(5, 6)), (1 / 4, _cp(1, 4))]
    mid = sum(0.5 * a for a, _ in parts)
    between = z * z * sum(0.5 * (a - mid) ** 2 for a, _ in parts) / 20
    low = mid - math.sqrt(sum((0.5 * (a - lo)) ** 2 for a, (lo, _) in parts) + between)
    high = mid + math.sqrt(sum((0.5 * (hi - a)) ** 2 for a, (_, hi) in parts) + between)
    # M = 0.5417 > 1/2: the lower bound is MOVER's (0.2459); the upper one is MOVER's 0.8582 or,
    # if higher, 1 - the 2.5% quantile of the Beta with the mean and variance of the
    # complement's lower Betas 0.5 Beta(1, 6) + 0.5 Beta(3, 2) (1 of 6, 3 of 4) plus B / z^2:
    # mean 0.5 x 1/7 + 0.5 x 3/5 = 0.37143, variance 0.25 x 6/392 + 0.25 x 6/150 + 0.0042535
    # = 0.018080 -> 1 - Beta(4.4249, 7.4883) at 2.5% = 0.8658
    mean = 0.5 * 1 / 7 + 0.5 * 3 / 5
    var = 0.25 * 6 / 392 + 0.25 * 6 / 150 + between / (z * z)
    k = mean * (1 - mean) / var - 1
    assert (round(low, 4), round(high, 4)) == (0.2459, 0.8582)
    high = max(high, 1 - float(beta_dist.ppf(0.025, mean * k, (1 - mean) * k)))
    assert round(high, 4) == 0.8658
    assert round(mid, 4) == 0.5417
    return lam, mid, max(low, 0.0), min(high, 1.0)


def test_report_shows_corrected_shares_matching_hand_computed_ppi(tmp_path: Path) -> None:
    # Retriever A: 20 units; the plan's estimation sample reviewed a0..a9 (hand_study).
    hand_study(tmp_path)
    out = tmp_path / "report"
    build_report(load_run_dir(tmp_path, codebook=codebooks.bundled()), out)
    corrected = pd.read_csv(out / "tables" / "retrieval_quality_corrected.csv")

    lam, theta, low, high = hand_corrected()
    # human-only: Clopper-Pearson's interval for 6 of 10
    h_low, h_high = _cp(6, 10)
    # n_eff: 10 reviewed units times (human-only width / corrected width)^2
    n_eff = 10 * ((h_high - h_low) / (high - low)) ** 2
    for code in ("exact_entity", "all_high_quality"):  # every other dimension is high
        row = corrected[(corrected["retriever"] == "A") & (corrected["code"] == code)].iloc[0]
        assert row["units"] == 20
        assert row["reviewed"] == 10
        assert float(row["judge-only (%)"]) == pytest.approx(50.0)
        assert row["corrected (%)"] == f"{100 * theta:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
        assert row["human-only (%)"] == f"60.0 [{100 * h_low:.1f}, {100 * h_high:.1f}]"
        assert float(row["lambda"]) == pytest.approx(round(lam, 2))
        # 10 x (0.6161 / 0.6200)^2 = 9.9: with 10 reviewed units (2 disagreements) the corrected
        # interval, its upper bound the complement's Beta sum's, is a little wider than the
        # human-only one
        assert round(n_eff, 1) == 9.9
        assert row["n_eff"] == "10 (+0)"
        assert int(row["disagree"]) == 2
        # 2 disagreements with the judge: the old interval carried "coverage not assured: 4
        # reviewed without the code (< 15), 2 disagreements (< 10)"; the exact parts need none
        assert pd.isna(row["note"])
    # retriever B: 2 reviewed units are too few to estimate, and the table says so
    small = corrected[(corrected["retriever"] == "B") & (corrected["code"] == "exact_entity")]
    assert "too small to estimate: 2 reviewed unit(s)" in small.iloc[0]["note"]
    html = (out / "index.html").read_text()
    assert (
        "Corrected shares (%), plan &#39;hand&#39;" in html
        or "Corrected shares (%), plan 'hand'" in html
    )
    assert "targeted reviews kept out" in html
    assert "uncorrected" not in (out / "tables" / "retrieval_quality.md").read_text()


def write_attribution_study(
    root: Path, systems: dict[str, tuple[list[bool], list[bool]]]
) -> ReportInputs:
    """A study whose systems' disagreements each rest on one retrieved passage.

    ``systems``: per system, the judge's all-high decision on each of its passages (item ``i``
    of system ``X`` rests on passage ``x{i}``, coded all-high -> verification, else
    retrieval) and the reviewer's on its first ``len(human)`` passages, the plan's sample (one
    stratum, inclusion probability 1/2: half of every system is drawn).
    """
    from failcodes.attribution import (
        ClaimAttribution,
        ItemAttribution,
        Stage,
        Strategy,
        attribution_table,
    )
    from failcodes.traces import EvidenceSource

    layout = StudyLayout.of(root)
    table = layout.per_passage("ds")
    table.parent.mkdir(parents=True)
    rows, items, sample, reviews = [], [], [], []
    for system, (judge_high, human_high) in systems.items():
        prefix = system.lower()
        for i, high in enumerate(judge_high):
            uid = f"{prefix}{i}"
            rows.append(
                {
                    "system": system,
                    "retriever": "A",
                    "claim_id": f"c{uid}",
                    "unit_id": uid,
                    "status": "scored",
                    **HIGH,
                    "entity_match": "exact_entity" if high else "partial_entity",
                    "all_high": high,
                }
            )
            stage = Stage.VERIFICATION if high else Stage.RETRIEVAL
            claim = ClaimAttribution(
                system=system,
                question_id=f"q{uid}",
                sentence_id=f"q{uid}:s0",
                claim_id=f"c{uid}",
                evidence_source=EvidenceSource.RETRIEVED,
                strategy=Strategy.CODEBOOK,
                stage=stage,
                reason="judge",
            )
            items.append(
                ItemAttribution(
                    item_id=f"i{uid}",
                    system=system,
                    question_id=f"q{uid}",
                    sentence_id=f"q{uid}:s0",
                    stage=stage,
                    strategy="codebook",
                    reason="judge",
                    claims=(claim,),
                )
            )
        for i, high in enumerate(human_high):
            sample.append(f"{prefix}{i}")
            reviews.append(
                human(
                    f"{prefix}{i}",
                    "exact_entity" if high else "partial_entity",
                    coder="SIMULATED reviewer",
                )
            )
    pd.DataFrame(rows).to_csv(table, index=False)
    (layout.attribution("ds") / ATTRIBUTION_ITEMS).write_text(
        "".join(i.model_dump_json() + "\n" for i in items), encoding="utf-8"
    )
    attribution_table(items).to_csv(layout.attribution_table("ds"), index=False)
    write_half_plan(root, "att", UnitKind.RETRIEVAL, table, sample, [r["unit_id"] for r in rows])
    (root / "review" / "alice.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in reviews)
    )
    return load_run_dir(root, codebook=codebooks.bundled())


def test_report_corrects_the_attribution_by_hand(tmp_path: Path) -> None:
    # System S, 20 disagreements of one claim with one retrieved passage each (s0..s19): the
    # judge finds s0-s5 and s10-s13 all-high (verification), the rest not (retrieval). The
    # reviewer of s0..s9 (the plan's sample) finds s0-s4 and s6 all-high: the same rule gives
    # verification there. The verification cell is then the hand-computed cell of
    # hand_corrected() (judge [1]*6 + [0]*4 reviewed, [1]*4 + [0]*6 not; human
    # [1, 1, 1, 1, 1, 0, 1, 0, 0, 0]); retrieval is its complement: 1 - theta, [1 - high, 1 - low]
    # (the post-stratified point and the exact parts are symmetric in the two codes).
    judge_high = [True] * 6 + [False] * 4 + [True] * 4 + [False] * 6
    human_high = [True] * 5 + [False, True] + [False] * 3
    inputs = write_attribution_study(tmp_path, {"S": (judge_high, human_high)})
    assert len(inputs.corrected_attribution) == 1
    caption, corrected, numbers = inputs.corrected_attribution[0]
    assert "10 of 20 judge-coded items fully reviewed (by SIMULATED reviewer)" in caption
    lam, theta, low, high = hand_corrected()
    by_stage = corrected.set_index("stage")
    ver, ret = by_stage.loc["verification"], by_stage.loc["retrieval"]
    assert (ver["items"], ver["reviewed"]) == (20, 10)
    assert ver["judge-only (%)"] == "50.0"
    assert ver["corrected (%)"] == f"{100 * theta:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
    assert ret["corrected (%)"] == (
        f"{100 * (1 - theta):.1f} [{100 * (1 - high):.1f}, {100 * (1 - low):.1f}]"
    )
    assert ret["human-only (%)"].startswith("40.0 [")  # 4 of the 10 reviewed stay retrieval
    assert ver["lambda"] == f"{lam:.2f}"
    assert list(numbers["label"]) == ["S: retrieval", "S: verification"]
    assert numbers.set_index("label").loc["S: verification", "corrected"] == pytest.approx(theta)
    out = tmp_path / "report"
    build_report(inputs, out)
    assert (out / "tables" / "attribution_corrected.csv").is_file()
    assert (out / "figures" / "attribution_corrected.png").is_file()
    html = (out / "index.html").read_text()
    assert "Attribution corrected by human review" in html
    assert "by SIMULATED reviewer" in html


def test_report_corrects_each_systems_attribution_apart(tmp_path: Path) -> None:
    # Two systems in one plan. S is the cell of hand_corrected() above. T: 20 items, the judge
    # finds none of its passages all-high (judge-only: 100% retrieval, 0% verification); the
    # reviewer of t0..t9 finds t0, t1 and t2 all-high (3 of 10 move to verification).
    # T's verification cell by hand: yhat = 0 on all 20 items, so cov(y, yhat) = 0 and
    # var(yhat) = 0: lam = 0 (PPI++ falls back to the human codes) and corrected = human-only
    # = 3/10 = 30.0%. With the judge's code 0 on every item there is one part, and the
    # corrected interval is the human one: Clopper-Pearson's for 3 of 10, Beta(3, 8) at 2.5%
    # and Beta(4, 7) at 97.5%: [6.7%, 65.2%] (0.0667 / 0.6525; scipy.stats.binomtest(3, 10)
    # .proportion_ci(method="exact") gives the same). Retrieval is its complement:
    # 70.0 [34.8, 93.3]. No note (the old interval's: 3 reviewed with the code (< 15), 3
    # disagreements (< 10)).
    # Each system is estimated from its own items only: S's figures stay hand_corrected()'s.
    judge_s = [True] * 6 + [False] * 4 + [True] * 4 + [False] * 6
    human_s = [True] * 5 + [False, True] + [False] * 3
    judge_t = [False] * 20
    human_t = [True] * 3 + [False] * 7
    inputs = write_attribution_study(tmp_path, {"S": (judge_s, human_s), "T": (judge_t, human_t)})
    caption, corrected, numbers = inputs.corrected_attribution[0]
    assert "20 of 40 judge-coded items fully reviewed (by SIMULATED reviewer)" in caption
    cells = corrected.set_index(["system", "stage"])
    low_t, high_t = _cp(3, 10)
    assert (round(100 * low_t, 1), round(100 * high_t, 1)) == (6.7, 65.2)
    ver_t, ret_t = cells.loc[("T", "verification")], cells.loc[("T", "retrieval")]
    assert (ver_t["items"], ver_t["reviewed"]) == (20, 10)
    assert (ver_t["judge-only (%)"], ret_t["judge-only (%)"]) == ("0.0", "100.0")
    assert ver_t["human-only (%)"] == ver_t["corrected (%)"] == "30.0 [6.7, 65.2]"
    assert ret_t["corrected (%)"] == "70.0 [34.8, 93.3]"
    assert ver_t["lambda"] == "0.00"
    assert pd.isna(ver_t["note"]) or ver_t["note"] == ""
    lam, theta, low, high = hand_corrected()
    ver_s = cells.loc[("S", "verification")]
    assert ver_s["corrected (%)"] == f"{100 * theta:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
    assert ver_s["lambda"] == f"{lam:.2f}"
    assert list(numbers["label"]) == [
        "S: retrieval",
        "S: verification",
        "T: retrieval",
        "T: verification",
    ]
    out = tmp_path / "report"
    build_report(inputs, out)
    shown = pd.read_csv(out / "tables" / "attribution_corrected.csv")
    assert sorted(set(shown["system"])) == ["S", "T"]


def test_report_without_reviews_says_uncorrected(tmp_path: Path) -> None:
    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    big_table().to_csv(table, index=False)
    out = tmp_path / "report"
    build_report(load_run_dir(tmp_path, codebook=codebooks.bundled()), out)
    assert "uncorrected" in (out / "tables" / "retrieval_quality.md").read_text()
    assert not (out / "tables" / "retrieval_quality_corrected.csv").exists()


def test_cli_plan_targets_the_units_a_judge_panel_split_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = StudyLayout.of(tmp_path)
    table = layout.per_passage("ds")
    table.parent.mkdir(parents=True)
    big_table().to_csv(table, index=False)
    args = ("review", "plan", tmp_path, "-p", "retrieval", "-n", "10", "--panel-splits")
    code, _, err = run_cli(capsys, *args)
    assert code == 2
    assert "--panel-splits needs a judge panel run" in err
    panel = {
        "kind": "retrieval",
        "codebook": "medical-fact-check@1",
        "members": ["openai:a", "openai:b"],
        # one run folder per member, as a panel writes them (panel.json is checked for it)
        "run_dirs": {"openai:a": "panel/1-openai_a", "openai:b": "panel/2-openai_b"},
        "cost_usd": 0.0,
        "units": [],
        "split_units": ["u007", "u008", "not-scored"],
        "agreement": [],
        "quotes": [],
    }
    run_dir = layout.judge_run("ds", "retrieval")
    run_dir.mkdir(parents=True)
    (run_dir / "panel.json").write_text(json.dumps(panel))
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    plan = read_plan(layout.review_plan("ds.retrieval"))
    assert plan.targeted_ids() == {"u007", "u008"} - plan.estimation_ids()
    assert plan.targeted_ids().isdisjoint(plan.estimation_ids())
    assert "1 panel-split unit(s) are not scored in the coded table: left out" in out


def test_verification_plan_and_corrected_rows_use_the_verifier_column() -> None:
    from failcodes.report.corrected import corrected_rows

    cb = codebooks.bundled()
    part = cb.part(UnitKind.VERIFICATION)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    first = part.dimensions[0]
    low = next(s.id for s in first.subcodes if not s.high_quality)
    rows = []
    for i in range(24):
        codes = {**high, first.id: low if i % 2 else first.high_quality_code}
        rows.append(
            {
                "verifier": "v1" if i < 12 else "v2",
                "unit_id": f"t{i}",
                "status": "scored",
                **codes,
                "all_correct": i % 2 == 0,
            }
        )
    table = pd.DataFrame(rows)
    plan = draw_plan(
        table,
        UnitKind.VERIFICATION,
        name="v",
        size=20,
        seed=0,
        source="x",
        source_sha256="0" * 64,
        stratify=[StratifyBy.SYSTEM],
    )
    assert [s.key for s in plan.strata] == ["verifier=v1", "verifier=v2"]
    humans = {
        uid: Annotation(
            unit_id=uid,
            unit_kind=UnitKind.VERIFICATION,
            codebook=cb.ref(),
            coder="alice",
            coder_kind=CoderKind.HUMAN,
            codes=high,  # the human finds every step correct
        )
        for uid in plan.estimation_ids()
    }
    out = corrected_rows(table, plan, humans, part)
    flag = [r for r in out if r["code"] == "all_correct"]  # Table 9's summary row (issue 28)
    assert [r["system"] for r in flag] == ["v1", "v2"]
    for r in flag:
        assert r["reviewed"] == 10
        est = r["estimates"]
        assert est is not None
        assert est.human.estimate == 1.0  # every reviewed trace all-correct for the human
        assert est.judge.estimate == pytest.approx(0.5)


def test_stale_plan_after_a_recode_is_a_guided_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A plan drawn and reviewed, then the coded table changes (as `failcodes recode` rewrites it
    # after a codebook bump): the report still renders, uncorrected, with one line that names the
    # plan and the exact command that redraws it; running that command brings the correction back.
    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    coded = big_table()
    coded.to_csv(table, index=False)
    plan_args = ["-p", "retrieval", "-n", "12", "--stratify", "system", "--seed", "7"]
    code, _, err = run_cli(capsys, "review", "plan", tmp_path, *plan_args, "--name", "loop")
    assert code == 0, err
    plan_path = tmp_path / "review" / "plans" / "loop.json"
    drawn = read_plan(plan_path).estimation_ids()
    (tmp_path / "review" / "alice.jsonl").write_text(
        "".join(human(u, "exact_entity").model_dump_json() + "\n" for u in sorted(drawn))
    )
    out = tmp_path / "report"
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    report = ("report", tmp_path, "--codebook", cb_file, "-o")
    code, _, err = run_cli(capsys, *report, out / "1")
    assert code == 0, err
    assert err == ""
    assert (out / "1" / "tables" / "retrieval_quality_corrected.csv").exists()

    coded.loc[0, "entity_match"] = "irrelevant"  # re-coded under a new version
    coded.loc[0, "all_high"] = False
    coded.to_csv(table, index=False)
    code, _, err = run_cli(capsys, *report, out / "2")
    assert code == 0, err
    command = (
        f"failcodes review plan {tmp_path} -p retrieval -n 12 --seed 7 --dataset ds "
        "--stratify system --name loop"
    )
    assert err.splitlines() == [
        "review plan 'loop' is stale: attribution/ds/per_passage.csv changed since it was drawn "
        "(e.g. a codebook bump re-coded the units), so its tables are shown uncorrected; redraw "
        f"it with: {command}"
    ]
    assert not (out / "2" / "tables" / "retrieval_quality_corrected.csv").exists()
    md = (out / "2" / "tables" / "retrieval_quality.md").read_text()
    assert "uncorrected: review plan stale" in md
    assert "redraw it with: failcodes review plan" in (out / "2" / "index.html").read_text()

    # the printed command, run as printed (without --stratify code the same units are drawn)
    code, _, err = run_cli(capsys, *command.split()[1:])
    assert code == 0, err
    assert read_plan(plan_path).estimation_ids() == drawn
    code, _, err = run_cli(capsys, *report, out / "3")
    assert (code, err) == (0, "")
    assert (out / "3" / "tables" / "retrieval_quality_corrected.csv").exists()

    # reviews made under another codebook version never enter the estimates
    other = cb.ref().model_copy(update={"version": cb.version + 1})
    lines = [
        human(u, "exact_entity").model_copy(update={"codebook": other} if i < 5 else {})
        for i, u in enumerate(sorted(drawn))
    ]
    (tmp_path / "review" / "alice.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in lines)
    )
    code, _, err = run_cli(capsys, *report, out / "4")
    assert code == 0, err
    assert err.splitlines() == [
        f"review/alice.jsonl: reviews made under {cb.name} v{cb.version + 1}, the codebook is "
        f"now v{cb.version}; 5 stale, left out of the agreement and the corrected tables (made "
        f"under version {cb.version + 1}, not an earlier one than {cb.version})",
        "review/alice.jsonl: its 5 stale retrieval review(s) are of units in no disagreements "
        "file of the study (reviews of units it does not judge?): nothing to re-open",
    ]
    corrected = pd.read_csv(out / "4" / "tables" / "retrieval_quality_corrected.csv")
    assert set(corrected["reviewed"]) <= {7, 3, 4}  # 12 - 5 reviewed units left
    assert corrected[corrected["code"] == "exact_entity"]["reviewed"].sum() == 7


def test_report_shows_corrected_table_9_matching_hand_computed_ppi(tmp_path: Path) -> None:
    # Table 9 (verification, per verifier) through the same report path as Table 8, with the
    # numbers of test_report_shows_corrected_shares_matching_hand_computed_ppi on the
    # `inference` step: verifier A, 20 traces, t0..t9 reviewed.
    # judge (valid_inference = 1): reviewed [1]*6 + [0]*4, unreviewed [1]*4 + [0]*6
    # human: reviewed [1, 1, 1, 1, 1, 0, 1, 0, 0, 0]
    part = codebooks.bundled().part(UnitKind.VERIFICATION)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    judge_a = ["valid_inference"] * 6 + ["overreach"] * 4
    judge_a += ["valid_inference"] * 4 + ["overreach"] * 6
    human_a = ["valid_inference"] * 5 + ["overreach", "valid_inference"]
    human_a += ["conflict_synthesis_failure"] * 3
    inference = {f"t{i}": c for i, c in enumerate(judge_a)}
    inference |= {f"s{i}": "valid_inference" for i in range(4)}
    rows = [
        {
            "verifier": "A" if uid.startswith("t") else "B",
            "unit_id": uid,
            "status": "scored",
            **high,
            "inference": code,
            "all_correct": code == "valid_inference",
        }
        for uid, code in inference.items()
    ]
    table = StudyLayout.of(tmp_path).per_trace("ds")
    table.parent.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(table, index=False)
    sample = [f"t{i}" for i in range(10)] + ["s0", "s1"]
    write_half_plan(tmp_path, "hand9", UnitKind.VERIFICATION, table, sample, list(inference))
    cb = codebooks.bundled()
    reviews = [
        Annotation(
            unit_id=uid,
            unit_kind=UnitKind.VERIFICATION,
            codebook=cb.ref(),
            coder="alice",
            coder_kind=CoderKind.HUMAN,
            codes={**high, "inference": code},
        )
        for uid, code in [*zip(sample[:10], human_a, strict=True), ("s0", "valid_inference")]
    ]
    reviews.append(reviews[-1].model_copy(update={"unit_id": "s1"}))
    (tmp_path / "review" / "alice.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in reviews)
    )
    out = tmp_path / "report"
    build_report(load_run_dir(tmp_path, codebook=cb), out)
    corrected = pd.read_csv(out / "tables" / "reasoning_steps_corrected.csv")
    # the numbers of the Table 8 test (same codes on the `inference` step)
    lam, theta, low, high_b = hand_corrected()
    for code in ("valid_inference", "all_correct"):  # Table 9's summary row (issue 28)
        row = corrected[(corrected["verifier"] == "A") & (corrected["code"] == code)].iloc[0]
        assert (row["units"], row["reviewed"]) == (20, 10)
        assert float(row["judge-only (%)"]) == pytest.approx(50.0)
        assert row["corrected (%)"] == f"{100 * theta:.1f} [{100 * low:.1f}, {100 * high_b:.1f}]"
        assert float(row["lambda"]) == pytest.approx(round(lam, 2))
    md = (out / "tables" / "reasoning_steps.md").read_text()
    assert "uncorrected" not in md


def test_cli_report_of_coded_tables_without_a_judge_run_says_which_codebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A coded table brought without its judge run (no judge/ folder names a codebook): the
    # report printed only its header, Tables 8-9 and the corrected shares left out without a
    # word. It now reads the table under the bundled codebook and says so.
    entity = {f"a{i}": "exact_entity" if i % 2 else "partial_entity" for i in range(20)}
    sample = [f"a{i}" for i in range(10)]
    reviews = [human(uid, entity[uid]) for uid in sample]
    half_reviewed_study(tmp_path, entity, sample, reviews, name="own")
    out = tmp_path / "rep"
    code, stdout, stderr = run_cli(capsys, "report", tmp_path, "-o", out)
    assert stdout.startswith("report: ")
    assert code == 0
    assert stderr.splitlines() == [
        "Assumed: attribution/ds/per_passage.csv coded under the bundled codebook "
        "medical-fact-check v1 (no judge annotations name one); pass --codebook if they were "
        "coded under another"
    ]
    shares = pd.read_csv(out / "tables" / "retrieval_quality_corrected.csv")
    row = shares[(shares["retriever"] == "A") & (shares["code"] == "exact_entity")].iloc[0]
    # the reviewer agrees with the judge on all 10: 5 of them exact_entity (a1, a3, ..., a9)
    assert str(row["human-only (%)"]).startswith("50.0 [")


def test_a_review_with_no_code_on_a_dimension_is_not_reviewed_for_it() -> None:
    # A reviewer's tool left the entity_match choice empty on 8 of 20 reviewed passages (outside
    # check, redteam2). Those 8 did not review entity_match: for its cells (and the all-high rate,
    # which needs every dimension) they count as not reviewed. Read as "not this code" they
    # pulled every entity_match code down: exact_entity 10/20 = 50.0% and irrelevant 2/20 =
    # 10.0%, shares of one dimension summing to 60%, exit 0.
    from failcodes.report.corrected import corrected_rows, corrected_table

    cb = codebooks.bundled()
    part = cb.part(UnitKind.RETRIEVAL)
    entity = {f"u{i:02d}": "exact_entity" for i in range(20)}  # the judge: all exact_entity
    table = coded_table(entity, dict.fromkeys(entity, "bm25"))
    plan = plan_of(table, size=20)  # the whole population drawn
    ids = sorted(plan.estimation_ids())
    reviews = [human(u, "exact_entity") for u in ids[:10]] + [
        human(u, "irrelevant") for u in ids[10:12]
    ]
    for u in ids[12:]:
        ann = human(u, "exact_entity")
        reviews.append(ann.model_copy(update={"codes": HIGH}))  # no entity_match code
    rows = corrected_rows(table, plan, human_codes(reviews, UnitKind.RETRIEVAL), part)
    cell = {(r["dimension"], r["code"]): r for r in rows}
    exact = cell[("entity_match", "exact_entity")]
    est = exact["estimates"]
    assert est is not None
    # human share: 10 exact_entity of the 12 that coded entity_match = 0.8333,
    # Clopper-Pearson: Beta(10, 3) at 2.5%, Beta(11, 2) at 97.5%; the judge says exact_entity
    # on every unit, so its variance is 0 and PPI++ gives it lam = 0: corrected = human share
    assert exact["reviewed"] == 12
    assert est.human.estimate == pytest.approx(10 / 12)
    assert est.human.ci_low == pytest.approx(beta_dist.ppf(0.025, 10, 3))
    assert est.human.ci_high == pytest.approx(beta_dist.ppf(0.975, 11, 2))
    assert est.lam == 0.0
    assert est.corrected.estimate == pytest.approx(10 / 12)
    irrelevant = cell[("entity_match", "irrelevant")]["estimates"]
    assert irrelevant is not None
    assert irrelevant.human.estimate == pytest.approx(2 / 12)
    # other dimensions were coded on all 20
    assert cell[("scope", "exact_scope")]["reviewed"] == 20
    # all-high: 12 complete reviews, 10 of them high on all five dimensions
    summary = cell[("all_high_quality", "all_high_quality")]
    assert summary["reviewed"] == 12
    assert summary["estimates"] is not None
    assert summary["estimates"].human.estimate == pytest.approx(10 / 12)
    notes = corrected_table(rows, "retriever").set_index(["dimension", "code"])["note"]
    assert notes[("entity_match", "exact_entity")].startswith(
        "8 reviewed unit(s) with no code on entity_match counted as not reviewed"
    )
    assert "no code on" not in notes[("scope", "exact_scope")]


def test_a_review_not_assessable_on_every_dimension_is_not_reviewed_for_all_high() -> None:
    # Outside check (redteam2): a reviewer answered not_assessable on all five dimensions of 4
    # of 20 reviewed passages. The all-high rule cannot be told there (the judge's undecided
    # rows are left out of its side too), so they are not reviewed for the all-high rate: it
    # was 12/20 = 60.0% (read as "not all high"), it is 12/16 = 75.0%.
    from failcodes.report.corrected import corrected_rows

    cb = codebooks.bundled()
    part = cb.part(UnitKind.RETRIEVAL)
    entity = {f"u{i:02d}": "exact_entity" for i in range(20)}
    table = coded_table(entity, dict.fromkeys(entity, "bm25"))
    plan = plan_of(table, size=20)
    ids = sorted(plan.estimation_ids())
    reviews = [human(u, "exact_entity") for u in ids[:12]]
    reviews += [human(u, "irrelevant") for u in ids[12:16]]
    unassessed = dict.fromkeys([*HIGH, "entity_match"], "not_assessable")
    reviews += [human(u, "exact_entity").model_copy(update={"codes": unassessed}) for u in ids[16:]]
    rows = corrected_rows(table, plan, human_codes(reviews, UnitKind.RETRIEVAL), part)
    summary = next(r for r in rows if r["code"] == "all_high_quality")
    assert (summary["reviewed"], summary["uncoded"]) == (16, 4)
    assert summary["estimates"] is not None
    assert summary["estimates"].human.estimate == pytest.approx(12 / 16)
    # on entity_match the 4 count as reviewed with none of its codes (not_assessable is a code)
    exact = next(r for r in rows if r["code"] == "exact_entity")
    assert exact["reviewed"] == 20
    assert exact["estimates"].human.estimate == pytest.approx(12 / 20)


def test_units_reviewed_more_than_once_are_named_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Double coding of a plan's units (outside check, redteam2): one review per unit enters the
    # estimates (the first coder by name). That choice moves the numbers, and the report made it
    # without a word, exit 0: it now says so on stderr and in the table's caption.
    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    big_table().to_csv(table, index=False)
    code, _, err = run_cli(capsys, "review", "plan", tmp_path, "-p", "retrieval", "-n", "40")
    assert code == 0, err
    drawn = sorted(read_plan(tmp_path / "review" / "plans" / "ds.retrieval.json").estimation_ids())
    alice = [human(u, "exact_entity") for u in drawn]
    bob = [human(u, "irrelevant", coder="bob") for u in drawn[:3]]
    # a third coder on drawn[3] (one coder's own second review of a unit is another rule: the
    # latest counts, tests/test_outside_shapes8.py; it was "her first review" here before)
    carol = [human(drawn[3], "partial_entity", coder="carol")]
    for name, anns in (("alice", alice), ("bob", bob), ("carol", carol)):
        (tmp_path / "review" / f"{name}.jsonl").write_text(
            "".join(a.model_dump_json() + "\n" for a in anns)
        )
    out = tmp_path / "report"
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    code, _, err = run_cli(capsys, "report", tmp_path, "--codebook", cb_file, "-o", out)
    assert code == 0, err
    # 4 units reviewed twice, each with different codes: drawn[0:3] by alice (exact_entity)
    # and bob (irrelevant), drawn[3] by alice (exact_entity) and carol (partial_entity)
    assert err.splitlines() == [
        "Assumed: 4 unit(s) of plan 'ds.retrieval' reviewed more than once (alice, bob, carol; "
        "4 with "
        "different codes): the corrected shares count one review per unit, the first coder by "
        "name (a dimension it left empty: the next coder's code), and leave the others out"
    ]
    corrected = pd.read_csv(out / "tables" / "retrieval_quality_corrected.csv")
    exact = corrected[corrected["code"] == "exact_entity"]
    # alice (first by name) coded every drawn unit exact_entity:
    # human share 100% per retriever
    assert all(cell.startswith("100.0 [") for cell in exact["human-only (%)"])
    assert (
        "4 unit(s) reviewed more than once (4 with different codes)"
        in (out / "tables" / "retrieval_quality_corrected.md").read_text()
    )


def test_a_report_rebuilt_in_place_drops_tables_it_no_longer_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Outside check (redteam2): a study re-run after its traces changed made the review plan
    # stale; the report said so and left the corrected tables out of the page, but the earlier
    # build's tables/retrieval_quality_corrected.{csv,md,tex} stayed in the same folder, old
    # numbers beside the new report (exit 0). Only what the earlier build listed in
    # written.txt goes: the user's own table (mine.csv, one of the report's kinds) stays.
    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    coded = big_table()
    coded.to_csv(table, index=False)
    code, _, err = run_cli(capsys, "review", "plan", tmp_path, "-p", "retrieval", "-n", "40")
    assert code == 0, err
    drawn = read_plan(tmp_path / "review" / "plans" / "ds.retrieval.json").estimation_ids()
    (tmp_path / "review" / "alice.jsonl").write_text(
        "".join(human(u, "exact_entity").model_dump_json() + "\n" for u in sorted(drawn))
    )
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    out = tmp_path / "out"
    report = ("report", tmp_path, "--codebook", cb_file, "-o", out)
    code, _, err = run_cli(capsys, *report)
    assert code == 0, err
    corrected = [out / "tables" / f"retrieval_quality_corrected.{s}" for s in ("csv", "md", "tex")]
    assert all(p.is_file() for p in corrected)
    (out / "tables" / "mine.txt").write_text("kept")
    (out / "tables" / "mine.csv").write_text("kept")
    assert "tables/retrieval_quality_corrected.csv" in (out / "written.txt").read_text()
    coded.loc[0, "entity_match"] = "irrelevant"  # the coded table changes: the plan is stale
    coded.loc[0, "all_high"] = False
    coded.to_csv(table, index=False)
    code, _, err = run_cli(capsys, *report)
    assert code == 0, err
    assert "is stale" in err
    assert not any(p.exists() for p in corrected)
    assert (out / "tables" / "retrieval_quality.csv").is_file()
    assert (out / "tables" / "mine.txt").read_text() == "kept"
    assert (out / "tables" / "mine.csv").read_text() == "kept"
    assert "tables/retrieval_quality_corrected.csv" not in (out / "written.txt").read_text()


def test_drawn_units_answered_with_no_code_are_told_apart_from_not_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Outside check (redteam2): a reviewer answered 3 drawn units "not assessable" (unscored,
    # no codes). They count as not drawn (the estimate assumes missing at random), but the
    # caption called them "not yet" reviewed, hiding that the reviewer had looked and given up.
    from failcodes.annotations import Status

    table = StudyLayout.of(tmp_path).per_passage("ds")
    table.parent.mkdir(parents=True)
    big_table().to_csv(table, index=False)
    code, _, err = run_cli(capsys, "review", "plan", tmp_path, "-p", "retrieval", "-n", "40")
    assert code == 0, err
    drawn = sorted(read_plan(tmp_path / "review" / "plans" / "ds.retrieval.json").estimation_ids())
    gave_up = {"status": Status.UNSCORED, "codes": {}, "reason": "not assessable"}
    anns = [human(u, "exact_entity") for u in drawn[:35]]  # 35 reviewed, drawn[38:] not yet
    anns += [human(u, "exact_entity").model_copy(update=gave_up) for u in drawn[35:38]]
    (tmp_path / "review" / "alice.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in anns)
    )
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, "report", tmp_path, "--codebook", cb_file, "-o", out)
    assert code == 0, err
    md = (out / "tables" / "retrieval_quality_corrected.md").read_text()
    assert (
        "35 of 40 sampled units reviewed (2 not yet, 3 answered with no code (skipped or not "
        "assessable: counted as not drawn, which assumes they are missing at random))"
    ) in md


def test_corrected_table_9_counts_every_code_of_a_multi_label_step() -> None:
    """Codebook v2 (seed 001: codes of one step may co-occur): both sides count the whole set.

    20 traces of one verifier, all reviewed (plan of 20 of 20). The judge codes inference
    'overreach|conflict_synthesis_failure' on traces 0, 4, 8, 12, 16 (5 of 20), else
    valid_inference; the reviewer gives the set [overreach, conflict_synthesis_failure] on the
    10 even traces, else valid_inference. By hand:
      judge-only conflict_synthesis_failure = 5/20 = 0.25 (was 0: the cell 'a|b' != 'b')
      judge-only overreach = 5/20 = 0.25 (was 0 too: 'a|b' != 'a')
      human conflict_synthesis_failure = 10/20 = 0.5 (was 0: only codes[dim], the set's first)
      human overreach = 10/20 = 0.5; human valid_inference = 10/20 = 0.5
    """
    from failcodes.attribution import CODE_SEPARATOR
    from failcodes.report.corrected import corrected_rows

    cb = codebooks.bundled(version=2)
    part = cb.part(UnitKind.VERIFICATION)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    both = ["overreach", "conflict_synthesis_failure"]
    rows = [
        {
            "verifier": "v1",
            "unit_id": f"t{i}",
            "status": "scored",
            **high,
            "inference": CODE_SEPARATOR.join(both) if i % 4 == 0 else "valid_inference",
            "all_correct": i % 4 != 0,
        }
        for i in range(20)
    ]
    table = pd.DataFrame(rows)
    plan = draw_plan(
        table,
        UnitKind.VERIFICATION,
        name="v",
        size=20,
        seed=0,
        source="x",
        source_sha256="0" * 64,
    )
    humans = {}
    for i in range(20):
        uid = f"t{i}"
        multi = i % 2 == 0
        humans[uid] = Annotation(
            unit_id=uid,
            unit_kind=UnitKind.VERIFICATION,
            codebook=cb.ref(),
            coder="alice",
            coder_kind=CoderKind.HUMAN,
            codes={**high, "inference": both[0] if multi else "valid_inference"},
            code_sets={"inference": both if multi else ["valid_inference"]},
        )
    out = {(r["dimension"], r["code"]): r for r in corrected_rows(table, plan, humans, part)}
    expected = {
        "conflict_synthesis_failure": (0.25, 0.5),
        "overreach": (0.25, 0.5),
        "valid_inference": (0.75, 0.5),
    }
    for code, (judge, human) in expected.items():
        est = out[("inference", code)]["estimates"]
        assert est is not None, code
        assert est.judge.estimate == pytest.approx(judge), code
        assert est.human.estimate == pytest.approx(human), code


def test_a_multi_label_step_with_a_low_code_beside_the_high_one_is_not_all_correct() -> None:
    """v2: a reviewer's set [complete_selection, wrong_evidence] is not 'every step correct'.

    By hand: every other step high; evidence_selection's set holds a low code, so the unit is
    not all correct (False). Before, is_all_high read codes[dim] (the set's first code,
    complete_selection) and said True: a v2 study's human all-correct share stayed 19.3% where
    the edited unit made it 0.9 x 2/14 + 0.1 x 0 = 12.9%.
    """
    from failcodes.attribution import is_all_high

    cb = codebooks.bundled(version=2)
    part = cb.part(UnitKind.VERIFICATION)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    ann = Annotation(
        unit_id="t0",
        unit_kind=UnitKind.VERIFICATION,
        codebook=cb.ref(),
        coder="alice",
        coder_kind=CoderKind.HUMAN,
        codes=high,
        code_sets={"evidence_selection": ["complete_selection", "wrong_evidence"]},
    )
    assert is_all_high(ann, high) is False
    alone = ann.model_copy(update={"code_sets": {"evidence_selection": ["complete_selection"]}})
    assert is_all_high(alone, high) is True


def test_reviews_outside_the_plan_are_left_out_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Outside check (REPORT-i36red shape 6): a reviewer coded units the plan never drew. They
    # are no random sample, so the corrected shares must not use them; `review status` said so,
    # the report said nothing. Same study as the hand-computed PPI test above, plus 4 reviews
    # outside the plan (a10-a12 drawn from nowhere, coded irrelevant, and zz9, a unit the coded
    # table does not hold): the cell keeps the plan-only hand values, and the report says 4.
    hand_study(tmp_path)  # a19 targeted: in the plan, kept out as before
    extra = [human(u, "irrelevant", coder="bob") for u in ("a10", "a11", "a12", "zz9")]
    write_reviews(tmp_path / "review" / "bob.jsonl", extra)
    said = "4 reviews of units outside the review plan are left out of the corrected shares"
    out = tmp_path / "report"
    cb = codebooks.bundled()
    cb_file = codebooks.bundled_dir() / f"{cb.name}.v{cb.version}.yaml"
    code, _, err = run_cli(capsys, "report", tmp_path, "--codebook", cb_file, "-o", out)
    assert code == 0, err
    # zz9 is no unit of the coded table: said since session 31 (t31human)
    foreign = "1 of them no unit of the plan's data: another study's or run's reviews?"
    assert err.splitlines() == [f"{said} (not a random sample; {foreign})"]
    corrected = pd.read_csv(out / "tables" / "retrieval_quality_corrected.csv")
    lam, theta, low, high = hand_corrected()  # the plan's 10 reviews of retriever A only
    for code_id in ("exact_entity", "all_high_quality"):
        row = corrected[(corrected["retriever"] == "A") & (corrected["code"] == code_id)].iloc[0]
        assert row["reviewed"] == 10  # not 13: a10-a12 are not counted
        assert float(row["lambda"]) == pytest.approx(round(lam, 2))
        assert row["corrected (%)"] == f"{100 * theta:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
        assert row["human-only (%)"].startswith("60.0 [")  # 6 of 10; with a10-a12: 6 of 13
    assert said in (out / "tables" / "retrieval_quality_corrected.md").read_text()
