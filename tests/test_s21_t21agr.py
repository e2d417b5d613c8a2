"""Session 21 (t21agr): a saved agreement/<name>.json is checked against what `agree` read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.codebook import bundled, dump
from tests.cli_helpers import run_cli

# an agreement-only study: one [[agreements]] step; agreement/drs.json is written by hand
STUDY = """\
name = "stale-agreement"
codebook = "medical-fact-check.v1.yaml"
[[agreements]]
name = "planned"
path = "planned.csv"
statistics = ["percent"]
bootstrap = 0
"""

# dr_a, dr_b on units 1-10; unit 8 is the one corrected below
RATINGS = [
    ("yes", "yes"),
    ("yes", "yes"),
    ("no", "no"),
    ("no", "no"),
    ("yes", "no"),
    ("no", "no"),
    ("yes", "yes"),
    ("no", "yes"),
    ("no", "no"),
    ("yes", "yes"),
]


def _ratings(path: Path, unit8_a: str) -> None:
    rows = [(a if i != 8 else unit8_a, b) for i, (a, b) in enumerate(RATINGS, 1)]
    text = "unit,dr_a,dr_b\n" + "".join(f"{i},{a},{b}\n" for i, (a, b) in enumerate(rows, 1))
    path.write_text(text, encoding="utf-8")


def _cohen(report: Path) -> str:
    [row] = [
        line
        for line in (report / "tables/agreement.md").read_text().splitlines()
        if "drs" in line and line.startswith("|")
    ]
    return row


def test_a_report_refuses_an_agreement_of_ratings_corrected_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "st"
    root.mkdir()
    (root / "failcodes.toml").write_text(STUDY, encoding="utf-8")
    (root / "medical-fact-check.v1.yaml").write_text(dump(bundled()), encoding="utf-8")
    (root / "planned.csv").write_text("unit,r1,r2\n1,a,a\n2,a,b\n", encoding="utf-8")
    ratings = tmp_path / "ratings.csv"  # outside the study, as a sheet from the clinicians
    _ratings(ratings, "no")
    saved = root / "agreement" / "drs.json"
    agree = ["agree", str(ratings), "--stat", "cohen", "--bootstrap", "0", "-o", str(saved)]
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    code, _, err = run_cli(agree, capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r1")], capsys)
    assert code == 0, err
    # 8 of 10 agree; dr_a yes 5/10, dr_b yes 5/10: pe = .5*.5 + .5*.5 = .5; (0.8-0.5)/0.5 = 0.6
    assert "| 0.600 [" in _cohen(tmp_path / "r1")
    # unit 8 corrected to yes, yes: 9 of 10 agree; dr_a yes 6/10, dr_b 5/10: pe = .6*.5 + .4*.5
    # = .5; (0.9-0.5)/0.5 = 0.800 (sklearn cohen_kappa_score: 0.8). The report showed 0.600,
    # exit 0: agreement/drs.json is no step of the run, so `failcodes run` left it as it was
    _ratings(ratings, "yes")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 2
    again = f"failcodes agree {ratings} --stat cohen --bootstrap 0 -o {saved}"
    assert (
        f"{saved}: was computed from {ratings} as it was then, changed since (a rating "
        "corrected?): the report would show the old agreement; compute it again "
        f"({again}), or delete it" in err
    )
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r2")], capsys)
    assert code == 2 and not (tmp_path / "r2").exists()
    code, _, err = run_cli(again.split()[1:], capsys)  # the command the line names
    assert code == 0, err
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r3")], capsys)
    assert code == 0, err
    assert "| 0.800 [" in _cohen(tmp_path / "r3")
    # the file it was computed from moved away: not checked, and said beside the table
    ratings.rename(tmp_path / "moved.csv")
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r4")], capsys)
    assert code == 0, err
    note = f"agreement/drs.json: computed from {ratings}, not there now: not checked"
    assert note in (tmp_path / "r4/index.html").read_text(encoding="utf-8")
    # an agreement file recording no digest (an older failcodes', or by hand): refused
    rows = json.loads(saved.read_text(encoding="utf-8"))
    saved.write_text(json.dumps([{k: v for k, v in rows[0].items() if k != "sha256"}]))
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r5")], capsys)
    assert code == 2
    assert f"{saved}: records no digest of the file it was computed from" in err


JUDGED = """\
name = "judge-change"
codebook = "medical-fact-check.v1.yaml"
[[datasets]]
name = "d"
[[datasets.ingest]]
adapter = "generic"
paths = ["traces.jsonl"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"
[metrics]
bootstrap = 0
[judge]
judge = "openai:fake-a"
base_url = "{base_url}"
kinds = ["reasoning"]
[review]
labelstudio = false
"""


def test_report_alone_names_a_judge_step_begun_and_not_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fakeserver import FakeServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-t21agr")
    root = tmp_path / "st"
    root.mkdir()
    (root / "medical-fact-check.v1.yaml").write_text(dump(bundled()), encoding="utf-8")
    # sysA flags q1s0 and q2s0, sysB q1s0 only; both are errors: sysB's q2s0 is the one
    # disagreement (a false negative), one reasoning unit to judge
    rows = [
        {
            "system": system,
            "question_id": sid[:2],
            "sentence_id": sid,
            "sentence": f"Drug {sid} lowers the risk.",
            "verdict": "refuted" if sid in flagged else "supported",
            "reasoning": f"{system} read the trial of drug {sid}.",
            "passages": [{"passage_id": f"p-{sid}", "rank": 1, "text": f"Trial of drug {sid}."}],
        }
        for system, flagged in (("sysA", {"q1s0", "q2s0"}), ("sysB", {"q1s0"}))
        for sid in ("q1s0", "q1s1", "q2s0", "q2s1")
    ]
    (root / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = [
        {"sentence_id": s, "question_id": s[:2], "has_error": s.endswith("s0")}
        for s in ("q1s0", "q1s1", "q2s0", "q2s1")
    ]
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    with FakeServer() as fake:
        study = JUDGED.format(base_url=fake.openai_base_url)
        (root / "failcodes.toml").write_text(study, encoding="utf-8")
        code, _, err = run_cli(["run", str(root)], capsys)
        assert code == 0, err
        assert fake.stats()["calls"]["openai"] == 1
        # the judge's model changed in the study file: its run folder holds fake-a's codes,
        # so the judge step stops (it began: the run state no longer has it)
        changed = study.replace("openai:fake-a", "openai:fake-b")
        (root / "failcodes.toml").write_text(changed, encoding="utf-8")
        code, _, err = run_cli(["run", str(root)], capsys)
        assert code == 2 and "holds a run with judge='openai:fake-a'" in err
    # `report` alone showed fake-a's codes at exit 0 and named no step: the changed steps
    # were only those the run state still held
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r")], capsys)
    assert code == 0, err
    said = (
        "these steps began and did not finish (failed, or stopped): judge reasoning d; this "
        "report shows the outputs of that run, not of the study as it is: run "
        f"`failcodes run {root}` to bring them up to date"
    )
    assert said in err
    page = (tmp_path / "r/index.html").read_text(encoding="utf-8")
    assert (
        "Not up to date" in page
        and "did not finish (failed, or stopped): judge reasoning d" in page
    )
