"""Session 28, helper t28red2: the library layer on rating designs the other tests do not use.

A second researcher calls ``failcodes.ratings_from_frame`` / ``agreement_table`` from a
notebook. Each test names what main gave, and the value worked by hand (or by an independent
package) beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import failcodes as fc
from failcodes.errors import FailcodesError


def _values(results: list[fc.AgreementResult]) -> dict[str, float | None]:
    return {r.statistic: r.value for r in results}


def test_a_frame_of_code_lists_tuples_or_objects_is_refused_in_one_line(tmp_path: Path) -> None:
    """Before: a frame whose cells hold several codes stopped with numpy's "The truth value of
    an array with more than one element is ambiguous" (lists, arrays), and tuples were read as
    the text of their repr: ('a', 'b') and ('b', 'a') two categories, percent 0.667 where the
    code sets agree on all 3 units (1.000); a dict cell was a category (percent 1.0), where the
    file readers refuse it. Now one line naming the column and the way through."""
    sets = ["a", "b"], ["a"], ["b"]
    turned = ["b", "a"], ["a"], ["b"]
    for cells, other, kind in (
        ([tuple(c) for c in sets], [tuple(c) for c in turned], "a tuple"),
        ([list(c) for c in sets], [list(c) for c in turned], "a list"),
        ([np.array(c) for c in sets], [np.array(c) for c in turned], "an array"),
        ([set(c) for c in sets], [set(c) for c in turned], "a set"),
    ):
        frame = pd.DataFrame({"unit": ["u1", "u2", "u3"], "r1": cells, "r2": other})
        with pytest.raises(FailcodesError) as caught:
            fc.ratings_from_frame(frame)
        assert str(caught.value).startswith(f"field 'r1': row 0: {kind} (")
        assert "is not a rating (one number or text per cell); co-occurring codes? " in str(
            caught.value
        )
    objects = pd.DataFrame({"unit": ["u1", "u2"], "r1": [{"c": 1}] * 2, "r2": [{"c": 1}] * 2})
    with pytest.raises(
        FailcodesError, match=r"^field 'r1': row 0: an object \(\{'c': 1\}\) is not a"
    ):
        fc.ratings_from_frame(objects)
    # the way it names: the frame's lists in a JSONL file, agree --sets ';' from Python.
    # By hand: u1 {a,b} = {b,a}, u2 {a} = {a}, u3 {b} = {b}: exact-set percent 3/3 = 1.0
    path = tmp_path / "sets.jsonl"
    rows = [
        {"unit": f"u{i + 1}", "r1": a, "r2": b}
        for i, (a, b) in enumerate(zip(sets, turned, strict=True))
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = fc.run(fc.AgreeRequest(file=path, sets=";", stat=["percent"], bootstrap=0), note=None)
    exact = [r for r in result.rows if r["statistic"] == "percent" and r.get("code") is None]
    assert exact[0]["value"] == 1.0


def test_a_categorical_dtype_gives_its_order_and_its_category_set() -> None:
    """Before: ratings_from_frame ignored a pandas categorical dtype. An ordered one's
    level="ordinal" was refused ("give the category order (e.g. --categories a,b,c)": the
    order was given, in the dtype), and an unordered one's declared category no rater used
    was left out of q: AC1 0.529 and Brennan-Prediger 0.500 (q = 2) for 0.673 and 0.625."""
    scale = pd.CategoricalDtype(["low", "mid", "high"], ordered=True)
    frame = pd.DataFrame(
        {
            "unit": list("abcdef"),
            "r1": pd.Series(["low", "mid", "high", "high", "low", "mid"], dtype=scale),
            "r2": pd.Series(["low", "high", "high", "mid", "low", "low"], dtype=scale),
        }
    )
    table = fc.ratings_from_frame(frame)
    # Krippendorff (2011) ordinal alpha by hand: pairable values low 5, mid 3, high 4 (n 12);
    # coincidences o(m,h) = o(h,m) = 2, o(m,l) = o(l,m) = 1; delta(l,m) = (5 + 3 - 4)^2 = 16,
    # delta(m,h) = (3 + 4 - 3.5)^2 = 12.25, delta(l,h) = (12 - 4.5)^2 = 56.25;
    # alpha = 1 - (n - 1) * (4 * 12.25 + 2 * 16) / (2 * (15 * 16 + 12 * 12.25 + 20 * 56.25))
    #       = 1 - 11 * 81 / 3024 = 0.705357 (the krippendorff package: 0.7053571428571428)
    alpha = fc.agreement_table(table, ["krippendorff"], level="ordinal")[0].value
    assert alpha == pytest.approx(1 - 11 * 81 / 3024, abs=1e-9)
    # quadratic-weighted Cohen (Cohen 1968) on codes 0, 1, 2: observed disagreement
    # (1 + 1 + 1) / 6 = 0.5, expected 1.5 (margins 1/3 each; 1/2, 1/6, 1/3): 1 - 0.5 / 1.5
    cohen = fc.agreement_table(table, ["cohen"], weights="quadratic")[0].value
    assert cohen == pytest.approx(2 / 3, abs=1e-9)  # sklearn cohen_kappa_score: 0.6667

    codes = pd.CategoricalDtype(["a", "b", "c"])  # unordered, 'c' used by no rater
    frame = pd.DataFrame(
        {
            "unit": list("abcd"),
            "r1": pd.Series(list("aabb"), dtype=codes),
            "r2": pd.Series(list("abbb"), dtype=codes),
        }
    )
    table = fc.ratings_from_frame(frame)
    got = _values(fc.agreement_table(table, ["gwet_ac1", "brennan_prediger"]))
    # Gwet (2008) AC1, q = 3: p_a = 3/4; pi = (3/8, 5/8, 0);
    # p_e = sum pi (1 - pi) / (q - 1) = (15/64 + 15/64) / 2 = 15/64 -> (3/4 - 15/64) / (49/64)
    assert got["gwet_ac1"] == pytest.approx((0.75 - 15 / 64) / (49 / 64), abs=1e-9)  # 0.673469
    # Brennan & Prediger (1981): (p_a - 1/q) / (1 - 1/q) = (3/4 - 1/3) / (2/3) = 0.625
    assert got["brennan_prediger"] == pytest.approx(0.625, abs=1e-9)
    # unordered: still no order to weight by
    with pytest.raises(FailcodesError, match="need ordered categories"):
        fc.agreement_table(table, ["krippendorff"], level="ordinal")


def test_cohen_under_asymmetric_weights_is_undefined_naming_both_readings() -> None:
    """Before: custom agreement weights [[1, .9, 0], [.1, 1, .5], [0, .5, 1]] gave Cohen 0.400,
    or 0.100 with the two rater columns swapped, unsaid. Six units, ratings (r1, r2): (1,1)
    (2,3) (3,3) (1,2) (2,2) (3,1); each rater's margins are 1/3 each, so p_e = sum(w) / 9 =
    5/9 either way. Cohen (1968) reads w[r1][r2]: p_o = (1 + .5 + 1 + .9 + 1 + 0) / 6 = 4.4/6,
    kappa (4.4/6 - 5/9) / (4/9) = 0.400; swapped, w[r2][r1]: p_o = 3.6/6 -> 0.100. Fleiss and
    the others pair raters without order, reading (w + w.T) / 2 (irrCAC publishes Conger
    0.763 under an asymmetric matrix, tests/test_stats_estimators.py): they stay."""
    frame = pd.DataFrame({"unit": range(6), "r1": [1, 2, 3, 1, 2, 3], "r2": [1, 3, 3, 2, 2, 1]})
    weights = np.array([[1.0, 0.9, 0.0], [0.1, 1.0, 0.5], [0.0, 0.5, 1.0]])
    got = {
        r.statistic: r
        for r in fc.agreement_table(
            fc.ratings_from_frame(frame), ["cohen", "fleiss"], weights=weights
        )
    }
    assert got["cohen"].value is None
    assert got["cohen"].undefined_reason == (
        "the custom weights are not symmetric (row 1, column 2: 0.9; row 2, column 1: 0.1): "
        "Cohen's kappa would depend on which rater's codes are the rows (0.400 with the first "
        "rater column's, 0.100 with the second's); give a symmetric matrix (the other "
        "statistics read (w + w.T) / 2)"
    )
    # Fleiss (Gwet's weighted form) on the symmetric half (w + w.T)/2 = linear weights:
    # p_a = (1 + .5 + 1 + .5 + 1 + 0) / 6 = 2/3; pi = 1/3 each, p_e = sum(w_sym) / 9 = 5/9
    # -> (2/3 - 5/9) / (4/9) = 0.25
    assert got["fleiss"].value == pytest.approx(0.25, abs=1e-12)
    # the symmetric half-way matrix: Cohen by hand, the same 0.25
    linear = (weights + weights.T) / 2
    cohen = fc.agreement_table(fc.ratings_from_frame(frame), ["cohen"], weights=linear)[0]
    assert cohen.value == pytest.approx(0.25, abs=1e-12)


def test_agreement_arguments_from_python_are_checked_as_agree_checks_them() -> None:
    """Before: ratings_from_frame(raters=["r1", "r1"]) compared a rater with themself (percent
    1.0, Cohen 1.0), and categories=["a", "b", "a"] counted 'a' twice in q (Brennan-Prediger
    0.250, AC1 0.385), both refused by `agree` ("--raters names 'r1' twice"); clusters with a
    missing id was a TypeError (None) or a cluster of its own (NaN: 3 units of 5 rows, unsaid),
    seed="1" and seed=1.5 TypeErrors, n_bootstrap past agree's bound of 1,000,000 a MemoryError
    (10**9: 29.8 GiB) or a long wait."""
    frame = pd.DataFrame({"unit": ["u1", "u2"], "r1": ["a", "b"], "r2": ["a", "a"]})
    with pytest.raises(FailcodesError, match=r"^raters: names 'r1' twice$"):
        fc.ratings_from_frame(frame, raters=["r1", "r1"])
    with pytest.raises(FailcodesError, match=r"^categories: names 'a' twice$"):
        fc.ratings_from_frame(frame, categories=["a", "b", "a"])
    # the category set given once: q = 2, p_a = 1/2 (u1 agrees, u2 not);
    # Brennan & Prediger (1981): (1/2 - 1/2) / (1 - 1/2) = 0; Gwet (2008) AC1: pi = (3/4, 1/4),
    # p_e = 2 * 3/4 * 1/4 / (2 - 1) = 3/8 -> (1/2 - 3/8) / (5/8) = 0.2
    table = fc.ratings_from_frame(frame, categories=["a", "b"])
    got = _values(fc.agreement_table(table, ["brennan_prediger", "gwet_ac1"]))
    assert got == pytest.approx({"brennan_prediger": 0.0, "gwet_ac1": 0.2}, abs=1e-12)
    five = fc.ratings_from_frame(
        pd.DataFrame({"unit": range(5), "r1": [1, 2, 3, 1, 2], "r2": [1, 2, 2, 1, 3]})
    )
    for clusters in (["a", "a", None, "b", "b"], [1, 1, np.nan, 2, 2]):
        with pytest.raises(FailcodesError, match=r"^clusters: row 2 has no cluster id"):
            fc.agreement_table(five, ["percent"], clusters=clusters, n_bootstrap=20)
    with pytest.raises(FailcodesError, match=r"^seed: expected a whole number"):
        fc.agreement_table(five, ["cohen"], n_bootstrap=20, seed="1")  # type: ignore[arg-type]
    with pytest.raises(FailcodesError, match=r"^seed: expected a whole number"):
        fc.agreement_table(five, ["cohen"], n_bootstrap=20, seed=1.5)  # type: ignore[arg-type]
    with pytest.raises(FailcodesError, match=r"^n_bootstrap: at most 1,000,000 resamples"):
        fc.agreement_table(five, ["percent"], n_bootstrap=1_000_001)
    # clusters of 5 rows in 3 units: percent by hand over rows, 3 of 5 agree = 0.6
    pooled = fc.agreement_table(five, ["percent"], clusters=["a", "a", "b", "c", "c"])[0]
    assert (pooled.value, pooled.n_units, pooled.n_rows) == (pytest.approx(0.6), 3, 5)


def test_a_coder_annotating_a_unit_twice_is_refused_naming_the_file_and_both_lines(
    tmp_path: Path,
) -> None:
    """Before: an annotation file where alice annotated u1 twice (once exact_entity, once
    entity_mismatch) was refused as "coder 'alice' annotated unit 'u1' twice; keep one
    annotation per unit and coder", naming no file nor line. Now file:line, field and the
    line of the first annotation."""
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import bundled
    from failcodes.units import UnitKind

    cb = bundled()

    def ann(unit: str, coder: str, kind: CoderKind, entity: str) -> Annotation:
        codes = {"entity_match": entity, "scope": "exact_scope"}
        return Annotation(
            unit_id=unit,
            unit_kind=UnitKind.RETRIEVAL,
            codebook=cb.ref(),
            coder=coder,
            coder_kind=kind,
            codes=codes,
        )

    rows = [ann(f"u{i}", "alice", CoderKind.HUMAN, "exact_entity") for i in range(3)]
    rows += [ann(f"u{i}", "judge", CoderKind.LLM, "exact_entity") for i in range(3)]
    rows.append(ann("u1", "alice", CoderKind.HUMAN, "entity_mismatch"))  # line 7
    path = tmp_path / "a.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in rows), encoding="utf-8")
    with pytest.raises(FailcodesError) as caught:
        fc.run(fc.AgreeRequest(file=path, bootstrap=0), note=None)
    assert str(caught.value) == (
        f"{path}:7, field 'unit_id': coder 'alice' annotated unit 'u1' on line 2 too: keep "
        "one annotation per unit and coder"
    )


def test_ppi_mean_says_when_the_labelled_units_are_no_random_draw() -> None:
    """Before: 12 labelled units of which the judge coded 6 (each right: y = yhat), beside 40
    unlabelled it coded 0, gave the corrected share 0.0 (lam 1: 0 + 0.5 - 0.5) and the human
    one 0.5 with only the Wald note, though a random draw of 12 of these 52 units holds all
    6 of the judge's 1s with probability C(12,6) / C(52,6) = 924 / 20,358,520 = 4.5e-05: the
    units were chosen by the judge's code (a review of what it flagged), and both estimates
    miss the cell's 6/52 = 0.115. The report tests reviews missing at random the same way
    (two-sided Fisher exact test, docs/review.md); ppi_mean now says it."""
    result = fc.ppi_mean([1, 0] * 6, [1, 0] * 6, [0] * 40)
    assert result.estimate == pytest.approx(0.0, abs=1e-12)
    # two-sided Fisher p: only the observed table is as unlikely (a = 5: 792 * 40 / C(52,6)
    # = 0.0016; a = 0: C(40,6) / C(52,6) = 0.19), so p = 924 / 20358520
    assert result.warning is not None
    assert (
        "the labelled units look unlike a random draw of all: the judge coded 1 on 6 of 12 "
        f"labelled and 0 of 40 unlabelled (two-sided Fisher exact p = {924 / 20358520:.2g}; "
    ) in result.warning
    # a draw like a random one: judge 1 on 3 of 12 labelled, 10 of 40 unlabelled: no word
    calm = fc.ppi_mean([1, 1, 1] + [0] * 9, [1, 1, 1] + [0] * 9, [1] * 10 + [0] * 30)
    assert calm.warning is not None and "random draw" not in calm.warning


def test_a_corrected_share_is_never_below_zero() -> None:
    """Before: a uniform review of 10 units of 100 (the judge coded 1 on 3 of them, the human
    agreed on 1; on 9 of the 90 not reviewed) gave the corrected share -0.018 beside its
    interval [0.000, 0.408]: the report printed 'corrected (%) -1.8 [0.0, 40.8]'. By hand,
    PPI++ (Angelopoulos, Duchi & Zrnic 2023): cov(y, yhat) = 0.1 - 0.1 * 0.3 = 0.07; the
    judge's codes over all 100 units (12 ones) vary by (12 - 1.44) / 99 = 0.10667; lam =
    0.07 / ((1 + 10/90) * 0.10667) = 0.590625; estimate = lam * 9/90 + 0.1 - lam * 0.3 =
    0.1 - 0.2 * 0.590625 = -0.018125. A share lies in [0, 1]: clipped, 0.0, nearer every
    share the cell can have (the interval already held the clipped value): corrected_ppi.
    Since session 30 the printed point is post-stratified by the judge's code: the judge-1
    part, 3 reviewed (1 with the code) + 9 not = 12 of 100 units -> 0.12 x 1/3 = 0.04; the
    judge-0 part, 0 of 7 reviewed with the code -> 0; 0.04, in [0, 1] by construction."""
    from failcodes.stats.ppi import Stratum, share_estimates

    y, yhat, rest = [1] + [0] * 9, [1, 1, 1] + [0] * 7, [1] * 9 + [0] * 81
    got = share_estimates([Stratum(y, yhat, rest)])
    assert got.lam == pytest.approx(0.590625, abs=1e-12)
    assert got.corrected_ppi == 0.0
    assert got.corrected.estimate == pytest.approx(0.04)
    assert (got.corrected.ci_low, round(got.corrected.ci_high, 3)) == (0.0, 0.408)
    assert got.human.estimate == pytest.approx(0.1)  # 1 of 10 reviewed


def test_a_long_frame_is_refused_with_the_pivot_that_reads_it() -> None:
    """Before: ratings_from_frame on `unit, annotator, code` rows (as annotation tools export
    them, and as `agree` reads a long file) was refused "unit '1' is on two rows ... name the
    columns with --long RATER_COLUMN,RATING_COLUMN", an option this function does not have.
    Now the pivot that makes it one column per rater, and that pivot's numbers by hand:
    x a, a, b; y a, b, b: p_o = 2/3; p_e = 2/3 * 1/3 + 1/3 * 2/3 = 4/9; Cohen (2/3 - 4/9) /
    (5/9) = 0.4 (Cohen 1960)."""
    frame = pd.DataFrame(
        {"unit": [1, 1, 2, 2, 3, 3], "annotator": ["x", "y"] * 3, "code": list("aaabbb")}
    )
    with pytest.raises(FailcodesError) as caught:
        fc.ratings_from_frame(frame)
    assert str(caught.value) == (
        "a long table (one row per unit and rater: units 'unit', raters 'annotator', ratings "
        "'code'): give one column per rater, frame.pivot(index='unit', columns='annotator', "
        "values='code') (failcodes.AgreeRequest reads a long table's file as it is)"
    )
    wide = frame.pivot(index="unit", columns="annotator", values="code")
    got = _values(fc.agreement_table(fc.ratings_from_frame(wide), ["percent", "cohen"]))
    assert got == pytest.approx({"percent": 2 / 3, "cohen": 0.4}, abs=1e-12)
