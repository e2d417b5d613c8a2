"""Session 28, helper t28left: numbers that looked right and were wrong, left by session 27.

(issue 30)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

# --------------------------------------------------------------------------- item 4: ppi lam

# 10 reviewed units (human y, judge yhat) and 12 unreviewed ones (judge only)
_Y = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
_YHAT = [1, 0, 1, 0, 0, 1, 1, 0, 1, 1]
_UNLABELED = [1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0]


@pytest.mark.parametrize("lam", [1.5, -0.5, math.nan])
def test_ppi_mean_refuses_a_lam_outside_zero_one(lam: float) -> None:
    """``ppi_mean(..., lam=1.5)`` gave 0.45 as if it were the method's, NaN gave NaN.

    PPI++ tunes lam within [0, 1] (Angelopoulos, Duchi and Zrnic 2023, "PPI++"): 0 is the
    human codes alone, 1 is PPI. By hand, lam = 1.5: 1.5 * mean_u + mean_y - 1.5 * mean_yhat
    = 1.5 * 6/12 + 6/10 - 1.5 * 6/10 = 0.45, a number no setting of the method gives.
    """
    import failcodes
    from failcodes.errors import StatisticsError
    from failcodes.stats.ppi import Stratum, share_estimates

    with pytest.raises(StatisticsError) as caught:
        failcodes.ppi_mean(_Y, _YHAT, _UNLABELED, lam=lam)
    assert str(caught.value) == (
        "lam must be in [0, 1] (0 = human codes only, 1 = PPI; PPI++ tunes it within [0, 1]; "
        f"None tunes it), got {lam}"
    )
    with pytest.raises(StatisticsError, match=r"^lam must be in \[0, 1\]"):
        share_estimates([Stratum(_Y, _YHAT, _UNLABELED)], lam=lam)
    # the ends stay: lam 1 (PPI) 0.5 + 0.6 - 0.6 = 0.5, lam 0 (human only) 6/10 = 0.6
    assert failcodes.ppi_mean(_Y, _YHAT, _UNLABELED, lam=1.0).estimate == pytest.approx(0.5)
    assert failcodes.ppi_mean(_Y, _YHAT, _UNLABELED, lam=0.0).estimate == pytest.approx(0.6)


# --------------------------------------------------------------------------- item 1: 'b;b'


def test_a_code_set_naming_a_code_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under ``--sets ';'`` a cell 'b;b' was read as {b}: percent 0.600, exit 0, unsaid.

    By hand: u1 {a,b}={a,b}, u2 {b}={b}, u3 {a}/{a,b}, u4 {b}/{a}, u5 {a}={a}: 3 of 5 = 0.6
    as read; had 'b;b' been a typo for 'a;b' (u2 {a,b}/{b}) it is 2 of 5 = 0.4. Which one no
    reader can tell: one line naming the file's line, the column and the cell.
    """
    from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli

    table = ratings_file(tmp_path, "unit,r1,r2\nu1,a;b,a;b\nu2,b;b,b\nu3,a,a;b\nu4,b,a\nu5,a,a\n")
    out = tmp_path / "agree.json"
    code, stdout, err = run_cli(
        ["agree", str(table), "--sets", ";", *AGREE_JSON, "-o", str(out)], capsys
    )
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {table}:3, field 'r1': 'b;b' names the code 'b' twice: a code set "
        "holds each code once (a typo for another code, or a double entry?): write each code "
        "once\n"
    )
    assert not out.exists()
    # the cell written once: 3 of 5 units hold equal sets (by hand above)
    fixed = ratings_file(tmp_path, "unit,r1,r2\nu1,a;b,a;b\nu2,b,b\nu3,a,a;b\nu4,b,a\nu5,a,a\n")
    code, stdout, _ = run_cli(["agree", str(fixed), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0
    [percent] = [r for r in json.loads(stdout) if r["statistic"] == "percent" and not r.get("code")]
    assert percent["value"] == pytest.approx(0.6)


def test_a_long_tables_code_given_a_pair_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long table under ``--sets ';'``: rows u2,r1,b and u2,r1,b joined into {b}, unsaid.

    The two rows are one code entered twice (or a typo for another code): refused naming
    the second row's line (7: header on 1, the rows of u1 on 2-5) and the first (6).
    """
    from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli

    table = ratings_file(
        tmp_path,
        "unit,rater,code\nu1,r1,a\nu1,r1,b\nu1,r2,a\nu1,r2,b\nu2,r1,b\nu2,r1,b\nu2,r2,b\n"
        "u3,r1,a\nu3,r2,a\nu3,r2,b\nu4,r1,b\nu4,r2,a\nu5,r1,a\nu5,r2,a\n",
    )
    code, stdout, err = run_cli(["agree", str(table), "--sets", ";", *AGREE_JSON], capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {table}:7, field 'code': unit 'u2' is given the code 'b' by 'r1' "
        "twice (first at line 6): a code set holds each code once (a double entry, or a typo "
        "for another code?): keep one of the rows\n"
    )


def test_an_annotations_code_set_naming_a_code_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An annotation file's ``code_sets`` ``["overreach", "overreach"]`` was read as {overreach}.

    Judges and Label Studio never write a repeat (codebook order, each code once); a file
    edited by hand may. The annotation reader (the model and the fast line reader alike)
    refuses it naming the line: line 81 is dr_a's annotation of u040 (80 annotations
    before it, two per unit, tests/test_agreement_sets.py's data).
    """
    from tests.cli_helpers import run_cli
    from tests.test_agreement_sets import missed_co_occurring_code

    lines = [a.model_dump_json() for a in missed_co_occurring_code()]
    at = next(i for i, line in enumerate(lines) if '"inference":["overreach"]' in line)
    assert (at, json.loads(lines[at])["unit_id"]) == (80, "u040")
    lines[at] = lines[at].replace('["overreach"]', '["overreach","overreach"]')
    path = tmp_path / "annotations.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, stdout, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {path}:81: code_sets['inference'] names 'overreach' twice: a code "
        "set holds each code once (a typo for another code, or a double entry?)\n"
    )


# --------------------------------------------------------------------------- item 2: --by


def test_each_by_group_names_its_own_single_rated_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--by dimension``: the first line said "2 units rated by one rater only ('u2', 'u2')".

    The whole table's list, where each group has a unit u2 rated by r1 alone (polarity's row
    u2 'a,,' and scope's row u2 ',a,'; the other rows have 2-3 ratings): which u2, whose?
    Each group names its own.
    """
    from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli

    table = ratings_file(
        tmp_path,
        "dimension,unit,r1,r2,r3\npolarity,u1,a,a,b\npolarity,u2,a,,\npolarity,u3,b,b,b\n"
        "polarity,u4,a,b,a\nscope,u1,a,a,a\nscope,u2,,a,\nscope,u3,a,b,\nscope,u4,b,b,a\n",
    )
    code, stdout, _ = run_cli(
        ["agree", str(table), "--by", "dimension", "--stat", "fleiss", *AGREE_JSON], capsys
    )
    assert code == 0
    first = json.loads(stdout)[0]["notes"][0]
    assert (
        "; 2 units rated by one rater only (dimension polarity: 'u2'; dimension scope: 'u2') "
        "enter the chance-agreement margins of fleiss"
    ) in first


# --------------------------------------------------------------------------- item 3: 1..n


def test_a_column_of_row_numbers_is_read_as_unit_ids_not_a_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``x,r1,r2`` with x = 1..6 beside 1-6 ratings: x was a third rater ('raters (3): x, ...').

    Every value of x is a rating of r1 or r2, so the values rule took it for a rater and the
    rows' numbers for unit ids. Two raters, by hand: agree on u2, u4, u6, po = 3/6; margins r1
    {1:1, 2:1, 3:2, 5:1, 6:1}, r2 one each of 1..6, pe = 6/36; Cohen (0.5 - 1/6) / (5/6) = 0.4
    (sklearn's cohen_kappa_score too). Said on the first line, with the way to rate with it.
    """
    from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli

    table = ratings_file(tmp_path, "x,r1,r2\n1,5,6\n2,2,2\n3,3,4\n4,1,1\n5,6,5\n6,3,3\n")
    code, stdout, _ = run_cli(["agree", str(table), *AGREE_JSON], capsys)
    assert code == 0
    rows = json.loads(stdout)
    [cohen] = [r for r in rows if r["statistic"] == "cohen"]
    assert cohen["raters"] == ["r1", "r2"]
    assert cohen["value"] == pytest.approx(0.4)
    assert rows[0]["notes"][0].startswith(
        "Assumed: raters (2): r1, r2; unit ids: column 'x' (values 1..6 in row order: row "
        "numbers, not a rater's ratings; --raters reads it as a rater); "
    )
    # raters as rows under numbered unit columns (`name,1,2,3` over five readers) stay read as
    # given (raters may be numbered), and the first line says how to read them the other way:
    # transposed, units 1 (4 a, 1 b), 2 (1 a, 4 b), 3 (4 a, 1 b) by 5 raters: P_i = 12/20,
    # p_a = 9/15, Pe = 0.36 + 0.16 = 0.52, Fleiss (0.6 - 0.52) / 0.48 = 1/6
    rows_as_raters = ratings_file(
        tmp_path,
        "name,1,2,3\nann,a,b,a\nbob,a,b,b\ncat,a,a,a\ndan,b,b,a\neve,a,b,a\n",
        name="t.csv",
    )
    code, stdout, _ = run_cli(["agree", str(rows_as_raters), *AGREE_JSON], capsys)
    assert code == 0
    assert (
        "unit ids: column 'name' (values all distinct, unlike ratings); the rater columns are "
        "named by numbers alone (1, 2, 3) and the unit ids found by their values: if each row "
        "is one rater and each column a unit, transpose the table; "
    ) in json.loads(stdout)[0]["notes"][0]
    transposed = ratings_file(
        tmp_path,
        "unit,ann,bob,cat,dan,eve\n1,a,a,a,b,a\n2,b,b,a,b,b\n3,a,b,a,a,a\n",
        name="tt.csv",
    )
    code, stdout, _ = run_cli(["agree", str(transposed), "--stat", "fleiss", *AGREE_JSON], capsys)
    assert json.loads(stdout)[0]["value"] == pytest.approx(1 / 6)
    # columns named like raters, or ranks (every column 1..n once), keep their raters: r3 =
    # 1..6 in row order is named like a rater; ranks of 5 units sorted by alice's (alice =
    # 1..5, bob and carol permutations): no column repeats a value, so alice stays a rater
    named = ratings_file(
        tmp_path, "r1,r2,r3\n5,6,1\n2,2,2\n3,4,3\n1,1,4\n6,5,5\n3,3,6\n", name="named.csv"
    )
    ranks = ratings_file(
        tmp_path, "alice,bob,carol\n1,2,1\n2,1,3\n3,3,2\n4,5,4\n5,4,5\n", name="ranks.csv"
    )
    for table, raters in ((named, ["r1", "r2", "r3"]), (ranks, ["alice", "bob", "carol"])):
        code, stdout, _ = run_cli(["agree", str(table), *AGREE_JSON], capsys)
        assert code == 0
        assert json.loads(stdout)[0]["raters"] == raters


# --------------------------------------------------------------------------- item 5: '01', '1'

_ZEROS = (
    "question ids that differ only in leading zeros are read as different questions ('01' and "
    "'1'): each a question of its own in the counts and the bootstrap's clusters; write them "
    "one way if they name one question"
)


def _zero_questions(folder: Path) -> tuple[Path, Path]:
    """System A: question '01' (sentence s1: c1 refuted, c2 supported), '1' (s2: c3), '2'."""
    traces = folder / "t.jsonl"
    rows = [
        ("01", "s1", "c1", "refuted"),
        ("01", "s1", "c2", "supported"),
        ("1", "s2", "c3", "supported"),
        ("2", "s3", "c4", "refuted"),
    ]
    traces.write_text(
        "".join(
            json.dumps(
                {"system": "A", "question_id": q, "sentence_id": s, "claim_id": c, "claim": c}
                | {"verdict": v, "evidence_source": "none"}
            )
            + "\n"
            for q, s, c, v in rows
        ),
        encoding="utf-8",
    )
    labels = folder / "l.jsonl"
    flags = {"c1": True, "c2": False, "c3": True, "c4": False}
    labels.write_text(
        "".join(
            json.dumps({"claim_id": c, "sentence_id": s, "has_error": flags[c]}) + "\n"
            for _, s, c, _ in rows
        ),
        encoding="utf-8",
    )
    return traces, labels


def test_question_ids_told_apart_by_leading_zeros_are_said_by_metrics_and_disagreements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Questions '01' and '1' were two clusters of metrics' bootstrap, n_questions 3, unsaid.

    Claim level, by hand: c1 refuted/error TP, c2 supported/no error TN, c3 supported/error
    FN, c4 refuted/no error FP; questions as read '01', '1', '2': 3 (2 if '01' is '1'). As
    agree says of unit ids (idzeros), they stay two and the first line says so: metrics,
    its JSON rows (which the report's run box reads), disagreements.
    """
    from failcodes.labelscope import assumptions_line, shape_of_rows
    from tests.cli_helpers import run_cli

    traces, labels = _zero_questions(tmp_path)
    given = ["--traces", str(traces), "--labels", str(labels), "--level", "claim"]
    code, out, _ = run_cli(["metrics", *given], capsys)
    assert code == 0
    assert out.splitlines()[0].endswith("; " + _ZEROS)
    code, out, _ = run_cli(["metrics", *given, "--format", "json"], capsys)
    [row] = json.loads(out)
    assert (row["tp"], row["fp"], row["fn"], row["tn"], row["n_questions"]) == (1, 1, 1, 1, 3)
    assert row["question_zeros"] == [["01", "1"]]
    shape = shape_of_rows([row])
    assert shape is not None and assumptions_line(shape).endswith("; " + _ZEROS)
    code, out, _ = run_cli(["disagreements", *given, "-o", str(tmp_path / "d.jsonl")], capsys)
    assert code == 0
    assert f"; {_ZEROS}" in out.splitlines()[0]
    # '01' written '1' on its rows: one question of 2 claims, no word, no field; questions
    # '1' (c1, c2, c3) and '2' (c4): 2 by hand
    traces, labels = _zero_questions(tmp_path)
    traces.write_text(traces.read_text().replace('"01"', '"1"'), encoding="utf-8")
    given = ["--traces", str(traces), "--labels", str(labels), "--level", "claim"]
    code, out, _ = run_cli(["metrics", *given, "--format", "json"], capsys)
    [row] = json.loads(out)
    assert row["n_questions"] == 2
    assert "question_zeros" not in row


# --------------------------------------------------------------------------- item 6: questions


def test_the_coverage_tables_questions_are_those_some_system_made_a_claim_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three questions asked, q3's answer holding no claim: coverage said 'questions 2'.

    A flat claim table has no row for q3 (a label of it is refused: no trace has
    question_id 'q3'), so the count cannot hold it: the table's title says whose count it is.
    By hand: A and B each answered q1 (s1, error) and q2 (s2, no error): questions 2.
    """
    from tests.cli_helpers import run_cli

    traces = tmp_path / "t.jsonl"
    traces.write_text(
        "".join(
            json.dumps(
                {"system": s, "question_id": q, "sentence_id": sid, "claim_id": c, "claim": c}
                | {"verdict": v, "evidence_source": "none"}
            )
            + "\n"
            for s, q, sid, c, v in [
                ("A", "q1", "s1", "c1", "refuted"),
                ("A", "q2", "s2", "c2", "supported"),
                ("B", "q1", "s1", "c1", "supported"),
                ("B", "q2", "s2", "c2", "supported"),
            ]
        ),
        encoding="utf-8",
    )
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"question_id": "q1", "sentence_id": "s1", "has_error": true}\n'
        '{"question_id": "q2", "sentence_id": "s2", "has_error": false}\n',
        encoding="utf-8",
    )
    code, out, _ = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 0
    flat = " ".join(out.split())
    assert (
        "Coverage: labelled questions and sentences per system (questions: those some system "
        "made a claim in (an answer without claims has no trace row, so its question is in no "
        "count))"
    ) in flat
    code, out, _ = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"],
        capsys,
    )
    assert [r["n_labelled_questions"] for r in json.loads(out)] == [2, 2]


