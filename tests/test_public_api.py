"""The curated top-level API: every name resolves, and ``import failcodes`` stays cheap."""

from __future__ import annotations

import json
import subprocess
import sys

import failcodes
from tests.conftest import REPO


def test_every_public_name_resolves() -> None:
    for name in failcodes.__all__:
        assert getattr(failcodes, name) is not None, name
    assert failcodes.run_judge is failcodes.judge.run_judge  # the same objects, re-exported
    assert failcodes.UnitKind.RETRIEVAL.value == "retrieval"


def test_import_failcodes_loads_no_heavy_module() -> None:
    code = (
        "import sys, failcodes; "
        "print([m for m in ('pandas', 'failcodes.judge', 'failcodes.metrics') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip() == "[]"


def test_the_notebook_imports_only_the_public_api() -> None:
    nb = json.loads((REPO / "notebooks" / "walkthrough.ipynb").read_text("utf-8"))
    imports = [
        line.strip()
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if "failcodes" in line and line.lstrip().startswith(("from ", "import "))
    ]
    assert imports and all(line.startswith("from failcodes import ") for line in imports), imports
