"""One spelling key (failcodes.spelling) for tables and label rules: a leaf, no pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from failcodes.spelling import spelling_key

SRC = Path(__file__).resolve().parent.parent / "src"


def test_case_spacing_and_unicode_form_fold_to_one_key() -> None:
    # by hand: casefold 'ß' is 'ss'; NFC joins 'e' + U+0301 into U+00E9; split() drops the
    # outer spaces and joins inner runs (a tab, two spaces) with one space
    assert spelling_key("  Dr\t A  ") == "dr a"
    assert spelling_key("Stra\u00dfe") == spelling_key("STRASSE") == "strasse"
    assert spelling_key("caf\u0065\u0301") == spelling_key("Caf\u00e9") == "caf\u00e9"
    assert spelling_key("yes") != spelling_key("yes no")  # words stay words


def test_the_leaf_and_the_label_rule_path_import_no_pandas() -> None:
    # label_targets folded rows' texts with a copy of the key; it imports the leaf, not the
    # pandas-heavy stats.tables
    code = (
        "import sys\n"
        "import failcodes.spelling, failcodes.ingest.label_targets\n"
        "print(sorted(m for m in ('pandas', 'numpy', 'failcodes.stats.tables') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC), "PATH": ""},
    )
    assert out.stdout.strip() == "[]"
