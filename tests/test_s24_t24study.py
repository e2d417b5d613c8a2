"""Session 24, helper t24study: an outside study of three systems answering the same questions.

The design the tests did not use: per-system claim ids over shared sentence labels, two
retrievers of which one (bm25) serves two systems (A and B, whose claims of a sentence read
alike, so their passages are the same units), the other (dense) one system (C).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

#: refuted claims per system; the labels' errors are q1s1 and q2s1
_REFUTED = {"A": {"q1s1", "q2s2"}, "B": set(), "C": {"q1s1", "q1s2"}}
_ERRORS = {"q1s1", "q2s1"}
_SENTENCES = ["q1s1", "q1s2", "q2s1", "q2s2"]
_RETRIEVER = {"A": "bm25", "B": "bm25", "C": "dense"}
_VERIFIER = {"A": "gpt", "B": "gpt", "C": "llama"}

_STUDY = """name = "t24study"
codebook = "medical-fact-check.v1.yaml"

[[datasets]]
name = "d"
{ingests}
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]

[[datasets.pipelines]]
system = "*"
evidence = "retrieved"

[metrics]
mappings = ["refuted"]
bootstrap = 0

[judge]
judge = "offline"
"""


def _trace(system: str, sid: str) -> dict[str, object]:
    pool = _RETRIEVER[system]
    return {
        "system": system,
        "question_id": sid[:2],
        "sentence_id": sid,
        "claim_id": f"{system.lower()}-{sid}",  # per-system claim ids
        # A and B read the sentence alike (one claim text); C words it its own way
        "claim": f"drug {sid} lowers blood pressure" + (" in adults" if system == "C" else ""),
        "verdict": "refuted" if sid in _REFUTED[system] else "supported",
        "reasoning": f"The passages about drug {sid} decide it.",
        "verifier": _VERIFIER[system],
        "retriever": pool,
        "passages": [
            {"passage_id": f"{pool}-{sid}-{k}", "rank": k, "text": f"Drug {sid} trial {k}."}
            for k in (1, 2)
        ],
    }


def _study(root: Path) -> Path:
    from failcodes.codebook import bundled_dir

    root.mkdir()
    for system in _REFUTED:
        rows = [_trace(system, sid) for sid in _SENTENCES]
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = [
        {"sentence_id": sid, "question_id": sid[:2], "has_error": sid in _ERRORS}
        for sid in _SENTENCES
    ]
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    ingests = "".join(
        f'\n[[datasets.ingest]]\nadapter = "generic"\npaths = ["{s}.jsonl"]\n' for s in _REFUTED
    )
    (root / "failcodes.toml").write_text(_STUDY.format(ingests=ingests))
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


def test_a_retriever_or_verifier_column_pooling_systems_says_so_in_the_study_report(
    tmp_path: Path,
) -> None:
    # Disagreements by hand (refuted = flagged; errors q1s1, q2s1):
    #   A: q1s1 TP, q1s2 TN, q2s1 FN, q2s2 FP  -> FN q2s1, FP q2s2
    #   B: nothing refuted                     -> FN q1s1, FN q2s1
    #   C: q1s1 TP, q1s2 FP, q2s1 FN, q2s2 TN  -> FP q1s2, FN q2s1
    # Table 8's bm25 column holds A's and B's passages, Table 9's gpt column A's and B's
    # reasoning: each pools two systems. pooled_caption said so, but the study report tallies
    # the coded tables without their system column, so no caption ever did.
    import failcodes

    study = _study(tmp_path / "st")
    failcodes.run_study(study, say=lambda _line: None)
    tables = study / "report" / "tables"
    quality = (tables / "retrieval_quality.md").read_text().splitlines()[0]
    assert "a retriever's column pools the systems that share it (bm25: A, B)" in quality
    # rows (claims x 2 passages): A 2 claims, B 2 -> bm25 8; C 2 -> dense 4. Distinct
    # (claim, passage) units (session 25: Table 8 counts each unit of a retriever once): A's
    # q2s1 claim and passages are B's q2s1 ones (one text, one unit): bm25 8 - 2 = 6
    assert "| bm25 (n=6) | dense (n=4) |" in (tables / "retrieval_quality.md").read_text()
    steps = (tables / "reasoning_steps.md").read_text().splitlines()[0]
    assert "a verifier's column pools the systems that share it (gpt: A, B)" in steps


def test_a_data_set_per_system_gives_table_8_a_column_per_retriever(tmp_path: Path) -> None:
    # The same three systems as above, each its own data set (A, B, C) with the same labels
    # file: one set of sentences split by system. Seed 001's Table 8 has a column per
    # retriever; main gave one per data set and retriever, 'A/bm25 (n=4)' and 'B/bm25
    # (n=4)', naming the shared retriever by its systems. Now bm25 is one column over A's
    # and B's rows (4 + 4 as by hand above, 6 distinct units: q2s1's 2 are both A's and B's,
    # counted once across the two data sets, session 25) and dense C's (n=4), the columns of
    # the one-data-set study; Table 9's gpt pools A and B (2 + 2 claims), llama is C's 2.
    import failcodes

    study = _study(tmp_path / "st")
    parts = []
    for system in _REFUTED:
        parts.append(
            f'[[datasets]]\nname = "{system}"\n\n[[datasets.ingest]]\nadapter = "generic"\n'
            f'paths = ["{system}.jsonl"]\n\n[[datasets.ingest]]\nadapter = "generic-labels"\n'
            'paths = ["labels.jsonl"]\n\n[[datasets.pipelines]]\nsystem = "*"\n'
            'evidence = "retrieved"\n'
        )
    text = (study / "failcodes.toml").read_text()
    head, tail = text.split("[[datasets]]", 1)
    (study / "failcodes.toml").write_text(head + "\n".join(parts) + tail[tail.index("[metrics]") :])
    failcodes.run_study(study, say=lambda _line: None)
    tables = study / "report" / "tables"
    quality = (tables / "retrieval_quality.md").read_text()
    assert "| bm25 (n=6) | dense (n=4) |" in quality
    assert "a retriever's column pools the systems that share it (bm25: A, B)" in quality
    assert "| gpt (n=4) | llama (n=2) |" in (tables / "reasoning_steps.md").read_text()
    page = (study / "report" / "index.html").read_text()
    assert "data sets A, B, C hold the same labels (one set of sentences, a data set per " in page


def test_the_alias_note_names_the_input_file_it_is_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two systems' files, each with verdict words the default aliases read: gpt's 'NEI' (2)
    # and 'Supports' (1), claude's JSON true/false (2). main pooled them into one note naming
    # no file ("'nei' as no_evidence (2), 'supports' as supported (1)" and "2 verdict(s)
    # true/false"), and a study, which ingests each file in a step of its own, printed three
    # notes alike ("note: verdicts read by the default aliases: 'nei' as no_evidence (8)")
    # that said nothing of which input they were about.
    from tests.cli_helpers import run_cli

    def row(system: str, sid: str, verdict: object) -> str:
        claim = {"claim_id": f"{system[0]}-{sid}", "claim": f"claim {sid}", "verdict": verdict}
        ids = {"system": system, "question_id": "q1", "sentence_id": sid}
        return json.dumps(ids | claim) + "\n"

    gpt = tmp_path / "gpt.jsonl"
    gpt.write_text(row("gpt", "s1", "NEI") + row("gpt", "s2", "nei") + row("gpt", "s3", "Supports"))
    claude = tmp_path / "claude.jsonl"
    claude.write_text(row("claude", "s1", True) + row("claude", "s2", False))
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(gpt), str(claude), "-o", str(out)], capsys)
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: {gpt}: verdicts read by the default aliases: 'nei' as no_evidence (2), "
        "'supports' as supported (1); if one means otherwise, give --alias WORD=CANONICAL",
        f"note: {claude}: 2 verdict(s) true/false read as supported/refuted (true: the claim "
        "holds); if true marks an error, give --alias true=refuted --alias false=supported",
    ]


def test_an_unknown_rater_column_beside_a_label_rule_says_how_to_leave_it_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A labels sheet with two raters and an adjudicated column, the rule on the adjudicated
    # one: the raters' columns were refused "unknown field (also rater_b) (rename foreign
    # fields with --map FOREIGN=ours)": they are not to be renamed but left out, and the way
    # (--map rater_a=) went unsaid (a study tried `option = ["unmapped=drop"]`, which
    # generic-labels refuses). Taken: 2 labels, q1s1 an error.
    from tests.cli_helpers import run_cli

    sheet = tmp_path / "labels.csv"
    sheet.write_text(
        "question_id,sentence_id,rater_a,rater_b,majority\nq1,q1s1,error,ok,error\n"
        "q1,q1s2,ok,ok,ok\n"
    )
    out = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(sheet), "-o", str(out)]
    code, _, err = run_cli([*args, "--label-rule", "majority = error -> error"], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {sheet}:2, field 'rater_a': unknown field (also rater_b) (rename "
        "foreign fields with --map FOREIGN=ours, leave one out with --map FOREIGN=)"
    )
    rule = ["--label-rule", "majority = error -> error", "--map", "rater_a=", "--map", "rater_b="]
    code, _, err = run_cli([*args, *rule], capsys)
    assert code == 0, err
    labels = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(x["sentence_id"], x["has_error"]) for x in labels] == [("q1s1", True), ("q1s2", False)]


def test_the_run_box_names_the_files_tables_8_9_and_the_attribution_come_from(
    tmp_path: Path,
) -> None:
    # The run box's 'Input files' (path and sha256) named the metrics, the traces, an
    # agreement file, reviews and plans, but never attribution/d/per_passage.csv,
    # per_trace.csv or attribution.csv, from which Tables 8-9 and the attribution summary
    # are read: those numbers' provenance went unsaid. Each file is named once, with the
    # sha256 of its bytes.
    import hashlib
    import re

    import failcodes

    study = _study(tmp_path / "st")
    failcodes.run_study(study, say=lambda _line: None)
    page = (study / "report" / "index.html").read_text()
    for name in ("per_passage.csv", "per_trace.csv", "attribution.csv"):
        digest = hashlib.sha256((study / "attribution" / "d" / name).read_bytes()).hexdigest()
        named = re.findall(rf"attribution/d/{re.escape(name)}\W.{{0,60}}?sha256 (\w{{64}})", page)
        assert named == [digest], name
