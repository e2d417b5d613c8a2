"""One rule for labelled sentences without claims in metrics, compare and the report (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes import labelio, traceio
from failcodes.cli.main import main
from failcodes.labels import Label
from failcodes.metrics import compute_metrics
from failcodes.outcomes import paired_outcomes_from_traces
from failcodes.report.tables import prf_table, without_claims_notes
from failcodes.traces import Trace
from failcodes.verdicts import Verdict


def _two_systems() -> tuple[list[Trace], list[Label]]:
    """Issue 14 pt 3: 10 labelled errors (e1..e10) and 5 error-free sentences (n1..n5).

    A makes claims for all 15 sentences and refutes e1-e3; B refutes e1-e3 too but makes no
    claim for e7-e10. Each catches 3 of 10 errors: recall 30% for both, not 50% for B.
    """
    errors = [f"e{i}" for i in range(1, 11)]
    clean = [f"n{i}" for i in range(1, 6)]
    traces = []
    for system, dropped in (("A", set()), ("B", {"e7", "e8", "e9", "e10"})):
        for sid in [*errors, *clean]:
            if sid in dropped:
                continue
            verdict = Verdict.REFUTED if sid in ("e1", "e2", "e3") else Verdict.SUPPORTED
            traces.append(
                Trace(
                    system=system,
                    question_id=f"q{sid}",
                    sentence_id=sid,
                    claim_id=f"{sid}c",
                    claim="c",
                    verdict=verdict,
                )
            )
    labels = [Label(question_id=f"q{s}", sentence_id=s, has_error=True) for s in errors]
    labels += [Label(question_id=f"q{s}", sentence_id=s, has_error=False) for s in clean]
    return traces, labels


def test_metrics_default_counts_them_as_misses() -> None:
    traces, labels = _two_systems()
    report = compute_metrics(traces, labels, ["refuted"])
    recall = {r.system: r.metrics["recall"].value for r in report.results}
    assert recall == {"A": pytest.approx(0.3), "B": pytest.approx(0.3)}
    assert {r.system: r.n_without_claims for r in report.results} == {"A": 0, "B": 4}
    # the old default, now explicit: B's recall over the 6 errors it made claims for
    (_, b) = compute_metrics(traces, labels, ["refuted"], without_claims="exclude").results
    assert b.metrics["recall"].value == pytest.approx(0.5)


def test_compare_uses_the_same_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces, labels = _two_systems()
    paired = paired_outcomes_from_traces(traces, labels, "refuted")
    hits = paired.predictions[paired.truth == 1].mean(axis=0)
    assert hits.tolist() == pytest.approx([0.3, 0.3])
    assert paired.without_claims == {"A": 0, "B": 4}
    traceio.write_traces(tmp_path / "t.jsonl", traces)
    labelio.write_labels(tmp_path / "l.jsonl", labels)
    args = ["compare", "--traces", str(tmp_path / "t.jsonl"), "--labels", str(tmp_path / "l.jsonl")]
    try:
        main([*args, "--resamples", "200", "--seed", "0", "--format", "json"])
    except SystemExit as exc:
        assert not exc.code
    out = json.loads(capsys.readouterr().out)
    assert out["without_claims_policy"] == "no_error"
    assert out["n_without_claims"] == {"A": 0, "B": 4}
    recall = next(t for t in out["tests"] if t["test"] == "permutation_recall")
    assert recall["effect"] == pytest.approx(0.0)  # equal recall: no difference


def test_report_states_rule_and_counts() -> None:
    traces, labels = _two_systems()
    rows = [r.flat() for r in compute_metrics(traces, labels, ["refuted"]).results]
    table = prf_table(rows)
    assert table["R"].tolist() == ["30.0", "30.0"]
    (note,) = without_claims_notes(rows)
    assert '"no error flagged"' in note and "A: 0, B: 4" in note