# --------------------------------------------------------------------------- item 7: own Parquet

_PARTS = {
    "A": [("q1", "s1", "c1", "refuted"), ("q1", "s1", "c2", "supported")],
    "B": [("q1", "s1", "c1", "no_evidence")],
}


def _own_parquet_parts(folder: Path, capsys: pytest.CaptureFixture[str]) -> list[Path]:
    """Each system's traces ingested to the tool's own Parquet (a study's parts as Parquet)."""
    from tests.cli_helpers import run_cli

    parts = []
    for system, rows in _PARTS.items():
        table = folder / f"{system}.csv"
        table.write_text(
            "question_id,sentence_id,claim_id,claim,verdict\n"
            + "".join(f"{q},{s},{c},claim {c},{v}\n" for q, s, c, v in rows),
            encoding="utf-8",
        )
        part = folder / f"{system}.parquet"
        code, _, err = run_cli(
            ["ingest", "generic", str(table), "--system", system, "-o", str(part)], capsys
        )
        assert code == 0, err
        parts.append(part)
    return parts


def test_the_tools_own_parquet_is_read_as_traces_not_as_a_foreign_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Merging the tool's own Parquet built a model per row through the generic reader.

    3.9x the CPU of the same parts as JSONL (bench/bench_study_parts.py, session 27): each row
    of a file carrying the marker of validated traces is now the struct a trace JSON line
    decodes to, as the JSONL parts' lines are; no model is built. The merge writes the
    traces as the JSONL merge does: A c1 refuted, A c2 supported, B c1 no_evidence.
    """
    import pyarrow.parquet as pq

    from failcodes.ingest.table import TableSpec, TableStream, _own_traces
    from failcodes.traces import Trace
    from tests.cli_helpers import run_cli

    parts = _own_parquet_parts(tmp_path, capsys)
    rows = list(TableStream(parts, TableSpec(), lines=True))
    assert not any(isinstance(r, Trace) for r in rows)
    assert [(r.system, r.claim_id, r.verdict) for r in rows] == [
        ("A", "c1", "refuted"),
        ("A", "c2", "supported"),
        ("B", "c1", "no_evidence"),
    ]
    merged = tmp_path / "merged.jsonl"
    code, _, err = run_cli(["ingest", "generic", *map(str, parts), "-o", str(merged)], capsys)
    assert code == 0, err
    assert [json.loads(line) for line in merged.read_text().splitlines()] == [
        {"system": s, "question_id": q, "sentence_id": sid, "claim_id": c, "claim": f"claim {c}"}
        | {"verdict": v, "passages": []}
        for s, rows in _PARTS.items()
        for q, sid, c, v in rows
    ]
    # a part rewritten with its footer kept and a padded claim id (' c2'): its seal no
    # longer holds (h34seal), so the row takes the generic reader, whose error names the
    # file, row 2, the field; a marker sealed anew (a forger): the voucher refuses it, the same
    from failcodes.engine import MARKER_KEY, seal, validated_marker

    table = pq.read_table(parts[0])
    marker = pq.read_metadata(parts[0]).metadata[MARKER_KEY]
    ids = table.column("claim_id").to_pylist()
    table = table.set_column(
        table.schema.get_field_index("claim_id"), "claim_id", [[ids[0], " c2"]]
    )
    for footer, own in (({MARKER_KEY: marker}, False), (validated_marker("traces", 2), True)):
        with pq.ParquetWriter(parts[0], table.schema) as writer:
            writer.write_table(table)
            writer.add_key_value_metadata(footer)
        assert seal(parts[0]) is own  # (the copied marker holds no placeholder to seal)
        assert _own_traces(parts[0]) is own  # the rows as many either way
        merged = tmp_path / "merged2.jsonl"
        code, _, err = run_cli(["ingest", "generic", *map(str, parts), "-o", str(merged)], capsys)
        assert code == 2
        assert err.startswith(f"failcodes: error: {parts[0]}:2, field 'claim_id': ")
        assert not merged.exists()


def test_a_column_named_unlike_the_raters_read_as_one_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``rater_a,rater_b,rater_c,year`` with year 1..3: a fourth rater, said only in the list.

    Fleiss over the four columns 0.407, over the three raters 0.486 (statsmodels'
    fleiss_kappa of both; by hand for three: P = 4/6, p = 4/18, 7/18, 7/18, Pe = 114/324,
    (2/3 - 114/324) / (1 - 114/324) = 0.4857). The first line names the column read as a
    rater though named unlike the others, with the --raters that leaves it out.
    """
    from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli

    table = ratings_file(
        tmp_path,
        "item,rater_a,rater_b,rater_c,year\n1,1,2,1,1\n2,2,2,2,2\n3,3,3,3,1\n4,1,1,2,3\n"
        "5,2,3,2,2\n6,3,3,3,3\n",
    )
    code, stdout, _ = run_cli(["agree", str(table), "--stat", "fleiss", *AGREE_JSON], capsys)
    assert code == 0
    [row] = json.loads(stdout)
    assert row["value"] == pytest.approx(0.4074074)
    assert (
        "; read as raters though not named like the others (their values are ratings): year (a "
        "covariate? --raters rater_a,rater_b,rater_c leaves it out); "
    ) in row["notes"][0]
    given = ["--raters", "rater_a,rater_b,rater_c", "--stat", "fleiss", *AGREE_JSON]
    code, stdout, _ = run_cli(["agree", str(table), *given], capsys)
    [row] = json.loads(stdout)
    assert row["value"] == pytest.approx(0.4857143)
    assert "not named like the others" not in row["notes"][0]
