"""Session 11's known open shapes, each with a hand-computed value or the exact refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def test_compare_file_with_systems_names_the_id_column_and_rows_sharing_an_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --systems A,B passed over the 'id' column as before, but the first line said "unit ids:
    # none" and so never that unit 2 is on two rows (4 rows = 4 units of every test, 3 ids).
    path = tmp_path / "o.csv"
    path.write_text("id,sysA,sysB,sysC\n1,1,1,0\n2,0,0,1\n2,1,0,1\n4,0,1,0\n")
    code, out, _ = run_cli(["compare", str(path), "--systems", "sysA,sysB"], capsys)
    first = out.splitlines()[0]
    assert code == 0
    assert first.startswith("Assumed: systems (2) (given with --systems): sysA, sysB; unit ids: ")
    assert "unit ids: column(s) 'id' (2 rows share an id, e.g. '2': each row counts" in first
    # --unit-column names it too; a system named like an id stays a system, not an id
    code, out, _ = run_cli(
        ["compare", str(path), "--systems", "sysA,sysB", "--unit-column", "id"], capsys
    )
    assert code == 0 and "unit ids: column(s) 'id' (2 rows share" in out.splitlines()[0]
