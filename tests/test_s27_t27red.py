"""Session 27 (t27red): shapes an outside checker may bring, each counted by hand."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _contexts_csv(folder: Path, json_text: bool) -> Path:
    """Three claims with their retrieved contexts as a list column saved to CSV.

    pandas' ``to_csv`` writes a list cell as Python's text (``['a', "b's"]``); ``json.dumps``
    as JSON text. Claim 2 (an error the system calls supported) retrieved 2 contexts.
    """
    contexts = [
        ["Aspirin reduces fever.", "Aspirin's side effects"],
        ["Aspirin does not cure cancer.", "Cancer is treated by oncologists."],
        ["Ibuprofen is an NSAID."],
    ]
    rows = [
        ("q1", "aspirin lowers fever", "supported", "ok"),
        ("q1", "aspirin cures cancer", "supported", "wrong"),
        ("q2", "ibuprofen is an NSAID", "supported", "ok"),
    ]
    path = folder / "contexts.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["question_id", "claim", "retrieved_contexts", "verdict", "gold"])
        for (q, claim, verdict, gold), ctx in zip(rows, contexts, strict=True):
            w.writerow([q, claim, json.dumps(ctx) if json_text else repr(ctx), verdict, gold])
    return path


@pytest.mark.parametrize("json_text", [False, True])
def test_a_list_of_contexts_written_as_text_in_a_csv_is_one_passage_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], json_text: bool
) -> None:
    table = _contexts_csv(tmp_path, json_text)
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            "ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
            "--option", "ids=line", "--passage-column", "retrieved_contexts", "--system", "s",
            "--label-rule", "gold = wrong -> error", "--evidence", "retrieved",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    got = {
        t["claim_id"]: [p["text"] for p in t["passages"]]
        for t in map(json.loads, traces.read_text(encoding="utf-8").splitlines())
    }
    # by hand: each context its own passage, in the list's order (main: one passage a claim,
    # its text the list's literal "['Aspirin reduces fever.', ...]")
    assert got == {
        "L2": ["Aspirin reduces fever.", "Aspirin's side effects"],
        "L3": ["Aspirin does not cure cancer.", "Cancer is treated by oncologists."],
        "L4": ["Ibuprofen is an NSAID."],
    }
    # downstream: the one disagreement (L3, an error called supported: FN) is coded over its
    # 2 passages, so Table 8 holds 2 units (main: 1, the list's text)
    dis = tmp_path / "d.jsonl"
    code, _, err = run_cli(
        ["disagreements", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "-o", str(dis)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (record,) = map(json.loads, dis.read_text(encoding="utf-8").splitlines())
    (claim,) = record["claims"]
    assert [p["rank"] for p in claim["passages"]] == [1, 2]


def test_a_list_of_passage_objects_in_a_passage_column_names_the_passages_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "t.csv"
    cell = json.dumps([{"content": "Aspirin reduces fever.", "pmid": "1"}])
    with table.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [["claim", "docs", "verdict"], ["aspirin lowers fever", cell, "supported"]]
        )
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--option", "ids=line",
         "--passage-column", "docs", "--system", "s"],
        capsys,
    )  # fmt: skip
    # main: one passage whose text was the JSON of the objects, exit 0
    assert code == 2
    assert "t.csv:2, field 'docs'" in err and "--map docs=passages" in err
    assert not out.exists()


def test_a_pandas_list_of_passage_objects_is_read_by_the_passages_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "t.csv"
    cell = repr([{"content": "Aspirin reduces fever.", "pmid": "1"}, {"content": "x", "pmid": "2"}])
    with table.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [["claim", "docs", "verdict"], ["aspirin lowers fever", cell, "supported"]]
        )
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--option", "ids=line",
         "--map", "docs=passages", "--map", "content=text", "--map", "pmid=passage_id",
         "--system", "s"],
        capsys,
    )  # fmt: skip
    # main: refused as "a passages cell holds a JSON list" (pandas writes Python's text)
    assert code == 0, err
    (trace,) = map(json.loads, out.read_text(encoding="utf-8").splitlines())
    assert [(p["passage_id"], p["rank"], p["text"]) for p in trace["passages"]] == [
        ("1", 1, "Aspirin reduces fever."),
        ("2", 2, "x"),
    ]


def _claim_table(folder: Path) -> Path:
    """Question, sentence text, claim, verdict and the sentence's label; no id column.

    q1's first sentence holds two claims (one refuted): 3 sentences, 4 claims.
    """
    path = folder / "claims.csv"
    path.write_text(
        "question_id,sentence,claim,verdict,sentence_label\n"
        "q1,Aspirin cures cancer and lowers fever.,aspirin cures cancer,refuted,wrong\n"
        "q1,Aspirin cures cancer and lowers fever.,aspirin lowers fever,supported,wrong\n"
        "q1,It is cheap.,aspirin is cheap,supported,ok\n"
        "q2,Ibuprofen is safe.,ibuprofen is safe,supported,ok\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("ids", ["line", "claim"])
def test_a_sentences_claims_given_no_sentence_id_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ids: str
) -> None:
    table = _claim_table(tmp_path)
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
         "--system", "s", "--option", f"ids={ids}",
         "--label-rule", "sentence_label = wrong -> error"],
        capsys,
    )  # fmt: skip
    # main: each claim a sentence of its own, the first sentence counted twice: metrics n 4,
    # TP 1, FN 1, TN 2 at exit 0 (by hand, 3 sentences: TP 1, TN 2)
    assert code == 2, err
    assert err.count("\n") == 1
    assert "claims.csv:3, field 'sentence'" in err and "at line 2 too" in err
    assert not traces.exists() and not labels.exists()
    # the way it names: the sentence text as its id, per question
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
         "--system", "s", "--option", "ids=claim", "--option", "sentence_ids=question",
         "--map", "sentence=sentence", "--map", "sentence=sentence_id",
         "--option", "label_level=sentence",
         "--label-rule", "sentence_label = wrong -> error"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "--format", "json", "--bootstrap", "0"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (row,) = json.loads(out)
    # by hand: sentence 1 (error; its claim 'aspirin cures cancer' refuted) TP; 'It is
    # cheap.' and 'Ibuprofen is safe.' (no error, supported) TN
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (3, 1, 0, 0, 2)


def test_a_row_per_passage_under_ids_line_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long table, one row per retrieved passage, the claim's verdict on each row."""
    table = tmp_path / "pairs.csv"
    table.write_text(
        "question_id,claim,passage,verdict,label\n"
        "q1,aspirin cures cancer,Aspirin does not cure cancer.,supported,wrong\n"
        "q1,aspirin cures cancer,Aspirin is an NSAID.,supported,wrong\n"
        "q1,aspirin cures cancer,Cancer treatment overview.,supported,wrong\n"
        "q1,aspirin lowers fever,Aspirin reduces fever.,supported,ok\n"
        "q2,ibuprofen is safe,Ibuprofen review.,refuted,ok\n",
        encoding="utf-8",
    )
    traces = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(traces), "--labels-out",
         str(tmp_path / "l.jsonl"), "--system", "s", "--option", "ids=line",
         "--passage-column", "passage", "--label-rule", "label = wrong -> error"],
        capsys,
    )  # fmt: skip
    # main: each row a sentence, the first claim counted 3 times: metrics n 5, FP 1, FN 3,
    # TN 1 at exit 0; by hand 3 claims: 'aspirin cures cancer' (wrong, supported) FN 1,
    # 'aspirin lowers fever' TN 1, 'ibuprofen is safe' (ok, refuted) FP 1
    assert code == 2, err
    assert err.count("\n") == 1
    assert "pairs.csv:3, field 'claim'" in err and "at line 2 too" in err
    assert "--map COLUMN=passages" in err
    assert not traces.exists()


