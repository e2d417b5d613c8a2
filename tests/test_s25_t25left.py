"""Session 25's left-over silent gaps (t25left): each let a reader misread a number.

Expected values are worked by hand beside the assertions.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

#: test_outside_red12's wide table with llama's column empty on every row: the ingest
#: (--option no_verdict=drop) drops llama's 6 rows, so no trace of llama is written.
#: gpt and claude keep 6 rows each (12 of 18).
_NO_LLAMA = """question_id,sentence_id,claim,gpt,claude,llama,gold
q1,s1,Aspirin lowers fever,Supported ,supported,,correct
q1,s2,Aspirin cures cancer,REFUTED,Not enough info,,wrong
q2,s3,Statins lower LDL, supported,NEI,,correct
q2,s4,Vitamin C cures colds,Not Enough Info,refuted,,wrong
q3,s5,Metformin for T2D,supported,Supported,,correct
q3,s6,Antibiotics treat viruses,supported,REFUTED ,,wrong
"""

#: What metrics, disagreements and the report say first of llama.
GONE = (
    "no row of system(s) llama (6 row(s) without a verdict, dropped: --option no_verdict=drop) "
    "of the input: left out at ingest, so every table shows claude, gpt only"
)


def _ingest_no_llama(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    (tmp_path / "w.csv").write_text(_NO_LLAMA)
    traces, labels = tmp_path / "t.parquet", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(tmp_path / "w.csv"), "-o", str(traces)]
    args += ["--verdict-column", "gpt", "--verdict-column", "claude", "--verdict-column", "llama"]
    args += ["--alias", "1=supported", "--alias", "0=refuted", "--option", "no_verdict=drop"]
    args += ["--label-rule", "gold = wrong -> error", "--labels-out", str(labels)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    return traces, labels


def test_a_system_every_row_of_which_was_dropped_at_ingest_is_named_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: metrics' first line read 'every system answered every labelled question (2
    systems)' and the tables showed gpt and claude, llama named only in the ingest's log."""
    traces, labels = _ingest_no_llama(tmp_path, capsys)
    base = ["--traces", str(traces), "--labels", str(labels)]
    code, out, err = run_cli(["metrics", *base], capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith(GONE + "; Assumed: shared labels")
    # JSON rows have no field for it: stderr, first
    code, out, err = run_cli(["metrics", *base, "--format", "json"], capsys)
    assert code == 0 and out.startswith("[")
    assert err.splitlines()[0] == GONE
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--verdicts"], capsys)
    assert code == 0 and out.splitlines()[0] == GONE, err
    code, out, err = run_cli(["disagreements", *base, "-o", str(tmp_path / "d.jsonl")], capsys)
    assert code == 0 and out.splitlines()[0].startswith(GONE + "; Assumed: "), err
    # the Python API: the result's first line
    import failcodes

    said: list[str] = []
    request = failcodes.MetricsRequest(traces=[traces], labels=labels)
    result = failcodes.run(request, note=said.append)
    assert result.assumed.startswith(GONE) and said[0] == result.assumed
    # a system dropped from one file and traced in another has rows: nothing said
    other = tmp_path / "llama.jsonl"
    other.write_text(
        '{"system": "llama", "question_id": "q1", "sentence_id": "s1", "claim_id": "s1", '
        '"claim": "Aspirin lowers fever", "verdict": "supported"}\n'
    )
    code, out, err = run_cli(["metrics", *base, "--traces", str(other)], capsys)
    assert code == 0, err
    assert "no row of system" not in out


def test_a_system_whose_every_claims_list_is_empty_is_named_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nested answers keyed by system, mistral's 2 sentences with empty claims lists: no row
    of mistral, said by the ingest's note alone. Before: metrics showed gpt with no word."""
    import json

    def answer(claims: list[list[dict[str, str]]]) -> dict[str, object]:
        sentences = [("s1", "error"), ("s2", "ok")]
        return {
            "sentences": [
                {"sid": sid, "label": label, "claims": c}
                for (sid, label), c in zip(sentences, claims, strict=True)
            ]
        }

    gpt = answer([[{"c": "a", "v": "Refuted"}], [{"c": "b", "v": "Supported"}]])
    record = {"qid": "q1", "answers": {"gpt": gpt, "mistral": answer([[], []])}}
    src = tmp_path / "answers.jsonl"
    src.write_text(json.dumps(record) + "\n")
    traces, labels = tmp_path / "t.parquet", tmp_path / "l.jsonl"
    args = [
        "ingest", "generic", str(src), "-o", str(traces), "--labels-out", str(labels),
        "--option", "rows=answers.*.sentences[].claims[]", "--map", "answers.*=system",
        "--map", "qid=question_id", "--map", "answers.*.sentences.sid=sentence_id",
        "--map", "c=claim", "--map", "v=verdict",
        "--label-rule", "answers.*.sentences.label = error -> error",
    ]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert "whose every claims list is empty, so no trace and in no output: mistral (2)" in err
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith(
        "no row of system(s) mistral (2 claims list(s), every one empty) of the input: left out "
        "at ingest, so every table shows gpt only; Assumed: "
    )


def test_the_report_run_box_names_a_system_of_the_input_with_no_row(tmp_path: Path) -> None:
    """Before: the run box and every table showed gpt and claude with no word of llama."""
    import failcodes
    from failcodes.codebook import bundled_dir
    from tests.test_outside_red12 import _DATASET, _TAIL

    study = tmp_path / "st"
    study.mkdir()
    (study / "w.csv").write_text(_NO_LLAMA)
    body = 'name = "wide"\ncodebook = "medical-fact-check.v1.yaml"\n'
    (study / "failcodes.toml").write_text(body + _DATASET.format(name="w", file="w.csv") + _TAIL)
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", study)
    failcodes.run_study(study)
    page = " ".join((study / "report" / "index.html").read_text().split())
    assert "<td>Systems</td><td>" + GONE.replace("'", "&#39;") + "</td>" in page


def _outcomes_study(tmp_path: Path) -> tuple[Path, Path]:
    """80 sentences in 20 questions of 4: 15 TP, 15 FN, 5 FP, 45 TN under -m refuted.

    Sentence k (0..79) is in question k // 4; its outcome is the k-th of the list below,
    taken round-robin so each question mixes them. Recall 15/30 has 15 units on each side of
    its ratio (>= 10: the studentized interval); precision 15/20 has 5 false alarms on its
    rarer side (< 10: the percentile interval, warned as one that under-covers).
    """
    kinds = ["TP"] * 15 + ["FN"] * 15 + ["FP"] * 5 + ["TN"] * 45
    order = [kinds[(k * 7) % 80] for k in range(80)]  # 7 is prime to 80: a permutation
    assert sorted(order) == sorted(kinds)
    traces, labels = [], []
    for k, kind in enumerate(order):
        q, s = f"q{k // 4}", f"s{k}"
        verdict = "refuted" if kind in ("TP", "FP") else "supported"
        traces.append(
            f'{{"system": "a", "question_id": "{q}", "sentence_id": "{s}", "claim_id": "{s}", '
            f'"claim": "claim {k}", "verdict": "{verdict}"}}'
        )
        error = "true" if kind in ("TP", "FN") else "false"
        labels.append(f'{{"question_id": "{q}", "sentence_id": "{s}", "has_error": {error}}}')
    (tmp_path / "t.jsonl").write_text("\n".join(traces) + "\n")
    (tmp_path / "l.jsonl").write_text("\n".join(labels) + "\n")
    return tmp_path / "t.jsonl", tmp_path / "l.jsonl"


def test_the_metrics_json_names_each_intervals_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: `recall_ci_low`/`_high` and `_ci_warning`, no word of which interval it was
    (docs/statistics.md said `method: studentized` was in the JSON; it was not)."""
    import json

    traces, labels = _outcomes_study(tmp_path)
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, out, err = run_cli([*args, "--bootstrap", "200", "--format", "json"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["tp"], row["fn"], row["fp"], row["tn"]) == (15, 15, 5, 45)
    assert row["recall"] == 0.5 and row["precision"] == 0.75
    assert row["recall_ci_method"] == "studentized"
    assert row["precision_ci_method"] == "percentile"
    assert (
        "only 5 units on the rarer side of its ratio (< 10): a percentile interval, which "
        "under-covers" in row["precision_ci_warning"]
    )
    # the CSV carries the same column
    code, out, err = run_cli([*args, "--bootstrap", "200", "--format", "csv"], capsys)
    assert code == 0, err
    import csv
    import io

    (first,) = csv.DictReader(io.StringIO(out))
    assert (first["recall_ci_method"], first["precision_ci_method"]) == (
        "studentized",
        "percentile",
    )


_TRACE = (
    '{"system": "a", "question_id": "q1", "sentence_id": "s1", "claim_id": "c1", '
    '"claim": "Aspirin lowers fever", "verdict": "supported"}\n'
)
#: The hint every has_error refusal ends with (tableio._validation_error).
_LABEL_HINT = (
    "; labels written other than true/false or 1/0 (ja/nein, a scale, blanks)? failcodes "
    "ingest generic-labels FILE -o OUT --label-rule 'has_error in {ERROR VALUES} -> error; "
    "has_error in {OTHER VALUES} -> no_error; otherwise -> skip'"
)


@pytest.mark.parametrize(
    ("name", "columns", "said"),
    [
        # before: "field 'sentence_id': Input should be a valid string (got True)"
        (
            "bool-id",
            {"question_id": ["q1"], "sentence_id": [True], "has_error": [True]},
            "field 'sentence_id': id true is a boolean (true/false), not an id; expected text "
            "or a whole number: is this the column of the ids?",
        ),
        # before: "field 'question_id': Input should be a valid string (got Decimal('1.5'))"
        (
            "decimal-id",
            {"question_id": ["1.5"], "sentence_id": ["s1"], "has_error": [True]},
            "field 'question_id': id 1.5 is a decimal number with a fraction; expected text or "
            "a whole number: save the column as text",
        ),
        # before: "field 'has_error': Input should be a valid boolean (got 0.5)", no hint
        (
            "half",
            {"question_id": ["q1"], "sentence_id": ["s1"], "has_error": [0.5]},
            "field 'has_error': expected true or false (or 1/0, yes/no), got the number 0.5"
            + _LABEL_HINT,
        ),
        # before: "field 'has_error': Input should be a valid boolean (got nan)", no hint
        (
            "nan",
            {"question_id": ["q1"], "sentence_id": ["s1"], "has_error": [float("nan")]},
            "field 'has_error': expected true or false (or 1/0, yes/no), got NaN (not a number: a "
            "missing value?)" + _LABEL_HINT,
        ),
    ],
)
def test_a_label_table_cell_of_the_wrong_kind_is_refused_in_the_tools_words(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    columns: dict[str, list[object]],
    said: str,
) -> None:
    """One line naming file, line (row 1), field and what was expected; exit 2; pydantic's
    'Input should be a valid ...' nowhere."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {
        k: pa.array([decimal.Decimal(v[0])], pa.decimal128(5, 1))
        if name == "decimal-id" and k == "question_id"
        else pa.array(v)
        for k, v in columns.items()
    }
    labels = tmp_path / "l.parquet"
    pq.write_table(pa.table(arrays), labels)
    (tmp_path / "t.jsonl").write_text(_TRACE)
    args = ["metrics", "--traces", str(tmp_path / "t.jsonl"), "--labels", str(labels)]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err == f"failcodes: error: {labels}:1, {said}\n"


