"""Human review vs the judge in the report: per-code agreement in the codebook table."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes import codebook
from failcodes.annotations import Annotation, CoderKind
from failcodes.report.build import build_report
from failcodes.report.rundir import load_run_dir
from failcodes.units import UnitKind


def _write(path: Path, anns: list[Annotation]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8")


def _ann(unit: str, code: str, coder: str, kind: CoderKind) -> Annotation:
    cb = codebook.bundled()
    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=cb.ref(),
        coder=coder,
        coder_kind=kind,
        codes={"entity_match": code},
    )


def test_review_agreement_per_code_in_codebook_table(tmp_path: Path) -> None:
    judge = ["exact_entity", "exact_entity", "partial_entity", "irrelevant"]
    human = ["exact_entity", "partial_entity", "partial_entity", "irrelevant"]
    _write(
        tmp_path / "judge" / "d" / "retrieval" / "annotations.jsonl",
        [_ann(f"u{i}", c, "offline", CoderKind.HEURISTIC) for i, c in enumerate(judge)],
    )
    _write(
        tmp_path / "review" / "alice.jsonl",
        [_ann(f"u{i}", c, "alice@example.org", CoderKind.HUMAN) for i, c in enumerate(human)],
    )
    inputs = load_run_dir(tmp_path)
    assert inputs.agreement is not None
    # who was compared is a column of its own (issue 28: it made every subject too long)
    assert set(inputs.agreement["coders"]) == {"alice@example.org vs offline"}
    rows = inputs.agreement.set_index(["subject", "statistic"])
    # Code exact_entity, present/absent per unit: judge 1,1,0,0; human 1,0,0,0.
    # p_o = 3/4; p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2; kappa = (3/4 - 1/2)/(1 - 1/2) = 0.5
    assert rows.loc[("entity_match: exact_entity", "cohen"), "value"] == pytest.approx(0.5)
    # irrelevant: both 0,0,0,1 -> perfect agreement, kappa 1
    assert rows.loc[("entity_match: irrelevant", "cohen"), "value"] == pytest.approx(1.0)
    # entity_mismatch: never used by either -> kappa is 0/0: undefined, with a reason
    undefined = rows.loc[("entity_match: entity_mismatch", "cohen")]
    assert undefined["value"] is None or undefined["value"] != undefined["value"]
    assert undefined["undefined_reason"]
    assert inputs.codebook_table is not None
    table = inputs.codebook_table
    table = table.assign(code=[str(c).split()[0] for c in table["subcode"]]).set_index("code")
    assert str(table.loc["exact_entity", "Agreement"]).startswith("0.50 [")
    assert str(table.loc["irrelevant", "Agreement"]).startswith("1.00")
    index = build_report(inputs, tmp_path / "report")
    assert "alice@example.org vs offline" in index.read_text()  # in the table's caption
    # paper form: one row per subject, statistics as columns, value [CI]; undefined -> '-'
    md = (tmp_path / "report" / "tables" / "agreement.md").read_text()
    assert "human review vs judge (alice@example.org vs offline)" in md
    header = next(line for line in md.splitlines() if line.startswith("| subject |"))
    assert header.split(" | ")[:3] == ["| subject", "n", "raters"]
    line = next(ln for ln in md.splitlines() if ln.startswith("| entity_match: exact_entity"))
    cohen = header.strip("| ").split(" | ").index("cohen")
    assert line.strip("| ").split(" | ")[cohen].startswith("0.500 [")
