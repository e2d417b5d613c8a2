"""Outside red-team, session 13 (t13red2): review side, agreement and readers.

Each test is a shape that gave a wrong number (or an unsaid assumption) at exit 0 before its
fix, or the proper pooled statistic that replaces an undefined one; the expected values are
worked by hand beside the assertions.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from failcodes.annotations import Annotation, CoderKind
from failcodes.units import UnitKind
from tests.cli_helpers import AGREE_JSON, run_cli
from tests.labelstudio_helpers import toy_codebook

# Two coders, four units, two dimensions (entity: x = exact_entity, y = partial_entity;
# scope: a = exact_scope, b = broader_scope).
_X, _Y, _A, _B = "exact_entity", "partial_entity", "exact_scope", "broader_scope"
_POOL = {  # unit: ((alice entity, bob entity), (alice scope, bob scope))
    "u1": ((_X, _X), (_A, _A)),
    "u2": ((_X, _X), (_A, _B)),
    "u3": ((_X, _Y), (_B, _B)),
    "u4": ((_Y, _Y), (_B, _A)),
}


def _pool_annotations() -> list[Annotation]:
    ref = toy_codebook().ref()
    return [
        Annotation(
            unit_id=unit,
            unit_kind=UnitKind.RETRIEVAL,
            codebook=ref,
            coder=who,
            coder_kind=CoderKind.HUMAN,
            codes={"entity": entity[i], "scope": scope[i]},
        )
        for unit, (entity, scope) in _POOL.items()
        for i, who in enumerate(("alice", "bob"))
    ]


def test_pooled_kappa_takes_chance_within_each_dimension_de_vries() -> None:
    """de Vries et al. (2008) pooled kappa, by hand.

    entity: u1 xx, u2 xx, u3 xy, u4 yy: p_o = 3/4; Fleiss margins x 5/8, y 3/8:
    p_e = 25/64 + 9/64 = 17/32; kappa (24/32 - 17/32) / (15/32) = 7/15.
    scope: u1 aa, u2 ab, u3 bb, u4 ba: p_o = 1/2; margins 1/2, 1/2: p_e = 1/2; kappa 0.
    Pooled: mean p_o = 5/8, mean p_e = (17/32 + 16/32) / 2 = 33/64;
    (40/64 - 33/64) / (31/64) = 7/31 = 0.2258 (the mean of the kappas would be 7/30; the one
    margin over all four codes of 37cfd1a's predecessor: p_e = (25 + 9 + 16 + 16) / 256,
    (160 - 66) / 190 = 0.4947).
    AC1: p_e = 2 * (5/8)(3/8) = 15/32 and 2 * (1/2)(1/2) = 1/2, mean 31/64:
    (40 - 31) / (64 - 31) = 9/33 = 3/11. Brennan-Prediger: p_e 1/2 each: (5/8 - 1/2) / (1/2) = 1/4.
    Jackknife, a unit out of both dimensions at once:
    - u1 out: entity p_o 2/3, p_e 1/2; scope p_o 1/3, margins a 1/3 b 2/3, p_e 5/9;
      mean p_o 1/2, mean p_e 19/36: (18 - 19) / (36 - 19) = -1/17.
    - u2 out: entity 2/3, 1/2; scope 2/3, 1/2: (2/3 - 1/2) / (1/2) = 1/3.
    - u3 out: entity 1, p_e 4/9 + 1/9 = 5/9; scope 1/3, a 2/3: 5/9; (2/3 - 5/9) / (4/9) = 1/4.
    - u4 out: entity 2/3, x 5/6: p_e 26/36; scope 2/3, 1/2; mean p_e 11/18: (1/18)/(7/18) = 1/7.
    SE = sqrt(3/4 * sum (theta_i - mean)^2) over (-1/17, 1/3, 1/4, 1/7) = 0.25417.
    """
    import krippendorff
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    from failcodes.coderagreement import POOLED_CHANCE, annotation_agreement

    rows = {
        (r.scope, r.dimension, r.result.statistic): r.result
        for r in annotation_agreement(_pool_annotations())
    }
    # per dimension, as statsmodels and the krippendorff package compute them
    for dim, k in (("entity", 0), ("scope", 1)):
        pairs = [[v[k][0], v[k][1]] for v in _POOL.values()]
        codes = sorted({c for p in pairs for c in p})
        coded = np.array([[codes.index(c) for c in p] for p in pairs])
        got = rows[("dimension", dim, "fleiss")].value
        assert got == pytest.approx(fleiss_kappa(aggregate_raters(coded)[0]))
        alpha = krippendorff.alpha(reliability_data=coded.T, level_of_measurement="nominal")
        assert rows[("dimension", dim, "krippendorff")].value == pytest.approx(alpha)
    assert rows[("dimension", "entity", "fleiss")].value == pytest.approx(7 / 15)
    assert rows[("dimension", "scope", "fleiss")].value == pytest.approx(0.0, abs=1e-12)

    fleiss = rows[("pooled", None, "fleiss")]
    assert fleiss.value == pytest.approx(7 / 31)
    assert fleiss.observed_agreement == pytest.approx(5 / 8)
    assert fleiss.chance_agreement == pytest.approx(33 / 64)
    assert (fleiss.n_units, fleiss.n_rows) == (4, 8)
    jack = np.array([-1 / 17, 1 / 3, 1 / 4, 1 / 7])
    se = float(np.sqrt(3 / 4 * ((jack - jack.mean()) ** 2).sum()))
    assert se == pytest.approx(0.2541674963)
    assert fleiss.se == pytest.approx(se)
    assert fleiss.se_method == "cluster_jackknife"
    assert fleiss.ci_low == pytest.approx(7 / 31 - 1.959963985 * se)
    assert fleiss.ci_high == pytest.approx(7 / 31 + 1.959963985 * se)
    assert fleiss.warning is not None and "only 4 units" in fleiss.warning
    assert rows[("pooled", None, "gwet_ac1")].value == pytest.approx(3 / 11)
    assert rows[("pooled", None, "brennan_prediger")].value == pytest.approx(1 / 4)
    assert rows[("pooled", None, "percent")].value == pytest.approx(5 / 8)
    alpha = rows[("pooled", None, "krippendorff")]
    assert alpha.value is None and alpha.undefined_reason == POOLED_CHANCE


def test_agree_says_what_its_pooled_rows_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI names the pooled method on its own line; the pooled Fleiss row reads 7/31."""
    path = tmp_path / "ann.jsonl"
    path.write_text(
        "".join(json.dumps(a.model_dump(mode="json")) + "\n" for a in _pool_annotations())
    )
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    rows = json.loads(out)
    pooled = next(r for r in rows if r["scope"] == "pooled" and r["statistic"] == "fleiss")
    assert pooled["value"] == pytest.approx(7 / 31)  # 0.2258, as above
    line = next(n for n in pooled["notes"] if n.startswith("Pooled rows"))
    assert "over the 2 dimensions (entity, scope)" in line
    assert "de Vries et al. 2008" in line and "chance agreement within each dimension" in line