def test_a_trace_whose_system_is_a_boolean_is_refused_in_the_tools_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "field 'system': Input should be a valid string (got True)"."""
    traces = tmp_path / "t.jsonl"
    traces.write_text(_TRACE.replace('"system": "a"', '"system": true'))
    (tmp_path / "l.jsonl").write_text(
        '{"question_id": "q1", "sentence_id": "s1", "has_error": 1}\n'
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(tmp_path / "l.jsonl")]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert (
        err
        == f"failcodes: error: {traces}:1, field 'system': expected text, got the boolean true\n"
    )


#: The refusal of a SOURCE_DATE_EPOCH that is no time (report.html.report_epoch).
_EPOCH = (
    "failcodes: error: SOURCE_DATE_EPOCH={!r}: expected whole seconds since 1970-01-01 UTC "
    "(the reproducible-builds convention), e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct); "
    "unset it for the current time\n"
)


def test_a_source_date_epoch_that_is_no_time_is_refused_before_the_report_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: 'abc' ended `failcodes report` in matplotlib's ValueError traceback (the
    tables already written); '-5' dated the page now (report_time read no digits) and the
    PDFs 1969-12-31 (matplotlib read it): one report, two times, no word."""
    import failcodes
    from tests.test_outside_red12 import _wide_study

    study = _wide_study(tmp_path / "st", {"w": "s1 s2 s3 s4 s5 s6"})
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    failcodes.run_study(study)
    capsys.readouterr()  # the run's notes
    out = tmp_path / "rep"
    for bad in ("abc", "-5", "1.5", "99999999999999999999"):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", bad)
        code, said, err = run_cli(["report", str(study), "-o", str(out)], capsys)
        assert (code, said, err) == (2, "", _EPOCH.format(bad))
        assert not out.exists()  # nothing half-written
    # 1767225600 s = 2026-01-01T00:00:00 UTC (20,454 days of 86,400 s since 1970-01-01)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", " 1767225600 ")
    code, said, err = run_cli(["report", str(study), "-o", str(out)], capsys)
    assert code == 0, err
    assert "generated 2026-01-01T00:00:00+00:00 by failcodes" in (out / "index.html").read_text()
    pdfs = sorted((out / "figures").glob("*.pdf"))
    assert pdfs
    for pdf in pdfs:  # every timestamp the report writes: the PDFs' too
        assert b"/CreationDate (D:20260101000000Z)" in pdf.read_bytes(), pdf.name


