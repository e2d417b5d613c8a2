"""Data shapes the eighth outside check tried (redteam8, 2026-12-02): values by hand.

Each test failed on the code before its fix.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.cli_helpers import run_cli

#: every retrieval dimension of the bundled codebook v1 at its high-quality code
HIGH = {
    "entity_match": "exact_entity",
    "scope": "exact_scope",
    "trustworthy": "trustworthy_source",
    "evidence_polarity": "direct_polarity",
    "chunking": "well_chunked",
}


def _write(path: Path, annotations: list[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(a.model_dump_json() + "\n" for a in annotations))  # type: ignore[attr-defined]


def _judge_and_review(tmp_path: Path, second_scope: str) -> Path:
    """Two data sets whose judge runs both coded units r0..r3; alice reviewed them.

    Retrieval unit ids are the claim and the passage text, so two data sets of the same
    questions with one retriever hold the same units. The judge: scope exact_scope on r0, r1,
    broader_scope on r2, r3 (d2's run gives ``second_scope`` on r3). Alice: exact_scope on
    r0, broader_scope on r1, r2, r3; every other dimension as the judge (all high quality).
    """
    from failcodes import codebook as codebooks
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.units import UnitKind

    v1 = codebooks.bundled(version=1)

    def judge(ds_scope: list[str]) -> list[Annotation]:
        return [
            Annotation(
                unit_id=f"r{i}",
                unit_kind=UnitKind.RETRIEVAL,
                codebook=v1.ref(),
                coder="judge",
                coder_kind=CoderKind.LLM,
                codes={**HIGH, "scope": scope},
            )
            for i, scope in enumerate(ds_scope)
        ]

    first = ["exact_scope", "exact_scope", "broader_scope", "broader_scope"]
    _write(tmp_path / "judge" / "d1" / "retrieval" / "annotations.jsonl", judge(first))
    _write(
        tmp_path / "judge" / "d2" / "retrieval" / "annotations.jsonl",
        judge([*first[:3], second_scope]),
    )
    alice = ["exact_scope", "broader_scope", "broader_scope", "broader_scope"]
    _write(
        tmp_path / "review" / "alice.jsonl",
        [
            Annotation(
                unit_id=f"r{i}",
                unit_kind=UnitKind.RETRIEVAL,
                codebook=v1.ref(),
                coder="alice",
                coder_kind=CoderKind.HUMAN,
                codes={**HIGH, "scope": scope},
            )
            for i, scope in enumerate(alice)
        ],
    )
    return codebooks.bundled_dir() / f"{v1.name}.v1.yaml"


def test_two_data_sets_sharing_judged_units_give_one_judge_rating_per_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Units judged in two data sets stopped the report once a review was pulled (exit 2).

    Before: "coder 'judge' annotated unit 'r0' twice; keep one annotation per unit and
    coder", naming no file: each data set's judge annotation of a shared unit entered the
    review agreement as one more rating by the judge. Now one annotation per unit and judge.
    By hand, scope, alice vs judge on r0..r3: exact/exact, broader/exact, broader/broader,
    broader/broader: 3 of 4 agree, percent 3/4 over n = 4 units (not 8). Fleiss (Scott's pi
    for two): pooled margins exact 3/8, broader 5/8, p_e = 9/64 + 25/64 = 34/64;
    (3/4 - 34/64) / (1 - 34/64) = (14/64) / (30/64) = 7/15. Cohen on the code exact_scope
    (did each give it): alice 1 of 4, the judge 2 of 4; agree on r0, r2, r3: 3/4;
    p_e = 1/4 * 1/2 + 3/4 * 1/2 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2.
    """
    cb_file = _judge_and_review(tmp_path, "broader_scope")
    out = tmp_path / "report"
    args = ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    agreement = pd.read_csv(out / "tables" / "agreement.csv")
    rows = {(r.subject, r.statistic): r for r in agreement.itertuples()}
    for key, value in {
        ("scope", "percent"): 3 / 4,
        ("scope", "fleiss"): 7 / 15,
        ("scope: exact_scope", "cohen"): 1 / 2,
    }.items():
        assert rows[key].coders == "alice vs judge"
        assert rows[key].n_units == 4
        assert rows[key].value == pytest.approx(value)


def test_a_unit_the_judge_coded_two_ways_in_two_data_sets_is_refused_naming_both_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge gave r3 broader_scope in d1 and exact_scope in d2: no telling which to use."""
    cb_file = _judge_and_review(tmp_path, "exact_scope")
    out = tmp_path / "report"
    args = ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    first = tmp_path / "judge" / "d1" / "retrieval" / "annotations.jsonl"
    second = tmp_path / "judge" / "d2" / "retrieval" / "annotations.jsonl"
    assert err.strip() == (
        f"failcodes: error: {second}: the judge 'judge' coded unit 'r3' (reviewed) one way in "
        f"{first} and another in this file, which both hold it (the same claim and text in "
        "two data sets): the review cannot be compared with both; judge the data sets with "
        "the judge's cache on, so a unit gets one answer"
    )
    assert not out.exists()
