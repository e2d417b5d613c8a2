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
