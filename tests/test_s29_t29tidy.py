"""Session 29 (t29tidy): small honest fixes to messages and captions left by t29tab/red/att."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[1]


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


_HEADER = ["system", "question_id", "sentence_id", "claim", "verdict"]
_ROWS = [
    ["gpt-4o", "q1", "q1:s1", "Aspirin lowers fever.", "supported"],
    ["gpt-4o", "q1", "q1:s2", "Aspirin cures cancer.", "refuted"],
]


def test_a_system_name_with_a_cyrillic_letter_names_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'gpt-4\u043e' ends in U+043E CYRILLIC SMALL LETTER O: the refusal said "(case, spacing
    # or Unicode form)", none of which tells the two names apart (they show alike).
    rows = [*_ROWS, ["gpt-4\u043e", "q2", "q2:s1", "Ibuprofen is an NSAID.", "supported"]]
    table = _write_csv(tmp_path / "t.csv", _HEADER, rows)
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert (
        "written another way (a character that looks like another: U+043E CYRILLIC SMALL "
        "LETTER O): it would be scored as a system of its own" in err
    )
    assert len(err.strip().splitlines()) == 1


def test_two_trace_files_naming_a_system_with_a_cyrillic_letter_name_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One system, gpt-4o, in two ingested files, the second spelling it with U+043E: metrics
    # over both refused it "(case, spacing or Unicode form)".
    outs = []
    for i, system in enumerate(["gpt-4o", "gpt-4\u043e"]):
        table = _write_csv(tmp_path / f"t{i}.csv", _HEADER, [[system, *_ROWS[i][1:]]])
        outs.append(tmp_path / f"t{i}.jsonl")
        code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(outs[-1])], capsys)
        assert code == 0, err
    labels = _write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "false"], ["q1", "q1:s2", "true"]],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(outs[0]), "--traces", str(outs[1]), "--labels",
         str(labels), "-m", "refuted", "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert (code, stdout) == (2, "")
    assert "(a character that looks like another: U+043E CYRILLIC SMALL LETTER O)" in err


def test_a_label_id_with_a_cyrillic_letter_names_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'q1:\u04552': U+0455 CYRILLIC SMALL LETTER DZE drawn as s; the refusal gave the code
    # point alone ("U+0455"), now its name too.
    table = _write_csv(tmp_path / "t.csv", _HEADER, _ROWS)
    out = tmp_path / "t.jsonl"
    assert run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)[0] == 0
    labels = _write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "false"], ["q1", "q1:\u04552", "true"]],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"], capsys
    )
    assert (code, stdout) == (2, "")
    assert "U+0455 CYRILLIC SMALL LETTER DZE" in err


@pytest.mark.parametrize("index", ["__index_level_0__", "Unnamed: 0"])
def test_ingest_generic_names_pandas_row_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index: str
) -> None:
    # pandas' to_parquet of a frame with a non-default index writes '__index_level_0__';
    # read_csv of a to_csv file keeps the index as 'Unnamed: 0'. ingest generic refused it
    # as an unknown column naming --map alone (metrics names to_parquet(index=False)).
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    columns = {name: [r[i] for r in _ROWS] for i, name in enumerate(_HEADER)}
    columns[index] = ["7", "9"]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table(columns), path)
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(path), "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert f"field '{index}': unknown column" in err
    assert "index=False" in err and "pandas' row index" in err
    assert len(err.strip().splitlines()) == 1


def test_bench_study_help_shows_generate() -> None:
    # docs/benchmarks.md and the briefs tell people to run bench_study.py --generate DIR; its
    # --help left it out (argparse.SUPPRESS).
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_study.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--generate DIR" in done.stdout