def _first_line_and_rows(
    capsys: pytest.CaptureFixture[str], path: Path, *extra: str
) -> tuple[str, dict[str, float]]:
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON, *extra], capsys)
    assert code == 0, err
    rows = json.loads(out)
    return rows[0]["notes"][0], {r["statistic"]: r["value"] for r in rows}


def test_a_parquet_categorys_unused_categories_are_said_beside_the_category_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A categorical column declaring 5 codes, 2 of them given: q is 2, and the line says so.

    8 units, A/B agree on 6: p_o = 3/4. Brennan-Prediger (p_o - 1/q) / (1 - 1/q): with the 2
    given, (3/4 - 1/2) / (1/2) = 1/2; with the 5 declared, (3/4 - 1/5) / (4/5) = 11/16.
    Before, the first line said nothing of the category set or of the 3 unused codes.
    """
    import pandas as pd

    kind = pd.CategoricalDtype(["exact", "partial", "irrelevant", "other", "none"])
    a = ["exact", "exact", "partial", "partial", "exact", "partial", "exact", "exact"]
    b = ["exact", "partial", "partial", "partial", "exact", "exact", "exact", "exact"]
    path = tmp_path / "r.parquet"
    pd.DataFrame(
        {"unit": [f"u{i}" for i in range(8)], "A": pd.Categorical(a, dtype=kind),
         "B": pd.Categorical(b, dtype=kind)}
    ).to_parquet(path)  # fmt: skip
    first, values = _first_line_and_rows(capsys, path)
    assert values["brennan_prediger"] == pytest.approx(1 / 2)
    assert "category set: the 2 given (exact, partial); gwet_ac1, brennan_prediger, pabak" in first
    assert (
        "the column type declares 3 more never given (irrelevant, other, none): not counted "
        "(--categories exact,partial,irrelevant,other,none counts them)"
    ) in first
    _, values = _first_line_and_rows(
        capsys, path, "--categories", "exact,partial,irrelevant,other,none"
    )
    assert values["brennan_prediger"] == pytest.approx(11 / 16)


def test_integer_scores_read_as_nominal_categories_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scores 1-5 under the default nominal level: the line says they are unordered.

    10 units, 5 exact agreements: p_o = 1/2. A gives each score twice (margins 1/5), B 1, 2, 2,
    3, 2 times: p_e = 1/5 * (1 + 2 + 2 + 3 + 2) / 10 = 1/5; Cohen (1/2 - 1/5) / (4/5) = 3/8.
    """
    pairs = [(1, 2), (2, 2), (3, 4), (4, 4), (5, 4), (1, 1), (2, 3), (3, 3), (4, 5), (5, 5)]
    path = tmp_path / "r.csv"
    path.write_text("unit,A,B\n" + "".join(f"u{i},{a},{b}\n" for i, (a, b) in enumerate(pairs)))
    first, values = _first_line_and_rows(capsys, path)
    assert values["cohen"] == pytest.approx(3 / 8)
    assert (
        "the numbers 1, 2, 3, 4, 5 read as unordered categories (1 against 2 disagrees as much "
        "as against 5; --level ordinal or --weights linear for a scale)"
    ) in first


