"""Agreement on set-valued codes (issue 25): MASI and Jaccard alpha, exact sets, every code.

Cross-checked against an independent implementation: NLTK's ``AnnotationTask`` (Krippendorff's
alpha over labels with a distance function) with its ``masi_distance`` and
``jaccard_distance``, to 1e-9.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

# a dev extra since issue 25: a venv made before it skips these tests instead of failing to
# collect them (`pip install -e '.[dev]'`, or `make test`, installs it)
pytest.importorskip("nltk", reason="nltk is a dev extra: pip install -e '.[dev]'")
from nltk.metrics import jaccard_distance as nltk_jaccard
from nltk.metrics import masi_distance as nltk_masi
from nltk.metrics.agreement import AnnotationTask

from failcodes.annotations import Annotation, CoderKind
from failcodes.cli.main import main
from failcodes.coderagreement import (
    POOLED_CHANCE,
    ScopedAgreement,
    annotation_agreement,
    annotation_sets,
    set_agreement_table,
)
from failcodes.stats.sets import jaccard_distance, masi_distance, set_agreements
from failcodes.units import UnitKind
from tests.judge_helpers import make_codebook

CB = make_codebook(multi_label=("inference",))
BOTH = ("overreach", "conflict_synthesis_failure")


def _ann(unit: str, coder: str, kind: CoderKind, sets: dict[str, Sequence[str]]) -> Annotation:
    multi = {dim.id for _, dim in CB.dimensions() if dim.multi_label}
    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.VERIFICATION,
        codebook=CB.ref(),
        coder=coder,
        coder_kind=kind,
        codes={d: c[0] for d, c in sets.items()},
        code_sets={d: list(c) for d, c in sets.items() if d in multi},
    )


def missed_co_occurring_code() -> list[Annotation]:
    """100 units; the clinician codes inference {valid} on 40, {overreach} on 30 and
    {overreach, conflict_synthesis_failure} on 30; the judge misses the co-occurring code on
    those 30 (30% of units) and agrees everywhere else. Grounding (single-label) agrees
    except on units 0-9 (grounded vs ungrounded)."""
    out = []
    for i in range(100):
        human = ("valid_inference",) if i < 40 else ("overreach",) if i < 70 else BOTH
        judge = ("overreach",) if i >= 70 else human
        g_h, g_j = ("grounded", "ungrounded") if i < 10 else ("grounded", "grounded")
        if 50 <= i < 60:
            g_h = g_j = "ungrounded"
        u = f"u{i:03d}"
        out.append(_ann(u, "dr_a", CoderKind.HUMAN, {"inference": human, "grounding": (g_h,)}))
        out.append(_ann(u, "judge", CoderKind.LLM, {"inference": judge, "grounding": (g_j,)}))
    return out


def _nltk_alpha(
    triples: Iterable[tuple[str, str, frozenset[str]]], distance: object = nltk_masi
) -> float:
    return float(AnnotationTask(data=list(triples), distance=distance).alpha())


def _triples(anns: Sequence[Annotation], dim: str) -> list[tuple[str, str, frozenset[str]]]:
    return [(a.coder, a.unit_id, frozenset(a.code_set(dim))) for a in anns if dim in a.codes]


def _find(rows: list[ScopedAgreement], scope: str, dim: str | None, stat: str, weights: str):
    [hit] = [
        r
        for r in rows
        if r.scope == scope
        and r.dimension == dim
        and r.result.statistic == stat
        and r.result.weights == weights
    ]
    return hit


def test_distances_by_hand_and_as_nltk() -> None:
    a, ab, ac, c = {"a"}, {"a", "b"}, {"a", "c"}, {"c"}
    # Passonneau (2006): M = 1 equal, 2/3 subset, 1/3 overlap, 0 disjoint; MASI = 1 - J * M
    assert masi_distance(ab, ab) == 0.0
    assert masi_distance(a, ab) == pytest.approx(1 - (1 / 2) * (2 / 3))  # J = 1/2
    assert masi_distance(ab, ac) == pytest.approx(1 - (1 / 3) * (1 / 3))  # J = 1/3
    assert masi_distance(a, c) == 1.0
    assert jaccard_distance(a, ab) == 0.5 and jaccard_distance(ab, ac) == pytest.approx(2 / 3)
    for x, y in [(a, ab), (ab, ac), (a, c), (ab, ab), ({"a", "b", "c"}, ab)]:
        # NLTK >= 3.10 uses the exact 2/3 and 1/3 (older releases rounded to 0.67 / 0.33)
        assert masi_distance(x, y) == pytest.approx(nltk_masi(set(x), set(y)), abs=1e-12)
        assert jaccard_distance(x, y) == pytest.approx(nltk_jaccard(set(x), set(y)), abs=1e-12)


def test_judge_missing_a_co_occurring_code_on_30_percent_is_not_perfect() -> None:
    anns = missed_co_occurring_code()
    rows = annotation_agreement(anns)
    masi = _find(rows, "dimension", "inference", "krippendorff", "masi")
    assert masi.sets
    # by hand (two coders, so each unit adds one coincidence each way): V = {valid}, O =
    # {overreach}, OC = {overreach, csf}. o_VV = 80, o_OO = 60, o_{O,OC} = o_{OC,O} = 30;
    # n_V = 80, n_O = 90, n_OC = 30, n = 200. d(V,.) = 1, d_masi(O, OC) = 1 - 1/2 * 2/3 = 2/3.
    # D_o = 60 * 2/3 / 200 = 0.2; D_e = (2*80*90 + 2*80*30 + 2*90*30*2/3) / (200*199)
    # = 22800/39800; alpha = 1 - 0.2 * 39800/22800 = 1 - 7960/22800 = 0.6508771929...
    assert masi.result.value == pytest.approx(1 - 7960 / 22800, abs=1e-12)
    assert masi.result.value == pytest.approx(_nltk_alpha(_triples(anns, "inference")), abs=1e-9)
    jac = _find(rows, "dimension", "inference", "krippendorff", "jaccard")
    # Jaccard: d(O, OC) = 1/2; D_o = 0.15, D_e = (14400 + 4800 + 2700)/39800 = 21900/39800
    assert jac.result.value == pytest.approx(1 - 5970 / 21900, abs=1e-12)
    assert jac.result.value == pytest.approx(
        _nltk_alpha(_triples(anns, "inference"), nltk_jaccard), abs=1e-9
    )
    exact = _find(rows, "dimension", "inference", "krippendorff", "none")
    # exact sets: every different pair at distance 1: D_o = 0.3, D_e = 24600/39800
    assert exact.result.value == pytest.approx(1 - 11940 / 24600, abs=1e-12)
    percent = _find(rows, "dimension", "inference", "percent", "none")
    assert percent.result.value == pytest.approx(0.7)  # 70 of 100 units with equal sets
    # the first codes agree on every unit: the old per-dimension reading gave 1.000
    first = {(a.unit_id, a.coder): a.codes["inference"] for a in anns}
    assert all(first[(u, "dr_a")] == first[(u, "judge")] for u, _ in first)
    # grounding is single-label: compared on its code as before, not as a set
    ground = [r for r in rows if r.scope == "dimension" and r.dimension == "grounding"]
    assert ground and not any(r.sets for r in ground)
    assert {r.result.statistic for r in ground} >= {"gwet_ac1", "brennan_prediger"}


def test_pooled_and_pair_scopes_on_sets_equal_nltk() -> None:
    anns = missed_co_occurring_code()
    rows = annotation_agreement(anns)
    pooled = _find(rows, "pooled", None, "krippendorff", "masi")
    assert pooled.sets and pooled.result.n_units == 100 and pooled.result.n_rows == 200
    items = [(a.coder, f"{a.unit_id}|{d}", frozenset(a.code_set(d))) for a in anns for d in a.codes]
    # t12red2: the pooled alpha equalled NLTK's over (unit|dimension) items, whose expected
    # disagreement mixes the two dimensions' codes (inflated: POOLED_CHANCE); the same
    # computation on the pooled set table still equals NLTK, but the scope no longer reports it
    table = annotation_sets(anns, None, coders=["dr_a", "judge"], min_ratings=2)
    (alpha,) = [r for r in set_agreement_table(table, []) if r.weights == "masi"]
    assert alpha.value == pytest.approx(_nltk_alpha(items), abs=1e-9)
    assert pooled.result.value is None and pooled.result.undefined_reason == POOLED_CHANCE
    pair = [
        r
        for r in rows
        if r.scope == "pair" and r.dimension == "inference" and r.result.weights == "masi"
    ]
    assert len(pair) == 1 and pair[0].result.value == pytest.approx(
        _nltk_alpha(_triples(anns, "inference")), abs=1e-9
    )
    cohen = _find(rows, "pair", "inference", "cohen", "none")
    assert cohen.sets and cohen.result.value < 1


def test_three_coders_with_missing_sets_equal_nltk() -> None:
    # a third coder (a second clinician) who codes only the even units, with the judge's sets
    # on units divisible by 4: alpha over pairable values with missing data
    anns = missed_co_occurring_code()
    extra = []
    for a in anns:
        i = int(a.unit_id[1:])
        if a.coder == ("judge" if i % 4 == 0 else "dr_a") and i % 2 == 0:
            extra.append(a.model_copy(update={"coder": "dr_b"}))
    data = anns + extra
    rows = annotation_agreement(data)
    got = _find(rows, "dimension", "inference", "krippendorff", "masi")
    assert got.result.n_raters == 3
    assert got.result.value == pytest.approx(_nltk_alpha(_triples(data, "inference")), abs=1e-9)


def test_every_code_has_a_per_code_row_without_a_codebook() -> None:
    rows = annotation_agreement(missed_co_occurring_code())
    coded = {r.code for r in rows if r.scope == "code" and r.dimension == "inference"}
    assert coded == {"valid_inference", *BOTH}  # conflict_synthesis_failure never comes first
    csf = [r.result for r in rows if r.scope == "code" and r.code == "conflict_synthesis_failure"]
    by = {r.statistic: r for r in csf}
    # the clinician gives it on 30 units, the judge on none: p_o = 0.7; p_e = 0.3*0 + 0.7*1 =
    # 0.7, so Cohen's kappa = 0 (and percent 0.7)
    assert by["percent"].value == pytest.approx(0.7)
    assert by["cohen"].value == pytest.approx(0.0, abs=1e-12)


def test_set_agreements_core_equals_nltk_on_an_invented_table() -> None:
    sets = [
        [frozenset("ab"), frozenset("a"), frozenset("ab")],
        [frozenset("c"), frozenset("c"), None],
        [frozenset("ac"), frozenset("ab"), frozenset("a")],
        [frozenset("b"), frozenset("bc"), frozenset("b")],
        [None, frozenset("a"), frozenset("a")],
        [frozenset("abc"), frozenset("ab"), frozenset("c")],
    ]
    triples = [(f"r{j}", f"u{i}", s) for i, row in enumerate(sets) for j, s in enumerate(row) if s]
    [*_, masi, jac] = set_agreements(sets)
    assert masi.weights == "masi" and jac.weights == "jaccard"
    assert masi.value == pytest.approx(_nltk_alpha(triples), abs=1e-9)
    assert jac.value == pytest.approx(_nltk_alpha(triples, nltk_jaccard), abs=1e-9)


def test_cli_first_line_says_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "annotations.jsonl"
    path.write_text(
        "".join(a.model_dump_json() + "\n" for a in missed_co_occurring_code()), encoding="utf-8"
    )

    def run(*args: str) -> str:
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            main(["agree", str(path), "--bootstrap", "0", *args])
        assert done.value.code in (0, None)
        return capsys.readouterr().out

    first = run().splitlines()[0]
    assert first.startswith(
        "Assumed: coders (2): dr_a (human), judge (llm); codes as sets on inference"
    )
    assert "one code per unit on grounding" in first
    assert "test-codebook@1+" in first and "is not bundled: give --codebook" in first
    rows = json.loads(run("--format", "json"))
    [row] = [
        r
        for r in rows
        if r["scope"] == "dimension" and r["dimension"] == "inference" and r["weights"] == "masi"
    ]
    assert row["sets"] is True and row["value"] == pytest.approx(1 - 7960 / 22800, abs=1e-12)
