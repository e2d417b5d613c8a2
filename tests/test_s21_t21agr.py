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
