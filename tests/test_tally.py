"""A coded table read as a tally (issue 30): the report's counts are the whole table's.

The report reads ``per_passage.csv`` and ``per_trace.csv`` in chunks into a tally (distinct
rows with their counts, :mod:`failcodes.tally`). Every count is checked by hand on a small
table, read whole and read two rows at a time; a refusal past the first chunk names its line.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from failcodes import codebook as codebooks
from failcodes.attribution import dominant_errors, quality_counts
from failcodes.errors import InputError
from failcodes.report import rundir
from failcodes.report.rundir import load_run_dir
from failcodes.report.tables import code_shares
from failcodes.tally import FIRST, PARTIAL, ROWS, tally_chunks, value_counts
from failcodes.units import UnitKind

HEAD = "system,retriever,unit_id,status,entity_match,scope,trustworthy,evidence_polarity,chunking,all_high\n"  # noqa: E501
HIGH = "exact_entity,exact_scope,trustworthy_source,direct_polarity,well_chunked,True"
#: Seven rows, two retrievers. Hand counts per retriever (scored rows only for the codes):
#: r1: lines 2, 3, 5, 8 scored; line 4 unscored (no codes, no flag).
#:     entity_match: exact_entity 2 (lines 2, 8), partial_entity 1 (3), not_assessable 1 (5)
#:     all_high: True on 2 and 8, False on 3 and 5 -> 2 of 4 coded; line 5 holds
#:     not_assessable -> 1 coded row not fully assessed
#: r2: lines 6, 7 scored, both entity_mismatch; all_high False, False -> 0 of 2
ROWS_TEXT = [
    f"s,r1,u1,scored,{HIGH}",  # line 2
    "s,r1,u2,scored,partial_entity,exact_scope,trustworthy_source,direct_polarity,well_chunked,False",
    "s,r1,u3,unscored,,,,,,",  # line 4
    "s,r1,u4,scored,not_assessable,exact_scope,trustworthy_source,direct_polarity,well_chunked,False",
    "s,r2,u5,scored,entity_mismatch,exact_scope,trustworthy_source,indirect,well_chunked,False",
    "s,r2,u6,scored,entity_mismatch,exact_scope,trustworthy_source,indirect,well_chunked,False",
    f"s,r1,u7,scored,{HIGH}",  # line 8
]
TEXT = HEAD + "".join(r + "\n" for r in ROWS_TEXT)
KEEP = ["retriever", "status", "all_high", "entity_match", "evidence_polarity"]


def _tally(rows: int) -> pd.DataFrame:
    chunks = pd.read_csv(io.StringIO(TEXT), chunksize=rows)
    return tally_chunks(chunks, KEEP)


@pytest.mark.parametrize("rows", [2, 3, 100])
def test_tally_counts_and_first_rows(rows: int) -> None:
    tally = _tally(rows)
    got = {
        (r.retriever, r.status, r.entity_match if isinstance(r.entity_match, str) else None): (
            r[ROWS],
            r[FIRST],
            bool(r[PARTIAL]),
        )
        for _, r in tally.iterrows()
    }
    # distinct (retriever, status, flag, entity, polarity) rows; index 0 is line 2
    assert got == {
        ("r1", "scored", "exact_entity"): (2, 0, False),  # lines 2 and 8
        ("r1", "scored", "partial_entity"): (1, 1, False),
        ("r1", "unscored", None): (1, 2, False),
        ("r1", "scored", "not_assessable"): (1, 3, True),
        ("r2", "scored", "entity_mismatch"): (2, 4, False),  # lines 6 and 7
    }
    assert tally[FIRST].tolist() == [0, 1, 2, 3, 4]  # in order of first appearance
    assert int(tally[ROWS].sum()) == 7


@pytest.mark.parametrize("rows", [2, 100])
def test_counts_equal_the_whole_tables(rows: int) -> None:
    whole = pd.read_csv(io.StringIO(TEXT))
    tally = _tally(rows)
    # the all-high rate: [rows, coded, true, not fully assessed] per retriever (hand counts above)
    expected = {"r1": [5, 4, 2, 1], "r2": [2, 2, 0, 0]}
    assert quality_counts(whole, by="retriever", flag="all_high") == expected
    assert quality_counts(tally, by="retriever", flag="all_high") == expected
    # value counts: by count, ties in order of first appearance (pandas' order)
    assert whole["entity_match"].value_counts().to_dict() == {
        "exact_entity": 2,
        "entity_mismatch": 2,
        "partial_entity": 1,
        "not_assessable": 1,
    }
    counted = value_counts(tally["entity_match"], tally[ROWS])
    assert list(counted.items()) == list(whole["entity_match"].value_counts().items())


def test_report_counts_from_a_tally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "attribution" / "d" / "per_passage.csv"
    table.parent.mkdir(parents=True)
    table.write_text(TEXT, encoding="utf-8")
    monkeypatch.setattr(rundir, "CHUNK_ROWS", 2)
    inputs = load_run_dir(tmp_path)
    cb = codebooks.bundled()
    part = cb.part(UnitKind.RETRIEVAL)
    coded = inputs.per_passage
    assert coded is not None
    whole = pd.read_csv(table)
    for frame in (whole, coded):
        shares = code_shares(frame, part, by="retriever", flag="all_high")
        row = shares[(shares.dimension == "entity_match") & (shares.code == "exact_entity")]
        assert row["r1"].iloc[0] == pytest.approx(2 / 4)  # 2 of r1's 4 scored rows
        assert row["n_r1"].iloc[0] == 4
        mismatch = shares[shares.code == "entity_mismatch"]
        assert mismatch["r2"].iloc[0] == pytest.approx(1.0)  # both r2 rows
        assert shares.iloc[-1]["r1"] == pytest.approx(2 / 4)  # all high on lines 2 and 8
        dominant = dominant_errors(frame, cb, UnitKind.RETRIEVAL, by="retriever")
        # r2: entity_mismatch and indirect on both rows; r1: partial_entity on one of 4
        assert dominant[["retriever", "subcode", "count", "coded"]].values.tolist() == [
            ["r1", "partial_entity", 1, 4],
            ["r2", "entity_mismatch", 2, 2],
            ["r2", "indirect", 2, 2],
        ]
    # the figure's counts of error subcodes (not the high one, not not_assessable: no error),
    # scored rows, per dimension in value_counts order: entity_mismatch 2, partial_entity 1;
    # indirect 2
    assert list(inputs.error_codes["retrieval"].items()) == [
        ("entity_mismatch", 2),
        ("partial_entity", 1),
        ("indirect", 2),
    ]


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        # line 7 of the file (the 6th row, in the third chunk of two rows)
        (
            lambda rows: [*rows[:5], rows[5].replace("entity_mismatch", "mismatch"), rows[6]],
            ("per_passage.csv:7", "field 'entity_match'", "'mismatch' is not a subcode"),
        ),
        (
            lambda rows: [*rows[:5], rows[5] + ",extra", rows[6]],
            ("per_passage.csv:7", "malformed CSV", "Expected 10 fields in line 7, saw 11"),
        ),
    ],
)
def test_refusals_past_the_first_chunk_name_their_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change, expect: tuple[str, ...]
) -> None:
    table = tmp_path / "attribution" / "d" / "per_passage.csv"
    table.parent.mkdir(parents=True)
    table.write_text(HEAD + "".join(r + "\n" for r in change(ROWS_TEXT)), encoding="utf-8")
    monkeypatch.setattr(rundir, "CHUNK_ROWS", 2)
    with pytest.raises(InputError) as err:
        load_run_dir(tmp_path)
    line = err.value.one_line()
    for part in expect:
        assert part in line, line
