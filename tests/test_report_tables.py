import math

import pandas as pd
import pytest

from failcodes.codebook import Dimension, Part, Subcode
from failcodes.errors import InputError
from failcodes.report.render import latex_escape, render_table
from failcodes.report.tables import code_shares, format_ci, never_flagged_notes, prf_table
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


def _wide() -> pd.DataFrame:
    """Per-passage table as failcodes.attribution.per_passage_codes makes it."""
    rows = [
        # retriever A: u1 high on both, u2 partial/exact, u3 irrelevant/broader
        ("A", "u1", "scored", "exact", "exact_scope", True),
        ("A", "u2", "scored", "partial", "exact_scope", False),
        ("A", "u3", "scored", "irrelevant", "broader", False),
        # retriever B: u4 high on both, u5 unscored (judge answer unusable), u6 not coded
        ("B", "u4", "scored", "exact", "exact_scope", True),
        ("B", "u5", "unscored", None, None, None),
        ("B", "u6", "missing", None, None, None),
    ]
    return pd.DataFrame(
        rows, columns=["retriever", "unit_id", "status", "entity", "scope", "all_high"]
    )


def _shares(wide: pd.DataFrame) -> pd.DataFrame:
    return code_shares(wide, _part(), by="retriever", flag="all_high", groups=["A", "B"])


def test_code_shares_hand_computed() -> None:
    shares = _shares(_wide())

    def get(d: str, c: str, g: str) -> float:
        return float(shares[(shares.dimension == d) & (shares.code == c)][g].iloc[0])

    # A entity: exact 1/3, partial 1/3, irrelevant 1/3
    assert get("entity", "exact", "A") == pytest.approx(1 / 3)
    assert get("entity", "irrelevant", "A") == pytest.approx(1 / 3)
    # A scope: exact_scope 2/3, broader 1/3
    assert get("scope", "exact_scope", "A") == pytest.approx(2 / 3)
    # B: only u4 is scored (u5 unscored, u6 missing are left out, not counted as a code)
    assert get("entity", "exact", "B") == 1.0
    assert get("scope", "broader", "B") == 0.0
    assert int(shares[shares.code == "exact"]["n_B"].iloc[0]) == 1
    # all-high: A -> u1 of 3 scored rows = 1/3; B -> u4 of 1 scored row
    assert get("all_high_quality", "all_high_quality", "A") == pytest.approx(1 / 3)
    assert get("all_high_quality", "all_high_quality", "B") == 1.0


def test_code_shares_rejects_code_outside_codebook() -> None:
    bad = _wide()
    bad.loc[0, "entity"] = "made_up"
    with pytest.raises(InputError, match="made_up"):
        _shares(bad)


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
            "recall_ci_warning": "only 1 clusters (< 20); only 4 positives (< 10)",
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
    assert table.loc[0, "CI warning"] == "R: only 1 clusters (< 20); only 4 positives (< 10)"


def test_latex_table_is_balanced_and_escaped() -> None:
    df = pd.DataFrame({"sub_code": ["a_b", "50%"], "n": [1, 2]})
    tex = render_table(df, "latex", caption="codes & shares", label="tab:codes")
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 1
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert (
        r"sub\_\allowbreak{}code" in tex
        and r"a\_\allowbreak{}b" in tex
        and r"50\%" in tex
        and r"codes \& shares" in tex
    )
    body = [ln for ln in tex.splitlines() if ln.endswith(r"\\")]
    assert all(ln.count("&") - ln.count(r"\&") == 1 for ln in body)  # 2 columns per row
    assert latex_escape("x_1^2 ~ {y}") == r"x\_1\textasciicircum{}2 \textasciitilde{} \{y\}"


def test_markdown_table_shape() -> None:
    md = render_table(pd.DataFrame({"a": ["x|y"], "b": [0.5]}), "md")
    lines = md.strip().splitlines()
    assert lines == ["| a | b |", "| --- | --- |", r"| x\|y | 0.500 |"]


def test_markdown_cells_escape_html() -> None:
    # raw <script> from the data passed into the Markdown tables (a viewer renders HTML)
    frame = pd.DataFrame({"claim": ["<script>alert(1)</script> & <b>x</b>\r\ny"]})
    md = render_table(frame, "md", caption="<i>c</i>")
    assert "<" not in md and ">" not in md
    assert "| &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;x&lt;/b&gt; y |" in md
    assert md.startswith("**&lt;i&gt;c&lt;/i&gt;**")


def test_rows_whose_mapping_flagged_nothing_are_named() -> None:
    rows = [
        {"system": "minicheck", "mapping": "refuted", "n": 87, "tp": 0, "fp": 0, "fn": 24},
        {"system": "minicheck", "mapping": "non_supported", "n": 87, "tp": 14, "fp": 27},
        {"system": "gpt", "mapping": "refuted", "n": 87, "tp": 0, "fp": 3},  # flags, all wrong
        {"system": "empty", "mapping": "refuted", "n": 0, "tp": 0, "fp": 0},  # nothing to say
    ]
    [note] = never_flagged_notes(rows)
    assert note.startswith("The mapping flagged no labelled sentence of: minicheck (refuted). ")
    assert "non_supported mapping" in note
    assert never_flagged_notes(rows[1:]) == []
