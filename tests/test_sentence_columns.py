"""Traces reduced to sentence groups give what the trace columns give (issue 18).

:func:`failcodes.columnar.read_sentence_columns` keeps, per (system, question, sentence), the
set of its claims' verdicts and its first row (memory follows the sentences, not the claims).
Sentence-level metrics, verdict distributions and the label checks on those groups must
equal the ones on :class:`~failcodes.tracecols.TraceColumns` to the last digit, and every
input problem must give the trace columns' own error.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import failcodes
from failcodes import columnar, labelio, traceio
from failcodes.errors import InputError
from failcodes.labels import Label, check_labels_against_traces
from failcodes.metrics import compute_metrics, verdict_distributions
from failcodes.tracecols import SentenceColumns, TraceColumns

VERDICTS = ["supported", "refuted", "no_evidence", "ambiguous", "out_of_scope", "Refutes"]


def _records(seed: int) -> tuple[list[dict[str, Any]], list[Label]]:
    """Shuffled traces: groups split across the file, one sentence id under two questions
    (unlabelled: a label on it is refused, it would count once per question), sentences some
    systems have no claim for; labels incl. one for a claimless sentence."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for system in ("rerank", "bm25", "dense"):
        for s in range(30):
            question = f"q{s // 4}"
            sentence = "shared" if s in (0, 9) else f"{question}:s{s}"
            if rng.random() < 0.15:
                continue  # this system made no claim for the sentence
            for c in range(rng.randint(1, 4)):
                rows.append(
                    {
                        "system": system,
                        "question_id": question,
                        "sentence_id": sentence,
                        "claim_id": f"{question}:{sentence}:c{c}",
                        "claim": "a claim",
                        "verdict": rng.choice(VERDICTS),
                        "passages": [{"passage_id": "p", "rank": 1, "text": "t"}],
                    }
                )
    rng.shuffle(rows)
    sentences = sorted({(r["question_id"], r["sentence_id"]) for r in rows})
    labels = [
        Label(sentence_id=sid, has_error=rng.random() < 0.4, annotator="a")
        for _, sid in sentences
        if sid != "shared"
    ]
    labels.append(Label(sentence_id="q1:s99", question_id="q1", has_error=True))
    return rows, labels


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(rows, schema=traceio.trace_arrow_schema())
        pq.write_table(table, path, row_group_size=7)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [5, 1 << 17])
