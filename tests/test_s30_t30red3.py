"""Session 30 (t30red3): whole studies on outside shapes, the report page checked by hand."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, small_study


def _page(root: Path) -> str:
    text = (root / "report" / "index.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text)))


#: One data set, traces and labels from two files; the claim level is the study's.
_CLAIM_STUDY = """
[[datasets]]
name = "d"
[[datasets.ingest]]
adapter = "generic"
paths = ["t.csv"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["l.csv"]
[[datasets.pipelines]]
system = "*"
evidence = "none"
"""


def test_a_claim_level_study_says_a_sentence_error_no_claim_label_carries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # t30red's shape 6 in a study (its shape 15): q1:s1 is labelled an error while each of
    # its two claims is labelled no error. By hand, claim level: q1:s1:c1, c2 take their
    # own no-error labels, q1:s2:c1 its sentence's error, q2:s1:c1 its sentence's none.
    # A (supported, supported, refuted, supported): TP 1, FP 0, FN 0, TN 3 (recall 1/1);
    # B refutes q2:s1:c1 too: TP 1, FP 1, FN 0, TN 2. The clinician's error in q1:s1 counts
    # nowhere (sentence level: A TP 1, FN 1, TN 1, recall 1/2). main's report page said
    # nothing of it (run's stderr alone, its way "--level sentence", a CLI option).
    study = small_study(tmp_path, capsys, "hidden", _CLAIM_STUDY)
    text = study.read_text(encoding="utf-8")
    study.write_text(text.replace("bootstrap = 0\n", 'bootstrap = 0\nlevel = "claim"\n'))
    sent = "Aspirin lowers fever and cures cancer."
    rows = [
        ("q1", "q1:s1", "q1:s1:c1", "Aspirin lowers fever.", sent, "supported", "supported"),
        ("q1", "q1:s1", "q1:s1:c2", "Aspirin cures cancer.", sent, "supported", "supported"),
        ("q1", "q1:s2", "q1:s2:c1", "Take it daily.", "Take it daily.", "refuted", "refuted"),
        ("q2", "q2:s1", "q2:s1:c1", "It is an NSAID.", "It is an NSAID.", "supported", "refuted"),
    ]
    (tmp_path / "t.csv").write_text(
        "system,question_id,sentence_id,claim_id,claim,sentence,verdict\n"
        + "".join(
            f"{s},{q},{sid},{cid},{claim},{sentence},{a if s == 'A' else b}\n"
            for s in ("A", "B")
            for q, sid, cid, claim, sentence, a, b in rows
        ),
        encoding="utf-8",
    )
    (tmp_path / "l.csv").write_text(
        "question_id,sentence_id,claim_id,has_error\n"
        "q1,q1:s1,,true\nq1,q1:s1,q1:s1:c1,false\nq1,q1:s1,q1:s1:c2,false\n"
        "q1,q1:s2,,true\nq2,q2:s1,,false\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    prf = (tmp_path / "report" / "tables" / "prf_claim.md").read_text(encoding="utf-8")
    assert "| A | refuted | 100.0 | 100.0 | 100.0 | 1 | 0 | 0 | 3 |" in prf
    assert "| B | refuted | 50.0 | 100.0 | 66.7 | 1 | 1 | 0 | 2 |" in prf  # P 1/2, F1 2/3
    clause = "1 sentence(s) labelled an error whose claim labels all say no error (first 'q1:s1')"
    study_way = '--level sentence counts it (in a study: [metrics] level = "sentence")'
    assert clause in err and study_way in err
    page = _page(tmp_path)
    assert f"Claim level, A, B: {clause}" in page
    assert study_way in page


#: Seed 003's atomic fact-check shape, a system answering in Chinese: f1 a right fact (TRUE,
#: confirmed), f2 a wrong one the pipeline passed (TRUE, not confirmed: FN under refuted).
_ATOMIC_ZH = [
    {
        "system": "zh",
        "answer_id": "a1",
        "fact_id": "f1",
        "fact": "阿司匹林可降低早发型子痫前期风险。",
        "verdict": "TRUE",
        "human_confirms": True,
        "chunks": [{"chunk_id": "c1", "text": "低剂量阿司匹林降低了高危孕妇的早发型子痫前期。"}],
    },
    {
        "system": "zh",
        "answer_id": "a1",
        "fact_id": "f2",
        "fact": "叶酸应在怀孕后开始服用。",
        "verdict": "TRUE",
        "human_confirms": False,
        "error_category": "incorrect information",
        "chunks": [{"chunk_id": "c2", "text": "叶酸应在受孕前开始服用。"}],
    },
]


def test_the_offline_baseline_reads_a_chinese_passage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The heuristic read [a-z0-9] words alone: a Chinese claim had none, so its passage was
    # coded irrelevant / broader scope / neutral and, starting on no capital and ending on
    # '。' not '.', truncated; the FN went to retrieval. Read as character bigrams (v6), f2's
    # claim 叶酸应在怀孕后开始服用 has 10 bigrams, 6 of them in the passage (叶酸 酸应 应在 开始
    # 始服 服用; not 在怀 怀孕 孕后 后开): overlap 0.6 -> exact entity (>= 0.6), exact scope (no
    # number, no population word, >= 0.5), direct polarity (>= 0.5, no hedge), well chunked
    # (a caseless first letter, ends on '。'); no source: trust not assessable. Every assessed
    # dimension high -> verification (as its English twin "Folic acid is taken after
    # conception." / "Folic acid should be started before conception." is coded).
    import json

    study = small_study(
        tmp_path,
        capsys,
        "zh",
        '[[datasets]]\nname = "atomic"\n[[datasets.ingest]]\nadapter = "atomic"\n'
        'paths = ["facts.jsonl"]\nlabels = true\n[[datasets.pipelines]]\nsystem = "*"\n'
        'evidence = "retrieved"\n',
        judge='kinds = ["retrieval"]',
    )
    text = study.read_text(encoding="utf-8")
    study.write_text(text.replace("bootstrap = 0\n", 'bootstrap = 0\nlevel = "claim"\n'))
    (tmp_path / "facts.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _ATOMIC_ZH), encoding="utf-8"
    )
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    tables = tmp_path / "report" / "tables"
    prf = (tables / "prf_claim.md").read_text(encoding="utf-8")
    assert "| zh | refuted | – | 0.0 | – | 0 | 0 | 1 | 1 |" in prf
    quality = (tables / "retrieval_quality.md").read_text(encoding="utf-8")
    for row in (
        "| Entity match | Exact entity | 100.0 |",
        "| Scope | Exact scope | 100.0 |",
        "| Evidence polarity | Direct polarity | 100.0 |",
        "| Chunking | Well chunked | 100.0 |",
        "| Chunking | Truncated | 0.0 |",
    ):
        assert row in quality, quality
    summary = (tables / "attribution.md").read_text(encoding="utf-8")
    assert "| system | verification | total |" in summary  # no stage retrieval (main: 1)
    assert "| zh | 1 | 1 |" in summary


def test_runs_under_two_codebook_versions_are_refused_naming_each_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two data sets judged under medical-fact-check v1; the study file then names v2 and d1
    # alone is re-coded (failcodes recode STUDY --dataset d1) before a `report`: main's line
    # was 'annotations were made under different codebooks (medical-fact-check@1+...,
    # medical-fact-check@2+...)', naming no run folder and no way. The way named works:
    # `failcodes run` re-codes d2 and builds the report.
    sets = "".join(
        f'[[datasets]]\nname = "{d}"\n[[datasets.ingest]]\nadapter = "generic"\n'
        f'paths = ["{d}.csv"]\nlabels = true\nlabel_rule = "gold = incorrect -> error"\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n'
        for d in ("d1", "d2")
    )
    study = small_study(tmp_path, capsys, "versions", sets)
    for d in ("d1", "d2"):  # s1 an error A misses: one disagreement, its reasoning coded
        (tmp_path / f"{d}.csv").write_text(
            "question_id,sentence_id,claim,verdict,system,reasoning,gold\n"
            f"q1,s1,{d} claim one.,supported,A,Because one.,incorrect\n"
            f"q1,s2,{d} claim two.,supported,A,Because two.,correct\n",
            encoding="utf-8",
        )
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    assert run_cli(["init", str(tmp_path / "v2"), "--codebook-version", "2"], capsys)[0] == 0
    (tmp_path / "medical-fact-check.v2.yaml").write_bytes(
        (tmp_path / "v2" / "medical-fact-check.v2.yaml").read_bytes()
    )
    text = study.read_text(encoding="utf-8")
    study.write_text(
        re.sub(r"^codebook = .*$", 'codebook = "medical-fact-check.v2.yaml"', text, flags=re.M)
    )
    code, _, err = run_cli(["recode", str(tmp_path), "--dataset", "d1"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", str(tmp_path)], capsys)
    assert code == 2
    [line] = [x for x in err.splitlines() if "error" in x]
    assert "medical-fact-check@1+" in line and " in judge/d2/reasoning" in line
    assert "medical-fact-check@2+" in line and " in judge/d1/reasoning.v0002" in line
    assert "failcodes run STUDY plans failcodes recode" in line
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    assert (tmp_path / "judge" / "d2" / "reasoning.v0002").is_dir()


def test_two_data_sets_reusing_ids_are_not_said_to_overlap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two data sets, each numbering its questions q1.. and naming its system A (kept apart:
    # d1/A, d2/A). d1's s1 (an error) A passes: FN; d2's s1 (another sentence, no error) A
    # refutes: FP; s2 no error, passed (TN); s3 an error, refuted (TP). By hand: d1/A TP 1,
    # FP 0, FN 1, TN 1; d2/A TP 1, FP 1, FN 0, TN 1; attribution all = 2 disagreements.
    # main said "1 disagreement(s) have the system and ids of one in another data set
    # (overlapping data sets?)": an FN and an FP are never one disagreement (a pilot inside
    # the full set repeats label and verdict).
    sets = "".join(
        f'[[datasets]]\nname = "{d}"\n[[datasets.ingest]]\nadapter = "generic"\n'
        f'paths = ["{d}.csv"]\nlabels = true\nlabel_rule = "gold = incorrect -> error"\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n'
        for d in ("d1", "d2")
    )
    small_study(tmp_path, capsys, "reused", sets)
    rows = {"d1": ("supported", "incorrect"), "d2": ("refuted", "correct")}
    for d, (verdict, gold) in rows.items():
        (tmp_path / f"{d}.csv").write_text(
            "question_id,sentence_id,claim,verdict,system,reasoning,gold\n"
            f"q1,s1,{d} claim one.,{verdict},A,Because one.,{gold}\n"
            f"q1,s2,{d} claim two.,supported,A,Because two.,correct\n"
            f"q2,s3,{d} claim three.,refuted,A,Because three.,incorrect\n",
            encoding="utf-8",
        )
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    tables = tmp_path / "report" / "tables"
    prf = (tables / "prf_sentence.md").read_text(encoding="utf-8")
    assert "| d1/A | refuted | 100.0 | 50.0 | 66.7 | 1 | 0 | 1 | 1 |" in prf  # F1 2/3
    assert "| d2/A | refuted | 50.0 | 100.0 | 66.7 | 1 | 1 | 0 | 1 |" in prf
    summary = (tables / "attribution.md").read_text(encoding="utf-8")
    assert "| all | 2 | 2 |" in summary, summary
    assert "overlapping data sets" not in _page(tmp_path)


def test_an_empty_dominant_errors_table_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A system whose two disagreements' reasonings the baseline codes correct on every step
    # (each quotes its passage: complete selection, correct understanding, valid inference,
    # calibrated, consistent, grounded): Table 9's "All steps correct" is 100.0 over n = 2
    # and its dominant-errors table has no row. main showed the empty table under a caption
    # that said nothing of it (as if the build had failed).
    sets = (
        '[[datasets]]\nname = "d"\n[[datasets.ingest]]\nadapter = "generic"\n'
        'paths = ["d.csv"]\nlabels = true\nlabel_rule = "gold = incorrect -> error"\n'
        'passage_column = ["passage=wiki"]\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n'
    )
    small_study(tmp_path, capsys, "nonerror", sets)
    rows = [
        ("q1", "s1", "Aspirin prevents preeclampsia.", "supported", "incorrect",
         "Aspirin reduced preterm preeclampsia in an RCT."),
        ("q2", "s2", "Folic acid prevents neural tube defects.", "refuted", "correct",
         "Folic acid reduced neural tube defects by 70%."),
        ("q2", "s3", "Folic acid dose is 400 micrograms.", "supported", "correct",
         "The dose is 400 micrograms daily."),
    ]  # fmt: skip
    (tmp_path / "d.csv").write_text(
        "question_id,sentence_id,claim,verdict,system,retriever,reasoning,passage,gold\n"
        + "".join(f"{q},{s},{c},{v},M,bm25,Reasoning: {p},{p},{g}\n" for q, s, c, v, g, p in rows),
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    tables = tmp_path / "report" / "tables"
    steps = (tables / "reasoning_steps.md").read_text(encoding="utf-8")
    assert "| dimension | code | M (n=2) |" in steps  # FN s1, FP s2
    assert "|  | All steps correct | 100.0 |" in steps
    dominant = (tables / "reasoning_steps_dominant.md").read_text(encoding="utf-8")
    assert "none: the judge coded no unit with an error subcode" in dominant
    assert dominant.rstrip().endswith("| --- | --- | --- | --- | --- | --- |")  # no row
