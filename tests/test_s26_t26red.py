"""Session 26 (t26red): shapes an outside checker may bring, each counted by hand."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from failcodes import codebook as codebooks
from tests.cli_helpers import run_cli


def _gold_traces(folder: Path, flag_the_others: bool) -> Path:
    """System A, 4 claims each an error it calls supported, 2 retrieved passages each.

    Claims 1-2 retrieved their gold passage (rank 1, ``gold: true``); claims 3-4 did not. The
    other passages carry ``gold: false`` or, as a data set that marks its positives alone
    writes them, no gold field.
    """
    rows = []
    for k in range(1, 5):
        passages = []
        for j in (1, 2):
            p: dict[str, object] = {
                "passage_id": f"p{k}{j}",
                "rank": j,
                "text": f"Trial {k}.{j}: drug X{k} lowered blood pressure in adults.",
            }
            if k <= 2 and j == 1:
                p["gold"] = True
            elif flag_the_others:
                p["gold"] = False
            passages.append(p)
        rows.append(
            {
                "system": "A",
                "question_id": f"q{k}",
                "sentence_id": f"s{k}",
                "claim_id": f"c{k}",
                "claim": f"drug X{k} lowers blood pressure in adults",
                "verdict": "supported",
                "reasoning": "The trials say so.",
                "retriever": "bm25",
                "evidence_source": "retrieved",
                "passages": passages,
            }
        )
    path = folder / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _stages(folder: Path) -> dict[str, str]:
    with (folder / "attribution.csv").open(encoding="utf-8") as f:
        return {row["sentence_id"]: row["stage"] for row in csv.DictReader(f)}


def test_gold_flags_on_the_gold_passages_alone_are_said_where_auto_mixes_strategies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = "system 'A': the passages of 2 of its 4 claims with passages carry gold flags"
    for flag_the_others in (True, False):
        folder = tmp_path / str(flag_the_others)
        folder.mkdir()
        traces = _gold_traces(folder, flag_the_others)
        out = folder / "att"
        code, _, err = run_cli(["attribute", "--from", str(traces), "-o", str(out)], capsys)
        assert code == 0, err
        stages = _stages(out)
        # claims 1-2: their gold passage retrieved -> verification (docs/attribution.md step 4)
        assert stages["s1"] == stages["s2"] == "verification"
        if flag_the_others:
            # every passage flagged: claims 3-4 have no gold passage among those retrieved ->
            # retrieval, by gold evidence alone; nothing to say
            assert stages["s3"] == stages["s4"] == "retrieval"
            assert said not in err
            continue
        # the same data with the non-gold passages unflagged: auto takes the judge's codes for
        # claims 3-4 (none here: undetermined; verification wherever a judge found one of
        # their passages all-high), where gold evidence reads them as retrieval failures.
        # Unchanged, but said on the first line, with the way to either reading.
        assert stages["s3"] == stages["s4"] == "undetermined"
        first = err.splitlines()[0]
        assert first.startswith(
            f"{said}, those of the other 2 none: auto attributed the first by gold evidence"
        )
        assert "write gold: false on it, or give --strategy codebook" in first


_STUDY = """name = "gold"
codebook = "medical-fact-check.v1.yaml"

[[datasets]]
name = "d"
[[datasets.ingest]]
adapter = "generic"
paths = ["traces.jsonl"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]

[metrics]
mappings = ["refuted"]
bootstrap = 0

[judge]
judge = "offline"

[review]
labelstudio = false
"""


def test_a_study_says_a_system_attributed_by_gold_evidence_and_by_the_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the data set above, gold flags on the gold passages alone, as a study: `failcodes run`
    # said the mix in the attribute step's log alone (nobody opens it after a finished run)
    root = tmp_path / "st"
    root.mkdir()
    _gold_traces(root, flag_the_others=False)
    labels = [
        {"question_id": f"q{k}", "sentence_id": f"s{k}", "has_error": True} for k in range(1, 5)
    ]
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    (root / "failcodes.toml").write_text(_STUDY)
    shutil.copy(codebooks.bundled_dir() / "medical-fact-check.v1.yaml", root)
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    assert (
        "system 'A': the passages of 2 of its 4 claims with passages carry gold flags, those "
        "of the other 2 none: auto attributed the first by gold evidence"
    ) in err
    # claims 1-2 by gold evidence: verification (the judge's codes decide claims 3-4)
    stages = _stages(root / "attribution" / "d")
    assert stages["s1"] == stages["s2"] == "verification"


def test_the_report_says_a_system_attributed_by_gold_evidence_and_by_the_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the attribution of the data set above, in a study folder: the report's first line and
    # run box said nothing of claims 3-4 (attributed by the judge's codes, not as retrieval
    # failures); the same data with every passage flagged, and a fifth claim retrieving no
    # passage at all (no strategy decides it), has nothing to say
    said = "system 'A': the passages of 2 of its 4 claims with passages carry gold flags"
    for flag_the_others in (True, False):
        root = tmp_path / str(flag_the_others)
        root.mkdir()
        traces = _gold_traces(root, flag_the_others)
        if flag_the_others:
            rows = [json.loads(line) for line in traces.read_text().splitlines()]
            bare = {**rows[-1], "question_id": "q5", "sentence_id": "s5", "claim_id": "c5"}
            rows.append({**bare, "passages": []})
            traces.write_text("".join(json.dumps(r) + "\n" for r in rows))
        out = root / "attribution" / "d"
        code, _, err = run_cli(["attribute", "--from", str(traces), "-o", str(out)], capsys)
        assert code == 0, err
        assert (said in err) is not flag_the_others
        code, _, err = run_cli(["report", str(root), "-o", str(root / "report")], capsys)
        assert code == 0, err
        page = (root / "report" / "index.html").read_text(encoding="utf-8").replace("&#39;", "'")
        if flag_the_others:
            assert _stages(out)["s5"] == "retrieval"  # 'no passage retrieved'
            assert said not in err and "gold flags" not in page
            continue
        assert err.startswith(f"Assumed: {said}, those of the other 2 none")
        assert f"Assumed: {said}" in page


def test_attribute_top_k_says_claims_whose_ranks_skip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # claim 1 kept the retriever's ranks 1, 3, 5 (a reranker's pick), claim 2 ranks 1, 2, 5:
    # --top-k 2 judged and attributed one passage of claim 1 (rank <= 2), two of claim 2,
    # with no word that claim 1 holds 3
    rows = []
    for k, ranks in ((1, (1, 3, 5)), (2, (1, 2, 5))):
        rows.append(
            {
                "system": "A",
                "question_id": f"q{k}",
                "sentence_id": f"s{k}",
                "claim_id": f"c{k}",
                "claim": f"drug X{k} lowers blood pressure",
                "verdict": "supported",
                "retriever": "bm25",
                "evidence_source": "retrieved",
                "passages": [
                    {"passage_id": f"p{k}{r}", "rank": r, "text": f"Trial {k}.{r} on drug X{k}."}
                    for r in ranks
                ],
            }
        )
    traces = tmp_path / "t.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    said = "--top-k 2: 1 claim(s) hold fewer than 2 passages ranked 2 or better though they hold"
    for top_k, expected in (("2", True), ("5", False)):
        out = tmp_path / f"att{top_k}"
        args = ["attribute", "--from", str(traces), "--top-k", top_k, "-o", str(out)]
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
        if expected:
            first = err.splitlines()[0]
            assert first.startswith(said)
            assert "(first: system 'A', claim 'c1': 1 of its 3)" in first
        else:  # the top 5 holds all 3 of each: nothing to say
            assert "hold fewer than" not in err
