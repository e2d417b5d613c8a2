"""Session 23, lead: agree -o writes JSON, so a name other than .json is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


@pytest.mark.parametrize("name", ["drs.csv", "drs.JSON", "drs.jsonl"])
def test_agree_out_not_named_json_is_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # `agree r.csv -o STUDY/agreement/drs.csv` wrote JSON under a .csv name at exit 0, and a
    # study's report reads agreement/*.json alone: the agreement dropped out of it unsaid
    import failcodes as fc
    from failcodes.errors import FailcodesError

    ratings = tmp_path / "r.csv"
    ratings.write_text("unit,a,b\nu1,1,1\nu2,0,1\nu3,1,1\nu4,0,0\n", encoding="utf-8")
    (tmp_path / "agreement").mkdir()
    out = tmp_path / "agreement" / name
    code, _, err = run_cli(["agree", str(ratings), "--stat", "percent", "-o", str(out)], capsys)
    assert code == 2
    assert f"-o {out}: the rows are written as one JSON document; name the file NAME.json" in err
    assert not out.exists()
    with pytest.raises(FailcodesError, match=r"name the file NAME\.json"):
        fc.run(fc.AgreeRequest(file=ratings, stat=["percent"], out=out), note=lambda _: None)
    assert not out.exists()
    # named .json it is written: by hand u1 1/1, u2 0/1, u3 1/1, u4 0/0 -> 3 of 4 agree
    good = out.with_name("drs.json")
    code, _, _ = run_cli(["agree", str(ratings), "--stat", "percent", "-o", str(good)], capsys)
    assert code == 0
    (row,) = json.loads(good.read_text(encoding="utf-8"))
    assert (row["statistic"], row["value"]) == ("percent", 0.75)
