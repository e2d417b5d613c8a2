"""Session 21 (t21rel): saved agreement/comparison files checked where the study moved; the
comparisons JSON written from Python as the CLI writes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from failcodes.hashing import file_sha256
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


def test_a_comparisons_file_written_from_python_is_the_clis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import failcodes
    from failcodes.commands.compare import CompareRequest
    from tests.test_s20_t20s2a import made_study

    root = made_study(tmp_path / "st")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    traces, labels = root / "data/d.traces.parquet", root / "data/d.labels.jsonl"
    compare = ["compare", "--traces", str(traces), "--labels", str(labels), "--resamples", "20"]
    code, out, err = run_cli([*compare, "--format", "json"], capsys)
    assert code == 0, err
    # the payload the report checks (its sha256 digests) was built in cli/compare.py alone
    request = CompareRequest(traces=[traces], labels=labels, resamples=20)
    payload = failcodes.run(request, note=lambda _: None).payload()
    written = json.dumps(payload, indent=2) + "\n"
    assert written == out
    assert payload["sha256"] == {str(traces): file_sha256(traces), str(labels): file_sha256(labels)}
    (root / "comparisons").mkdir()
    (root / "comparisons/d.json").write_text(written, encoding="utf-8")
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r")], capsys)
    assert code == 0, err
    # q1s0, q2s0 errors: sysA TP 2 -> F1 1; sysB TP 1, FN 1 -> F1 2/3; A - B = 0.333
    table = (tmp_path / "r/tables/comparisons.md").read_text(encoding="utf-8")
    assert "| f1_difference=0.333 |" in table
