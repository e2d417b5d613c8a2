"""Outside red-team of the data path, session 19 (t19red1): shapes the other tests do not use.

Each test states the input, what main gave before the fix, and what it gives now, with the
count made by hand beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_jsonl, write_text


def _rows(out: str) -> dict[tuple[str, str], dict[str, object]]:
    """metrics --format json rows keyed by (system, mapping)."""
    return {(r["system"], r["mapping"]): r for r in json.loads(out)}


#: Seed 003's atomic facts, one file per system, each numbering its facts f1, f2 (A's f1 a
#: confirmed FALSE: wrong; everything else correct).
_ATOMIC = {
    "A": [
        {
            "answer_id": "a1",
            "fact_id": "f1",
            "fact": "Aspirin cures flu.",
            "verdict": "FALSE",
            "human_confirms": True,
            "error_category": "hallucination",
        },
        {
            "answer_id": "a1",
            "fact_id": "f2",
            "fact": "Water is wet.",
            "verdict": "TRUE",
            "human_confirms": True,
        },
    ],
    "B": [
        {
            "answer_id": "a1",
            "fact_id": "f1",
            "fact": "Statins lower LDL.",
            "verdict": "TRUE",
            "human_confirms": True,
        },
        {
            "answer_id": "a1",
            "fact_id": "f2",
            "fact": "Salt is NaCl.",
            "verdict": "TRUE",
            "human_confirms": True,
        },
    ],
}


def test_atomic_files_per_system_with_one_fact_id_name_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each file ingested on its own (--system A, --system B) gives shared labels; merged as a
    # study merges them (duplicates=same), A's f1 (wrong) and B's f1 (correct) were refused
    # as "one target, two labels", naming no way through
    for name, facts in _ATOMIC.items():
        src = write_jsonl(tmp_path / f"{name}.jsonl", facts)
        code, _, err = run_cli(
            [
                "ingest",
                "atomic",
                str(src),
                "--system",
                name,
                "-o",
                str(tmp_path / f"t{name}.jsonl"),
                "--labels-out",
                str(tmp_path / f"l{name}.jsonl"),
            ],
            capsys,
        )
        assert code == 0, err
    merged = tmp_path / "labels.jsonl"
    code, _, err = run_cli(
        [
            "ingest",
            "generic-labels",
            str(tmp_path / "lA.jsonl"),
            str(tmp_path / "lB.jsonl"),
            "--option",
            "duplicates=same",
            "-o",
            str(merged),
        ],
        capsys,
    )
    assert code == 2
    assert not merged.exists()
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {tmp_path}/lB.jsonl:1, field 'claim_id': claim 'f1' is labelled "
        "has_error=false here, question 'a1', and has_error=true, question 'a1' at "
        f"{tmp_path}/lA.jsonl:1: one target, two labels; two systems' answers numbered alike "
        "(one file each)? each label must name its system: a system field or column in every "
        "record (atomic: the files ingested in one call; generic: --option label_scope=system; "
        "generic-labels: --system NAME, one call per file)"
    )
    # the way through: each fact names its system, the files ingested in one call
    paths = []
    for name, facts in _ATOMIC.items():
        paths.append(
            str(write_jsonl(tmp_path / f"s{name}.jsonl", [{"system": name, **f} for f in facts]))
        )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "atomic", *paths, "-o", str(traces), "--labels-out", str(labels)], capsys
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            "metrics",
            "--traces",
            str(traces),
            "--labels",
            str(labels),
            "--level",
            "claim",
            "--format",
            "json",
            "--bootstrap",
            "0",
        ],
        capsys,
    )
    assert code == 0, err
    rows = _rows(out)
    # by hand: A f1 FALSE (refuted) and wrong -> TP, f2 TRUE correct -> TN; B both TN
    assert [rows["A", "refuted"][k] for k in ("tp", "fp", "fn", "tn")] == [1, 0, 0, 1]
    assert [rows["B", "refuted"][k] for k in ("tp", "fp", "fn", "tn")] == [0, 0, 0, 2]


#: A system B none of whose traces has passages ([] , null or missing) or a retriever, and
#: none declares its evidence source; all refuted, every sentence correct (3 FPs).
_BARE: list[dict[str, object]] = [
    {
        "system": "B",
        "question_id": "q1",
        "sentence_id": "s1",
        "claim_id": "c1",
        "claim": "c1",
        "verdict": "refuted",
        "passages": [],
    },
    {
        "system": "B",
        "question_id": "q1",
        "sentence_id": "s2",
        "claim_id": "c2",
        "claim": "c2",
        "verdict": "refuted",
        "passages": None,
    },
    {
        "system": "B",
        "question_id": "q1",
        "sentence_id": "s3",
        "claim_id": "c3",
        "claim": "c3",
        "verdict": "refuted",
    },
]

_BARE_SAID = (
    "evidence not declared for B: read as closed-book (no passages or retriever on any "
    "trace), its disagreements blamed on verification, never on retrieval; a retrieval "
    "pipeline whose passages were not kept? declare it{via}: --evidence B=retrieved"
)


def test_a_system_without_any_passage_is_said_to_be_read_closed_book(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: attribute gave B verification 3, retrieval 0 (docs/attribution.md: closed-book
    # -> verification), and neither ingest, disagreements nor attribute said it had read B
    # as closed-book for want of passages: a retrieval pipeline whose passages were not kept
    # was blamed on its verifier with no word
    traces = write_jsonl(tmp_path / "t.jsonl", _BARE)
    labels = write_jsonl(
        tmp_path / "l.jsonl", [{"sentence_id": f"s{i}", "has_error": False} for i in (1, 2, 3)]
    )
    code, out, err = run_cli(
        ["ingest", "generic", str(traces), "-o", str(tmp_path / "i.jsonl")], capsys
    )
    assert code == 0, err
    assert out.splitlines()[0] == (
        f"wrote 3 traces -> {tmp_path}/i.jsonl (1 system(s): B 3; {_BARE_SAID.format(via='')})"
    )
    dis = tmp_path / "d.jsonl"
    code, out, err = run_cli(
        ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(dis)], capsys
    )
    assert code == 0, err
    assert out.splitlines()[0].endswith(_BARE_SAID.format(via=" when ingesting the traces"))
    code, out, err = run_cli(
        ["attribute", "--from", str(traces), "-o", str(tmp_path / "att")], capsys
    )
    assert code == 0, err
    assert err.splitlines()[0] == _BARE_SAID.format(via="")
    # the count itself is the rule's (closed-book -> verification): 3 of 3
    summary = (tmp_path / "att" / "attribution_summary.csv").read_text(encoding="utf-8")
    assert summary.splitlines()[1] == "B,0,3,0,0,0,3"  # retrieval 0, verification 3
    # declared, it is the retrieval's (no passages: step 4), and nothing is said
    code, out, err = run_cli(
        [
            "attribute",
            "--from",
            str(traces),
            "--evidence",
            "B=retrieved",
            "-o",
            str(tmp_path / "att2"),
        ],
        capsys,
    )
    assert code == 0, err
    assert "closed-book" not in err
    # by hand (docs/attribution.md step 4: a retrieval that found nothing): retrieval 3
    summary = (tmp_path / "att2" / "attribution_summary.csv").read_text(encoding="utf-8")
    assert summary.splitlines()[1] == "B,3,0,0,0,0,3"


#: One system's answers to query '41' of two sub-sets of the data (kiwi, bioasq), written in
#: the trace format by hand (not ingested): sentence '1' and '2' of each, one question id.
_TWO_TEXTS: list[dict[str, object]] = [
    {
        "system": "A",
        "question_id": "41",
        "sentence_id": sid,
        "claim_id": cid,
        "claim": text,
        "sentence": text,
        "verdict": verdict,
    }
    for sid, cid, text, verdict in (
        ("1", "k1", "Corpora are big.", "supported"),
        ("2", "k2", "They are unlabeled.", "refuted"),
        ("1", "b1", "Aspirin thins blood.", "supported"),
        ("2", "b2", "Statins lower LDL.", "supported"),
    )
]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
@pytest.mark.parametrize("command", ["metrics", "disagreements", "compare"])
def test_one_systems_sentence_id_given_two_texts_is_refused_by_the_analysis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, command: str
) -> None:
    # before: the two sentences '1' (and '2') were one, their claims pooled: against the
    # labels s1 error, s2 no error (one per id, no text), metrics gave n 2, FP 1, FN 1, exit 0;
    # by hand the file holds 4 sentences (n 4), which one id each cannot say: refused, as
    # ingest refuses it, at the first row giving the id its second text
    import pandas as pd

    def written(name: str, records: list[dict[str, object]]) -> Path:
        path = tmp_path / f"{name}{suffix}"
        if suffix == ".csv":
            pd.DataFrame(records).to_csv(path, index=False)
        elif suffix == ".parquet":
            pd.DataFrame(records).to_parquet(path, index=False)
        else:
            write_jsonl(path, records)
        return path

    traces = written("t", _TWO_TEXTS)
    # line of the first text of '1', of its second (CSV: a header above; Parquet: rows)
    first, at = (2, 4) if suffix == ".csv" else (1, 3)
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {"sentence_id": "1", "question_id": "41", "has_error": True},
            {"sentence_id": "2", "question_id": "41", "has_error": False},
        ],
    )
    out = tmp_path / ("out.jsonl" if command == "disagreements" else "out.json")
    args = {
        "metrics": ["metrics", "--bootstrap", "0", "-o", str(out)],
        "disagreements": ["disagreements", "-o", str(out)],
        "compare": ["compare"],  # (writes no file)
    }[command]
    # compare: a second system's file after A's
    more = ["--traces", str(written("b", [{**t, "system": "B"} for t in _TWO_TEXTS]))]
    code, _, err = run_cli(
        [
            *args,
            "--traces",
            str(traces),
            *(more if command == "compare" else []),
            "--labels",
            str(labels),
        ],
        capsys,
    )
    assert code == 2
    assert not out.exists()
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {traces}:{at}, field 'sentence': sentence '1' of question '41' "
        f"(system 'A') has another text here than at line {first}: two sentences with one id "
        "would be one, their claims pooled; give each sentence its own id (ids repeated across "
        "sub-sets of the data: put the sub-set into the ids)"
    )


def test_each_systems_own_text_under_one_sentence_id_is_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two systems, each its own answer numbered '1': a text per system is no pooling
    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {**_TWO_TEXTS[0], "system": "A"},
            {**_TWO_TEXTS[2], "system": "B"},
        ],
    )
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {"system": s, "sentence_id": "1", "question_id": "41", "has_error": e}
            for s, e in (("A", False), ("B", True))
        ],
    )
    code, out, err = run_cli(
        [
            "metrics",
            "--traces",
            str(traces),
            "--labels",
            str(labels),
            "--bootstrap",
            "0",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    rows = _rows(out)
    # by hand: A supported, no error -> TN; B supported, an error -> FN
    assert [rows["A", "refuted"][k] for k in ("tp", "fp", "fn", "tn")] == [0, 0, 0, 1]
    assert [rows["B", "refuted"][k] for k in ("tp", "fp", "fn", "tn")] == [0, 0, 1, 0]


#: Three claims, one labelled error (s2); sysA refuted s2 only, sysB refuted s1 only.
_WIDE = (
    "question_id,sentence_id,claim_id,claim,sysA_verdict,sysB_verdict\n"
    "q1,s1,c1,Aspirin thins blood.,supported,refuted\n"
    "q1,s2,c2,Statins raise LDL.,refuted,supported\n"
    "q1,s3,c3,Water is wet.,supported,supported\n"
)
_WIDE_LABELS = "question_id,sentence_id,has_error\nq1,s1,false\nq1,s2,true\nq1,s3,false\n"


def test_a_column_of_verdicts_per_system_names_verdict_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a wide table (one row per claim, sysA_verdict and sysB_verdict columns) was refused as
    # an unknown column, the line naming --map and unmapped=drop only (either reads one
    # system, or none); --verdict-column is the way, and its numbers are the hand count
    table = write_text(tmp_path / "wide.csv", _WIDE)
    labels = write_text(tmp_path / "labels.csv", _WIDE_LABELS)
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 2
    assert not out.exists()
    assert (
        err.strip()
        .splitlines()[-1]
        .endswith(
            "field 'sysA_verdict': unknown column (expected some of: system, question_id, "
            "sentence_id, claim_id, claim, sentence, verdict, raw_verdict, reasoning, verifier, "
            "retriever, passages, evidence_source; rename foreign columns with --map FOREIGN=ours, "
            "drop with --map FOREIGN= or all unmapped ones with --option unmapped=drop; a column "
            "of verdicts per system: --verdict-column COLUMN=SYSTEM for each)"
        )
    )
    code, _, err = run_cli(
        [
            "ingest",
            "generic",
            str(table),
            "--verdict-column",
            "sysA_verdict=A",
            "--verdict-column",
            "sysB_verdict=B",
            "-o",
            str(out),
        ],
        capsys,
    )
    assert code == 0, err
    code, text, err = run_cli(
        [
            "metrics",
            "--traces",
            str(out),
            "--labels",
            str(labels),
            "--bootstrap",
            "0",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    rows = _rows(text)
    # by hand: A s1 TN, s2 TP, s3 TN; B s1 FP, s2 FN, s3 TN
    assert [rows["A", "refuted"][k] for k in ("tp", "fp", "fn", "tn")] == [1, 0, 0, 2]
    assert [rows["B", "refuted"][k] for k in ("tp", "fp", "fn", "tn")] == [0, 1, 1, 1]


def test_one_file_per_system_without_a_system_field_names_ingest_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # sysA.jsonl and sysB.jsonl, the file name the system, no system field: refused as
    # "missing required field", naming no way through
    labels = write_text(tmp_path / "labels.csv", _WIDE_LABELS)
    files = {}
    for name, verdicts in (
        ("A", ("supported", "refuted", "supported")),
        ("B", ("refuted", "supported", "supported")),
    ):
        files[name] = write_jsonl(
            tmp_path / f"sys{name}.jsonl",
            [
                {
                    "question_id": "q1",
                    "sentence_id": f"s{i}",
                    "claim_id": f"c{i}",
                    "claim": "x",
                    "verdict": v,
                }
                for i, v in enumerate(verdicts, start=1)
            ],
        )
    code, _, err = run_cli(
        [
            "metrics",
            "--traces",
            str(files["A"]),
            "--traces",
            str(files["B"]),
            "--labels",
            str(labels),
        ],
        capsys,
    )
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {files['A']}:1, field 'system': missing required field (a file per "
        "system? name each: failcodes ingest generic FILE --system NAME)"
    )
    named = []
    for name, path in files.items():
        named += ["--traces", str(tmp_path / f"{name}.jsonl")]
        code, _, err = run_cli(
            ["ingest", "generic", str(path), "--system", name, "-o", named[-1]], capsys
        )
        assert code == 0, err
    code, text, err = run_cli(
        ["metrics", *named, "--labels", str(labels), "--bootstrap", "0", "--format", "json"],
        capsys,
    )
    assert code == 0, err
    rows = _rows(text)
    # by hand, as the wide table: A TP 1, TN 2; B FP 1, FN 1, TN 1
    assert [rows["A", "refuted"][k] for k in ("tp", "fp", "fn", "tn")] == [1, 0, 0, 2]
    assert [rows["B", "refuted"][k] for k in ("tp", "fp", "fn", "tn")] == [0, 1, 1, 1]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_one_sentence_written_with_a_trailing_space_on_a_later_claim_is_one_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    # as ingest reads it (01abac3: texts compared as spelling_key folds them): sentence '1'
    # given 'Aspirin thins blood.' and 'aspirin  thins blood. ' on its two claims is one
    # sentence, not refused
    import pandas as pd

    records = [
        {**_TWO_TEXTS[0], "sentence": "Aspirin thins blood.", "verdict": "refuted"},
        {**_TWO_TEXTS[2], "sentence_id": "1", "sentence": "aspirin  thins blood. "},
    ]
    traces = tmp_path / f"t{suffix}"
    if suffix == ".csv":
        pd.DataFrame(records).to_csv(traces, index=False)
    elif suffix == ".parquet":
        pd.DataFrame(records).to_parquet(traces, index=False)
    else:
        write_jsonl(traces, records)
    labels = write_jsonl(tmp_path / "l.jsonl", [{"sentence_id": "1", "has_error": True}])
    code, out, err = run_cli(
        [
            "metrics",
            "--traces",
            str(traces),
            "--labels",
            str(labels),
            "--bootstrap",
            "0",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    # by hand: one sentence, one claim refuted, an error -> TP 1
    assert [_rows(out)["A", "refuted"][k] for k in ("n", "tp", "fp", "fn", "tn")] == [1, 1, 0, 0, 0]


@pytest.mark.parametrize("truth", ["y_true", "true_label", "gt", "target"])
def test_compare_file_with_a_truth_column_named_the_ml_way_is_not_a_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], truth: str
) -> None:
    # a 0/1 table of two systems and the reference in a column scikit-learn's way (y_true),
    # or as agree already reads it (t18red2's truth names): compare took it for a third
    # system (systems (3): sysA, sysB, y_true; Cochran's Q and McNemar pairs against the
    # reference), exit 0, where gold, label or has_error are refused
    table = write_text(
        tmp_path / "c.csv",
        f"unit,sysA,sysB,{truth}\nu1,1,0,1\nu2,0,0,0\nu3,1,1,1\nu4,0,1,0\n",
    )
    code, out, err = run_cli(["compare", str(table), "--format", "json"], capsys)
    assert code == 2
    assert not out
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(
            f"failcodes: error: {table}:1, field '{truth}': column '{truth}' is named like the "
            f"reference or a consensus of the systems (names the reference), not a system: give "
            f"the reference with --truth {truth}"
        )
    )
    code, out, err = run_cli(["compare", str(table), "--truth", truth, "--format", "json"], capsys)
    assert code == 0, err
    f1 = next(t for t in json.loads(out)["tests"] if t["test"] == "permutation_f1")
    # by hand: sysA TP 2 (u1, u3), F1 1.0; sysB TP 1 (u3), FP 1 (u4), FN 1 (u1), F1 0.5
    assert f1["statistic"] == pytest.approx(0.5)
