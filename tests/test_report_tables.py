import math

import pandas as pd
import pytest

from failcodes.codebook import Dimension, Part, Subcode
from failcodes.errors import InputError
from failcodes.report.render import latex_escape, render_table
from failcodes.report.tables import code_shares, dominant_errors, format_ci, prf_table
from failcodes.units import UnitKind


def _part() -> Part:
    def dim(did: str, codes: list[str]) -> Dimension:
        subs = tuple(
            Subcode(id=c, label=c, definition=c, high_quality=(i == 0)) for i, c in enumerate(codes)
        )
        return Dimension(id=did, label=did.title(), definition=did, subcodes=subs)

    return Part(
        id=UnitKind.RETRIEVAL,
        label="Retrieval",
        dimensions=(
            dim("entity", ["exact", "partial", "irrelevant"]),
            dim("scope", ["exact_scope", "broader"]),
        ),
    )


def _coded() -> pd.DataFrame:
    rows = [
        # retriever A: u1 high on both, u2 partial/exact, u3 irrelevant/broader
        ("A", "u1", "entity", "exact"),
        ("A", "u1", "scope", "exact_scope"),
        ("A", "u2", "entity", "partial"),
        ("A", "u2", "scope", "exact_scope"),
        ("A", "u3", "entity", "irrelevant"),
        ("A", "u3", "scope", "broader"),
        # retriever B: u4 high on both, u5 coded on entity only (incomplete)
        ("B", "u4", "entity", "exact"),
        ("B", "u4", "scope", "exact_scope"),
        ("B", "u5", "entity", "exact"),
    ]
    return pd.DataFrame(rows, columns=["group", "unit_id", "dimension", "code"])


def test_code_shares_hand_computed() -> None:
    shares = code_shares(_coded(), _part(), ["A", "B"])
    get = lambda d, c, g: float(shares[(shares.dimension == d) & (shares.code == c)][g].iloc[0])  # noqa: E731
    # A entity: exact 1/3, partial 1/3, irrelevant 1/3
    assert get("entity", "exact", "A") == pytest.approx(1 / 3)
    assert get("entity", "irrelevant", "A") == pytest.approx(1 / 3)
    # A scope: exact_scope 2/3, broader 1/3
    assert get("scope", "exact_scope", "A") == pytest.approx(2 / 3)
    # B entity: 2 of 2 exact; B scope over its 1 unit coded on scope
    assert get("entity", "exact", "B") == 1.0
    assert get("scope", "broader", "B") == 0.0
    # all-high: A -> only u1 of 3 complete units = 1/3; B -> u4 of 1 complete unit (u5 incomplete)
    assert get("all_high_quality", "all_high_quality", "A") == pytest.approx(1 / 3)
    assert get("all_high_quality", "all_high_quality", "B") == 1.0
    assert int(shares[shares.code == "all_high_quality"]["n_B"].iloc[0]) == 1


def test_code_shares_rejects_code_outside_codebook() -> None:
    bad = _coded()
    bad.loc[0, "code"] = "made_up"
    with pytest.raises(InputError, match="made_up"):
        code_shares(bad, _part())


def test_dominant_errors_counts_units() -> None:
    dom = dominant_errors(_coded(), _part(), top=2)
    a = dom[dom.group == "A"]
    # A: three errors, each on one unit of 3 (partial, irrelevant, broader);
    # top-2 ordered by (n desc, dimension, code)
    assert list(a.code) == ["irrelevant", "partial"]
    assert a.share.tolist() == pytest.approx([1 / 3, 1 / 3])
    assert dom[dom.group == "B"].empty


def test_format_ci_and_undefined() -> None:
    assert format_ci(0.256, 0.181, 0.33) == "25.6 [18.1, 33.0]"
    assert format_ci(None, None, None) == "–"
    assert format_ci(math.nan, 0.1, 0.2) == "–"


def test_prf_table_uses_metric_json_shape() -> None:
    rows = [
        {
            "system": "s1",
            "mapping": "refuted",
            "level": "sentence",
            "tp": 2,
            "fp": 1,
            "fn": 2,
            "tn": 5,
            "precision": 2 / 3,
            "precision_ci_low": 0.5,
            "precision_ci_high": 1.0,
            "recall": 0.5,
            "recall_ci_low": 0.25,
            "recall_ci_high": 0.75,
            "f1": {"value": 4 / 7, "undefined_reason": None},
            "f1_ci_low": None,
            "f1_ci_high": None,
        },
        {"system": "s1", "mapping": "refuted", "level": "claim", "tp": 0},
    ]
    table = prf_table(rows)
    assert len(table) == 1
    assert table.loc[0, "P"] == "66.7 [50.0, 100.0]"
    assert table.loc[0, "F1"] == "57.1"  # 2PR/(P+R) = 2*(2/3)(1/2)/(7/6) = 4/7


def test_latex_table_is_balanced_and_escaped() -> None:
    df = pd.DataFrame({"sub_code": ["a_b", "50%"], "n": [1, 2]})
    tex = render_table(df, "latex", caption="codes & shares", label="tab:codes")
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 1
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert r"sub\_code" in tex and r"a\_b" in tex and r"50\%" in tex and r"codes \& shares" in tex
    body = [ln for ln in tex.splitlines() if ln.endswith(r"\\")]
    assert all(ln.count("&") - ln.count(r"\&") == 1 for ln in body)  # 2 columns per row
    assert latex_escape("x_1^2 ~ {y}") == r"x\_1\textasciicircum{}2 \textasciitilde{} \{y\}"


def test_markdown_table_shape() -> None:
    md = render_table(pd.DataFrame({"a": ["x|y"], "b": [0.5]}), "md")
    lines = md.strip().splitlines()
    assert lines == ["| a | b |", "| --- | --- |", r"| x\|y | 0.500 |"]