def test_the_corrected_shares_come_back_typed_from_the_python_api(tmp_path: Path) -> None:
    """Before: `ReportResult` held the page and notes; the corrected shares were only in the
    report's CSVs as text cells ("54.7 [24.6, 86.6]"), parsed back by any script. The study
    and the hand computation are test_review_plan's (retriever A: 20 units, 10 reviewed, 6
    of them with the code; the judge's share 10/20; B: 2 reviewed, too few)."""
    import failcodes
    from failcodes.codebook import bundled_dir
    from tests.test_review_plan import _cp, hand_corrected, hand_study

    hand_study(tmp_path)
    cb = bundled_dir() / "medical-fact-check.v1.yaml"
    request = failcodes.ReportRequest(run_dir=tmp_path, codebook=cb, out=tmp_path / "report")
    result = failcodes.run(request, note=lambda _: None)
    cells = {(c.plan, c.system, c.code): c for c in result.corrected}
    lam, theta, low, high = hand_corrected()
    h_low, h_high = _cp(6, 10)  # Clopper-Pearson of 6 in 10
    for code in ("exact_entity", "all_high_quality"):
        cell = cells[("hand", "A", code)]
        assert (cell.part.value, cell.rows, cell.reviewed) == ("retrieval", 20, 10)
        e = cell.estimates
        assert e is not None and cell.undefined_reason is None
        assert e.judge.estimate == pytest.approx(0.5)  # 10 of 20
        assert e.human.estimate == pytest.approx(0.6)  # 6 of 10
        assert (e.human.ci_low, e.human.ci_high) == pytest.approx((h_low, h_high))
        # the post-stratified point, 0.5 x 5/6 + 0.5 x 1/4 (hand_corrected; session 30)
        assert e.corrected.estimate == pytest.approx(theta)
        # PPI++'s point, ppi_py's: 0.6 - 0.2 lam = 0.5468 (lam rounded to 0.266)
        assert e.corrected_ppi == pytest.approx(0.6 - 0.2 * lam, abs=5e-4)
        assert (e.corrected.ci_low, e.corrected.ci_high) == pytest.approx((low, high), abs=5e-4)
        assert e.lam == pytest.approx(lam, abs=5e-4)
        assert e.disagreements == 2
    small = cells[("hand", "B", "exact_entity")]
    assert small.estimates is None
    assert small.undefined_reason is not None
    assert small.undefined_reason.startswith("too small to estimate: 2 reviewed unit(s)")
