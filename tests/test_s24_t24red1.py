"""Session 24 red team (t24red1): the data path on shapes the tests did not use.

Each test failed on the code before its fix; the right values are counted by hand beside
the assertions.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli_helpers import run_cli, write_jsonl


def _traces(system: str, ids: list[str], verdicts: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "system": system,
            "question_id": "q1",
            "sentence_id": sid,
            "claim_id": f"{system}{i}",
            "claim": f"claim {i}",
            "verdict": verdict,
        }
        for i, (sid, verdict) in enumerate(zip(ids, verdicts, strict=True))
    ]


def _labels(ids: list[str], errors: list[bool]) -> list[dict[str, Any]]:
    return [
        {"question_id": "q1", "sentence_id": sid, "has_error": err}
        for sid, err in zip(ids, errors, strict=True)
    ]


@pytest.mark.parametrize(
    ("written", "how"),
    [
        ("q1:s0\u200b", "U+200B"),  # a zero-width space pasted after the id
        ("q1:\uff530", "U+FF53"),  # a fullwidth 's' (an East Asian input method)
        ("q1\uff1as0", "U+FF1A"),  # a fullwidth colon
    ],
)
def test_a_label_id_that_looks_like_a_traces_id_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, how: str
) -> None:
    # gpt: s0 refuted, s1 supported, s2 supported; labels s0 error, s1 error, s2 no error.
    # By hand TP 1 (s0), FN 1 (s1), TN 1 (s2). With s0's label written with a character
    # that shows as nothing (or in a fullwidth form) the label named no trace's sentence:
    # it counted as a sentence gpt made no claim for (a miss) and gpt's s0 went unlabelled:
    # TP 0, FN 2, TN 1, exit 0.
    ids = ["q1:s0", "q1:s1", "q1:s2"]
    traces = write_jsonl(
        tmp_path / "t.jsonl", _traces("gpt", ids, ["refuted", "supported", "supported"])
    )
    good = write_jsonl(tmp_path / "good.jsonl", _labels(ids, [True, True, False]))
    args = ["metrics", "--traces", str(traces), "-m", "refuted", "--format", "json"]
    code, out, err = run_cli([*args, "--labels", str(good)], capsys)
    assert code == 0, err
    row = json.loads(out)[0]
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 1, 1)
    bad = write_jsonl(tmp_path / "bad.jsonl", _labels([written, *ids[1:]], [True, True, False]))
    code, out, err = run_cli([*args, "--labels", str(bad)], capsys)
    assert code == 2, out
    assert err.count("\n") == 1
    assert "bad.jsonl:1, field 'sentence_id'" in err
    assert "'q1:s0'" in err and how in err


def test_one_systems_sentence_id_with_a_zero_width_space_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # gpt and claude checked one answer (shared labels s0 error, s1 error, s2 no error);
    # claude's file writes s0 with a zero-width space after it. claude by hand: s0 refuted
    # (TP), s1 refuted (TP), s2 supported (TN): TP 2, TN 1. Read as written, claude's s0
    # claim was unlabelled and the labelled s0 one it made no claim for: TP 1, FN 1, TN 1,
    # exit 0 (said only as "claude: 3 of 4" on line 2).
    ids = ["q1:s0", "q1:s1", "q1:s2"]
    gpt = write_jsonl(
        tmp_path / "gpt.jsonl", _traces("gpt", ids, ["refuted", "supported", "supported"])
    )
    odd = ["q1:s0\u200b", *ids[1:]]
    claude = write_jsonl(
        tmp_path / "claude.jsonl", _traces("claude", odd, ["refuted", "refuted", "supported"])
    )
    labels = write_jsonl(tmp_path / "labels.jsonl", _labels(ids, [True, True, False]))
    code, out, err = run_cli(
        [
            "metrics",
            "--traces",
            str(gpt),
            "--traces",
            str(claude),
            "--labels",
            str(labels),
            "-m",
            "refuted",
        ],
        capsys,
    )
    assert code == 2, out
    assert "labels.jsonl:1, field 'sentence_id'" in err
    assert "U+200B" in err and "'q1:s0'" in err


def _compare_rows(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code, out, err = run_cli(["compare", str(path), "--format", "json"], capsys)
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)["tests"]
    return rows


def test_cochrans_q_on_few_units_says_so_with_the_exact_p(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Six units, system a flags each, b and c none: C = (6, 0, 0), T = 6, every row total 1:
    # Q = (k-1)(k sum C^2 - T^2) / (k T - sum R^2) = 2 (3*36 - 36) / (18 - 6) = 12, chi-square
    # (2 df) p = exp(-6) = 0.00248, printed with no word. The exact p (each unit's one flag
    # equally likely on any of the 3 systems): all six on one system, 3 / 3^6 = 1/243 =
    # 0.004115. 6 mixed units x 3 systems = 18 < 24 (Tate & Brown 1970).
    path = tmp_path / "outcomes.csv"
    path.write_text("unit,a,b,c\n" + "".join(f"{u},1,0,0\n" for u in range(1, 7)))
    q = _compare_rows(path, capsys)[0]
    assert q["test"] == "cochran_q"
    assert q["statistic"] == pytest.approx(12.0)
    assert q["p_value"] == pytest.approx(math.exp(-6))
    assert q["note"] == (
        "few units for the chi-square: 6 unit(s) with mixed outcomes x 3 systems = 18 < 24 "
        "(Tate & Brown 1970), its p may be off; exact permutation p 0.004115"
    )
    # 8 such units: 24 cells, the chi-square's domain: no note
    path.write_text("unit,a,b,c\n" + "".join(f"{u},1,0,0\n" for u in range(1, 9)))
    assert _compare_rows(path, capsys)[0]["note"] is None


def test_cochrans_q_on_few_questions_permutes_question_totals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Question totals (a, b, c): q1 (2, 0, 0), q2 (1, 0, 0), q3 (0, 1, 0); C = (3, 1, 0).
    # Q = 2 (3*10 - 16) / (3*6 - 6) = 2.333, chi-square p exp(-7/6) = 0.3114. Exact: q1's 2
    # on one of 3 systems, q2's and q3's 1 each on one of 3: 27 arrangements; sum C^2 >= 10
    # when both 1s join the 2 (3 ways: 16) or exactly one does (3 x 4 = 12 ways: 10), so
    # p = 15/27 = 0.5556 (the 2, 2, 0 and 2, 1, 1 cases give 8 and 6).
    path = tmp_path / "outcomes.csv"
    path.write_text("question_id,unit,a,b,c\nq1,1,1,0,0\nq1,2,1,0,0\nq2,3,1,0,0\nq3,4,0,1,0\n")
    q = _compare_rows(path, capsys)[0]
    assert q["statistic"] == pytest.approx(7 / 3)
    assert q["p_value"] == pytest.approx(math.exp(-7 / 6))
    assert q["note"].startswith("few units for the chi-square: 3 question(s) with mixed")
    assert q["note"].endswith(f"exact permutation p {15 / 27:.4g}")


def test_the_exact_q_p_equals_brute_force_enumeration() -> None:
    # An independent count: every assignment of each row's values to the systems (k! orders
    # a row, each equally likely), Q's sum of squares compared with the observed.
    from failcodes.stats.classification import _q_exact_p

    rng = np.random.default_rng(7)
    for _ in range(20):
        x = rng.integers(0, 3, size=(4, 3)).astype(float)
        observed = float((x.sum(axis=0) ** 2).sum())
        hits = total = 0
        for orders in itertools.product(itertools.permutations(range(3)), repeat=4):
            c = sum(x[i, list(order)] for i, order in enumerate(orders))
            hits += float((c**2).sum()) >= observed - 1e-9
            total += 1
        assert _q_exact_p(x) == pytest.approx(hits / total)


def test_error_flag_columns_of_every_system_are_the_systems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # has_error_gpt, has_error_claude: each system's error flags, the whole table named so.
    # They were refused as "a property of each unit" with no column left to call a system.
    # By hand: b = units gpt 1, claude 0 (1 and 5) = 2, c = (4) = 1; on 3 discordant units
    # the two-sided mid-p is the exact binomial p, 2 P(X <= 1) = 2 (1/8 + 3/8) = 1, minus
    # P(X = 2) = 3/8: 0.625.
    path = tmp_path / "flags.csv"
    path.write_text("unit,has_error_gpt,has_error_claude\n1,1,0\n2,0,0\n3,1,1\n4,0,1\n5,1,0\n")
    rows = _compare_rows(path, capsys)
    mcnemar = next(r for r in rows if r["test"] == "mcnemar_midp")
    assert mcnemar["comparison"] == "has_error_gpt vs has_error_claude"
    assert mcnemar["p_value"] == pytest.approx(0.625)
    # a flag kept beside the systems is still refused (is_hard read as a third system)
    path.write_text("unit,gpt,claude,is_hard\n1,1,0,1\n2,0,0,0\n3,1,1,1\n4,0,1,0\n5,1,0,0\n")
    code, _, err = run_cli(["compare", str(path)], capsys)
    assert code == 2
    assert "column 'is_hard' is named like a property of each unit" in err
    # and so are two properties with no system (not one flag named by two systems)
    path.write_text("unit,is_hard,has_citation\n1,1,0\n2,0,0\n3,1,1\n")
    code, _, err = run_cli(["compare", str(path)], capsys)
    assert code == 2
    assert "column 'is_hard' is named like a property of each unit" in err


def test_a_system_written_fullwidth_in_one_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # gpt's answers to q1 in one file, to q2 in another whose system column reads 'ｇｐｔ'
    # (fullwidth letters). By hand gpt: 4 labelled error sentences, 2 refuted: n 4, TP 2,
    # FN 2. Read as two systems: gpt n 2 and ｇｐｔ n 2 (each TP 1, FN 1), the disjoint-questions
    # line, exit 0.
    def rows(system: str, q: str) -> list[dict[str, Any]]:
        return [
            {
                "system": system,
                "question_id": q,
                "sentence_id": f"{q}:s{i}",
                "claim_id": f"{q}c{i}",
                "claim": f"claim {i}",
                "verdict": verdict,
            }
            for i, verdict in enumerate(["refuted", "supported"])
        ]

    one = write_jsonl(tmp_path / "one.jsonl", rows("gpt", "q1"))
    two = write_jsonl(tmp_path / "two.jsonl", rows("\uff47\uff50\uff54", "q2"))
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"question_id": q, "sentence_id": f"{q}:s{i}", "has_error": True}
            for q in ("q1", "q2")
            for i in range(2)
        ],
    )
    args = ["metrics", "--labels", str(labels), "-m", "refuted", "--format", "json"]
    code, out, err = run_cli([*args, "--traces", str(one), "--traces", str(two)], capsys)
    assert code == 2, out
    assert "two.jsonl:1, field 'system'" in err
    assert "'gpt' written another way" in err
    same = write_jsonl(tmp_path / "same.jsonl", rows("gpt", "q2"))
    code, out, err = run_cli([*args, "--traces", str(one), "--traces", str(same)], capsys)
    assert code == 0, err
    row = json.loads(out)[0]
    assert (row["n"], row["tp"], row["fn"]) == (4, 2, 2)


@pytest.mark.parametrize("command", ["metrics", "disagreements", "compare"])
@pytest.mark.parametrize(
    ("name", "content"), [("e.jsonl", ""), ("e.jsonl", "\n  \n"), ("e.csv", "system,claim_id\n")]
)
def test_an_empty_traces_file_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, name: str, content: str
) -> None:
    # metrics on an empty JSONL file alone: an IndexError traceback (exit 1); beside gpt's
    # file it was passed over with no word (a system whose file was empty in no output)
    ids = ["q1:s0", "q1:s1"]
    gpt = write_jsonl(tmp_path / "gpt.jsonl", _traces("gpt", ids, ["refuted", "supported"]))
    claude = write_jsonl(tmp_path / "claude.jsonl", _traces("claude", ids, ["refuted", "refuted"]))
    labels = write_jsonl(tmp_path / "labels.jsonl", _labels(ids, [True, False]))
    empty = tmp_path / name
    empty.write_text(content)
    out = ["-o", str(tmp_path / "d.jsonl")] if command == "disagreements" else []
    for given in ([empty], [gpt, claude, empty]):
        traces = [a for p in given for a in ("--traces", str(p))]
        code, _, err = run_cli([command, *traces, "--labels", str(labels), *out], capsys)
        assert code == 2, err
        assert err == f"failcodes: error: {empty}: no traces found (the file holds no row; " + (
            "ingest never writes such a file: a system whose run made no claim has nothing "
            "to score, leave its file out)\n"
        )
    assert not (tmp_path / "d.jsonl").exists()


def test_an_empty_parquet_traces_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = ["q1:s0", "q1:s1"]
    labels = write_jsonl(tmp_path / "labels.jsonl", _labels(ids, [True, False]))
    empty = tmp_path / "e.parquet"
    pq.write_table(pa.table({"system": pa.array([], pa.string())}), empty)
    code, _, err = run_cli(["metrics", "--traces", str(empty), "--labels", str(labels)], capsys)
    assert code == 2, err
    assert f"{empty}: no traces found" in err


def test_cochrans_q_of_many_systems_on_one_unit_returns_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 20 systems, 1 unit with mixed outcomes (20 cells < 24): the exact p listed the unit's
    # 20! orders and never returned. Past 8 systems the note points to the McNemar rows.
    names = [f"s{j}" for j in range(20)]
    path = tmp_path / "outcomes.csv"
    path.write_text(
        "unit," + ",".join(names) + "\n1," + ",".join("1" if j < 10 else "0" for j in range(20))
    )
    q = _compare_rows(path, capsys)[0]
    assert q["note"] == (
        "few units for the chi-square: 1 unit(s) with mixed outcomes x 20 systems = 20 < 24 "
        "(Tate & Brown 1970), its p may be off; read the McNemar rows (small-sample forms)"
    )
