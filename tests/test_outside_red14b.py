"""Outside red-team of agreement, review and corrected shares, session 14 (t14red2).

Designs the other tests do not use. Each test states the input, what failcodes gave at exit 0
before the fix, and the value computed by hand (or by an independent package) beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.annotations import Annotation, CoderKind
from failcodes.codebook import bundled
from failcodes.units import UnitKind
from tests.cli_helpers import AGREE_JSON, run_cli

CB = bundled()


def _ann(unit: str, coder: str, kind: CoderKind, entity: str, scope: str) -> Annotation:
    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=CB.ref(),
        coder=coder,
        coder_kind=kind,
        codes={"entity_match": entity, "scope": scope},
    )


def test_pooled_rows_count_a_coder_who_skipped_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three coders, the second skipped unit u4: every pooled row said 'raters 2' (it counted
    the coders who rated every unit), beside 'raters 3' on the percent and dimension rows.
    Three coders rated (alice and the judge all four units, bob three of them)."""
    rows = [
        ("u1", "exact_entity", "exact_scope"),
        ("u2", "partial_entity", "broader_scope"),
        ("u3", "exact_entity", "exact_scope"),
        ("u4", "entity_mismatch", "narrower_scope"),
    ]
    anns = []
    for unit, entity, scope in rows:
        anns.append(_ann(unit, "alice", CoderKind.HUMAN, entity, scope))
        if unit != "u4":
            anns.append(_ann(unit, "bob", CoderKind.HUMAN, entity, scope))
        anns.append(_ann(unit, "judge", CoderKind.LLM, "exact_entity", scope))
    path = tmp_path / "a.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    pooled = {r["statistic"]: r["n_raters"] for r in json.loads(out) if r["scope"] == "pooled"}
    assert pooled == {
        "percent": 3,
        "fleiss": 3,
        "krippendorff": 3,
        "gwet_ac1": 3,
        "brennan_prediger": 3,
    }
