"""Session 25 (t25units): Table 8 counts each (claim, passage) unit of a retriever once.

Systems sharing a retriever retrieve the same (claim, passage) unit (one judged content, one
unit id); the per-passage table holds a row of it per system. Seed 001's Table 8 counts each
retriever's passages once (200 per retriever, Section 6); the report's Table 8, its corrected
shares and ``attribute``'s retriever_all_high.csv counted the unit once per system (3 systems x
8 questions: bm25 n=81 over 69 distinct units). Each value below is counted by hand.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from failcodes import codebook as codebooks
from failcodes.codebook import UnitKind
from tests.cli_helpers import run_cli

HIGH = {
    "scope": "exact_scope",
    "trustworthy": "trustworthy_source",
    "evidence_polarity": "direct_polarity",
    "chunking": "well_chunked",
}
#: (system, retriever, unit, entity_match): A and B share bm25 (u3, u4 both retrieved; A
#: retrieved u2 for two claims of the same text), C's medcpt retrieved A's u1 too.
ROWS = [
    ("A", "bm25", "u1", "exact_entity"),
    ("A", "bm25", "u2", "partial_entity"),
    ("A", "bm25", "u3", "exact_entity"),
    ("A", "bm25", "u4", "exact_entity"),
    ("A", "bm25", "u2", "partial_entity"),
    ("B", "bm25", "u3", "exact_entity"),
    ("B", "bm25", "u4", "exact_entity"),
    ("B", "bm25", "u5", "partial_entity"),
    ("B", "bm25", "u6", "irrelevant"),
    ("C", "medcpt", "u1", "exact_entity"),
    ("C", "medcpt", "u7", "partial_entity"),
]


def _coded_study(root: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    """A study folder holding one data set's per_passage.csv (codebook: the bundled v1)."""
    table = root / "attribution" / "d" / "per_passage.csv"
    table.parent.mkdir(parents=True)
    with table.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["system", "retriever", "unit_id", "status", "entity_match", *HIGH])
        for system, retriever, unit, entity in rows:
            out.writerow([system, retriever, unit, "scored", entity, *HIGH.values()])
    frame = pd.read_csv(table)
    frame["all_high"] = frame["entity_match"] == "exact_entity"  # every other dimension high
    frame.to_csv(table, index=False)
    return root


def _report(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str, str]:
    """Table 8's Markdown, the codebook table's, and what `report` said on stderr."""
    code, _, err = run_cli(["report", str(root), "-o", str(root / "report")], capsys)
    assert code == 0, err
    tables = root / "report" / "tables"
    return (
        (tables / "retrieval_quality.md").read_text(),
        (tables / "codebook.md").read_text(),
        err,
    )


def test_table_8_counts_a_unit_shared_by_two_systems_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quality, book, _ = _report(_coded_study(tmp_path / "st", ROWS), capsys)
    # bm25: 9 rows (A 5, B 4), distinct units u1..u6 = 6 (was n=9): exact u1 u3 u4 = 3/6 =
    # 50.0 (rows: 5/9 = 55.6), partial u2 u5 = 2/6 = 33.3, irrelevant u6 = 1/6 = 16.7 (rows
    # 1/9 = 11.1); all high = exact = 50.0. medcpt: u1, u7 (A's u1 is another retriever's
    # row: it counts there too): exact 1/2, partial 1/2.
    assert "| dimension | code | bm25 (n=6) | medcpt (n=2) |" in quality
    assert "| Entity match | Exact entity | 50.0 | 50.0 |" in quality
    assert "| Entity match | Partial entity | 33.3 | 50.0 |" in quality
    assert "| Entity match | Irrelevant | 16.7 | 0.0 |" in quality
    assert "|  | All dimensions high quality | 50.0 | 50.0 |" in quality
    first = quality.splitlines()[0]
    assert "n = distinct (claim, passage) units" in first
    assert "a unit retrieved for several systems counted once" in first
    assert "(bm25: A, B)" in first  # the column still pools both systems
    # the codebook's Freq. counts as Table 8 does: exact 3 (bm25) + 1 (medcpt) = 4 (was 6),
    # partial 2 + 1 = 3 (was 4), irrelevant 1
    freq = {
        line.split("|")[3].strip().rstrip(" †"): line.split("|")[6].strip()
        for line in book.splitlines()
        if "| Entity match |" in line
    }
    assert (freq["exact_entity"], freq["partial_entity"], freq["irrelevant"]) == ("4", "3", "1")
    assert "a (claim, passage) unit once per retriever and data set" in book.splitlines()[0]


