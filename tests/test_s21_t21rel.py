"""Session 21 (t21rel): saved agreement/comparison files checked where the study moved; the
comparisons JSON written from Python as the CLI writes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

# dr_a, dr_b on 10 units, 8 agree; unit 8 is corrected after the move
RATINGS = ["yes,yes", "yes,yes", "no,no", "no,no", "yes,no", "no,no", "yes,yes", "no,yes"]
RATINGS += ["no,no", "yes,yes"]


def _ratings(path: Path, unit8: str) -> None:
    rows = [unit8 if i == 8 else r for i, r in enumerate(RATINGS, 1)]
    path.write_text("unit,dr_a,dr_b\n" + "".join(f"{i},{r}\n" for i, r in enumerate(rows, 1)))


def test_an_agreement_of_ratings_inside_a_moved_study_is_still_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "st"
    (root / "agreement").mkdir(parents=True)
    _ratings(root / "ratings.csv", "no,yes")
    saved = root / "agreement" / "drs.json"
    agree = ["agree", str(root / "ratings.csv"), "--stat", "cohen", "--bootstrap", "0"]
    code, _, err = run_cli([*agree, "-o", str(saved)], capsys)
    assert code == 0, err
    # named from the study's root, not by absolute path (which the move below leaves behind)
    [row] = json.loads(saved.read_text(encoding="utf-8"))
    assert list(row["sha256"]) == ["ratings.csv"]
    assert row["command"] == "failcodes agree ratings.csv --stat cohen --bootstrap 0"
    moved = tmp_path / "elsewhere" / "st"
    moved.parent.mkdir()
    shutil.move(root, moved)
    code, _, err = run_cli(["report", str(moved), "-o", str(tmp_path / "r1")], capsys)
    assert code == 0, err
    html = (tmp_path / "r1/index.html").read_text(encoding="utf-8")
    assert "not checked" not in html  # main: 'computed from .../st/ratings.csv, not there now'
    # 8 of 10 agree, each says yes on 5 of 10: pe = 0.5, Cohen (0.8 - 0.5) / 0.5 = 0.600
    assert "| 0.600 [" in (tmp_path / "r1/tables/agreement.md").read_text(encoding="utf-8")
    # unit 8 corrected after the move (9 of 10 agree: Cohen 0.800): the old 0.600 is refused
    _ratings(moved / "ratings.csv", "yes,yes")
    code, _, err = run_cli(["report", str(moved), "-o", str(tmp_path / "r2")], capsys)
    assert code == 2 and not (tmp_path / "r2").exists()
    assert (
        f"{moved / 'agreement/drs.json'}: was computed from ratings.csv as it was then, changed "
        f"since (a rating corrected?): the report would show the old agreement; compute it "
        f"again in {moved} (failcodes agree ratings.csv --stat cohen --bootstrap 0 -o "
        f"{moved / 'agreement/drs.json'}), or delete it" in err
    )
