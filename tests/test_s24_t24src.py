"""Session 24, t24src: one path for the any-error aggregation (issue 30: src net smaller)."""

from __future__ import annotations

from failcodes.mapping import resolve_mapping
from failcodes.tracecols import TraceColumns
from tests.metrics_fixtures import traces_a


def test_error_rows_are_each_traces_verdict_under_the_mapping() -> None:
    """``TraceColumns.error_rows``: the one per-row error flag metrics, disagreements and
    compare's paired outcomes aggregate (compare's was a loop over trace models of its own).

    By hand from tests/metrics_fixtures.py's claims c1..c9 (S, R, NE, A, S, OOS, S, S, NE):
    refuted+no_evidence flags c2 (R), c3 and c9 (NE); non_supported all but the four S.
    """
    cols = TraceColumns.from_traces(traces_a())
    rows = cols.error_rows(resolve_mapping("refuted+no_evidence").error_verdicts)
    assert rows.tolist() == [False, True, True, False, False, False, False, False, True]
    rows = cols.error_rows(resolve_mapping("non_supported").error_verdicts)
    assert rows.tolist() == [False, True, True, True, False, True, False, False, True]
