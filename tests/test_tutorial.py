"""docs/your-own-data.md, run as written: every ``bash`` command, every ``toml`` study file.

The commands are parsed from the page (so the page and the test cannot drift) and run
in-process in a scratch folder laid out like a clone (``docs/`` and a sibling ``shared/``).
The numbers asserted are the ones the page quotes; where they come from is said beside each.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

from failcodes.cli.main import main
from failcodes.disagreementio import read_disagreements
from failcodes.study import StudyLayout
from failcodes.traceio import read_traces
from tests.conftest import REPO, SHARED_DATA

DOC = REPO / "docs" / "your-own-data.md"
FENCE = re.compile(r"^```(\S*)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


def sections() -> dict[str, list[tuple[str, str, str]]]:
    """``{'## heading': [(language, info, body), ...]}`` in page order."""
    text = DOC.read_text(encoding="utf-8")
    out: dict[str, list[tuple[str, str, str]]] = {}
    for part in re.split(r"^(?=## )", text, flags=re.M):
        heading = part.splitlines()[0] if part.startswith("## ") else ""
        out[heading] = [(m.group(1), m.group(2), m.group(3)) for m in FENCE.finditer(part)]
    return out


def commands(body: str) -> list[list[str]]:
    """The shell commands of a ``bash`` block (comments dropped, continuations joined)."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [
        shlex.split(line)
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def cli(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def run_section(prefix: str, root: Path) -> None:
    heading = next(h for h in sections() if h.startswith(prefix))
    blocks = sections()[heading]
    assert any(lang == "bash" for lang, _, _ in blocks)
    for lang, info, body in blocks:
        if lang == "toml":
            match = re.search(r'title="([^"]+)"', info)
            assert match, f"toml block without a title in {heading}"
            (root / match.group(1)).write_text(body, encoding="utf-8")
        elif lang == "bash":
            for argv in commands(body):
                assert argv[0] == "failcodes", argv
                assert cli(argv[1:]) == 0, shlex.join(argv)
        else:
            assert lang in ("console", "text"), lang  # shown, not run (a person or a server)


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch 'clone': docs/ of this checkout, ../shared beside it when present."""
    root = tmp_path / "clone"
    root.mkdir()
    (root / "docs").symlink_to(REPO / "docs")
    if SHARED_DATA.parent.is_dir():
        (tmp_path / "shared").symlink_to(SHARED_DATA.parent)
    monkeypatch.chdir(root)
    return root


def test_every_block_of_the_page_is_run_or_shown() -> None:
    found = sections()
    shapes = [h for h in found if re.match(r"## [1-4]\. ", h)]
    assert len(shapes) == 4
    assert any(h.startswith("## Agreement only") for h in found)
    for heading, blocks in found.items():
        for lang, _, body in blocks:
            assert lang in ("bash", "toml", "console", "text"), (heading, lang)
            if lang == "bash":
                assert all(c[0] == "failcodes" for c in commands(body))


def _report(layout: StudyLayout) -> str:
    return (layout.report_dir / "index.html").read_text(encoding="utf-8")


def test_closed_book_medscore(clone: Path) -> None:
    if not (SHARED_DATA / "medscore" / "medscore_output.jsonl").is_file():
        pytest.skip("needs ../shared/data/medscore (MedScore has no licence; not bundled)")
    run_section("## 1.", clone)
    layout = StudyLayout.of("studies/medscore")
    # Hand count of docs/tutorial/medscore-illustrative-labels.jsonl against the verifier's
    # raw True/False: 9 sentences marked as errors; 8 of them have a False claim (TP), 965621_1
    # has only True claims (FN); 174570_0 (no error) has a False claim (FP); 15 TN.
    rows = json.loads(layout.metrics("medscore").read_text(encoding="utf-8"))
    refuted = next(r for r in rows if r["mapping"] == "refuted")
    assert (refuted["n"], refuted["tp"], refuted["fp"], refuted["fn"], refuted["tn"]) == (
        25,
        8,
        1,
        1,
        15,
    )
    assert refuted["precision"] == pytest.approx(8 / 9)
    assert refuted["f1"] == pytest.approx(8 / 9)
    att = pd.read_csv(layout.attribution_table("medscore"))
    assert sorted(att["sentence_id"]) == ["174570_0", "965621_1"]
    assert set(att["stage"]) == {"verification"}  # closed-book: never retrieval
    assert set(att["evidence_source"]) == {"none"}
    assert att["reason"].str.contains("closed-book").all()
    # no passage, no reasoning: nothing for the judge, no Tables 8-9
    assert not layout.per_passage("medscore").exists()
    assert not layout.per_trace("medscore").exists()
    verdicts = pd.read_csv(layout.report_dir / "tables" / "verdicts.csv")
    assert int(verdicts["claims"].sum()) == 25537  # SOURCE.md: 25,537 claims in all
    html = _report(layout)
    for section in (
        "Detection of clinician-labelled errors",
        "Verdict distribution",
        "Attribution",
    ):
        assert section in html
    # no Table 8 or 9 section; d3c2cd4's note says why (a closed-book system is never retrieved)
    assert "Retrieval quality by retriever (Table 8 shape)" not in html
    assert "Reasoning by verifier (Table 9 shape)" not in html
    assert "so Table 8 counts no unit of it and has no column for it" in html


def test_provided_evidence_scifact(clone: Path) -> None:
    run_section("## 2.", clone)
    layout = StudyLayout.of("studies/scifact")
    rows = json.loads(layout.metrics("scifact-dev").read_text(encoding="utf-8"))
    got = {r["system"]: (r["tp"], r["fp"], r["fn"]) for r in rows if r["mapping"] == "refuted"}
    # SciFact dev: 64 gold CONTRADICT claims of 300; fever detects 6 (tests/test_cli_metrics.py)
    assert got == {
        "multivers-covidfact": (64, 56, 0),
        "multivers-fever": (6, 1, 58),
        "multivers-healthver": (64, 4, 0),
        "multivers-scifact": (64, 0, 0),
    }
    att = pd.read_csv(layout.attribution_table("scifact-dev"))
    disagreements = read_disagreements(layout.disagreements("scifact-dev"))
    assert len(att) == len(disagreements) == sum(fp + fn for _, fp, fn in got.values()) == 119
    assert set(att["evidence_source"]) == {"provided"}
    assert "retrieval" not in set(att["stage"])  # the verifier was given the evidence
    assert att["reason"].notna().all()
    pp = pd.read_csv(layout.per_passage("scifact-dev"))
    pt = pd.read_csv(layout.per_trace("scifact-dev"))
    assert pp["unit_id"].nunique() == 91
    assert len(pt) == 119
    html = _report(layout)
    for section in (
        "Detection of clinician-labelled errors",
        "Verdict distribution",
        "Attribution",
        "Table 8",
        "Table 9",
    ):
        assert section in html
    for kind in ("retrieval", "reasoning"):
        assert layout.labelstudio_tasks("scifact-dev", kind).is_file()


def test_retrieved_passages_ragchecker(clone: Path) -> None:
    run_section("## 3.", clone)
    layout = StudyLayout.of("studies/ragchecker")
    rows = json.loads(layout.metrics("ragchecker").read_text(encoding="utf-8"))
    refuted = next(r for r in rows if r["mapping"] == "refuted")
    # 13 labelled claims, one Contradiction (claim 0:c10), no claim refuted
    assert (refuted["n"], refuted["tp"], refuted["fn"]) == (13, 0, 1)
    assert refuted["precision"] is None
    att = pd.read_csv(layout.attribution_table("ragchecker"))
    assert att[["sentence_id", "stage"]].values.tolist() == [["0:c10", "retrieval"]]
    assert len(pd.read_csv(layout.per_passage("ragchecker"))) == 4
    tasks = json.loads(
        layout.labelstudio_tasks("ragchecker", "retrieval").read_text(encoding="utf-8")
    )
    assert len(tasks) == 4
    html = _report(layout)
    for section in ("Detection of clinician-labelled errors", "Attribution", "Table 8"):
        assert section in html


def test_answers_keyed_by_system_asserted_and_cited_after_writing(clone: Path) -> None:
    run_section("## 4.", clone)
    layout = StudyLayout.of("studies/answers")
    traces = [t.model_dump(mode="json") for t in read_traces(layout.traces("answers"))]
    # docs/tutorial/answers-by-system.jsonl by hand: sysA 2+1+2+0 claims, sysB 1+2+0+1
    assert sorted((t["system"], t["claim_id"]) for t in traces) == [
        ("sysA", "1:1"), ("sysA", "1:2"), ("sysA", "2:1"), ("sysA", "3:1"), ("sysA", "3:2"),
        ("sysB", "1:1"), ("sysB", "2:1"), ("sysB", "2:2"), ("sysB", "4:1"),
    ]  # fmt: skip
    assert {(t["verdict"], t["raw_verdict"], t["evidence_source"]) for t in traces} == {
        ("supported", "asserted by the system", "post-hoc")
    }
    rows = json.loads(layout.metrics("answers").read_text(encoding="utf-8"))
    # errors: sysA 1:2 and 2:1, sysB 2:2 and 4:1; every claim asserted -> all missed
    got = {r["system"]: (r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows}
    assert got == {"sysA": (5, 0, 0, 2, 3), "sysB": (4, 0, 0, 2, 2)}
    att = pd.read_csv(layout.attribution_table("answers"))
    assert sorted(zip(att["system"], att["sentence_id"], strict=True)) == [
        ("sysA", "1:2"), ("sysA", "2:1"), ("sysB", "2:2"), ("sysB", "4:1"),
    ]  # fmt: skip
    assert set(att["stage"]) == {"verification"} and set(att["evidence_source"]) == {"post-hoc"}
    assert att["reason"].str.startswith("post-hoc citation").all()
    # the citations were never judged: no judge run, no Table 8
    assert not layout.judge_run("answers", "retrieval").exists()
    assert not layout.per_passage("answers").exists()
    html = _report(layout)
    assert "no system has a non-zero recall or F1 under this mapping" in html
    # no Table 8 section; d3c2cd4's note says why (post-hoc citations are not retrieved)
    assert "Retrieval quality by retriever (Table 8 shape)" not in html
    assert "so Table 8 counts no unit of them and has no column for them" in html


def test_agreement_only_study(clone: Path) -> None:
    run_section("## Agreement only", clone)
    layout = StudyLayout.of("studies/physicians")
    rows = json.loads(layout.agreement("physicians").read_text(encoding="utf-8"))
    got = {r["statistic"]: r["value"] for r in rows}
    # by hand in tests/test_study_shapes.py: 0.325, 0.3625, 0.3415 (rounded on the page)
    assert got["fleiss"] == pytest.approx(0.3250, abs=5e-5)
    assert got["krippendorff"] == pytest.approx(0.3625, abs=5e-5)
    assert got["gwet_ac1"] == pytest.approx(0.3415, abs=5e-5)
    assert all(r["n_units"] == 6 and r["n_raters"] == 3 for r in rows)
    assert "Agreement per subject, agreement/physicians.json" in _report(layout)
    assert layout.trace_files() == []  # no data set: nothing ingested
