"""Session 26, helper t26api: the second researcher's path through the Python API and review.

Expected values are worked by hand beside the assertions.
"""

from __future__ import annotations

import csv
from pathlib import Path

from failcodes.annotations import Annotation, CoderKind
from failcodes.codebook import bundled
from failcodes.units import UnitKind
from tests.test_review_plan import HIGH, half_reviewed_study


def _review(uid: str, entity: str, *, without: tuple[str, ...] = ()) -> Annotation:
    codes = {"entity_match": entity, **HIGH}
    for dim in without:
        del codes[dim]
    return Annotation(
        unit_id=uid,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=bundled().ref(),
        coder="alice",
        coder_kind=CoderKind.HUMAN,
        codes=codes,
    )


def test_a_corrected_cell_from_the_api_carries_the_note_its_csv_row_gives(tmp_path: Path) -> None:
    """Before: `ReportResult.corrected` gave a cell's numbers without the note its CSV row
    carries: 2 of 12 reviews with no code on scope made the scope cells rest on 10 reviewed
    units, which the table said beside each cell ("2 reviewed unit(s) with no code on scope
    counted as not reviewed") and the API's cell did not (nor did `notes`). Now
    `CorrectedShare.note` is the table's note column, cell for cell."""
    import failcodes
    from failcodes.codebook import bundled_dir

    judge = ["exact_entity"] * 7 + ["partial_entity"] * 5
    judge += ["exact_entity"] * 5 + ["partial_entity"] * 7
    entity = {f"a{i}": c for i, c in enumerate(judge)}
    sample = [f"a{i}" for i in range(12)]  # 12 of 24 drawn (p = 1/2), all reviewed
    # a0, a1: the reviewer's tool left scope empty
    reviews = [
        _review(u, entity[u], without=("scope",) if u in ("a0", "a1") else ()) for u in sample
    ]
    half_reviewed_study(tmp_path, entity, sample, reviews, name="hand")
    cb = bundled_dir() / "medical-fact-check.v1.yaml"
    out = tmp_path / "report"
    result = failcodes.run(
        failcodes.ReportRequest(run_dir=tmp_path, codebook=cb, out=out), note=lambda _: None
    )
    cells = {(c.system, c.code): c for c in result.corrected}
    scope = cells[("A", "exact_scope")]
    assert (scope.rows, scope.reviewed) == (24, 10)  # 12 reviewed, 2 without a scope code
    assert scope.estimates is not None  # 10 reviewed: estimated, human 10 of 10 exact_scope
    assert scope.estimates.human.estimate == 1.0
    assert scope.note == "2 reviewed unit(s) with no code on scope counted as not reviewed"
    assert cells[("A", "exact_entity")].note == ""  # all 12 coded entity_match: nothing to say
    with (out / "tables" / "retrieval_quality_corrected.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(result.corrected) == 20  # 19 codes of 5 dimensions + all-high
    for row, cell in zip(rows, result.corrected, strict=True):
        assert (row["retriever"], row["code"]) == (cell.system, cell.code)
        assert row["note"] == cell.note


def test_ppi_mean_refuses_a_code_that_is_no_number_as_a_failcodes_error() -> None:
    """Before: `failcodes.ppi_mean([1, 0, "a"], ...)` raised numpy's ValueError ("could not
    convert string to float: 'a'"), where every other bad sample (lengths, NaN or None,
    fewer than 2 reviewed) is a StatisticsError, a FailcodesError."""
    import pytest

    import failcodes
    from failcodes.errors import StatisticsError

    with pytest.raises(StatisticsError, match=r"codes must be numbers .*'a'"):
        failcodes.ppi_mean([1, 0, "a"], [1, 0, 1], [1, 1, 0])  # type: ignore[list-item]
    with pytest.raises(StatisticsError, match="codes must be numbers"):
        failcodes.ppi_mean([1, 0, 1], [1, 0, 1], [1, 1, "yes"])  # type: ignore[list-item]
    # a number is still read: 1 reviewed-and-coded of 2, the judge 1 of 2 and 1 of 2 unlabeled
    assert failcodes.ppi_mean([1, 0], [1, 0], [1, 0]).estimate == pytest.approx(0.5)


def test_roll_up_refuses_a_code_that_is_no_leaf_as_a_failcodes_error() -> None:
    """Before: `codebook.roll_up(cb, {"entity_match": ["class_for_agent"]})` on the bundled
    codebook (which has no leaves) raised a bare KeyError, and a leaf listed under another
    dimension a bare ValueError: outside FailcodesError. Now a LeafError (an InputError, and
    a ValueError for old callers)."""
    import pytest

    from failcodes import codebook
    from failcodes.errors import FailcodesError

    with pytest.raises(
        FailcodesError, match="'class_for_agent' is not a leaf of medical-fact-check@1"
    ):
        codebook.roll_up(codebook.bundled(), {"entity_match": ["class_for_agent"]})
    with pytest.raises(ValueError, match="is not a leaf"):  # old callers catch ValueError
        codebook.roll_up(codebook.bundled(), {"scope": ["exact_scope"]})  # a subcode, no leaf
