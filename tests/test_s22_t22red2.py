"""Session 22 red team (t22red2): agreement on designs the tests did not use.

Each test failed on the code before its fix; the values are by hand or from a library,
beside the assertions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli


def _agree_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code, out, err = run_cli(["agree", *args, "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def _review(unit: int, coder: str, entity: str, minute: int) -> dict[str, Any]:
    """One Label Studio review as `labelstudio pull`/`import` write it (with its lead time)."""
    return {
        "unit_id": f"u{unit}",
        "unit_kind": "retrieval",
        "codebook": {"name": "toy", "version": 1, "hash": "0" * 64},
        "coder": coder,
        "coder_kind": "human",
        "codes": {"entity": entity},
        "lead_time_s": 10.5 + minute,
        "created_at": f"2026-12-01T09:{minute:02d}:00.{minute:06d}Z",
    }


def test_one_label_studio_review_under_two_coder_names_is_refused_by_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # alice's reviews imported without --user (label-studio-user-3) and pulled (by email) in
    # one file beside bob's: read as three coders, exit 0 (the report refuses this). Entity,
    # alice E E P I, bob E P P I. Two coders: p_o 3/4, pooled margins E 3/8, P 3/8, I 2/8,
    # p_e 22/64, Fleiss (3/4 - 22/64) / (42/64) = 0.619. With alice twice: per-unit
    # agreement 1, 1/3, 1, 1 (p_o 10/12), margins E 5/12, P 4/12, I 3/12 (p_e 50/144):
    # Fleiss (10/12 - 50/144) / (94/144) = 0.745 was printed
    alice = ["exact", "exact", "partial", "irrelevant"]
    bob = ["exact", "partial", "partial", "irrelevant"]
    rows = [_review(u + 1, "label-studio-user-3", c, u) for u, c in enumerate(alice)]
    rows += [_review(u + 1, "bob@example.org", c, 10 + u) for u, c in enumerate(bob)]
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pair = _agree_json([str(path)], capsys)
    fleiss = [r for r in pair if r["scope"] == "dimension" and r["statistic"] == "fleiss"]
    assert fleiss[0]["value"] == pytest.approx((3 / 4 - 22 / 64) / (42 / 64))
    again = [{**r, "coder": "alice@example.org"} for r in rows[:4]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + again))
    code, _, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {path}:9, field 'coder': the review of unit u1 by "
        "'alice@example.org' is the one by 'label-studio-user-3' on line 1 (same time, lead "
        "time and codes): one Label Studio annotation under two coder names would count one "
        "person as two reviewers; keep one copy (name the user with `labelstudio import --user "
        "ID=EMAIL`)",
    )


def test_a_code_holding_an_unseen_character_is_refused_as_written_another_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'ye\u200bs' (a zero-width space pasted from a web page) beside 'yes' was a category of
    # its own: r1, r2 agree on 7 of 10 units (u3, u6, u9 differ), but r2's u1 'yes' holding
    # the space read as a disagreement, percent 6/10, exit 0. Same in a long table.
    from failcodes.spelling import spelling_key

    assert spelling_key("ye\u200bs") == spelling_key("\ufeffYES") == "yes"
    assert spelling_key("dis\u00adagree") == "disagree"  # a soft hyphen
    r1 = ["yes", "no", "yes", "no", "yes", "no", "yes", "no", "yes", "no"]
    r2 = ["ye\u200bs", "no", "no", "no", "yes", "yes", "yes", "no", "no", "no"]
    wide = tmp_path / "wide.csv"
    wide.write_text(
        "unit,r1,r2\n"
        + "".join(f"u{i + 1},{a},{b}\n" for i, (a, b) in enumerate(zip(r1, r2, strict=True)))
    )
    long = tmp_path / "long.csv"
    long.write_text(
        "unit,rater,rating\n"
        + "".join(
            f"u{i + 1},r1,{a}\nu{i + 1},r2,{b}\n"
            for i, (a, b) in enumerate(zip(r1, r2, strict=True))
        )
    )
    for path, line, field, first in (
        (wide, 2, "r2", "line 2, column 'r1'"),
        (long, 3, "rating", "line 2, column 'rating'"),
    ):
        code, _, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
        assert (code, err.strip()) == (
            2,
            f"failcodes: error: {path}:{line}, field '{field}': rating 'ye\\u200bs' is 'yes' "
            f"({first}) written another way (case, spacing or Unicode form): each spelling "
            "would be a category of its own; write it one way",
        )


def test_a_category_of_most_ratings_is_said_as_the_kappa_paradox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 50 units, A says yes on u1 only, B on u2 only: 48 agree on 'no'. By hand p_o 0.96,
    # p_e 0.02 * 0.02 + 0.98 * 0.98 = 0.9608, Cohen (0.96 - 0.9608) / 0.0392 = -0.0204
    # (sklearn cohen_kappa_score -0.0204), AC1 (0.96 - 2 * 0.02 * 0.98) / (1 - 0.0392) =
    # 0.9584, PABAK 2 * 0.96 - 1 = 0.92. The paradox was said only for a constant rater.
    path = tmp_path / "r.csv"
    path.write_text(
        "unit,A,B\n"
        + "".join(
            f"u{i},{'yes' if i == 1 else 'no'},{'yes' if i == 2 else 'no'}\n" for i in range(1, 51)
        )
    )
    rows = {r["statistic"]: r for r in _agree_json([str(path)], capsys)}
    assert rows["cohen"]["value"] == pytest.approx((0.96 - 0.9608) / 0.0392)
    assert rows["gwet_ac1"]["value"] == pytest.approx((0.96 - 0.0392) / 0.9608)
    assert rows["pabak"]["value"] == pytest.approx(0.92)
    assert rows["cohen"]["notes"][0].endswith(
        "; 'no' is 98% of the ratings: cohen, fleiss, conger take that skew as chance (cohen's "
        "chance agreement 0.961, observed 0.960): a few disagreements move such a coefficient "
        "far (the kappa paradox, Feinstein & Cicchetti 1990); gwet_ac1 and pabak beside do not"
    )
    (only,) = _agree_json([str(path), "--stat", "cohen"], capsys)
    assert only["notes"][0].endswith(
        "; 'no' is 98% of the ratings: cohen takes that skew as chance (cohen's chance "
        "agreement 0.961, observed 0.960): a few disagreements move such a coefficient far "
        "(the kappa paradox, Feinstein & Cicchetti 1990); gwet_ac1 and pabak (--stat) do not"
    )


# three raters of 30 units (seeded: r_j = the truth, flipped with probability 0.2)
_R3 = [
    "yny", "yyy", "yyn", "nnn", "nny", "nnn", "nyn", "yny", "nnn", "yny",
    "ynn", "ynn", "nyn", "nyy", "nnn", "nnn", "nnn", "yyy", "yyn", "nnn",
    "yyn", "yyn", "nnn", "ynn", "yyy", "yyy", "nnn", "nnn", "yyy", "nyn",
]  # fmt: skip


def test_a_majority_column_beside_three_raters_on_few_units_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `R_all`, the majority of r1..r3 on every row, under a name no consensus word holds
    # (it was `decision`, now left out by name as an outcome: tests/test_s30_t30left.py):
    # too few rows for the value rule (its departures 0 of 30 against the raters' 15 of 90:
    # binomial P = (5/6)^30 = 0.0042, above 0.01 shared by 4 columns), read as a fourth rater
    # with no word. statsmodels fleiss_kappa: 0.4885 with it, 0.3168 for the three raters
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    rows = [[*r, max("yn", key=r.count)] for r in _R3]
    path = tmp_path / "r.csv"
    path.write_text(
        "unit,r1,r2,r3,R_all\n" + "".join(f"u{i},{','.join(r)}\n" for i, r in enumerate(rows))
    )
    (row,) = _agree_json([str(path), "--stat", "fleiss"], capsys)
    assert row["value"] == pytest.approx(fleiss_kappa(aggregate_raters(rows)[0]))
    assert row["value"] == pytest.approx(0.4885, abs=5e-5)
    assert fleiss_kappa(aggregate_raters([r[:3] for r in rows])[0]) == pytest.approx(
        0.3168, abs=5e-5
    )
    assert row["notes"][0].endswith(
        "; R_all equals the row-wise majority of the other columns on 30 of 30 rows (the "
        "other columns equal theirs on 83%): a consensus of r1, r2 and r3? read here as a rater "
        "(--raters r1,r2,r3 leaves it out)"
    )
    # written onto a label word, or as two words, a consensus word is a name: left out
    for name, word in (("goldlabel", "gold"), ("finalcode", "final"), ("tie_break", "tiebreak")):
        path.write_text(
            f"unit,r1,r2,r3,{name}\n" + "".join(f"u{i},{','.join(r)}\n" for i, r in enumerate(rows))
        )
        (row,) = _agree_json([str(path), "--stat", "fleiss"], capsys)
        assert row["value"] == pytest.approx(0.3168, abs=5e-5)
        assert f"left out: {name} (named like a consensus column ('{word}')" in row["notes"][0]
    from failcodes.stats.summaries import consensus_word

    assert [consensus_word(n) for n in ("goldfish", "model", "devote", "rescode")] == [None] * 4