def test_a_rater_who_rated_a_third_of_the_units_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Long table, A and B rate 6 units, C 2: percent by hand, and C's 2 of 6 on line 1.

    Per unit: u1 xxx 1; u2 x y x: 1 agreeing pair of 3, 1/3; u3 yy, u4 yy, u5 xx: 1; u6 yx: 0.
    p_o = (4 + 1/3) / 6 = 13/18.
    """
    path = tmp_path / "long.csv"
    path.write_text(
        "unit,rater,code\nu1,A,x\nu1,B,x\nu1,C,x\nu2,A,x\nu2,B,y\nu2,C,x\nu3,A,y\nu3,B,y\n"
        "u4,A,y\nu4,B,y\nu5,A,x\nu5,B,x\nu6,A,y\nu6,B,x\n"
    )
    first, values = _first_line_and_rows(capsys, path)
    assert values["percent"] == pytest.approx(13 / 18)
    assert "missing ratings: C rated 2 of 6 units (a unit enters with two or more ratings)" in first


def test_a_rater_who_gave_one_code_to_every_unit_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A says no_error on all 20 units, B on 18: p_o = 9/10, Cohen's p_e = 1 * 9/10: kappa 0.

    The kappa paradox (Feinstein & Cicchetti 1990): 90% agreement reads kappa 0 with a
    zero-width interval; the first line now says why.
    """
    path = tmp_path / "r.csv"
    path.write_text(
        "unit,A,B\n" + "".join(f"u{i},no_error,{'error' if i >= 18 else 'no_error'}\n"
                               for i in range(20))
    )  # fmt: skip
    first, values = _first_line_and_rows(capsys, path)
    assert values["percent"] == pytest.approx(9 / 10)
    assert values["cohen"] == pytest.approx(0.0, abs=1e-12)
    assert "A gave 'no_error' to all 20 units it rated: the chance-corrected coefficients" in first
    assert "Cohen's kappa is 0 whatever the other gave" in first


