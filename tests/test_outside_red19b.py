"""Outside red-team of agreement, review and corrected shares, session 19 (t19red2).

Each test states the input, what failcodes gave before the fix, and the value computed by
hand (or by an independent implementation) beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

# three raters of 10 units (0/1): units 0-3 all 1, 4-6 all 0, 7 (1,1,0), 8 (0,0,1), 9 (1,0,0)
R1 = [1, 1, 1, 1, 0, 0, 0, 1, 0, 1]
R2 = [1, 1, 1, 1, 0, 0, 0, 1, 0, 0]
R3 = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]
MAJORITY = [1, 1, 1, 1, 0, 0, 0, 1, 0, 0]


def _fleiss(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[float, str]:
    code, out, err = run_cli(["agree", *args, "--stat", "fleiss", *AGREE_JSON], capsys)
    assert code == 0, err
    [row] = json.loads(out)
    return row["value"], row["notes"][0]


@pytest.mark.parametrize(
    ("name", "word"),
    [
        ("consenso", "consenso"),
        ("Konsens", "konsens"),
        ("adjudicado", "adjudicado"),
        ("référence", "reference"),
        ("Referenz", "referenz"),
        ("mayoría", "mayoria"),
        ("maggioranza", "maggioranza"),
        ("Mehrheit", "mehrheit"),
    ],
)
def test_a_consensus_column_named_in_another_language_is_not_a_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, word: str
) -> None:
    """`item,r1,r2,r3,Konsens` (the raters' majority, named in German): read as a fourth
    rater, Fleiss 93/133 = 0.699 for the three raters' 67/112 = 0.598, exit 0, the first line
    'raters (4)'; too few rows for the value rule. `référence` was the words r, f, rence."""
    table = tmp_path / "r.csv"
    rows = zip(R1, R2, R3, MAJORITY, strict=True)
    table.write_text(
        f"item,r1,r2,r3,{name}\n"
        + "".join(f"{i},{a},{b},{c},{m}\n" for i, (a, b, c, m) in enumerate(rows)),
        encoding="utf-8",
    )
    value, line = _fleiss(capsys, str(table), "--bootstrap", "0")
    # three raters: 7 unanimous units (P_i 1), 3 split 2-1 (P_i 2/6): P-bar 8/10; ones 16 of
    # 30: p_e (16^2 + 14^2)/30^2 = 452/900; (720 - 452)/(900 - 452) = 268/448 = 67/112
    assert value == pytest.approx(67 / 112)
    assert line.startswith(
        f"Assumed: raters (3): r1, r2, r3; left out: {name} (named like a consensus column "
        f"('{word}'); a rater? --raters r1,r2,r3,{name} keeps it)"
    )
    # with it as a fourth rater (the number before): 7 unanimous, 3 split 3-1 (P_i 6/12):
    # P-bar 0.85; ones 21 of 40: p_e 802/1600; (1360 - 802)/(1600 - 802) = 558/798 = 93/133
    value, _ = _fleiss(capsys, str(table), "--bootstrap", "0", "--raters", f"r1,r2,r3,{name}")
    assert value == pytest.approx(93 / 133)


@pytest.mark.parametrize(
    "name", ["José", "Müller", "Renée", "Mayor", "Konstantin", "Consuelo", "Françoise"]
)
def test_real_rater_names_with_accents_stay_raters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """The folded accents and the new words refuse no real name: a fourth rater named José
    (or Müller...) stays a rater (Fleiss 93/133 above, the first line 'raters (4)')."""
    table = tmp_path / "r.csv"
    rows = zip(R1, R2, R3, MAJORITY, strict=True)
    table.write_text(
        f"item,r1,r2,r3,{name}\n"
        + "".join(f"{i},{a},{b},{c},{m}\n" for i, (a, b, c, m) in enumerate(rows)),
        encoding="utf-8",
    )
    value, line = _fleiss(capsys, str(table), "--bootstrap", "0")
    assert value == pytest.approx(93 / 133)
    assert line.startswith(f"Assumed: raters (4): r1, r2, r3, {name}; unit ids")


def _rows_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict[str, object]]:
    code, out, err = run_cli(["agree", *args, "--format", "json"], capsys)
    assert code == 0, err
    return {row["statistic"]: row for row in json.loads(out)}


@pytest.mark.parametrize("bootstrap", ["2000", "0"])
def test_percent_agreement_of_units_gets_the_exact_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bootstrap: str
) -> None:
    """Two raters agreeing on 6 of 6 units: percent agreement read [1.000, 1.000]
    (bootstrap, or Wald with --bootstrap 0) with a zero-width warning; 8 of 10 read [0.400,
    1.000] (BCa), an upper bound of 1 two disagreements rule out. Each unit agrees or not, so
    the count is binomial: Clopper-Pearson's interval, checked against statsmodels'
    proportion_confint(x, n, method='beta'); PABAK (2 p - 1 for two codes) maps it."""
    from statsmodels.stats.proportion import proportion_confint

    six = tmp_path / "six.csv"
    six.write_text("item,a,b\n" + "".join(f"{i},{c},{c}\n" for i, c in enumerate("xyxyxx")))
    rows = _rows_json(capsys, str(six), "--stat", "percent", "--bootstrap", bootstrap)
    low, high = proportion_confint(6, 6, alpha=0.05, method="beta")  # (0.5407, 1.0)
    assert rows["percent"]["value"] == 1.0
    assert (rows["percent"]["ci_low"], rows["percent"]["ci_high"]) == pytest.approx((low, high))
    assert rows["percent"]["ci_method"] == "clopper_pearson"
    assert "zero-width" not in str(rows["percent"]["warning"])
    ten = tmp_path / "ten.csv"
    a, b = "xyxyxxyxyx", "xyyyxxyxxx"  # units 2 and 8 differ: 8 of 10 agree
    ten.write_text(
        "item,a,b\n" + "".join(f"{i},{x},{y}\n" for i, (x, y) in enumerate(zip(a, b, strict=True)))
    )
    rows = _rows_json(
        capsys, str(ten), "--stat", "percent", "--stat", "pabak", "--bootstrap", bootstrap
    )
    low, high = proportion_confint(8, 10, alpha=0.05, method="beta")  # (0.4439, 0.9748)
    assert rows["percent"]["value"] == pytest.approx(0.8)
    assert (rows["percent"]["ci_low"], rows["percent"]["ci_high"]) == pytest.approx((low, high))
    # PABAK (q p_o - 1)/(q - 1) with q = 2: 0.6, its bounds 2 x bound - 1
    assert rows["pabak"]["value"] == pytest.approx(0.6)
    assert (rows["pabak"]["ci_low"], rows["pabak"]["ci_high"]) == pytest.approx(
        (2 * low - 1, 2 * high - 1)
    )
    assert rows["pabak"]["ci_method"] == "clopper_pearson"


def test_percent_agreement_of_three_raters_is_no_proportion_of_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three raters split 2-1 on a unit agree on 1 of its 3 pairs: percent agreement is a
    mean of per-unit shares (7 units at 1, 3 at 1/3: 8/10), no count of units, so its
    interval is not Clopper-Pearson's of 7/10. Both its bounds are Clopper-Pearson's of
    effective counts (session 31: n* = 0.8 * 0.2 / se^2 = 15.43, se^2 = (7 * 0.2^2 + 3 *
    (1/3 - 0.8)^2) / 90), labelled so (it said bootstrap_bca)."""
    table = tmp_path / "r.csv"
    rows = zip(R1, R2, R3, strict=True)
    table.write_text(
        "item,r1,r2,r3\n" + "".join(f"{i},{a},{b},{c}\n" for i, (a, b, c) in enumerate(rows))
    )
    out = _rows_json(capsys, str(table), "--stat", "percent")
    assert out["percent"]["value"] == pytest.approx(8 / 10)
    assert out["percent"]["ci_method"] == "clopper_pearson_effective"


def _hand_plan(root: Path, table: Path, sample: list[str], population: list[str]) -> Path:
    """review/plans/p.json as a person writes it: seed 0, one stratum, ``sample`` as the
    estimation units (no drawn_sha256: `review plan` never drew it)."""
    from failcodes.hashing import file_sha256

    p = len(sample) / len(population)
    plan = {
        "name": "p",
        "part": "retrieval",
        "source": table.relative_to(root).as_posix(),
        "source_sha256": file_sha256(table),
        "seed": 0,
        "size": len(sample),
        "strata": [
            {
                "key": "all",
                "population": len(population),
                "sampled": len(sample),
                "inclusion_probability": p,
            }
        ],
        "units": [
            {"unit_id": u, "sample": "estimation", "stratum": "all", "inclusion_probability": p}
            for u in sample
        ],
        "unit_strata": dict.fromkeys(population, "all"),
    }
    path = root / "review" / "plans" / "p.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def _forty_units(root: Path) -> tuple[dict[str, str], Path]:
    """40 retrieval units, the judge's entity_match exact_entity on each (data set 'ds')."""
    from failcodes.study.layout import StudyLayout
    from tests.test_review_plan import coded_table

    judge = {f"u{n:02d}": "exact_entity" for n in range(40)}
    table = StudyLayout.of(root).per_passage("ds")
    table.parent.mkdir(parents=True)
    coded_table(judge, dict.fromkeys(judge, "A")).to_csv(table, index=False)
    return judge, table


def test_a_hand_written_plan_of_the_disagreements_gives_no_corrected_share(
    tmp_path: Path,
) -> None:
    """40 units; a plan written by hand lists the 14 units the reviewers flagged (where
    they disagree with the judge: u00..u12, u20) as its estimation sample, every one reviewed
    irrelevant; no panel.json to compare with. The corrected shares took it as a random
    draw: irrelevant 'corrected' 100.0 [76.8, 100.0] and exact_entity 0.0 [0.0, 23.2], those
    14 units' shares read as the data set's, where at most 14 of the 40 (35%) are irrelevant
    (CP 14/14: 0.025^(1/14) = 0.768), exit 0. A seed-0
    draw of 14 of the 40 (what `review plan -n 14 --seed 0` draws) holds other units: the
    plan is shown uncorrected, with the reason and the redraw command."""
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind
    from tests.test_outside_red17b import _entity_review
    from tests.test_review_plan import draw_plan, write_reviews

    judge, table = _forty_units(tmp_path)
    flagged = [f"u{n:02d}" for n in (*range(13), 20)]
    _hand_plan(tmp_path, table, flagged, list(judge))
    alice = [_entity_review(u, "irrelevant", "alice") for u in flagged]
    write_reviews(tmp_path / "review" / "alice.jsonl", alice)
    import pandas as pd

    seeded = draw_plan(
        pd.read_csv(table),
        UnitKind.RETRIEVAL,
        name="p",
        size=14,
        seed=0,
        source="x",
        source_sha256="0" * 64,
    ).estimation_ids()
    other = len(set(flagged) - seeded)  # flagged units a seed-0 draw does not hold
    assert other > 0
    inputs = load_run_dir(tmp_path)
    assert UnitKind.RETRIEVAL not in inputs.corrected  # was irrelevant 100.0 over the 14
    [note] = [n for n in inputs.notes["corrected:retrieval"] if "seed's draw" in n]
    assert note == (
        f"review plan 'p' is not its seed's draw: {other} of its 14 estimation units are not "
        "among those `review plan` draws with seed 0: written or edited by hand (the "
        "disagreements?), its shares would be those units', not the data set's, so its tables "
        "are shown uncorrected (give chosen units as a targeted sample: --targeted FILE); "
        f"redraw it with: failcodes review plan {tmp_path} -p retrieval -n 14 --seed 0 "
        "--dataset ds --name p"
    )


def test_a_plan_review_plan_drew_is_corrected_with_or_without_its_digest(
    tmp_path: Path,
) -> None:
    """The draw `review plan -n 14 --seed 0` writes is corrected; the same plan with its
    drawn_sha256 taken out (a plan written before it) is drawn again and matches, so it is
    corrected too; the same plan with one drawn unit swapped for another (digest kept) is
    no longer the draw: uncorrected."""
    import pandas as pd

    from failcodes.hashing import file_sha256
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind
    from tests.test_outside_red17b import _entity_review
    from tests.test_review_plan import draw_plan, write_reviews

    judge, table = _forty_units(tmp_path)
    plan = draw_plan(
        pd.read_csv(table),
        UnitKind.RETRIEVAL,
        name="p",
        size=14,
        seed=0,
        source=table.relative_to(tmp_path).as_posix(),
        source_sha256=file_sha256(table),
    )
    drawn = sorted(plan.estimation_ids())
    write_reviews(
        tmp_path / "review" / "alice.jsonl", [_entity_review(u, judge[u], "alice") for u in drawn]
    )
    path = tmp_path / "review" / "plans" / "p.json"
    path.parent.mkdir(parents=True)
    saved = json.loads(plan.model_dump_json())
    assert saved["drawn_sha256"] is not None
    path.write_text(json.dumps(saved), encoding="utf-8")
    assert UnitKind.RETRIEVAL in load_run_dir(tmp_path).corrected
    path.write_text(json.dumps({**saved, "drawn_sha256": None}), encoding="utf-8")
    assert UnitKind.RETRIEVAL in load_run_dir(tmp_path).corrected
    spare = next(u for u in judge if u not in drawn)
    swapped = [spare if u["unit_id"] == drawn[0] else u["unit_id"] for u in saved["units"]]
    saved["units"] = [{**u, "unit_id": s} for u, s in zip(saved["units"], swapped, strict=True)]
    path.write_text(json.dumps(saved), encoding="utf-8")
    write_reviews(
        tmp_path / "review" / "alice.jsonl",
        [_entity_review(u, judge[u], "alice") for u in swapped],
    )
    inputs = load_run_dir(tmp_path)
    assert UnitKind.RETRIEVAL not in inputs.corrected
    assert any(
        "1 of its 14 estimation units are not among" in n for v in inputs.notes.values() for n in v
    )


def test_human_vs_judge_agreement_leaves_out_a_hand_written_plans_units(tmp_path: Path) -> None:
    """The hand-written plan above (14 units reviewers flagged, alice irrelevant on each, the
    judge exact_entity on all 40): human vs judge agreement on entity_match read percent 0.000
    and Fleiss -1.000 over the 14 units, with no note, as the judge's agreement with people;
    the units of a plan that is not its seed's draw are now left out, as targeted ones are,
    and a note says so (no reviewed unit is left: no human vs judge row)."""
    from failcodes.annotations import CoderKind
    from failcodes.report.rundir import load_run_dir
    from tests.test_outside_red17b import _entity_review
    from tests.test_review_plan import human, write_reviews

    judge, table = _forty_units(tmp_path)
    flagged = [f"u{n:02d}" for n in (*range(13), 20)]
    _hand_plan(tmp_path, table, flagged, list(judge))
    alice = [_entity_review(u, "irrelevant", "alice") for u in flagged]
    write_reviews(tmp_path / "review" / "alice.jsonl", alice)
    judged = [
        human(u, c).model_copy(update={"coder": "judge", "coder_kind": CoderKind.LLM})
        for u, c in judge.items()
    ]
    write_reviews(tmp_path / "judge" / "ds" / "retrieval" / "annotations.jsonl", judged)
    inputs = load_run_dir(tmp_path)
    rows = inputs.agreement
    vs_judge = [] if rows is None else [c for c in rows["coders"] if "judge" in str(c)]
    assert vs_judge == []  # was 'alice vs judge' percent 0.000 over 14 units
    assert inputs.notes["agreement"] == [
        "14 reviewed unit(s) of a plan that is not its seed's draw (written or edited by hand: "
        "the corrected shares' note says which) are left out of human vs judge agreement: over "
        "them it is not the judge's agreement on the units it codes"
    ]
