from pathlib import Path

import pandas as pd

from failcodes.annotations import NOT_ASSESSABLE
from failcodes.codebook import Codebook, Dimension, Part, Subcode
from failcodes.report.build import ReportInputs, build_report
from failcodes.report.html import ReportMeta
from failcodes.units import UnitKind


def _codebook() -> Codebook:
    def dim(did: str, codes: list[str]) -> Dimension:
        subs = tuple(
            Subcode(id=c, label=c, definition=c, high_quality=(i == 0)) for i, c in enumerate(codes)
        )
        return Dimension(id=did, label=did, definition=did, subcodes=subs)

    return Codebook(
        name="cb",
        version=1,
        parts=(
            Part(
                id=UnitKind.RETRIEVAL,
                label="Retrieval",
                dimensions=(dim("entity", ["exact", "partial"]),),
            ),
            Part(
                id=UnitKind.VERIFICATION,
                label="Verification",
                dimensions=(dim("inference", ["valid", "overreach"]),),
            ),
        ),
    )


def test_build_report_writes_every_format(tmp_path: Path) -> None:
    # per_passage_codes / per_trace_steps shapes (only the columns the report reads)
    retrieval = pd.DataFrame(
        [
            ("r1", "scored", "exact", True),
            ("r1", "scored", "partial", False),
            ("r2", "scored", "partial", False),
        ],
        columns=["retriever", "status", "entity", "all_high"],
    )
    reasoning = pd.DataFrame(
        [("v1", "scored", "overreach", False), ("v1", "scored", "valid", True)],
        columns=["verifier", "status", "inference", "all_correct"],
    )
    metrics = [
        {
            "system": "r1",
            "mapping": "refuted",
            "level": "sentence",
            "tp": 1,
            "fp": 1,
            "fn": 1,
            "tn": 1,
            "precision": 0.5,
            "recall": 0.5,
            "f1": 0.5,
            "recall_ci_low": 0.1,
            "recall_ci_high": 0.9,
        },
    ]
    inputs = ReportInputs(
        meta=ReportMeta(
            title="Demo", created="2026-11-30", judge="offline", judge_is_heuristic=True
        ),
        metrics=metrics,
        codebook=_codebook(),
        per_passage=retrieval,
        per_trace=reasoning,
        attribution={"retrieval": 2, "verification": 1},
        error_codes={"retrieval": {"partial": 2}, "verification": {"overreach": 1}},
        accumulation=[2, 0, 0, 0],
    )
    index = build_report(inputs, tmp_path)
    page = index.read_text()
    for stem in ("prf_sentence", "retrieval_quality", "reasoning_steps"):
        for suffix in ("md", "tex", "csv"):
            assert (tmp_path / "tables" / f"{stem}.{suffix}").exists(), (stem, suffix)
    for stem in ("recall_f1", "retrieval_quality", "reasoning_steps", "attribution", "saturation"):
        assert (tmp_path / "figures" / f"{stem}.png").exists()
        assert (tmp_path / "figures" / f"{stem}.pdf").exists()
    # r1: 1 of 2 units exact -> 50.0; r2: 0 of 1 -> 0.0 (hand-computed shares)
    md = (tmp_path / "tables" / "retrieval_quality.md").read_text()
    # columns headed with the rows their shares are over (r1: 2 coded rows, r2: 1)
    assert "| dimension | code | r1 (n=2) | r2 (n=1) |" in md
    assert "| entity | exact | 50.0 | 0.0 |" in md
    assert "|  | All dimensions high quality | 50.0 | 0.0 |" in md
    # the CSV keeps the ids and the unrounded shares
    csv = pd.read_csv(tmp_path / "tables" / "retrieval_quality.csv")
    summary = csv[csv["code"] == "all_high_quality"].iloc[0]
    assert (summary["r1"], summary["r2"], summary["n_r1"]) == (0.5, 0.0, 2)
    assert page.count("(offline heuristic baseline)") >= 3
    assert page.count("<img ") == 5


def test_not_assessable_dimension_gets_a_row_and_a_note(tmp_path: Path) -> None:
    # r1: one passage coded exact, one whose entity could not be assessed (all_high over the
    # remaining dimensions: none here, so None -> not counted as coded)
    retrieval = pd.DataFrame(
        [
            ("r1", "scored", "exact", True),
            ("r1", "scored", NOT_ASSESSABLE, None),
            ("r1", "scored", "partial", False),
        ],
        columns=["retriever", "status", "entity", "all_high"],
    )
    inputs = ReportInputs(
        meta=ReportMeta(title="T", created="2026-11-30", judge="offline", judge_is_heuristic=True),
        codebook=_codebook(),
        per_passage=retrieval,
    )
    page = build_report(inputs, tmp_path).read_text()
    md = (tmp_path / "tables" / "retrieval_quality.md").read_text()
    # shares over the 3 scored rows: exact 1/3, partial 1/3, not assessable 1/3 (sum 100)
    assert "| entity | exact | 33.3 |" in md
    assert "| entity | Not assessable | 33.3 |" in md
    # all-high over the 2 rows with a flag: 1 of 2, said in a footnote (the column is over 3)
    assert "|  | All assessable dimensions high quality<sup>a</sup> | 50.0 |" in md
    assert "<sup>a</sup> over the rows every dimension could be decided on (r1: n=2)" in md
    assert "not_assessable (entity): the coder could not assess this dimension" in page
