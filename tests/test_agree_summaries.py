"""Raters, not summaries: a majority, gold or adjudicated column is not a rater (issue 25)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from failcodes.ratingsio import read_ratings_frame
from failcodes.stats.summaries import consensus_word, majority_fits, value_summaries
from tests.conftest import reference_data

FLEISS_1971 = reference_data("agreement-reference", "fleiss1971_diagnoses_30patients_6raters.csv")


def three_raters_and_majority() -> list[tuple[int, int, int]]:
    """30 units, binary codes, three raters a, b, c.

    Units 1-6: b = c = 1, a = 0; units 7-12: a = c = 0, b = 1; units 13-18: a = b = 1, c = 0
    (each rater the lone dissenter on 6 units); units 19-24 all 1; units 25-30 all 0.
    """
    rows = [(0, 1, 1)] * 6 + [(0, 1, 0)] * 6 + [(1, 1, 0)] * 6 + [(1, 1, 1)] * 6
    return rows + [(0, 0, 0)] * 6


# Fleiss' kappa of a, b, c by hand: 18 split units have P_i = (2*1 + 1*0)/(3*2) = 1/3, the 12
# unanimous ones P_i = 1, so P = (18/3 + 12)/30 = 0.6. Ones: 2*6 + 1*6 + 2*6 + 3*6 = 48 of 90
# ratings, p1 = 8/15, p0 = 7/15, P_e = (64 + 49)/225 = 113/225. kappa = (0.6 - 113/225) /
# (1 - 113/225) = (135 - 113)/(225 - 113) = 22/112 = 0.196428...
THREE_RATER_FLEISS = 22 / 112


def _table(path: Path, majority_name: str, extra: str = "") -> Path:
    header = f"item_id,a,b,c,{majority_name}{extra}\n"
    lines = []
    for i, (a, b, c) in enumerate(three_raters_and_majority(), start=1):
        major = int(a + b + c >= 2)
        lines.append(f"{i},{a},{b},{c},{major}{',' + str(major) if extra else ''}\n")
    path.write_text(header + "".join(lines))
    return path


def _fleiss(out: str) -> dict[str, object]:
    return next(r for r in json.loads(out) if r["statistic"] == "fleiss")


@pytest.mark.parametrize("name", ["majority_label", "gold", "Adjudicated", "final_label"])
def test_a_column_named_like_a_consensus_is_not_a_rater(tmp_path: Path, agree, name: str) -> None:
    path = _table(tmp_path / "r.csv", name)
    code, out, err = agree(path, "--stat", "fleiss", "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    row = _fleiss(out)
    assert row["value"] == pytest.approx(THREE_RATER_FLEISS, abs=1e-12)
    assert row["n_raters"] == 3 and row["raters"] == ["a", "b", "c"]
    code, out, _ = agree(path, "--stat", "fleiss", "--bootstrap", "0")
    first = out.splitlines()[0]
    assert first.startswith(
        "Assumed: raters (3): a, b, c; left out: " + name + " (named like a consensus"
    )


def test_raters_option_overrides_the_rule(tmp_path: Path, agree) -> None:
    path = _table(tmp_path / "r.csv", "majority_label")
    code, out, err = agree(
        path, "--stat", "fleiss", "--bootstrap", "0", "--format", "json",
        "--raters", "a,b,c,majority_label",
    )  # fmt: skip
    assert code == 0, err
    row = _fleiss(out)
    assert row["n_raters"] == 4
    # the majority read as a fourth rater: 18 split units now 2-2 or 3-1 with the majority
    # on the larger side (3 vs 1): P_i = (3*2 + 0)/12 = 1/2; 12 unanimous: 1. P = (9+12)/30 =
    # 0.7. Ones: 48 + 12 (majority 1 on units 1-6 and 13-18) + 6 (units 19-24) = 66 of 120,
    # p1 = 0.55, P_e = 0.3025 + 0.2025 = 0.505; kappa = (0.7 - 0.505)/0.495 = 0.393939...
    assert row["value"] == pytest.approx(0.195 / 0.495, abs=1e-12)
    code, out, _ = agree(path, "--stat", "fleiss", "--raters", "a,b,c,majority_label")
    assert out.splitlines()[0].startswith(
        "Assumed: raters (4) (given with --raters): a, b, c, majority"
    )


def test_an_unnamed_majority_column_is_found_by_its_values(tmp_path: Path, agree) -> None:
    path = _table(tmp_path / "r.csv", "dx")  # `label` is a name left out (t18red2)
    code, out, err = agree(path, "--stat", "fleiss", "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    assert _fleiss(out)["value"] == pytest.approx(THREE_RATER_FLEISS, abs=1e-12)
    code, out, _ = agree(path, "--stat", "fleiss", "--bootstrap", "0")
    # dx equals the majority of a, b, c on all 30 units; each rater departs from the
    # majority of the other three columns on its 6 lone-dissent units: 18 of 90 = 20%
    assert (
        "left out: dx (equals the row-wise majority of the other columns on 30 of 30 rows "
        "(the other columns equal theirs on 80%): a majority or adjudicated column, not a rater; "
        "a rater? --raters a,b,c,dx keeps it)"
    ) in out.splitlines()[0]


def test_value_rule_counts_by_hand() -> None:
    rows = [[str(v) for v in (*r, int(sum(r) >= 2))] for r in three_raters_and_majority()]
    fits = {f.column: (f.rows, f.departures) for f in majority_fits(rows, ["a", "b", "c", "m"])}
    assert fits == {"a": (30, 6), "b": (30, 6), "c": (30, 6), "m": (30, 0)}
    # one-sided binomial P(X <= 0 | 30, 0.2) = 0.8^30 = 0.00124 < 0.01 / 4 columns
    check = value_summaries(rows, ["a", "b", "c", "m"])
    assert [s.column for s in check.summaries] == ["m"] and not check.ambiguous
    # three columns: a majority of two others is only their agreement, nothing is left out
    assert value_summaries([r[1:] for r in rows], ["b", "c", "m"]).summaries == ()


def test_raters_who_agree_well_are_all_kept() -> None:
    # four raters, 40 units: 36 unanimous, and each rater the lone dissenter once. Every
    # column equals the others' majority on 39 of 40 rows (97.5% >= 95%), but none departs
    # less often than the rest (1 vs 3/120), so none is a summary
    rows = [["1", "1", "1", "1"]] * 18 + [["0", "0", "0", "0"]] * 18
    for k in range(4):
        rows.append(["1" if j != k else "0" for j in range(4)])
    check = value_summaries(rows, ["a", "b", "c", "d"])
    assert check.summaries == () and check.ambiguous == ()


def test_two_majority_columns_are_ambiguous(tmp_path: Path, agree) -> None:
    path = tmp_path / "r.csv"
    rows = three_raters_and_majority() * 2  # 60 units: 0.85^60 < 0.01 / 5 columns
    path.write_text(
        "item_id,a,b,c,x,y\n"
        + "".join(
            f"{i},{a},{b},{c},{int(a + b + c >= 2)},{int(a + b + c >= 2)}\n"
            for i, (a, b, c) in enumerate(rows, start=1)
        )
    )
    code, _, err = agree(path)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "x, y each equal the row-wise majority" in err and "--raters" in err
    code, out, err = agree(
        path, "--raters", "a,b,c", "--stat", "fleiss", "--bootstrap", "0", "--format", "json"
    )
    assert code == 0, err
    # the 30 units twice: the same proportions, the same kappa
    assert _fleiss(out)["value"] == pytest.approx(THREE_RATER_FLEISS, abs=1e-12)


def test_fleiss_1971_with_a_consensus_column_keeps_its_published_kappa(
    tmp_path: Path, agree
) -> None:
    # Fleiss (1971), Psychological Bulletin 76:378, Table 1: kappa = 0.430 over the six
    # psychiatrists. A diagnosis column added beside them, the row-wise mode of their six
    # diagnoses (the smallest code on a tie), named 'consensus' and then unnamed ('dx')
    frame = read_ratings_frame(FLEISS_1971)
    raters = [c for c in frame.columns if c != "patient"]

    def mode(row: list[int]) -> int:
        counts = Counter(row)
        top = max(counts.values())
        return min(v for v, n in counts.items() if n == top)

    frame["consensus"] = [mode(list(r)) for r in frame[raters].itertuples(index=False)]
    for name in ("consensus", "dx"):
        path = tmp_path / f"{name}.csv"
        frame.rename(columns={"consensus": name}).to_csv(path, index=False)
        code, out, err = agree(path, "--stat", "fleiss", "--bootstrap", "0", "--format", "json")
        assert code == 0, err
        row = _fleiss(out)
        assert round(float(row["value"]), 3) == 0.430 and row["n_raters"] == 6
        code, out, _ = agree(path, "--stat", "fleiss", "--bootstrap", "0")
        assert f"left out: {name} (" in out.splitlines()[0]


def test_consensus_words() -> None:
    assert consensus_word("majority_label") == "majority"
    assert consensus_word("Gold Standard") == "gold"
    assert consensus_word("label_0") is None and consensus_word("goldfish") is None
    # whole words only (redteam7): a panel's or the reference's column, not a panelist's
    assert consensus_word("expert_panel") == "panel" and consensus_word("Ref") == "ref"
    assert consensus_word("panelist_2") is None and consensus_word("referral") is None


def test_a_long_table_with_a_gold_rater(tmp_path: Path, agree) -> None:
    # a long export where one 'annotator' is the gold label: left out like a gold column
    path = tmp_path / "long.csv"
    lines = ["item,annotator,code\n"]
    for i, (a, b, c) in enumerate(three_raters_and_majority(), start=1):
        for who, v in (("a", a), ("b", b), ("c", c), ("gold", int(a + b + c >= 2))):
            lines.append(f"{i},{who},{v}\n")
    path.write_text("".join(lines))
    code, out, err = agree(path, "--stat", "fleiss", "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    assert _fleiss(out)["value"] == pytest.approx(THREE_RATER_FLEISS, abs=1e-12)


def _majority_of(values: list[str]) -> str | None:
    """The unique most frequent of ``values``, given at least twice (the rule, spelt out)."""
    counts = Counter(values)
    best = max(counts.values(), default=0)
    leaders = [v for v, c in counts.items() if c == best]
    return leaders[0] if best >= 2 and len(leaders) == 1 else None


def test_majority_fits_count_each_row_once_and_agree_with_the_rule() -> None:
    # majority_fits counts a row's values once and takes each column's own value away (it
    # recounted the others for every column: 2,000 raters x 500 units ran past a minute);
    # on random small tables it equals each column against the majority recounted by hand
    import random

    draw = random.Random(7)
    for _ in range(2000):
        k = draw.randint(1, 7)
        values = [None, "a", "b", "c", "d"][: draw.randint(2, 5)]
        rows = [[draw.choice(values) for _ in range(k)] for _ in range(draw.randint(0, 8))]
        columns = [f"c{j}" for j in range(k)]
        for j, fit in enumerate(majority_fits(rows, columns)):
            pairs = [
                (row[j], _majority_of([v for i, v in enumerate(row) if i != j and v is not None]))
                for row in rows
                if row[j] is not None
            ]
            counted = [(own, major) for own, major in pairs if major is not None]
            assert (fit.rows, fit.departures) == (
                len(counted),
                sum(own != major for own, major in counted),
            ), (rows, j)
    # by hand: a row (a, a, b): column 0 against (a, b) has no majority; column 2 (b) against
    # (a, a): majority a, a departure
    fits = majority_fits([["a", "a", "b"]], ["x", "y", "z"])
    assert [(f.rows, f.departures) for f in fits] == [(0, 0), (0, 0), (1, 1)]
