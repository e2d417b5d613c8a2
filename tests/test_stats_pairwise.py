"""Agreement over the units both coders rated; pooled agreement clustered by unit (issue 14)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from failcodes import coderagreement as ca
from failcodes.annotations import Annotation, CodebookRef, CoderKind
from failcodes.cli.main import main
from failcodes.ratingsio import read_ratings_frame
from failcodes.stats import agreement as ag
from failcodes.stats import tables as tb
from failcodes.units import UnitKind

REF = CodebookRef(name="cb", version=1, hash="1" * 64)
CODES = ("exact", "partial", "none")


def _label_studio_case() -> tuple[list[Annotation], list[tuple[str, str, str]]]:
    """Issue 14 pt 8: the judge coded 91 retrieval units, a reviewer 40 of them.

    Judge codes cycle through exact/partial/none with more 'exact'; the reviewer agrees on 35
    of the 40 (disagrees on every 8th unit), as in the Label Studio round trip (0.875).
    """
    judge = [CODES[0] if i % 3 else CODES[1 + (i // 3) % 2] for i in range(91)]
    anns, rows = [], []
    for i, code in enumerate(judge):
        unit = f"u{i:03d}"
        anns.append(_ann(unit, "anthropic:judge", CoderKind.LLM, code))
        if i < 40:
            human = code if i % 8 else CODES[(CODES.index(code) + 1) % 3]
            anns.append(_ann(unit, "reviewer", CoderKind.HUMAN, human))
            rows.append((unit, code, human))
    return anns, rows


def _ann(unit: str, coder: str, kind: CoderKind, code: str) -> Annotation:
    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=REF,
        coder=coder,
        coder_kind=kind,
        codes={"entity_match": code},
    )


@pytest.fixture
def agree(capsys: pytest.CaptureFixture[str]) -> Callable[..., list[dict[str, object]]]:
    def _run(*args: str | Path) -> list[dict[str, object]]:
        capsys.readouterr()
        try:
            main(["agree", *[str(a) for a in args], "--format", "json"])
        except SystemExit as exc:
            assert not exc.code, capsys.readouterr().err
        return list(json.loads(capsys.readouterr().out))

    return _run


def _files(tmp_path: Path) -> tuple[Path, Path]:
    anns, rows = _label_studio_case()
    all_path = tmp_path / "all.jsonl"
    all_path.write_text("".join(a.model_dump_json() + "\n" for a in anns))
    table = tmp_path / "double_coded.csv"
    table.write_text(
        "unit,anthropic:judge,reviewer\n" + "".join(f"{u},{j},{h}\n" for u, j, h in rows)
    )
    return all_path, table


def test_annotation_path_equals_the_40_unit_table(tmp_path: Path, agree) -> None:
    all_path, table = _files(tmp_path)
    from_annotations = {
        r["statistic"]: r
        for r in agree(all_path, "--bootstrap", "0")
        if r["scope"] == "dimension" and r["dimension"] == "entity_match"
    }
    from_table = {r["statistic"]: r for r in agree(table, "--bootstrap", "0")}
    percent = from_annotations["percent"]
    assert percent["value"] == pytest.approx(35 / 40)
    assert percent["n_units"] == 40 and percent["n_single_rated"] == 51
    for stat in ("percent", "fleiss", "gwet_ac1", "brennan_prediger"):
        a, t = from_annotations[stat], from_table[stat]
        for key in ("value", "se", "ci_low", "ci_high", "n_units"):
            assert a[key] == pytest.approx(t[key]), (stat, key)
    # percent agreement SE, Gwet (2014) over the 40 units: sqrt(p(1-p)/(n-1)) for 0/1 scores
    assert percent["se"] == pytest.approx(np.sqrt(0.875 * 0.125 / 39))


def test_bootstrap_intervals_match_too(tmp_path: Path) -> None:
    anns, _ = _label_studio_case()
    _, table_path = _files(tmp_path)
    scoped = ca.annotation_agreement(anns, n_bootstrap=300, seed=5)
    got = {
        s.result.statistic: s.result
        for s in scoped
        if s.scope == "dimension" and s.dimension == "entity_match"
    }
    table = tb.ratings_from_frame(read_ratings_frame(table_path))
    expected = tb.agreement_table(table, ca.MULTI_RATER_STATS, n_bootstrap=300, seed=5)
    for res in expected:
        assert got[res.statistic].ci_low == pytest.approx(res.ci_low)
        assert got[res.statistic].ci_high == pytest.approx(res.ci_high)


def test_missing_data_estimators_are_an_explicit_option(tmp_path: Path, agree) -> None:
    all_path, _ = _files(tmp_path)
    rows = agree(all_path, "--bootstrap", "0", "--missing-data")
    percent = next(r for r in rows if r["scope"] == "dimension" and r["statistic"] == "percent")
    # Gwet's missing-data form: the 51 judge-only units enter the variance (n = 91)
    assert percent["value"] == pytest.approx(35 / 40)
    assert percent["se"] > 2 * np.sqrt(0.875 * 0.125 / 39)


def test_pooled_bootstrap_resamples_units() -> None:
    # two units x two dimensions: each unit agrees on both or on neither of its dimensions
    data = np.array([[0, 0], [1, 1], [0, 1], [1, 0], [0, 0], [1, 1]], dtype=float)
    clusters = ["a", "a", "b", "b", "c", "c"]
    res = ag.agreements(data, ["percent"], n_bootstrap=400, seed=1, clusters=clusters)[0]
    assert res.n_units == 3 and res.n_rows == 6
    # cluster means 1, 0, 1: delete-one-cluster jackknife of the ratio estimator
    # (sum agree / sum rows with 2 ratings) = mean of cluster means here (equal sizes):
    # theta_-a = 1/2, theta_-b = 1, theta_-c = 1/2; mean 2/3;
    # se = sqrt(2/3 * ((1/2-2/3)^2 * 2 + (1/3)^2)) = sqrt(2/3 * 1/6) = 1/3
    assert res.se == pytest.approx(1 / 3)
    # every resample is a multiset of whole units: agreement is a multiple of 1/3 (k of 3)
    naive = ag.agreements(data, ["percent"], n_bootstrap=400, seed=1)[0]
    assert naive.n_units == 6 and naive.n_rows is None


def test_not_assessable_is_a_category_where_a_coder_used_it() -> None:
    # A reviewer answered not_assessable (outside check, redteam2): with the codebook's code
    # lists as categories it was "a rating outside the category list", and `failcodes report`
    # on a study with that review exited 2 with no file named (the offline judge gives
    # not_assessable on most trustworthy cells, so any review of its units did the same).
    # human: ts ts na us; judge: ts na na us  (ts = exact_entity, na = not_assessable,
    # us = irrelevant). Percent = 3/4. Cohen: p_o = .75; marginals human ts 2 na 1 us 1,
    # judge ts 1 na 2 us 1: p_e = (2*1 + 1*2 + 1*1) / 16 = 5/16;
    # kappa = (.75 - .3125) / (1 - .3125) = 0.4375 / 0.6875 = 7/11.
    human = ["exact_entity", "exact_entity", "not_assessable", "irrelevant"]
    judge = ["exact_entity", "not_assessable", "not_assessable", "irrelevant"]
    anns = [_ann(f"u{i}", "alice", CoderKind.HUMAN, c) for i, c in enumerate(human)] + [
        _ann(f"u{i}", "offline", CoderKind.HEURISTIC, c) for i, c in enumerate(judge)
    ]
    cats = {"entity_match": ["exact_entity", "partial_entity", "entity_mismatch", "irrelevant"]}
    scoped = ca.annotation_agreement(anns, categories=cats)
    got = {
        s.result.statistic: s.result.value
        for s in scoped
        if s.scope == "dimension" and s.dimension == "entity_match"
    }
    assert got["percent"] == pytest.approx(0.75)
    assert got["fleiss"] is not None
    pair = {
        s.result.statistic: s.result.value
        for s in scoped
        if s.scope == "pair" and s.dimension == "entity_match"
    }
    assert pair["cohen"] == pytest.approx(7 / 11)
    codes = {s.code for s in scoped if s.scope == "code"}
    assert "not_assessable" in codes
