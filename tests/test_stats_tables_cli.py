"""Table adapters, annotation pooling, and the `agree` / `compare` CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from failcodes import coderagreement as ca
from failcodes.annotations import Annotation, CodebookRef, CoderKind, Status
from failcodes.cli.main import main
from failcodes.errors import FailcodesError, InputError, MixedCodebookError, StatisticsError
from failcodes.migration import pool_annotations
from failcodes.outcomes import paired_outcomes_from_traces
from failcodes.ratingsio import read_ratings_frame
from failcodes.stats import agreement as ag
from failcodes.stats import tables as tb
from failcodes.units import UnitKind
from tests.conftest import reference_data

EX_C = ("agreement-reference", "krippendorff2011_exampleC_4coders_12units_missing.csv")


@dataclass
class Proc:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Proc]:
    """Run the CLI in-process (the root `main`, so errors exit 2 with one line)."""

    def _run(*args: str | Path) -> Proc:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return Proc(code, out.out, out.err)

    return _run


# ----------------------------------------------------------------- files and frames


def test_csv_blank_is_missing_and_matches_core() -> None:
    path = reference_data(*EX_C)
    table = tb.ratings_from_frame(read_ratings_frame(path), source=path)
    assert table.raters == ["coder_A", "coder_B", "coder_C", "coder_D"]
    assert table.unit_ids[0] == "1"
    assert int(np.isnan(table.values).sum()) == 7  # seven blank cells in example C
    res = {r.statistic: r for r in tb.agreement_table(table, level="ordinal")}
    # Krippendorff (2011), example C, ordinal alpha 0.815
    assert round(res["krippendorff"].value or 0, 3) == 0.815
    assert "cohen" not in res  # four raters: two-rater statistics are skipped


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_parquet_and_jsonl_read_the_same(tmp_path: Path, suffix: str) -> None:
    frame = pd.DataFrame({"unit": ["a", "b", "c", "d"], "r1": [1, 2, 2, None], "r2": [1, 2, 3, 3]})
    path = tmp_path / f"ratings{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    else:
        path.write_text(
            "\n".join(
                json.dumps({k: (None if pd.isna(v) else v) for k, v in row.items()})
                for row in frame.to_dict("records")
            )
        )
    table = tb.ratings_from_frame(read_ratings_frame(path))
    assert table.unit_ids == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(table.values[:, 1], [1, 2, 3, 3])
    assert np.isnan(table.values[3, 0])


def test_text_labels_need_order_for_ordinal() -> None:
    frame = pd.DataFrame({"r1": ["low", "high", "mid"], "r2": ["low", "mid", "mid"]})
    nominal = tb.ratings_from_frame(frame)
    assert nominal.labels == ["high", "low", "mid"] and not nominal.ordered
    with pytest.raises(StatisticsError, match="ordered categories"):
        tb.agreement_table(nominal, ["cohen"], weights="linear")
    ordered = tb.ratings_from_frame(frame, categories=["low", "mid", "high"])
    res = tb.agreement_table(ordered, ["cohen"], weights="linear")[0]
    # codes low=0, mid=1, high=2; table rows r1, cols r2: (0,0), (2,1), (1,1).
    # linear weights: p_o = (1 + 0.5 + 1)/3 = 5/6; margins r1 (1/3,1/3,1/3), r2 (1/3,2/3,0)
    # p_e = sum_ij w_ij r1_i r2_j = 1/3*(1/3*1 + 2/3*0.5) + 1/3*(1/3*0.5 + 2/3*1)
    #       + 1/3*(1/3*0 + 2/3*0.5) = 1/3*(2/3 + 5/6 + 1/3) = 11/18
    assert res.value == pytest.approx((5 / 6 - 11 / 18) / (1 - 11 / 18))


def test_unknown_label_is_input_error() -> None:
    frame = pd.DataFrame({"r1": ["a", "b"], "r2": ["a", "z"]})
    with pytest.raises(InputError, match="not in the category list"):
        tb.ratings_from_frame(frame, categories=["a", "b"])


# ----------------------------------------------------------------- annotations

REF1 = CodebookRef(name="cb", version=1, hash="1" * 64)
REF2 = CodebookRef(name="cb", version=2, hash="2" * 64)


def _ann(unit: str, coder: str, kind: CoderKind, codes: dict[str, str], ref=REF1, **kw):
    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=ref,
        coder=coder,
        coder_kind=kind,
        codes=codes,
        **kw,
    )


def _run() -> list[Annotation]:
    human = [
        ("u1", {"scope": "exact", "source": "primary"}),
        ("u2", {"scope": "broad", "source": "primary"}),
        ("u3", {"scope": "exact", "source": "secondary"}),
        ("u4", {"scope": "narrow", "source": "primary"}),
    ]
    llm = [
        ("u1", {"scope": "exact", "source": "primary"}),
        ("u2", {"scope": "exact", "source": "primary"}),
        ("u3", {"scope": "exact", "source": "secondary"}),
        ("u4", {"scope": "narrow", "source": "secondary"}),
    ]
    out = [_ann(u, "ann", CoderKind.HUMAN, c) for u, c in human]
    out += [_ann(u, "anthropic:m", CoderKind.LLM, c) for u, c in llm]
    out.append(
        _ann("u5", "anthropic:m", CoderKind.LLM, {}, status=Status.UNSCORED, reason="bad json")
    )
    return out


def test_annotation_agreement_per_dimension_pair_and_code() -> None:
    rows = ca.annotation_agreement(_run())
    get = {(r.scope, r.dimension, r.code, r.result.statistic): r.result for r in rows}
    # scope: human exact, broad, exact, narrow vs llm exact, exact, exact, narrow -> 3/4 agree
    assert get[("dimension", "scope", None, "percent")].value == pytest.approx(0.75)
    cohen = get[("pair", "scope", None, "cohen")]
    # table over (broad, exact, narrow): p_o = 3/4; human margins (1/4, 2/4, 1/4),
    # llm (0, 3/4, 1/4): p_e = 2/4*3/4 + 1/4*1/4 = 7/16 -> kappa = (12/16 - 7/16)/(9/16) = 5/9
    assert cohen.value == pytest.approx(5 / 9)
    # per code 'exact' on scope: human 1,0,1,0 vs llm 1,1,1,0 -> p_o = 3/4, PABAK = 0.5
    assert get[("code", "scope", "exact", "pabak")].value == pytest.approx(0.5)
    # pooled over dimensions: 8 (unit, dimension) rows of 4 units, 6 agree
    pooled = get[("pooled", None, None, "percent")]
    assert pooled.value == pytest.approx(6 / 8)
    assert pooled.n_units == 4 and pooled.n_rows == 8
    assert pooled.se_method == "cluster_jackknife"


def test_full_category_lists_and_the_codebook_hash_check() -> None:
    anns = _run()
    observed = {
        (r.scope, r.dimension, r.code, r.result.statistic): r for r in ca.annotation_agreement(anns)
    }
    listed = ca.annotation_agreement(
        anns,
        categories={"scope": ["broad", "exact", "narrow", "none"]},
        codebook_hash=anns[0].codebook.hash,
    )
    get = {(r.scope, r.dimension, r.code, r.result.statistic): r.result for r in listed}
    # Brennan-Prediger (p_a - 1/q) / (1 - 1/q) with p_a = 3/4 on scope (see above):
    # observed codes, q = 3 -> (3/4 - 1/3) / (2/3) = 5/8;
    # the full list, q = 4 -> (3/4 - 1/4) / (3/4) = 2/3
    bp = ("dimension", "scope", None, "brennan_prediger")
    assert observed[bp].result.value == pytest.approx(5 / 8)
    assert get[bp].value == pytest.approx(2 / 3)
    # a listed code nobody used still gets its per-code row
    assert ("code", "scope", "none", "percent") in get
    assert ("code", "scope", "none", "percent") not in observed
    with pytest.raises(MixedCodebookError, match="not the codebook given"):
        ca.annotation_agreement(anns, codebook_hash="0" * 64)


def test_refuses_to_pool_different_codebook_hashes() -> None:
    anns = _run()
    anns[0] = anns[0].model_copy(update={"codebook": REF2})
    with pytest.raises(MixedCodebookError, match="different codebooks") as info:
        ca.annotation_agreement(anns)
    assert isinstance(info.value, FailcodesError)


def test_plain_dict_migration_relabels_old_codes() -> None:
    anns = _run()
    # the human coded under v2 where 'exact' was renamed 'exact_scope'
    anns = [
        a.model_copy(
            update={
                "codebook": REF2,
                "codes": {d: ("exact_scope" if c == "exact" else c) for d, c in a.codes.items()},
            }
        )
        if a.coder == "ann"
        else a
        for a in anns
    ]
    pooled = pool_annotations(anns, {"exact": "exact_scope"})
    assert {a.codebook for a in pooled} == {REF2}
    rows = ca.annotation_agreement(pool_annotations(anns, {"exact": "exact_scope"}))
    res = next(
        r.result
        for r in rows
        if r.scope == "pair" and r.dimension == "scope" and r.result.statistic == "cohen"
    )
    assert res.value == pytest.approx(5 / 9)  # same as without the rename


def test_codebook_migration_map_is_used() -> None:
    from failcodes.codebook import MigrationMap

    mapping = MigrationMap(
        name="cb",
        from_version=1,
        from_hash=REF1.hash,
        to=REF2,
        codes={
            "exact": "exact_scope",
            "broad": "broad",
            "narrow": None,
            "primary": "primary",
            "secondary": "secondary",
        },
        dimensions={"scope": "scope", "source": "source"},
    )
    anns = [a for a in _run() if a.status is Status.SCORED]
    v2 = [
        a.model_copy(
            update={
                "codebook": REF2,
                "codes": {d: ("exact_scope" if c == "exact" else c) for d, c in a.codes.items()},
            }
        )
        if a.coder == "ann"
        else a
        for a in anns
    ]
    with pytest.raises(MixedCodebookError):
        pool_annotations(v2)
    pooled = pool_annotations(v2, mapping)
    assert {a.codebook for a in pooled} == {REF2}
    # 'narrow' must be re-coded under v2: the LLM's scope for u4 becomes missing
    llm_u4 = next(a for a in pooled if a.coder == "anthropic:m" and a.unit_id == "u4")
    assert "scope" not in llm_u4.codes
    table = ca.annotation_ratings(pooled, "scope")
    assert table.unit_ids == ["u1", "u2", "u3"] and table.n_single_rated == 1  # u4: human only
    kept = ca.annotation_ratings(pooled, "scope", min_ratings=1)
    assert kept.unit_ids == ["u1", "u2", "u3", "u4"]
    assert int(np.isnan(kept.values).sum()) == 1


def test_duplicate_annotation_is_an_error() -> None:
    anns = _run()
    anns.append(anns[0])
    with pytest.raises(StatisticsError, match="twice"):
        ca.annotation_agreement(anns)


# ----------------------------------------------------------------- CLI


def test_cli_agree_json_matches_api(run) -> None:
    path = reference_data(*EX_C)
    proc = run(
        "agree",
        path,
        "--level",
        "ordinal",
        "--weights",
        "quadratic",
        "--bootstrap",
        "200",
        "--seed",
        "3",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["statistic"]: r for r in json.loads(proc.stdout)}
    for key in (
        "statistic",
        "level",
        "weights",
        "value",
        "ci_low",
        "ci_high",
        "n_units",
        "n_raters",
    ):
        assert key in rows["krippendorff"]
    # Krippendorff (2011) example C, ordinal 0.815
    assert round(rows["krippendorff"]["value"], 3) == 0.815
    # irrCAC 0.4.4: Gwet AC2 quadratic on example C = 0.9140007236
    assert rows["gwet_ac2"]["value"] == pytest.approx(0.9140007236, abs=1e-9)
    assert rows["fleiss"]["weights"] == "quadratic"
    expected = ag.agreements(
        tb.ratings_from_frame(read_ratings_frame(path)).values,
        level="ordinal",
        weights="quadratic",
        n_bootstrap=200,
        seed=3,
    )
    for res in expected:
        assert rows[res.statistic]["ci_low"] == pytest.approx(res.ci_low)


def test_cli_agree_by_group_and_errors(tmp_path: Path, run) -> None:
    path = tmp_path / "r.csv"
    path.write_text("unit,dimension,a,b\n1,x,0,0\n2,x,1,1\n3,x,1,0\n1,y,2,2\n2,y,2,\n3,y,1,1\n")
    proc = run("agree", path, "--by", "dimension", "--stat", "cohen", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["dimension"] for r in rows] == ["x", "y"]
    # x: p_o = 2/3, margins a (1/3, 2/3), b (2/3, 1/3): p_e = 4/9 -> kappa = (6/9-4/9)/(5/9)
    assert rows[0]["value"] == pytest.approx(0.4)
    assert rows[1]["n_units"] == 2 and rows[1]["value"] == pytest.approx(1.0)
    bad = run("agree", path, "--by", "dimension", "--stat", "fleiss", "--level", "cardinal")
    assert bad.returncode == 2
    assert bad.stderr.startswith("failcodes: error:") and len(bad.stderr.strip().splitlines()) == 1
    three = tmp_path / "three.csv"
    three.write_text("a,b,c\n1,1,1\n0,1,1\n")
    proc = run("agree", three, "--stat", "cohen")
    assert proc.returncode == 2 and "exactly two raters" in proc.stderr


def test_cli_compare_json(tmp_path: Path, run) -> None:
    rng = np.random.default_rng(0)
    y = (rng.random(80) < 0.5).astype(int)
    frame = pd.DataFrame(
        {
            "unit": range(80),
            "truth": y,
            "A": np.where(rng.random(80) < 0.9, y, 1 - y),
            "B": np.where(rng.random(80) < 0.6, y, 1 - y),
            "C": np.where(rng.random(80) < 0.7, y, 1 - y),
        }
    )
    path = tmp_path / "systems.csv"
    frame.to_csv(path, index=False)
    proc = run(
        "compare", path, "--truth", "truth", "--resamples", "500", "--seed", "1", "--format", "json"
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["systems"] == ["A", "B", "C"]
    tests = out["tests"]
    assert tests[0]["test"] == "cochran_q" and tests[0]["df"] == 2
    assert {t["test"] for t in tests} >= {"permutation_f1", "permutation_recall"}
    for t in tests[1:]:
        assert t["p_holm"] is not None and t["p_holm"] >= t["p_value"]
    # Cochran's Q on the positives equals statsmodels'
    from statsmodels.stats.contingency_tables import cochrans_q

    pos = frame[frame.truth == 1][["A", "B", "C"]].to_numpy()
    assert tests[0]["statistic"] == pytest.approx(cochrans_q(pos).statistic)
    no_truth = run("compare", path, "--systems", "A,B,C", "--format", "json")
    assert no_truth.returncode == 0, no_truth.stderr
    assert len(json.loads(no_truth.stdout)["tests"]) == 4  # Q + 3 McNemar


def _traces_and_labels():
    from failcodes.labels import Label
    from failcodes.traces import Trace
    from failcodes.verdicts import Verdict

    # 4 labelled sentences (s1, s2 have errors); system A refutes s1 and s3, system B
    # refutes s1 and s2 and has no claim for s4 (counts as "no error flagged").
    verdicts = {
        "A": {
            "s1": Verdict.REFUTED,
            "s2": Verdict.SUPPORTED,
            "s3": Verdict.REFUTED,
            "s4": Verdict.SUPPORTED,
        },
        "B": {"s1": Verdict.REFUTED, "s2": Verdict.REFUTED, "s3": Verdict.SUPPORTED},
    }
    traces = [
        Trace(
            system=sys_, question_id="q", sentence_id=sid, claim_id=f"{sid}c", claim="c", verdict=v
        )
        for sys_, per in verdicts.items()
        for sid, v in per.items()
    ]
    labels = [
        Label(question_id="q", sentence_id=sid, has_error=err)
        for sid, err in (("s1", True), ("s2", True), ("s3", False), ("s4", False))
    ]
    return traces, labels


def test_paired_outcomes_from_traces() -> None:
    traces, labels = _traces_and_labels()
    paired = paired_outcomes_from_traces(traces, labels, "refuted")
    assert paired.systems == ["A", "B"]
    assert paired.unit_ids == ["q/s1", "q/s2", "q/s3", "q/s4"]
    np.testing.assert_array_equal(paired.truth, [1, 1, 0, 0])
    np.testing.assert_array_equal(paired.predictions, [[1, 1], [0, 1], [1, 0], [0, 0]])


def test_cli_compare_from_traces_and_labels(tmp_path: Path, run) -> None:
    from failcodes import labelio, traceio

    traces, labels = _traces_and_labels()
    traceio.write_traces(tmp_path / "t.jsonl", traces)
    labelio.write_labels(tmp_path / "l.jsonl", labels)
    proc = run(
        "compare",
        "--traces",
        tmp_path / "t.jsonl",
        "--labels",
        tmp_path / "l.jsonl",
        "--resamples",
        "200",
        "--seed",
        "0",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    tests = {(t["test"], t["comparison"]): t for t in json.loads(proc.stdout)["tests"]}
    # recall A = 1/2, B = 2/2: difference -0.5; F1 A = 2/(2+1+1) = 0.5, B = 4/(4+0+0) = 1
    assert tests[("permutation_recall", "A vs B")]["effect"] == pytest.approx(-0.5)
    assert tests[("permutation_f1", "A vs B")]["effect"] == pytest.approx(-0.5)
    # McNemar on the 2 positives: discordant pairs b = 0, c = 1 -> exact p = 1, mid-p
    # (Fagerland et al. 2013) 1 - P(X = 0) = 1 - 1/2 = 0.5
    assert tests[("mcnemar_midp", "A vs B")]["p_value"] == 0.5
    both = run("compare", tmp_path / "x.csv", "--traces", tmp_path / "t.jsonl")
    assert both.returncode == 2 and "either FILE" in both.stderr


def test_numeric_categories_keep_values_for_interval_level() -> None:
    frame = pd.DataFrame({"a": [1, 1, 1], "b": [1, 1, 1]})
    table = tb.ratings_from_frame(frame, categories=["0", "1", "5"])
    assert table.labels is None
    np.testing.assert_array_equal(table.categories, [0, 1, 5])
    res = {r.statistic: r for r in tb.agreement_table(table, level="interval")}
    # everyone says 1: AC1 with q = 3 is (1 - 0)/(1 - 0) = 1; alpha has no variation
    assert res["gwet_ac1"].value == pytest.approx(1.0)
    assert res["krippendorff"].value is None
    with pytest.raises(InputError, match="not in the category list"):
        tb.ratings_from_frame(frame, categories=["0", "5"])


def test_cli_agree_on_annotation_jsonl(tmp_path: Path, run) -> None:
    path = tmp_path / "annotations.jsonl"
    path.write_text("\n".join(a.model_dump_json() for a in _run()) + "\n")
    proc = run("agree", path, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {r["scope"] for r in rows} == {"dimension", "pooled", "pair", "code"}
    cohen = next(
        r
        for r in rows
        if r["scope"] == "pair" and r["dimension"] == "scope" and r["statistic"] == "cohen"
    )
    assert cohen["value"] == pytest.approx(5 / 9)  # hand-computed above
    assert cohen["coders"] == "ann|anthropic:m"


def test_cli_compare_takes_repeated_traces_and_mappings(tmp_path: Path, run) -> None:
    # Before: `--traces a --traces b` kept only b (one system -> "needs at least 2 systems").
    from failcodes import labelio, traceio

    traces, labels = _traces_and_labels()
    by_system: dict[str, list] = {}
    for t in traces:
        by_system.setdefault(t.system, []).append(t)
    for system, items in by_system.items():
        traceio.write_traces(tmp_path / f"{system}.jsonl", items)
    labelio.write_labels(tmp_path / "l.jsonl", labels)
    args = ["compare", "--labels", tmp_path / "l.jsonl", "--resamples", "200", "--seed", "0"]
    args += ["--traces", tmp_path / "A.jsonl", "--traces", tmp_path / "B.jsonl"]
    proc = run(*args, "-m", "refuted", "-m", "non_supported", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["files"] == [str(tmp_path / "A.jsonl"), str(tmp_path / "B.jsonl")]
    assert out["systems"] == ["A", "B"]
    tests = {(t["mapping"], t["test"], t["comparison"]): t for t in out["tests"]}
    assert {m for m, _, _ in tests} == {"refuted", "non_supported"}
    # the refuted set reproduces test_cli_compare_from_traces_and_labels (one traces file)
    assert tests[("refuted", "permutation_recall", "A vs B")]["effect"] == pytest.approx(-0.5)
    assert tests[("refuted", "mcnemar_midp", "A vs B")]["p_value"] == 0.5
    # a mapping with a FILE, or --truth with --traces: one line each
    bad = run("compare", tmp_path / "x.csv", "-m", "refuted")
    assert bad.returncode == 2 and "-m/--mapping goes with --traces" in bad.stderr
    bad = run(*args, "--truth", "t")
    assert bad.returncode == 2 and "--truth names a column of FILE" in bad.stderr


def test_stat_all_leaves_weighted_ac2_out_on_nominal_codes(run) -> None:
    # Krippendorff (2011) example C: numeric codes 1-5. At the nominal level with no --weights,
    # `--stat all` (the default) does not report AC2 with its default quadratic weights (that
    # would read the codes' numbers as an order); --weights or a lone --stat gwet_ac2 do.
    path = reference_data(*EX_C)
    proc = run("agree", path, "--bootstrap", "0", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["statistic"]: r for r in json.loads(proc.stdout)}
    assert rows["gwet_ac2"]["value"] is None
    assert rows["gwet_ac2"]["undefined_reason"] == tb.NOMINAL_NOTE
    assert rows["gwet_ac1"]["value"] is not None
    weighted = run("agree", path, "--bootstrap", "0", "--weights", "quadratic", "--format", "json")
    ac2 = next(r for r in json.loads(weighted.stdout) if r["statistic"] == "gwet_ac2")
    # irrCAC 0.4.4: Gwet AC2 quadratic on example C = 0.9140007236
    assert ac2["value"] == pytest.approx(0.9140007236, abs=1e-9)
    alone = run("agree", path, "--bootstrap", "0", "--stat", "gwet_ac2", "--format", "json")
    assert json.loads(alone.stdout)[0]["value"] == pytest.approx(0.9140007236, abs=1e-9)


def test_agree_prints_the_monte_carlo_error_of_bootstrap_endpoints(run) -> None:
    path = reference_data(*EX_C)
    proc = run("agree", path, "--stat", "fleiss", "--bootstrap", "400", "--seed", "5")
    assert proc.returncode == 0, proc.stderr
    assert "bootstrap intervals: 400 resamples, seed 5; '±' after an interval" in proc.stdout
    assert "±0." in proc.stdout
    rows = json.loads(
        run(
            "agree",
            path,
            "--stat",
            "fleiss",
            "--bootstrap",
            "400",
            "--seed",
            "5",
            "--format",
            "json",
        ).stdout
    )
    assert rows[0]["seed"] == 5 and rows[0]["ci_mc_error"] > 0