def _two_sets_long(folder: Path) -> Path:
    """Two data sets numbering their items alike, one row per (item, rater)."""
    path = folder / "long.csv"
    path.write_text(
        "dataset,item_id,rater,label\n"
        "X,1,A,yes\nX,1,B,yes\nX,2,A,no\nX,2,B,yes\n"
        "Y,1,A,no\nY,1,B,no\nY,2,A,yes\nY,2,B,yes\n",
        encoding="utf-8",
    )
    return path


def test_a_long_tables_unit_id_of_two_data_sets_names_the_column_and_by(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _two_sets_long(tmp_path)
    args = ["agree", str(table), "--long", "rater,label", "--unit-column", "item_id",
            "--stat", "cohen", "--bootstrap", "0", "--format", "json"]  # fmt: skip
    code, out, err = run_cli(args, capsys)
    # main named one way alone, --sets ';', which joined X's item 1 and Y's into one code
    # set per rater: Cohen 0.000 on 2 units (by hand, the 4 items pooled give 0.500)
    assert (code, out) == (2, "")
    assert "long.csv:6, field 'label'" in err
    assert "lines 2 and 6 differ in column 'dataset'" in err and "--by dataset" in err
    code, out, err = run_cli([*args, "--by", "dataset"], capsys)
    assert code == 0, err
    # by hand: X: A yes,no; B yes,yes: p_o 1/2, p_e 1/2*1 + 1/2*0 = 1/2 -> kappa 0;
    # Y: A and B no,yes alike -> kappa 1
    got = {r["dataset"]: (r["n_units"], r["value"]) for r in json.loads(out)}
    assert got == {"X": (2, pytest.approx(0.0)), "Y": (2, pytest.approx(1.0))}


def test_a_long_table_given_a_unit_column_it_lacks_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _two_sets_long(tmp_path)
    code, out, err = run_cli(
        ["agree", str(table), "--long", "rater,label", "--unit-column", "dataset,item_id",
         "--stat", "cohen", "--bootstrap", "0"],
        capsys,
    )  # fmt: skip
    # main: KeyError: Index(['dataset,item_id']) with a traceback, exit 1
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "no unit column 'dataset,item_id'" in err


def test_a_sentence_row_with_no_claim_is_no_failed_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sentence table: each answer sentence a row, claim and verdict blank where none."""
    table = tmp_path / "sentences.csv"
    table.write_text(
        "question_id,sentence_id,sentence,claim,verdict,label\n"
        "q1,s1,Aspirin cures cancer.,aspirin cures cancer,refuted,wrong\n"
        "q1,s2,Take 20 pills daily.,,,wrong\n"
        "q1,s3,It is cheap.,aspirin is cheap,supported,ok\n"
        "q1,s4,See a doctor.,,,ok\n",
        encoding="utf-8",
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    base = ["ingest", "generic", str(table), "-o", str(traces), "--system", "s"]
    rule = ["--label-rule", "label = wrong -> error"]
    code, _, err = run_cli([*base, "--labels-out", str(labels), *rule], capsys)
    # main named --option no_verdict=drop ("if the verifier failed on this claim"), which
    # left both labelled sentences without claims out: n 2, TP 1, TN 1 at exit 0
    assert code == 2 and err.count("\n") == 1
    assert "sentences.csv:3, field 'verdict': no claim and no verdict" in err
    assert "ingest generic-labels" in err
    code, _, err = run_cli([*base, "--option", "no_verdict=drop", "--map", "label="], capsys)
    assert code == 0, err
    assert "2 of them give no claim either" in err
    # the way it names: the sentences' labels apart
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(table), "-o", str(labels), *rule,
         "--map", "claim=", "--map", "verdict="],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "--format", "json", "--bootstrap", "0"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (row,) = json.loads(out)
    # by hand (the seed's rule: a labelled sentence without claims is no error flagged): s1
    # TP, s2 (error, no claim) FN, s3 TN, s4 (no error, no claim) TN
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (4, 1, 0, 1, 2)