def test_groups_give_the_metrics_of_the_columns(
    tmp_path: Path, seed: int, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same metrics (both policies, with intervals), distributions and label checks."""
    monkeypatch.setattr(columnar, "_SINK_ROWS", chunk)  # 5: rows inserted 5 at a time
    rows, labels = _records(seed)
    # a file per system or two (a system's sentence in two files is refused, as ingest does)
    paths = [
        _write(tmp_path / "a.jsonl", [r for r in rows if r["system"] == "rerank"]),
        _write(tmp_path / "b.parquet", [r for r in rows if r["system"] != "rerank"]),
    ]
    groups = columnar.read_sentence_columns(paths)
    columns = columnar.read_trace_columns(paths)
    assert isinstance(groups, SentenceColumns)
    assert isinstance(columns, TraceColumns)
    assert len(groups) == len(columns) == len(rows)
    for policy in ("no_error", "exclude"):
        fast = compute_metrics(
            groups, labels, ["refuted", "non_supported"], bootstrap=50, without_claims=policy
        )
        exact = compute_metrics(
            columns, labels, ["refuted", "non_supported"], bootstrap=50, without_claims=policy
        )
        assert fast == exact
    assert verdict_distributions(groups) == verdict_distributions(columns)
    counts = columnar.read_verdict_counts(paths)  # the report's Table 5: counts only
    assert verdict_distributions(counts) == verdict_distributions(columns)
    # a label naming the wrong question: the first question of "shared" is the same
    wrong = [*labels, Label(sentence_id="q0:s1", question_id="q7", has_error=False)]
    assert check_labels_against_traces(wrong, groups) == check_labels_against_traces(wrong, columns)
    # a label on the sentence id under two questions: the same refusal on both paths
    for shared in (
        Label(sentence_id="shared", question_id="q9", has_error=False),
        Label(sentence_id="shared", has_error=True),
    ):
        on_groups = check_labels_against_traces([shared], groups)
        assert on_groups == check_labels_against_traces([shared], columns)
        assert [(p.field, p.message.split(":")[0]) for p in on_groups] == [
            ("sentence_id", "sentence 'shared' is under 2 questions in the traces ('q0', 'q2')")
        ]


def test_bad_input_falls_back_to_the_columns_error(tmp_path: Path) -> None:
    """A duplicate claim (across files), a bad line, CSV: the trace columns decide."""
    rows, _ = _records(0)
    first = _write(tmp_path / "a.jsonl", rows[:10])
    again = _write(tmp_path / "b.parquet", rows[5:12])  # rows 5-9 repeat claims of a.jsonl
    with pytest.raises(InputError) as exact:
        columnar.read_trace_columns([first, again])
    with pytest.raises(InputError) as fast:
        columnar.read_sentence_columns([first, again])
    assert str(fast.value) == str(exact.value)
    assert "duplicate (system, claim_id)" in str(fast.value)
    with pytest.raises(InputError) as counted:
        columnar.read_verdict_counts([first, again])
    assert str(counted.value) == str(exact.value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(first.read_text() + '{"system": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError) as exact:
        columnar.read_trace_columns(bad)
    with pytest.raises(InputError) as fast:
        columnar.read_sentence_columns(bad)
    assert str(fast.value) == str(exact.value)
    assert str(fast.value).startswith(f"{bad}:11")
    with pytest.raises(InputError) as counted:
        columnar.read_verdict_counts(bad)
    assert str(counted.value) == str(exact.value)


def _metrics(*args: str) -> subprocess.CompletedProcess[str]:
    """``failcodes metrics`` of this checkout in a child process."""
    src = str(Path(failcodes.__file__).resolve().parent.parent)
    return subprocess.run(
        [sys.executable, "-m", "failcodes", "metrics", *args],
        env={**os.environ, "PYTHONPATH": src},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_metrics_command_reads_groups_and_keeps_its_errors(tmp_path: Path) -> None:
    """Sentence labels: groups; a claim label: columns; bad traces beat bad labels."""
    rows, labels = _records(1)
    traces = _write(tmp_path / "t.jsonl", rows)
    path = tmp_path / "labels.jsonl"
    labelio.write_labels(path, labels)
    args = ("--traces", str(traces), "--labels", str(path), "--format", "json")
    grouped = _metrics(*args)
    assert grouped.returncode == 0, grouped.stderr
    expected = compute_metrics(columnar.read_trace_columns(traces), labels, ["refuted"])
    assert json.loads(grouped.stdout) == [r.flat() for r in expected.results]
    claim_label = Label(claim_id=rows[0]["claim_id"], has_error=not labels[0].has_error)
    labelio.write_labels(path, [*labels, claim_label])
    per_claim = _metrics(*args)
    assert per_claim.returncode == 0, per_claim.stderr
    expected = compute_metrics(
        columnar.read_trace_columns(traces), [*labels, claim_label], ["refuted"]
    )
    assert json.loads(per_claim.stdout) == [r.flat() for r in expected.results]
    path.write_text(path.read_text() + "not json\n", encoding="utf-8")
    traces.write_text(traces.read_text() + "[1]\n", encoding="utf-8")
    both = _metrics(*args)
    assert both.returncode != 0
    assert f"{traces}:{len(rows) + 1}" in both.stderr
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    labels_only = _metrics(*args)
    assert labels_only.returncode != 0
    assert f"{path}:{len(labels) + 2}" in labels_only.stderr
