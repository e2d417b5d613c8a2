"""Session 29 (t29red): new outside shapes at the command line, each counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli, write_csv

#: Four sentences, one claim each, one system A: s2 and s4 refuted, s1 and s3 supported.
_SENTENCES = [
    ["q1", "q1:s1", "Aspirin lowers fever.", "supported"],
    ["q1", "q1:s2", "Aspirin cures cancer.", "refuted"],
    ["q2", "q2:s1", "Ibuprofen is an NSAID.", "supported"],
    ["q2", "q2:s2", "Ibuprofen is safe in late pregnancy.", "refuted"],
]


def _traces(folder: Path) -> Path:
    return write_csv(
        folder / "traces.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "sentence", "verdict"],
        [["A", q, s, f"{s}:c1", text, text, v] for q, s, text, v in _SENTENCES],
    )


def _refuted_counts(
    tmp_path: Path, labels: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, tuple[int, int, int, int]]:
    """``metrics -m refuted`` of system A's traces of :data:`_SENTENCES` against ``labels``."""
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(_traces(tmp_path)), "--labels", str(labels), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    return metrics_counts(stdout, "refuted")


@pytest.mark.parametrize(
    "column", ["clinician_agrees", "is_safe", "acceptable", "expert_approved", "ok"]
)
def test_a_has_error_column_named_as_the_clinician_accepting_the_sentence_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    # The clinician agrees with s1 and s3 (true) and not with s2 and s4 (false): by hand the
    # errors are s2 and s4, both refuted, so under -m refuted TP 2, TN 2. main read true as
    # has_error: 2 error labels on s1, s3, metrics TP 0, FP 2, FN 2, TN 0, exit 0.
    table = write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", column],
        [[q, s, "true" if v == "supported" else "false"] for q, s, _, v in _SENTENCES],
    )
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(table), "-o", str(out), "--map", f"{column}=has_error"],
        capsys,
    )
    assert code == 2 and not out.exists()
    assert f"--map {column}=has_error: the column's name says true means correct" in err
    assert len(err.strip().splitlines()) == 1
    # the way it names reads it right: TP 2, TN 2
    rule = f"{column} = false -> error"
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(table), "-o", str(out), "--label-rule", rule], capsys
    )
    assert code == 0, err
    assert _refuted_counts(tmp_path, out, capsys) == {"A": (2, 0, 0, 2)}
    # a name whose true marks the error (a concern, a negation) is still read as has_error
    concern = tmp_path / "c.csv"
    concern.write_text(table.read_text().replace(column, "not_safe"), encoding="utf-8")
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(concern), "-o", str(out), "--map", "not_safe=has_error"],
        capsys,
    )
    assert code == 0, err
    assert out.read_text().count('"has_error":true') == 2  # s1, s3: read as given


def test_a_system_name_with_a_cyrillic_letter_is_refused_as_written_two_ways(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # gpt-4o's rows of q2 name it 'gpt-4\u043e' (CYRILLIC SMALL LETTER O): one system by eye.
    # By hand, gpt-4o: q1:s1 TN, q1:s2 TP, q2:s1 TN, q2:s2 FN (supported, wrong). main
    # scored 3 systems, the spurious 'gpt-4\u043e' on every shared label: TP 0, FN 2, TN 2,
    # and gpt-4o's q2 sentences as sentences it made no claim for, exit 0.
    cyr = "gpt-4\u043e"
    rows = [
        ["gpt-4o", "q1", "q1:s1", "Aspirin lowers fever.", "supported", "ok"],
        ["gpt-4o", "q1", "q1:s2", "Aspirin cures cancer.", "refuted", "wrong"],
        [cyr, "q2", "q2:s1", "Ibuprofen is an NSAID.", "supported", "ok"],
        [cyr, "q2", "q2:s2", "Ibuprofen is safe in late pregnancy.", "supported", "wrong"],
    ]
    table = write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim", "verdict", "label"],
        rows,
    )
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(labels),
            "--label-rule", "label = wrong -> error", "--option", "ids=line"]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 2 and not out.exists() and not labels.exists()
    assert f"t.csv:4, field 'system': system {cyr!r} is 'gpt-4o'" in err
    assert len(err.strip().splitlines()) == 1
    # written one way: TP 1, FN 1, TN 2 (the hand count above)
    for r in rows:
        r[0] = "gpt-4o"
    write_csv(table, ["system", "question_id", "sentence_id", "claim", "verdict", "label"], rows)
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"gpt-4o": (1, 0, 1, 2)}


def test_a_label_id_with_a_cyrillic_letter_is_refused_naming_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'q1:\u04552' (CYRILLIC SMALL LETTER DZE for s) looks like q1:s2. By hand, labels s2 and
    # q2:s2 errors: TP 2, TN 2. main read it as a sentence system A made no claim for
    # (labelled error: FN) and left q1:s2 unlabelled: TP 1, FN 1, TN 2, exit 0.
    labels = write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "false"], ["q1", "q1:\u04552", "true"], ["q2", "q2:s1", "false"],
         ["q2", "q2:s2", "true"]],
    )  # fmt: skip
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(_traces(tmp_path)), "--labels", str(labels), "-m",
         "refuted", "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert (code, stdout) == (2, "")
    assert "l.csv:3, field 'sentence_id': no trace has sentence_id" in err
    assert "U+0455" in err


