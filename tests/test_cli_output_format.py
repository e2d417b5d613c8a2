"""One ``--format`` enum for every command (issue 17): defined once, refused with one line."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from failcodes.cli.output_format import OutputFormat

CLI = Path(__file__).resolve().parent.parent / "src" / "failcodes" / "cli"


def test_output_format_is_defined_once_and_every_format_option_uses_it() -> None:
    defined: list[str] = []
    str_typed: list[str] = []
    for path in sorted(CLI.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            is_enum = isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id == "StrEnum" for b in node.bases
            )
            if isinstance(node, ast.ClassDef) and is_enum:
                # an enum with a json/text/table member is an output format (md/latex is not)
                values = {
                    stmt.value.value
                    for stmt in node.body
                    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
                }
                if values & {"json", "text", "table"}:
                    defined.append(f"{path.name}:{node.name}")
            # Annotated[str, typer.Option("--format", ...)]: a format typed as a bare string
            if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "Annotated":
                text = ast.unparse(node.slice)
                if text.startswith("str,") and "'--format'" in text:
                    str_typed.append(f"{path.name}:{node.lineno}")
    assert defined == ["output_format.py:OutputFormat"]
    assert str_typed == []
    assert [f.value for f in OutputFormat] == ["table", "json", "csv"]


@pytest.mark.parametrize(
    "args",
    [
        ("attribute", "--from", "x.jsonl", "--codebook", "c.yaml", "--format", "csv"),
        ("codebook", "show", "--format", "csv"),
    ],
)
def test_a_format_the_command_cannot_write_is_one_line(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "failcodes", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--format csv: this command writes table or json" in lines[0]
