"""The codebook is data: it imports neither annotations nor units (issue 17)."""

from __future__ import annotations

import ast

from tests.conftest import REPO


def test_codebook_package_imports_no_annotations_or_units() -> None:
    forbidden = {"failcodes.annotations", "failcodes.units", "failcodes.migration"}
    for path in sorted((REPO / "src" / "failcodes" / "codebook").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                assert node.module not in forbidden, f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name not in forbidden, f"{path.name} imports {alias.name}"
