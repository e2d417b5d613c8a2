"""Session 20 red team of the study and Python-library layers (t20red3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from failcodes.codebook import bundled, dump
from failcodes.redact import redact_url
from failcodes.study import init_study
from tests.cli_helpers import run_cli


def test_a_base_urls_dashed_key_parameter_is_redacted_in_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `?api-key=` (Azure's spelling: a dash) and `?subscription-key=` were printed as given by
    # `run --plan` and written into every judge step's log (.failcodes/logs/*.log), while
    # `?api_key=` was masked: the names were compared exactly with ("key", "api_key", ...)
    layout = init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8").replace(
        '# base_url = "http://127.0.0.1:8000/v1"',
        'base_url = "http://127.0.0.1:8000/v1?api-key=CANARY1&Subscription-Key=CANARY2&v=1"',
    )
    layout.study_file.write_text(text, encoding="utf-8")
    code, out, err = run_cli(["run", str(layout.root), "--plan"], capsys)
    assert code == 0, err
    judge = [line for line in out.splitlines() if line.startswith("failcodes judge ")]
    assert len(judge) == 2  # retrieval and reasoning
    expected = "--base-url 'http://127.0.0.1:8000/v1?api-key=***&Subscription-Key=***&v=1'"
    assert all(expected in line for line in judge)
    assert "CANARY" not in out + err


def test_redact_url_reads_key_like_names_by_their_ending() -> None:
    url = "https://h.example/v1?x-api-key=a&access_token=b&code=c&model=m&api-version=2024"
    assert redact_url(url) == (
        "https://h.example/v1?x-api-key=***&access_token=***&code=***&model=m&api-version=2024"
    )


def _rows(verdicts: dict[str, str]) -> str:
    rows = [
        {
            "system": "sysC",
            "question_id": sid[:2],
            "sentence_id": sid,
            "sentence": f"Drug {sid} lowers the risk.",
            "verdict": verdict,
            "reasoning": f"The trial of drug {sid} says {verdict}.",
            "passages": [{"passage_id": f"p-{sid}", "rank": 1, "text": f"Trial of drug {sid}."}],
        }
        for sid, verdict in verdicts.items()
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def _labels(errors: dict[str, bool]) -> str:
    return "".join(
        json.dumps({"sentence_id": sid, "question_id": sid[:2], "has_error": e}) + "\n"
        for sid, e in errors.items()
    )


STALE_STUDY = """\
name = "stale"
codebook = "medical-fact-check.v1.yaml"
[[datasets]]
name = "d3"
[[datasets.ingest]]
adapter = "generic"
paths = ["sysC.jsonl"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"
[metrics]
bootstrap = 0
[judge]
kinds = {kinds}
[review]
labelstudio = false
"""


def test_a_report_refuses_judge_runs_and_attribution_its_plan_no_longer_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # sysC refutes q1s0 and q2s0, supports q1s1 and q2s1; the clinicians first said only q1s0
    # is wrong: one false alarm (q2s0), so the study judged and attributed 1 disagreement. The
    # label of q2s0 corrected to an error: TP 2, FP 0, FN 0, TN 2, no disagreement left, so
    # `run` plans no judge or attribute step for d3 and the report showed the earlier run's
    # 'd3/sysC 1' attribution row, its Table 8 column and quote checks, exit 0
    root = tmp_path / "st"
    root.mkdir()
    (root / "medical-fact-check.v1.yaml").write_text(dump(bundled()), encoding="utf-8")
    verdicts = {"q1s0": "refuted", "q1s1": "supported", "q2s0": "refuted", "q2s1": "supported"}
    (root / "sysC.jsonl").write_text(_rows(verdicts), encoding="utf-8")
    labels = {"q1s0": True, "q1s1": False, "q2s0": False, "q2s1": False}
    (root / "labels.jsonl").write_text(_labels(labels), encoding="utf-8")
    study = root / "failcodes.toml"
    study.write_text(STALE_STUDY.format(kinds='["retrieval", "reasoning"]'), encoding="utf-8")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    assert (root / "attribution/d3/attribution.csv").is_file()
    (root / "labels.jsonl").write_text(_labels({**labels, "q2s0": True}), encoding="utf-8")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 2
    [row] = json.loads((root / "metrics/d3.json").read_text(encoding="utf-8"))
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (2, 0, 0, 2)  # by hand, above
    [line] = err.strip().splitlines()[-1:]
    assert (
        "the folder holds outputs of an earlier run that the study's plan no longer has: "
        "attribution/d3 (no disagreement with a claim now), judge/d3/retrieval (no "
        "disagreement now), judge/d3/reasoning (no disagreement now); the report would show "
        "their codes and counts as this study's; delete them (or move them out of the study "
        "folder), or plan them again (step 'report' failed" in line
    )
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r")], capsys)
    assert code == 2 and not (tmp_path / "r").exists()
    # the labels as they were, and reasoning taken out of [judge] kinds: its run is refused
    (root / "labels.jsonl").write_text(_labels(labels), encoding="utf-8")
    study.write_text(STALE_STUDY.format(kinds='["retrieval"]'), encoding="utf-8")
    recoded = root / "judge/d3/reasoning.v0002"  # a re-code run of the kind (after a bump)
    recoded.mkdir()
    (recoded / "recode.jsonl").write_text("", encoding="utf-8")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 2
    assert (  # both named at once: the run read (the re-code run), then the one under it
        "plan no longer has: judge/d3/reasoning (not in [judge] kinds), "
        "judge/d3/reasoning.v0002 (not in [judge] kinds);" in err
    )
    shutil.rmtree(root / "judge/d3/reasoning")
    shutil.rmtree(recoded)
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    # the traces ingest taken out (d3 labels only): its P/R/F1 rows (TP 1, FP 1, FN 0, TN 2)
    # were still shown from metrics/d3.json, as this study's
    study.write_text(
        study.read_text(encoding="utf-8")
        .replace('adapter = "generic"\npaths = ["sysC.jsonl"]\n', "")
        .replace("[[datasets.ingest]]\n[[datasets.ingest]]", "[[datasets.ingest]]"),
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 2
    assert (
        "plan no longer has: data/d3.traces.parquet (labels only now), metrics/d3.json (labels "
        "only now), disagreements/d3.jsonl (labels only now), attribution/d3 (labels only now), "
        "judge/d3/retrieval (labels only now);" in err
    )


def test_stale_reviews_name_each_reason_once() -> None:
    # after a bump that split 'indirect' and removed 'unverifiable_source', 15 of 30 reviews
    # were stale: 'indirect' alone, 'unverifiable_source' alone, or both (one reason string
    # joined with '; '). The note read "(e: 'indirect' ...; e: 'indirect' ...; t: ... (and 1
    # more))": 3 distinct strings, the same reason twice and a 'more' that was not there
    from failcodes.report.rundir import _version_notes
    from failcodes.reviewversions import FileReviews, ReviewVersions

    split = "evidence_polarity: 'indirect' was split or removed in version 2"
    removed = "trustworthy: 'unverifiable_source' was split or removed in version 2"
    stale = {"u1": split, "u2": f"{split}; {removed}", "u3": removed}
    got = FileReviews(stale=stale, versions={1})
    [note] = _version_notes(
        ReviewVersions(target=bundled(version=2), files={"review/a.jsonl": got})
    )
    assert note.endswith(
        f"; 3 stale, left out of the agreement and the corrected tables ({split}; {removed})"
    )