def test_a_shared_unit_coded_two_ways_counts_its_first_codes_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # B's row of u3 says partial_entity where A's (the first) says exact_entity (a table
    # edited by hand, or two judge runs): u3 counts once, as exact (A's): bm25 exact 3/6 =
    # 50.0, partial 2/6 = 33.3, as above (counting B's row too read exact 5/9, partial 4/9)
    rows = [
        r if r[:3] != ("B", "bm25", "u3") else ("B", "bm25", "u3", "partial_entity") for r in ROWS
    ]
    quality, _, err = _report(_coded_study(tmp_path / "st", rows), capsys)
    assert "| Entity match | Exact entity | 50.0 | 50.0 |" in quality
    assert "| Entity match | Partial entity | 33.3 | 50.0 |" in quality
    said = (
        "attribution/d/per_passage.csv: 1 row(s) repeat a (claim, passage) unit of their "
        "retriever with other codes than the unit's first row (first: unit u3;"
    )
    assert said in (tmp_path / "st" / "report" / "index.html").read_text().replace("&#39;", "'")
    assert err.startswith(f"Assumed: {said}")  # the report's first line says the assumption


def _trace(system: str, k: int, passages: list[tuple[str, str]]) -> dict[str, object]:
    retriever = "medcpt" if system == "C" else "bm25"
    return {
        "system": system,
        "question_id": f"q{k}",
        "sentence_id": f"s{k}",
        "claim_id": f"c{k}",
        "claim": f"drug X{k} lowers blood pressure in adults",
        "verdict": "supported",
        "reasoning": f"The passages say drug X{k} lowers it.",
        "retriever": retriever,
        "verifier": "gpt",
        "passages": [
            {"passage_id": pid, "rank": rank, "text": text}
            for rank, (pid, text) in enumerate(passages, start=1)
        ],
    }


_STUDY = """name = "units"
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

[review]
labelstudio = false
"""


def test_attribute_and_report_count_each_unit_of_a_retriever_once(tmp_path: Path) -> None:
    import failcodes

    root = tmp_path / "st"
    root.mkdir()
    # 4 sentences, one claim each, all errors the systems call supported: every claim is a
    # false negative of every system (A, B, C), so every passage is a Table 8 row.
    # A (bm25): 2 passages per claim (8 rows); B (bm25): claims 1-2 the same texts as A's
    # under other passage ids (4 rows, the same 4 units), claims 3-4 its own (4 rows);
    # C (medcpt): one passage per claim, claim 1's the text of A's first.
    texts = {
        k: [f"Trial {k}.{j}: drug X{k} lowered blood pressure." for j in (1, 2)]
        for k in range(1, 5)
    }
    traces = {
        "A": [
            _trace("A", k, [(f"a{k}-{j}", t) for j, t in enumerate(texts[k])]) for k in range(1, 5)
        ],
        "B": [
            _trace(
                "B",
                k,
                [(f"b{k}-{j}", t if k <= 2 else f"B's own {t}") for j, t in enumerate(texts[k])],
            )
            for k in range(1, 5)
        ],
        "C": [
            _trace(
                "C", k, [(f"c{k}", texts[k][0] if k == 1 else f"Cohort {k}: drug X{k} is safe.")]
            )
            for k in range(1, 5)
        ],
    }
    for system, rows in traces.items():
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = [
        {"question_id": f"q{k}", "sentence_id": f"s{k}", "has_error": True} for k in range(1, 5)
    ]
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    ingests = "".join(
        f'\n[[datasets.ingest]]\nadapter = "generic"\npaths = ["{s}.jsonl"]\n' for s in traces
    )
    (root / "failcodes.toml").write_text(_STUDY.format(ingests=ingests))
    shutil.copy(codebooks.bundled_dir() / "medical-fact-check.v1.yaml", root)
    failcodes.run_study(root)
    table = pd.read_csv(root / "attribution" / "d" / "per_passage.csv")
    # the table keeps a row per system: bm25 8 + 8 = 16, medcpt 4
    assert table["retriever"].value_counts().to_dict() == {"bm25": 16, "medcpt": 4}
    # bm25's distinct units: A's 8 + B's own 4 = 12 (B's claims 1-2 repeat A's 4); medcpt 4
    rates = pd.read_csv(root / "attribution" / "d" / "retriever_all_high.csv")
    rates = rates.set_index("retriever")
    assert rates.loc["bm25", "rows"] == 12 and rates.loc["medcpt", "rows"] == 4
    # its all-high count is over those units: the first row of each (retriever, unit)
    once = table.drop_duplicates(["retriever", "unit_id"])
    assert len(once) == 16
    high = once[once["retriever"] == "bm25"]["all_high"].astype(str) == "True"
    assert rates.loc["bm25", "all_high"] == int(high.sum())
    tables = root / "report" / "tables"
    quality = (tables / "retrieval_quality.md").read_text()
    assert "bm25 (n=12)" in quality and "medcpt (n=4)" in quality
    dominant = (tables / "retrieval_quality_dominant.md").read_text().splitlines()
    assert {line.split("|")[5].strip() for line in dominant[4:] if "| bm25 |" in line} == {"12"}
    # Table 9 stays per trace (a verifier's run for one system): 3 systems x 4 claims = 12
    assert "gpt (n=12)" in (tables / "reasoning_steps.md").read_text()


