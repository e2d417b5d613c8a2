"""Session 29 (t29rep): the tool's own trace format read directly, as ingest reads it.

A JSONL already in the trace format, given to ``disagreements``, ``judge`` or ``attribute``
without ``ingest``, was read as it is: ``"reasoning": "N/A"`` was coded by ``judge reasoning``
as the verifier's reasoning, a passage whose text is ``"None"`` was judged as a retrieved
passage and attribution said "none of the 1 retrieved passages is high quality" for "no
passage retrieved"; a passage whose text is a link alone was judged as evidence. ``ingest``
has read the one as none (with a note) and refused the other since session 28 (548c99c,
6db48ec); the direct readers now agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli, small_study


def _trace(n: int, verdict: str, reasoning: str, texts: list[str]) -> dict[str, Any]:
    return {
        "system": "bm25",
        "question_id": "q1",
        "sentence_id": f"s{n}",
        "claim_id": f"c{n}",
        "claim": f"Claim {n} holds.",
        "verdict": verdict,
        "reasoning": reasoning,
        "retriever": "bm25",
        "passages": [
            {"passage_id": f"p{n}{rank}", "rank": rank, "text": text}
            for rank, text in enumerate(texts, start=1)
        ],
    }


def _lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _study(tmp_path: Path, link: str | None = None) -> tuple[Path, Path]:
    """Four claims of one answer; labels s1, s2 error, s3, s4 none (refuted flags an error).

    c1: reasoning 'N/A', its one passage 'N/A'; c3: reasoning 'None', passages 'None' and a
    text. ``link``: c2 gets a second passage whose text is that link alone.
    """
    rows = [
        _trace(1, "supported", "N/A", ["N/A"]),
        _trace(2, "supported", "The passage says so.", ["Aspirin reduces pain in adults."]),
        _trace(3, "refuted", "None", ["None", "Zinc does not shorten colds."]),
        _trace(4, "supported", "Fine.", ["Ibuprofen is an NSAID."]),
    ]
    if link is not None:
        rows[1]["passages"].append({"passage_id": "p22", "rank": 2, "text": link})
    traces = _lines(tmp_path / "t.jsonl", rows)
    labels = _lines(
        tmp_path / "l.jsonl",
        [{"sentence_id": f"s{n}", "has_error": n in (1, 2)} for n in range(1, 5)],
    )
    return traces, labels


def test_disagreements_of_a_trace_file_read_missing_marks_as_none_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces, labels = _study(tmp_path)
    out = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, stdout, err = run_cli([*args, "-o", str(out)], capsys)
    assert code == 0, err
    got = [
        (d["kind"], c["claim_id"], c.get("reasoning"), [p["text"] for p in c["passages"]])
        for d in map(json.loads, out.read_text(encoding="utf-8").splitlines())
        for c in d["claims"]
    ]
    # by hand: refuted flags c3 only; s1, s2 are errors (FN), s3 is none (FP). c1's 'N/A'
    # reasoning and passage are none; c3's 'None' reasoning and first passage are none, its
    # text passage kept (main: 'N/A', ['N/A'] and 'None', ['None', 'Zinc ...'])
    assert got == [
        ("FN", "c1", None, []),
        ("FN", "c2", "The passage says so.", ["Aspirin reduces pain in adults."]),
        ("FP", "c3", None, ["Zinc does not shorten colds."]),
    ]
    said = " ".join((stdout + err).split())
    # 2 passages (c1's, c3's first), first at line 1; 2 reasonings (c1, c3), first at line 1
    assert (
        "2 passage(s) whose text is blank or a missing mark (NA, N/A, #N/A, nan, null, None or -; "
        f"first at {traces}:1) read as no passage" in said
    )
    assert f"2 reasoning(s) that are a missing mark (first at {traces}:1)" in said


def test_judge_and_attribute_given_a_trace_file_code_no_missing_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces, labels = _study(tmp_path)
    run = tmp_path / "jr"
    code, stdout, err = run_cli(
        ["judge", "reasoning", "--from", str(traces), "--judge", "offline", "-o", str(run)],
        capsys,
    )
    assert code == 0, err
    coded = [json.loads(x)["unit_id"] for x in (run / "annotations.jsonl").read_text().splitlines()]
    # by hand: 4 traces, 2 of whose reasonings are 'N/A' and 'None': 2 units coded (main: 4)
    assert len(coded) == 2
    assert f"2 reasoning(s) that are a missing mark (first at {traces}:1)" in " ".join(
        (stdout + err).split()
    )
    disagreements = tmp_path / "d.jsonl"
    code, _, err = run_cli(
        [
            "disagreements",
            "--traces",
            str(traces),
            "--labels",
            str(labels),
            "-m",
            "refuted",
            "-o",
            str(disagreements),
        ],
        capsys,
    )
    assert code == 0, err
    retrieval = tmp_path / "jp"
    code, _, err = run_cli(
        [
            "judge",
            "retrieval",
            "--from",
            str(disagreements),
            "--judge",
            "offline",
            "-o",
            str(retrieval),
        ],
        capsys,
    )
    assert code == 0, err
    units = (retrieval / "annotations.jsonl").read_text().splitlines()
    # by hand: the FN c1 (no passage), c2 (1 passage), the FP c3 (1 of 2 kept): 2 retrieval
    # units (main: 4, 'N/A' and 'None' among them)
    assert len(units) == 2
    att = tmp_path / "att"
    code, _, err = run_cli(
        [
            "attribute",
            "--from",
            str(disagreements),
            "--retrieval",
            str(retrieval),
            "-o",
            str(att),
        ],
        capsys,
    )
    assert code == 0, err
    reasons = {
        json.loads(x)["sentence_id"]: json.loads(x)["reason"]
        for x in (att / "attribution.jsonl").read_text().splitlines()
    }
    # c1 retrieved nothing; c3 retrieved one passage (main: 'none of the 1 retrieved
    # passages ...' for s1, 'none of the 2 ...' for s3)
    assert reasons["s1"] == "no passage retrieved"
    assert reasons["s3"].startswith("none of the 1 retrieved passages is high quality")


@pytest.mark.parametrize(
    "link", ["https://pubmed.ncbi.nlm.nih.gov/123/", "PMID: 31978945", "doi:10.1056/NEJMoa2001017"]
)
@pytest.mark.parametrize("command", ["metrics", "disagreements"])
def test_a_trace_files_passage_that_is_a_link_alone_is_refused_naming_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, link: str
) -> None:
    traces, labels = _study(tmp_path, link=link)
    out = tmp_path / "o.jsonl"
    extra = ["-o", str(out)] if command == "disagreements" else []
    code, _, err = run_cli(
        [command, "--traces", str(traces), "--labels", str(labels), "-m", "refuted", *extra],
        capsys,
    )
    # line 2's second passage (index 1): one line naming file, line and field, nothing
    # written (main: exit 0, the link judged as a retrieved passage)
    assert code == 2
    assert f"{traces}:2, field 'passages[1].text': a passage's text is a reference alone" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_attribute_given_a_trace_file_says_the_passages_read_as_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces, _ = _study(tmp_path)
    att = tmp_path / "att"
    code, stdout, err = run_cli(["attribute", "--from", str(traces), "-o", str(att)], capsys)
    assert code == 0, err
    said = " ".join((stdout + err).split())
    assert f"first at {traces}:1) read as no passage" in said
    notes = json.loads((att / "notes.json").read_text())
    # the note is what the attribution assumed (notes.json's mixed_evidence): 2 passages
    assert any(
        n.startswith("2 passage(s) whose text is blank or a missing mark")
        for n in notes["mixed_evidence"]
    )


def _gold_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """System A under ``auto``, [judge] top_k 2, run to its report (attribution included).

    c1 (FP: refuted, labelled no error): its rank-1 passage flagged gold -> gold evidence;
    c2 (FN): passages ranked 1, 2, no flag -> the judge's codes; c3 (FN): passages ranked 3
    and 5 only, no flag: none in the top 2, so "no passage top 2" decides it (retrieval),
    neither strategy.
    """

    def passage(rank: int, text: str, **gold: bool) -> dict[str, object]:
        return {"passage_id": f"p{rank}{text[:3]}", "rank": rank, "text": text, **gold}

    rows = [
        ("s1", "c1", "refuted", [passage(1, "Metformin lowers HbA1c.", gold=True)]),
        ("s2", "c2", "supported", [passage(1, "Statins lower LDL."), passage(2, "LDL is fat.")]),
        ("s3", "c3", "supported", [passage(3, "Zinc and colds."), passage(5, "Colds pass.")]),
    ]
    root = tmp_path / "st"
    study = small_study(
        root,
        capsys,
        "gm",
        '[[datasets]]\nname = "gm"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["t.jsonl"]\n\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["l.jsonl"]\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n',
        judge='kinds = ["retrieval"]\ntop_k = 2',
    )
    _lines(
        root / "t.jsonl",
        [
            {
                "system": "A",
                "question_id": "q1",
                "sentence_id": s,
                "claim_id": c,
                "claim": f"Claim {c}.",
                "verdict": v,
                "retriever": "bm25",
                "passages": ps,
            }
            for s, c, v, ps in rows
        ],
    )
    _lines(
        root / "l.jsonl",
        [{"question_id": "q1", "sentence_id": s, "has_error": s != "s1"} for s, *_ in rows],
    )
    code, _, err = run_cli(["run", str(study.parent)], capsys)
    assert code == 0, err
    return root


#: GoldFlags' line for system A: c1 flagged, c2 not; c3 (no passage in the top 2) took no
#: strategy (main's attribute counted it: "1 of its 3 claims ..., those of the other 2").
GOLD_MIX = (
    "system 'A': the passages of 1 of its 2 claims with passages carry gold flags, those of "
    "the other 1 none: auto attributed the first by gold evidence (a gold passage retrieved "
    "-> verification) and the others by the judge's codes of their passages (codebook: "
    "verification where one is all-high, undetermined where none was judged), not as claims "
    "without a gold passage (retrieval); if a passage without a flag is not gold, write "
    "gold: false on it, or give --strategy codebook to attribute every claim by the judge's "
    "codes (docs/attribution.md step 2)"
)


def test_the_reports_gold_flag_line_is_attributes_own_and_counts_claims_a_strategy_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """attribute and the report counted the gold-flag line two ways (t28rep's left item).

    attribute counted every claim holding passages (c3's, all past the top 2, too: "1 of its
    3"); the report counted the claims each strategy decided, from attribution.jsonl ("1 of
    its 2"). attribute now counts only claims with passages in the top k, and the report
    reads its line from notes.json (attribution.jsonl not read: made unreadable here).
    """
    import html
    import re

    import failcodes.report.rundir as rundir

    root = _gold_study(tmp_path, capsys)
    notes = json.loads((root / "attribution" / "gm" / "notes.json").read_text())
    reasons = {
        json.loads(x)["sentence_id"]: json.loads(x)["reason"]
        for x in (root / "attribution" / "gm" / "attribution.jsonl").read_text().splitlines()
    }
    # by hand: c1 gold at rank 1 (verification), c3 no passage in the top 2 (retrieval)
    assert reasons["s1"].startswith("gold evidence retrieved at rank 1")
    assert reasons["s3"] == "no passage top 2"
    assert notes["gold_mix"] == [GOLD_MIX]

    class Unread:
        @staticmethod
        def model_validate_json(raw: object) -> None:
            raise AssertionError("the report read attribution.jsonl")

    monkeypatch.setattr(rundir, "ItemAttribution", Unread)
    code, _, err = run_cli(["report", str(root), "-o", str(root / "rep")], capsys)
    assert code == 0, err
    page = html.unescape((root / "rep" / "index.html").read_text(encoding="utf-8"))
    page = " ".join(page.split())
    assert re.findall(r"Assumed: system 'A': the passages of [^<]*", page) == [
        f"Assumed: {GOLD_MIX}"
    ]