@pytest.mark.parametrize(
    "name", ["tiebreaker", "tie_breaker", "resolution", "Reconciliation", "arbitrator",
             "moderated_code", "finalised"]
)  # fmt: skip
def test_a_column_that_settles_disagreements_is_not_a_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A, B and a column that settles their splits (A's code on u5, a third code on u6).

    A, B: p_o = 4/6; margins x 6/12: p_e = 1/2; Fleiss (2/3 - 1/2) / (1/2) = 1/3.
    Read as a third rater (before, exit 0): u1-u4 unanimous 1, u5 x y x and u6 y x x 1/3 each:
    p_o = (4 + 2/3) / 6 = 7/9; x 10/18: p_e = 25/81 + 16/81 = 41/81;
    (63 - 41) / (81 - 41) = 0.55.
    """
    path = tmp_path / "r.csv"
    path.write_text(
        f"unit,A,B,{name}\nu1,x,x,x\nu2,x,x,x\nu3,y,y,y\nu4,y,y,y\nu5,x,y,x\nu6,y,x,x\n"
    )
    first, values = _first_line_and_rows(capsys, path, "--stat", "fleiss")
    assert values["fleiss"] == pytest.approx(1 / 3)
    assert first.startswith(f"Assumed: raters (2): A, B; left out: {name} (named like a consensus")
    _, values = _first_line_and_rows(capsys, path, "--stat", "fleiss", "--raters", f"A,B,{name}")
    assert values["fleiss"] == pytest.approx(0.55)


def test_pooled_kappa_is_the_dimensions_mean_agreements_with_sets_and_missing_data() -> None:
    """Three coders (c skips a third of the units), a set dimension, dimensions left empty.

    Whatever the data, pooled kappa's p_o and p_e are the means of the dimension rows' (each
    checked against statsmodels above), and the kappa is (mean p_o - mean p_e)/(1 - mean p_e):
    with missing data kept or not, and with a set dimension on its exact sets.
    """
    import random

    from failcodes.coderagreement import annotation_agreement

    ref = toy_codebook().ref()
    rng = random.Random(3)
    anns = []
    for i in range(30):
        for who in ("a", "b", "c"):
            if who == "c" and i % 3 == 0:
                continue
            codes, sets = {}, {}
            if rng.random() < 0.9:
                codes["entity"] = rng.choice(["exact_entity", "partial_entity", "irrelevant"])
            if rng.random() < 0.9:
                codes["scope"] = rng.choice(["exact_scope", "broader_scope", "exact_scope"])
            if rng.random() < 0.8:
                chosen = sorted(rng.sample(["valid_inference", "overreach"], rng.choice([1, 2])))
                codes["inference"], sets["inference"] = chosen[0], chosen
            anns.append(
                Annotation(
                    unit_id=f"u{i}",
                    unit_kind=UnitKind.RETRIEVAL,
                    codebook=ref,
                    coder=who,
                    coder_kind=CoderKind.HUMAN,
                    codes=codes,
                    code_sets=sets,
                )
            )
    for missing in (False, True):
        rows = annotation_agreement(anns, missing_data=missing, multi_label=["inference"])
        dims = [r.result for r in rows if r.scope == "dimension" and r.result.statistic == "fleiss"]
        assert len(dims) == 3
        [pooled] = [
            r.result for r in rows if r.scope == "pooled" and r.result.statistic == "fleiss"
        ]
        p_o = sum(d.observed_agreement or 0.0 for d in dims) / 3
        p_e = sum(d.chance_agreement or 0.0 for d in dims) / 3
        assert pooled.observed_agreement == pytest.approx(p_o)
        assert pooled.chance_agreement == pytest.approx(p_e)
        assert pooled.value == pytest.approx((p_o - p_e) / (1 - p_e))
        assert pooled.n_units == 30


def test_a_judge_that_gave_one_code_to_every_unit_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge says exact_entity on all 10 units, the reviewer on 8 (partial on 2).

    Cohen: p_o = 8/10, the judge's margin is 1 on exact: p_e = 1 * 8/10, kappa 0 for 80%
    agreement (the kappa paradox); before, nothing said why.
    """
    ref = toy_codebook().ref()
    anns = [
        Annotation(
            unit_id=f"u{i}",
            unit_kind=UnitKind.RETRIEVAL,
            codebook=ref,
            coder=who,
            coder_kind=kind,
            codes={"entity": code},
        )
        for i in range(10)
        for who, kind, code in (
            ("judge", CoderKind.LLM, _X),
            ("dr_a", CoderKind.HUMAN, _Y if i < 2 else _X),
        )
    ]
    path = tmp_path / "ann.jsonl"
    path.write_text("".join(json.dumps(a.model_dump(mode="json")) + "\n" for a in anns))
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    rows = json.loads(out)
    [cohen] = [r for r in rows if r["scope"] == "pair" and r["statistic"] == "cohen"]
    assert cohen["value"] == pytest.approx(0.0, abs=1e-12)
    [percent] = [r for r in rows if r["scope"] == "pair" and r["statistic"] == "percent"]
    assert percent["value"] == pytest.approx(8 / 10)
    assert rows[0]["notes"][0].endswith(
        "; one code only: judge gave 'exact_entity' on entity to all 10 units (the "
        "chance-corrected coefficients take that margin as chance: Cohen's kappa with it is 0 "
        "however often the other agrees; the kappa paradox, Feinstein & Cicchetti 1990)"
    )


def test_the_report_names_each_agreement_rows_scope_pair_and_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`agree -o` on a reviewer's and the judge's annotations, read by the report.

    Judge X X X X Y Y Z Z X Y, reviewer X X X Y Y X Z Y X Y (X exact, Y partial, Z irrelevant).
    Pair Cohen: p_o 7/10, p_e (5*5 + 3*4 + 2*1)/100 = 0.39: (0.7 - 0.39)/0.61 = 0.508.
    exact_entity as 0/1: they split on u3 and u5, p_o 8/10: PABAK 2 * 0.8 - 1 = 0.600.
    Before, every row was keyed by its dimension alone: the 'entity' row showed that code's
    PABAK 0.600 as the dimension's (whose PABAK, q = 3, would be (3 * 0.7 - 1)/2 = 0.55), and
    the pooled row took the file's name.
    """
    from failcodes.cli.main import main

    ref = toy_codebook().ref()
    judge = [_X, _X, _X, _X, _Y, _Y, "irrelevant", "irrelevant", _X, _Y]
    human = [_X, _X, _X, _Y, _Y, _X, "irrelevant", _Y, _X, _Y]
    anns = [
        Annotation(
            unit_id=f"u{i}",
            unit_kind=UnitKind.RETRIEVAL,
            codebook=ref,
            coder=who,
            coder_kind=kind,
            codes={"entity": codes[i]},
        )
        for i in range(10)
        for who, kind, codes in (("judge", CoderKind.LLM, judge), ("dr_a", CoderKind.HUMAN, human))
    ]
    (tmp_path / "hj.jsonl").write_text(
        "".join(json.dumps(a.model_dump(mode="json")) + "\n" for a in anns)
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["init", "study"])
    (tmp_path / "study" / "failcodes.toml").write_text(
        'name = "hj"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[agreements]]\n'
        'name = "reviewers"\npath = "../hj.jsonl"\nbootstrap = 0\n'
    )
    code, _, err = run_cli(["run", "study"], capsys)
    assert code == 0, err
    md = (tmp_path / "study" / "report" / "tables" / "agreement.md").read_text()
    rows = {
        line.split("|")[1].split("<sup>")[0].strip(): [c.strip() for c in line.split("|")[4:-1]]
        for line in md.splitlines()
        if line.startswith("| ") and "<sup>" in line
    }
    # columns: percent, fleiss, krippendorff, gwet_ac1, brennan_prediger, cohen, pabak
    assert rows["entity"][5:] == ["", ""]  # a dimension row: no pair or code statistic
    assert rows["entity (dr_a vs judge)"][5].startswith("0.508 [")
    assert rows["entity: exact_entity (dr_a vs judge)"][6].startswith("0.600 [")
    assert rows["entity: exact_entity (dr_a vs judge)"][0].startswith("0.800 [")
    assert "reviewers: pooled over dimensions" in rows


def test_the_report_keeps_every_group_of_an_agreement_by_a_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A study agreement with by = "item": q1 A/B agree on 3 of 4 units, q2 on 1 of 4.

    Before, both groups were keyed by the file's name: the report showed 'items 0.750' (q1's)
    alone, as if for the whole table; q2's 0.250 was dropped, exit 0.
    """
    from failcodes.cli.main import main

    (tmp_path / "by.csv").write_text(
        "unit,item,A,B\nu1,q1,x,x\nu2,q1,x,y\nu3,q1,y,y\nu4,q1,y,y\n"
        "u1,q2,x,y\nu2,q2,y,x\nu3,q2,x,x\nu4,q2,y,x\n"
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["init", "study"])
    (tmp_path / "study" / "failcodes.toml").write_text(
        'name = "by"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[agreements]]\n'
        'name = "items"\npath = "../by.csv"\nby = "item"\nstatistics = ["percent"]\n'
        "bootstrap = 0\n"
    )
    code, _, err = run_cli(["run", "study"], capsys)
    assert code == 0, err
    md = (tmp_path / "study" / "report" / "tables" / "agreement.md").read_text()
    assert "| items: item q1<sup>a</sup> | 4 | 2 | 0.750 [" in md  # 3/4
    assert "| items: item q2<sup>a</sup> | 4 | 2 | 0.250 [" in md  # 1/4


def test_groups_with_one_category_set_say_it_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--by item: q1 uses x, y and q2 x, y, z: each group's set is named (Brennan-Prediger
    q1 (3/4 - 1/2)/(1/2) = 1/2, q2 p_o 1/4: (1/4 - 1/3)/(2/3) = -1/8); alike, said once."""
    path = tmp_path / "by.csv"
    body = (
        "u1,q1,x,x\nu2,q1,x,y\nu3,q1,y,y\nu4,q1,y,y\nu1,q2,x,{}\nu2,q2,y,x\nu3,q2,x,x\nu4,q2,y,x\n"
    )
    path.write_text("unit,item,A,B\n" + body.format("z"))
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON, "--by", "item"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    bp = {r["item"]: r["value"] for r in rows if r["statistic"] == "brennan_prediger"}
    assert bp == {"q1": pytest.approx(1 / 2), "q2": pytest.approx(-1 / 8)}
    first = rows[0]["notes"][0]
    assert "; item q1: category set: the 2 given (x, y);" in first
    assert "; item q2: category set: the 3 given (x, y, z);" in first
    path.write_text("unit,item,A,B\n" + body.format("y"))
    first, _ = _first_line_and_rows(capsys, path, "--by", "item")
    assert first.count("category set: the 2 given (x, y)") == 1 and "item q1:" not in first


def test_pooled_kappa_keeps_a_dimension_whose_own_kappa_is_undefined() -> None:
    """scope: every rating exact_scope (p_o 1, p_e 1: its own kappa 0/0); entity as above.

    Pooled Fleiss: mean p_o (3/4 + 1)/2 = 7/8, mean p_e (17/32 + 1)/2 = 49/64:
    (56/64 - 49/64) / (15/64) = 7/15. AC1 on one observed scope code has no p_e (q = 1), so the
    pooled AC1 is undefined, and says which dimension and why.
    """
    from failcodes.stats.agreement import pooled_agreements

    entity = [[0, 0], [0, 0], [0, 1], [1, 1]]  # x x, x x, x y, y y
    scope = [[0, 0]] * 4
    fleiss, ac1 = pooled_agreements(
        [entity, scope], ["fleiss", "gwet_ac1"], names=["entity", "scope"]
    )
    assert fleiss.value == pytest.approx(7 / 15)
    assert fleiss.chance_agreement == pytest.approx(49 / 64)
    assert ac1.value is None and ac1.undefined_reason is not None
    assert ac1.undefined_reason.startswith("scope: agreement undefined (no unit rated twice, or")