def test_labels_that_list_the_errors_alone_are_said_beside_their_coverage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Six sentences, system A refutes every one; the clinicians listed their 2 errors
    # (q1:s2, q2:s2) and nothing else. Read as a subset: TP 2, P 100%, F1 100%, accuracy
    # 100%, with "labels cover 2 of 6 sentences ... (unlabelled)" alone (main). By hand, the 4
    # unlisted sentences correct: TP 2, FP 4, P 2/6 = 33.3%, F1 2*(1/3)*1/(4/3) = 50%.
    rows = [
        ["A", q, f"{q}:s{i}", f"{q}:s{i}:c1", f"Claim {q} {i}.", f"Claim {q} {i}.", "refuted"]
        for q in ("q1", "q2")
        for i in (1, 2, 3)
    ]
    header = ["system", "question_id", "sentence_id", "claim_id", "claim", "sentence", "verdict"]
    traces = write_csv(tmp_path / "t.csv", header, rows)
    listed = write_csv(
        tmp_path / "errors.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s2", "true"], ["q2", "q2:s2", "true"]],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(listed), "-m", "refuted"], capsys
    )
    assert code == 0, err
    second = stdout.splitlines()[1]
    assert second.startswith("labels cover 2 of 6 sentences; the other 4 are left out")
    assert "no label counted says a sentence is correct (every one is an error)" in second
    assert "then the other 4 are correct" in second
    out = tmp_path / "d.jsonl"
    code, stdout, err = run_cli(
        ["disagreements", "--traces", str(traces), "--labels", str(listed), "-m", "refuted",
         "-o", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "no label counted says a sentence is correct" in stdout
    # every sentence labelled: the hand count, and no such clause
    full = write_csv(
        tmp_path / "full.csv",
        ["question_id", "sentence_id", "has_error"],
        [[r[1], r[2], "true" if r[2].endswith("s2") else "false"] for r in rows],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(full), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (2, 4, 0, 0)}


def test_a_verdict_column_of_probabilities_names_the_threshold_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An NLI entailment probability given as the verdict: main named the alias way alone (one
    # --alias per score). The option it names reads them: 0.91 and 0.83 at or above 0.5 are
    # supported, 0.12 and 0.40 no_evidence.
    table = write_csv(
        tmp_path / "p.csv",
        ["question_id", "sentence_id", "claim", "verdict"],
        [
            [q, s, text, p]
            for (q, s, text, _), p in zip(_SENTENCES, ["0.91", "0.12", "0.83", ".4"], strict=True)
        ],
    )
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--system", "A"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and not out.exists()
    assert "p.csv:2, field 'verdict': unknown verdict '0.91'" in err
    assert "a number between 0 and 1: a score" in err
    assert "--option verdict_threshold=0.5" in err
    code, _, err = run_cli([*args, "--option", "verdict_threshold=0.5"], capsys)
    assert code == 0, err
    verdicts = [line.split('"verdict":"')[1].split('"')[0] for line in out.read_text().splitlines()]
    assert verdicts == ["supported", "no_evidence", "supported", "no_evidence"]


def test_a_claim_tables_missing_sentence_numbers_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A claim table (a row per claim) with the clinicians' sentence label merged in: q1:s2
    # and q2:s3 had no claims, so no row, and their labels (both errors) are nowhere. main:
    # TP 1, TN 4, recall 1/1, with no word. By hand, with the two claimless error sentences
    # labelled (seed rule: a labelled sentence without claims is no error flagged): q1:s1 TN,
    # q1:s2 FN, q1:s3 TN, q2:s1 TN, q2:s2 TP, q2:s3 FN, q2:s4 TN -> TP 1, FN 2, TN 4, R 1/3.
    table = write_csv(
        tmp_path / "claims.csv",
        ["question_id", "sentence_id", "claim", "verdict", "label"],
        [
            ["q1", "q1:s1", "Aspirin lowers fever.", "supported", "ok"],
            ["q1", "q1:s3", "Aspirin thins blood.", "supported", "ok"],
            ["q2", "q2:s1", "Ibuprofen is an NSAID.", "supported", "ok"],
            ["q2", "q2:s2", "Ibuprofen is safe in late pregnancy.", "refuted", "wrong"],
            ["q2", "q2:s4", "Ibuprofen reduces pain.", "supported", "ok"],
        ],
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
         "--label-rule", "label = wrong -> error", "--system", "A"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert (
        "note: 2 sentence number(s) missing between labelled sentences of 2 question(s) "
        "(first: 'q1:s2')" in err
    )
    # the way it names: every sentence's label apart
    apart = write_csv(
        tmp_path / "sentences.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "false"], ["q1", "q1:s2", "true"], ["q1", "q1:s3", "false"],
         ["q2", "q2:s1", "false"], ["q2", "q2:s2", "true"], ["q2", "q2:s3", "true"],
         ["q2", "q2:s4", "false"]],
    )  # fmt: skip
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(apart), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (1, 0, 2, 4)}


@pytest.mark.parametrize(
    ("orient", "doc"),
    [
        ("columns", {"claim": {"0": "a", "1": "b"}, "verdict": {"0": "supported", "1": "refuted"}}),
        (
            "index",
            {"0": {"claim": "a", "verdict": "supported"}, "1": {"claim": "b", "verdict": "x"}},
        ),
        ("split", {"columns": ["claim", "verdict"], "index": [0, 1], "data": [["a", "supported"]]}),
    ],
)
def test_a_json_table_pandas_wrote_column_by_column_names_orient_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], orient: str, doc: dict[str, object]
) -> None:
    # df.to_json('x.json') writes orient='columns' by default: main read it as one record and
    # told the user to flatten it (--map verdict.KEY=verdict: one row's verdict) or to name
    # --option rows, neither of which reads the table. The way that does: orient='records'.
    import json

    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(path), "-o", str(out), "--system", "A"], capsys
    )
    assert code == 2 and not out.exists()
    assert f"x.json:1: a table as pandas' DataFrame.to_json writes it with orient='{orient}'" in err
    assert "df.to_json(PATH, orient='records')" in err
    assert len(err.strip().splitlines()) == 1
