"""A study's traces file that holds no trace: one stderr line, not a traceback (redteam9).

Found by a differential check (1e63f21 vs main): ``failcodes report`` on a study folder whose
``data/X.traces.parquet`` has the tool's marker but zero rows raised ``KeyError: 'system'``
in the verdict-share table (old and new alike).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

TRACE = (
    '{"system":"A","question_id":"q1","sentence_id":"s1","claim_id":"c1","claim":"x",'
    '"verdict":"supported"}\n'
)


def test_report_on_a_traces_file_with_no_rows_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as pq

    raw = tmp_path / "t.jsonl"
    raw.write_text(TRACE)
    own = tmp_path / "study" / "data" / "paper.traces.parquet"
    own.parent.mkdir(parents=True)
    code, _, err = run_cli(["ingest", "generic", str(raw), "-o", str(own)], capsys)
    assert code == 0, err
    kept = pq.ParquetFile(own)
    metadata = kept.metadata.metadata
    pq.write_table(kept.read().slice(0, 0).replace_schema_metadata(metadata), own)
    out = tmp_path / "rep"
    code, _, err = run_cli(["report", str(tmp_path / "study"), "-o", str(out)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "paper.traces.parquet" in lines[0]
    assert "no traces" in lines[0]
    assert not out.exists()