def test_corrected_table_8_counts_each_unit_of_a_retriever_once() -> None:
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.report.corrected import corrected_rows
    from failcodes.reviewplan import draw_plan, human_codes

    cb = codebooks.bundled()
    part = cb.part(UnitKind.RETRIEVAL)
    # 20 distinct bm25 units, the judge exact on u00-u11 (12/20 = 60%); system B retrieved
    # u00-u09 too (10 more rows, all exact): per row the judge's share read 22/30 = 73.3%
    rows = []
    for system, units in (("A", range(20)), ("B", range(10))):
        for i in units:
            code = "exact_entity" if i < 12 else "partial_entity"
            rows.append(
                {
                    "system": system,
                    "retriever": "bm25",
                    "unit_id": f"u{i:02d}",
                    "status": "scored",
                    "entity_match": code,
                    **HIGH,
                    "all_high": code == "exact_entity",
                }
            )
    coded = pd.DataFrame(rows)
    plan = draw_plan(
        coded,
        UnitKind.RETRIEVAL,
        name="p",
        size=20,
        seed=0,
        source="attribution/d/per_passage.csv",
        source_sha256="0" * 64,
    )
    # a reviewer agrees with the judge on every unit
    reviews = [
        Annotation(
            unit_id=f"u{i:02d}",
            unit_kind=UnitKind.RETRIEVAL,
            codebook=cb.ref(),
            coder="alice",
            coder_kind=CoderKind.HUMAN,
            codes={"entity_match": "exact_entity" if i < 12 else "partial_entity", **HIGH},
        )
        for i in range(20)
    ]
    out = corrected_rows(coded, plan, human_codes(reviews, UnitKind.RETRIEVAL), part)
    exact = next(r for r in out if r["code"] == "exact_entity")
    assert (exact["rows"], exact["reviewed"], exact["reviewed_units"]) == (20, 20, 20)
    assert exact["estimates"] is not None
    assert exact["estimates"].judge.estimate == pytest.approx(12 / 20)
    assert exact["estimates"].human.estimate == pytest.approx(12 / 20)


_DATASET = """
[[datasets]]
name = "{name}"
[[datasets.ingest]]
adapter = "generic"
paths = ["{name}.jsonl"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"
"""


def test_data_sets_pooled_into_one_column_count_a_shared_unit_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import failcodes

    root = tmp_path / "st"
    root.mkdir()
    # a data set per system over the same labels (one set of sentences: Table 8 pools them
    # into one bm25 column): A and B retrieve the same 2 passages for claims 1-2 and their
    # own for claims 3-4; every claim an error both call supported
    texts = {
        k: [f"Trial {k}.{j}: drug X{k} lowered blood pressure." for j in (1, 2)]
        for k in range(1, 5)
    }
    for name, system in (("a", "A"), ("b", "B")):
        rows = [
            _trace(
                system,
                k,
                [
                    (f"{name}{k}-{j}", t if k <= 2 else f"{system}: {t}")
                    for j, t in enumerate(texts[k])
                ],
            )
            for k in range(1, 5)
        ]
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = [
        {"question_id": f"q{k}", "sentence_id": f"s{k}", "has_error": True} for k in range(1, 5)
    ]
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    body = 'name = "pooled"\ncodebook = "medical-fact-check.v1.yaml"\n'
    body += _DATASET.format(name="a") + _DATASET.format(name="b")
    body += '[metrics]\nbootstrap = 0\n[judge]\njudge = "offline"\n[review]\nlabelstudio = false\n'
    (root / "failcodes.toml").write_text(body)
    shutil.copy(codebooks.bundled_dir() / "medical-fact-check.v1.yaml", root)
    failcodes.run_study(root)
    # rows: a 8, b 8; distinct units: the 4 of claims 1-2 (both) + A's 4 + B's 4 = 12
    quality = (root / "report" / "tables" / "retrieval_quality.md").read_text()
    assert "| bm25 (n=12) |" in quality
    # b's table codes a shared unit otherwise (a second, uncached judge run): a's row (the
    # first data set by name) is counted, and the report says so
    b_table = root / "attribution" / "b" / "per_passage.csv"
    frame = pd.read_csv(b_table, dtype=str, keep_default_na=False)
    shared = frame["unit_id"].iloc[0]  # B's claim 1, passage 1: a unit of A's too
    other = "irrelevant" if frame.at[0, "entity_match"] != "irrelevant" else "exact_entity"
    frame.at[0, "entity_match"] = other
    frame.to_csv(b_table, index=False)
    quality2, _, err = _report(root, capsys)
    assert "| bm25 (n=12) |" in quality2
    assert quality2 == quality  # the shares of a's codes, as before the edit
    said = (
        "attribution/a/per_passage.csv, attribution/b/per_passage.csv: 1 row(s) repeat a "
        f"(claim, passage) unit of their retriever with other codes than the unit's first row "
        f"(first: unit {shared};"
    )
    # said at the top of what `report` prints (after the word that the table was edited)
    lines = err.splitlines()
    assert lines[0].startswith("these files changed since `failcodes run` wrote them")
    assert lines[1].startswith(f"Assumed: {said}"), err
