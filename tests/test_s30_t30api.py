"""Session 30, helper t30api: the Python layer says what the CLI says.

Each test names what main gave and the value worked by hand (or by an independent package)
beside the assertion.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

import failcodes as fc
from failcodes.errors import ConfigError

#: Three raters of 30 units (a/b): 21 unanimous units (12 a, 9 b); on 9 units one rater
#: dissents (each rater 3 times). Their row-wise majority beside them as ``R_all``.
THREE = [("a", "a", "a")] * 12 + [("b", "b", "b")] * 9
THREE += [("b", "a", "a"), ("a", "b", "a"), ("a", "a", "b"), ("b", "a", "a"), ("a", "b", "a")]
THREE += [("a", "b", "b"), ("b", "a", "b"), ("b", "b", "a"), ("a", "b", "b")]


def _majority_frame() -> pd.DataFrame:
    frame = pd.DataFrame(THREE, columns=["r1", "r2", "r3"])
    frame.insert(0, "unit", range(1, 31))
    frame["R_all"] = [Counter(r).most_common(1)[0][0] for r in THREE]
    return frame


def test_ratings_from_frame_says_a_majority_column_read_as_a_rater() -> None:
    """Before: ratings_from_frame + agreement_table on r1..r3 and their majority R_all gave
    the 4-rater Fleiss 0.696 with no word (only the agree command's first line said it);
    the table's repr was the values matrix. Now the table and the results carry agree's
    first line in Python words, and both reprs show it."""
    table = fc.ratings_from_frame(_majority_frame())
    clause = (
        "R_all equals the row-wise majority of the other columns on 30 of 30 rows (the other "
        "columns equal theirs on 90%): a consensus of r1, r2 and r3? read here as a rater "
        "(raters=['r1', 'r2', 'r3'] leaves it out)"
    )
    assert len(table.notes) == 1 and clause in table.notes[0]
    assert table.notes[0].startswith("Assumed: raters (4): r1, r2, r3, R_all;")
    assert clause in repr(table) and "30 units x 4 raters" in repr(table)
    results = fc.agreement_table(table, ["fleiss"])
    assert results.notes == table.notes and clause in repr(results)
    # Fleiss by hand, n = 4: P_i = 1 on 21 units, 0.5 on 9, mean 0.85; p_a = 67/120,
    # P_e = 7298/14400; kappa = (0.85 - 0.506806) / 0.493194 = 0.695860 (statsmodels 0.6958603)
    assert results[0].value == pytest.approx(0.6958603, abs=1e-6)
    # the way the note names: the three raters, by hand (n = 3): P_i = 1 or 1/3, mean 0.8;
    # p_a = 50/90, P_e = 41/81; kappa = (0.8 - 41/81) / (40/81) = 0.595. No clause then.
    kept = fc.ratings_from_frame(_majority_frame(), raters=["r1", "r2", "r3"])
    assert "consensus" not in kept.notes[0]
    assert fc.agreement_table(kept, ["fleiss"])[0].value == pytest.approx(0.595)


def test_a_request_given_an_open_file_names_its_keyword_and_the_path(tmp_path: Path) -> None:
    """Before: AgreeRequest(file=open(path)) said pydantic's "FILE: Input is not a valid
    path for <class 'pathlib.Path'>"; MetricsRequest(traces=open(path)) was accepted, each
    line of the file read as a path (30 paths '1,a,a,a,a\\n', ...). Now one line names the
    keyword, what was given and the path to give."""
    path = tmp_path / "r.csv"
    _majority_frame().to_csv(path, index=False)
    with path.open() as f, pytest.raises(ConfigError) as caught:
        fc.AgreeRequest(file=f)
    assert str(caught.value) == (
        f"file: an open file (TextIOWrapper of {str(path)!r}), not a path: give file={str(path)!r}"
    )
    with path.open() as f, pytest.raises(ConfigError) as caught:
        fc.MetricsRequest(traces=f, labels=path)
    assert str(caught.value) == (
        f"traces: an open file (TextIOWrapper of {str(path)!r}), not a path: give "
        f"traces=[{str(path)!r}]"
    )
    with pytest.raises(ConfigError) as caught:
        fc.CompareRequest(file=io.BytesIO(b"id,a,b\n"))
    assert str(caught.value) == (
        "file: a file object (BytesIO), not a path: write it to a file, give its path"
    )


def test_a_list_of_paths_given_one_path_is_that_path_alone(tmp_path: Path) -> None:
    """Before: MetricsRequest(traces='t.jsonl') said "--traces: Input should be a valid
    list" (a str or a Path for a list field): one path is what a user means."""
    for given in ("t.jsonl", Path("t.jsonl")):
        request = fc.MetricsRequest(traces=given, labels="l.jsonl")
        assert request.traces == [Path("t.jsonl")]
        assert request.argv() == ["metrics", "--traces", "t.jsonl", "--labels", "l.jsonl"]


def test_a_path_from_the_home_folder_and_one_statistic_read_as_meant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: AgreeRequest(file='~/r.csv') said "~/r.csv: file not found" (no shell
    expands ~ in Python) and stat='fleiss' said "--stat: Input should be a valid list".
    Now ~/ is the home folder and one statistic is a list of one."""
    monkeypatch.setenv("HOME", str(tmp_path))
    _majority_frame().to_csv(tmp_path / "r.csv", index=False)
    request = fc.AgreeRequest(file="~/r.csv", stat="fleiss", bootstrap=0)
    assert request.file == tmp_path / "r.csv" and request.stat == ["fleiss"]
    result = fc.run(request, note=None)
    # Fleiss of the four columns, by hand (see the first test): 0.695860
    assert [r["value"] for r in result.rows] == [pytest.approx(0.6958603, abs=1e-6)]
    traces = fc.MetricsRequest(traces=[Path("~/t.jsonl")], labels="~/l.jsonl")
    assert traces.traces == [tmp_path / "t.jsonl"] and traces.labels == tmp_path / "l.jsonl"


def test_a_relative_path_not_found_names_the_folder_it_was_looked_for_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a request built with a relative path and run after os.chdir (a notebook)
    said "r.csv: file not found", naming no folder. Now it names the working folder."""
    monkeypatch.chdir(tmp_path)
    _majority_frame().to_csv(tmp_path / "r.csv", index=False)
    request = fc.AgreeRequest(file="r.csv", stat="fleiss", bootstrap=0)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(fc.FailcodesError) as caught:
        fc.run(request, note=None)
    assert str(caught.value) == f"r.csv: file not found (a relative path: looked in {elsewhere})"
    monkeypatch.chdir(tmp_path)  # back where it was built: Fleiss 0.695860 (by hand, above)
    assert fc.run(request, note=None).rows[0]["value"] == pytest.approx(0.6958603, abs=1e-6)
