"""Score-based verifiers (MiniCheck, AlignScore, an NLI entailment probability) through
``ingest generic --option verdict_threshold=T``: a support score becomes a verdict. Expected
values are read off the rows below by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.errors import ConfigError, InputError
from failcodes.ingest import AdapterOptions, get_adapter

GENERIC = get_adapter("generic")
ROWS = (
    "claim_id,claim,doc,prob\n"
    "c1,Aspirin lowers stroke risk.,Aspirin reduces strokes.,0.91\n"
    "c2,The dose is 81 mg.,A dose of 325 mg was used.,0.12\n"
    "c3,Statins are safe.,Statins are generally safe.,0.5\n"
)
MAP = {"prob": ("verdict",), "doc": ()}


def _read(tmp_path: Path, rows: str = ROWS, **extra: str) -> list[tuple[str, str, str | None]]:
    path = tmp_path / "minicheck.csv"
    path.write_text(rows)
    options = AdapterOptions(column_map=MAP, extra=extra, system="minicheck")
    traces = GENERIC.read([path], options).traces
    return [(t.claim_id, t.verdict.value, t.raw_verdict) for t in traces]


def test_scores_at_or_above_the_threshold_are_supported(tmp_path: Path) -> None:
    assert _read(tmp_path, verdict_threshold="0.5") == [
        ("c1", "supported", "0.91"),
        ("c2", "no_evidence", "0.12"),  # a binary support classifier says "not supported"
        ("c3", "supported", "0.5"),  # at the threshold: supported
    ]
    below = _read(tmp_path, verdict_threshold="0.6", below_threshold="refuted")
    assert [v for _, v, _ in below] == ["supported", "refuted", "refuted"]


def test_a_cell_that_is_no_score_names_its_line(tmp_path: Path) -> None:
    rows = ROWS + "c4,X is Y.,Nothing.,high\n"
    with pytest.raises(InputError) as info:
        _read(tmp_path, rows, verdict_threshold="0.5")
    assert (info.value.line, info.value.field) == (5, "verdict")
    assert "expected a support score (a number), got 'high'" in str(info.value)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"verdict_threshold": "half"}, "verdict_threshold='half': expected a number"),
        ({"verdict_threshold": "nan"}, "expected a number"),
        ({"below_threshold": "refuted"}, "goes with --option verdict_threshold"),
        ({"verdict_threshold": "0.5", "below_threshold": "maybe"}, "is not one of"),
    ],
)
def test_bad_threshold_options(tmp_path: Path, extra: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _read(tmp_path, **extra)


def test_rows_without_a_verdict(tmp_path: Path) -> None:
    # the verifier failed on c2 (empty cell): refused by default, with the way out
    rows = "claim_id,claim,verdict\nc1,X,SUPPORTED\nc2,Y,\nc3,Z,refuted\n"
    path = tmp_path / "run.csv"
    path.write_text(rows)
    with pytest.raises(InputError) as info:
        GENERIC.read([path], AdapterOptions(system="s"))
    assert (info.value.line, info.value.field) == (3, "verdict")
    assert "--option no_verdict=drop" in str(info.value)
    result = GENERIC.read([path], AdapterOptions(system="s", extra={"no_verdict": "drop"}))
    assert [t.claim_id for t in result.traces] == ["c1", "c3"]
    assert "1 row(s) without a verdict left out (first at line 3" in result.notes[0]
