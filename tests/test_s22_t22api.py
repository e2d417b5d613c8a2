"""Session 22: the Python library layer as a notebook uses it (t22api)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.errors import BudgetExceededError
from tests.judge_helpers import make_traces, write_codebook, write_traces


def test_a_budget_stop_from_python_says_the_closing_summary(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `failcodes judge` stopped by --budget prints the run's closing summary (units judged
    # now, cost) on stderr before its one-line error; `failcodes.run(JudgeRequest(...))` said
    # nothing (the CLI read the summary in its own except block), so a notebook saw only
    # "budget of $X reached", not how many units were judged and kept.
    import failcodes as fc
    from failcodes.judge import read_summary, summary_lines
    from tests.fakeserver import FakeServer

    traces = write_traces(workdir / "traces.jsonl", make_traces(2))  # 6 retrieval units
    cb = write_codebook(workdir / "cb.yaml")
    prices = workdir / "prices.yaml"
    prices.write_text("openai:fake-model: {input: 1000.0, cached_input: 100.0, output: 2000.0}\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-api")
    with FakeServer() as fake:
        common = {
            "kind": fc.UnitKind.RETRIEVAL,
            "source": traces,
            "codebook": cb,
            "judge": ["openai:fake-model"],
            "base_url": fake.openai_base_url,
            "prices": prices,
            "concurrency": 1,
            "output": workdir / "run",
        }
        estimate = fc.run(fc.JudgeRequest(**common, dry_run=True), note=lambda _: None).estimate
        said: list[str] = []
        with pytest.raises(BudgetExceededError):  # room for one to three of the six units
            fc.run(fc.JudgeRequest(**common, budget=estimate.cost_usd / 2), note=said.append)
        calls = fake.stats()["calls"]["openai"]
    done = len((workdir / "run" / "annotations.jsonl").read_text().splitlines())
    assert 0 < done < 6 and calls == done  # each call made is a unit kept
    summary = read_summary(workdir / "run")
    assert summary is not None and said == summary_lines(summary)
    assert f"retrieval units: 6 (0 already done, {done} judged now)" in said[0]
    assert json.loads((workdir / "run" / "summary.json").read_text())["judged"] == done


def test_a_workbooks_note_goes_to_the_callers_note_on_every_call(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A workbook with a second sheet: `failcodes ingest generic-labels` says on stderr that
    # the first sheet alone was read. From Python the line went to sys.stderr, not to the
    # `note` failcodes.run was given, and a second call (a notebook cell run again) said
    # nothing at all: sheetio printed it once per file and process.
    from openpyxl import Workbook

    import failcodes as fc
    from tests.cli_helpers import run_cli

    book = Workbook()
    book.active.title = "round 1"
    for row in (["sentence_id", "has_error"], ["s1", True], ["s2", False]):
        book.active.append(row)
    final = book.create_sheet("final")
    for row in (["sentence_id", "has_error"], ["s1", False], ["s2", False]):
        final.append(row)
    book.save(workdir / "labels.xlsx")
    line = (
        "failcodes: note: labels.xlsx: read its first sheet 'round 1' alone; the workbook's 1 "
        "other sheet ('final') is not read (to read another, move it first)"
    )
    code, _, err = run_cli(["ingest", "generic-labels", "labels.xlsx", "-o", "l.jsonl"], capsys)
    assert code == 0 and err.splitlines() == [line]
    request = fc.IngestRequest(adapter="generic-labels", paths=["labels.xlsx"], out="l2.jsonl")
    for _ in range(2):
        said: list[str] = []
        fc.run(request, note=said.append)
        assert said == [line]
    assert capsys.readouterr().err == ""  # said through note alone, not printed as well
    # a study step (failcodes run, run_study): in the step's log too, and said
    from failcodes.study.plan import Step
    from failcodes.study.runner import run_request

    told: list[str] = []
    run_request(Step("ingest labels", request), workdir / "step.log", told.append)
    assert told == [line] and line in (workdir / "step.log").read_text().splitlines()
    # round 1's labels were read: s1 an error (the final sheet says not)
    rows = [json.loads(x) for x in (workdir / "l2.jsonl").read_text().splitlines()]
    assert [(r["sentence_id"], r["has_error"]) for r in rows] == [("s1", True), ("s2", False)]


def test_attribute_json_from_python_is_the_clis_and_says_null_for_no_coded_row(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `attribute --format json` was built in cli/attribute.py alone (no way to it from
    # failcodes.run), and a retriever none of whose rows was coded printed "rate": NaN, which
    # no strict JSON reader takes (json.loads(..., parse_constant=refuse), jq, JSON.parse).
    import failcodes as fc
    from tests.cli_helpers import run_cli

    rows = [
        {
            "system": s,
            "question_id": f"q{q}",
            "sentence_id": f"q{q}s1",
            "sentence": f"Drug {q} lowers the risk of stroke.",
            "verdict": "supported",
            "passages": [{"passage_id": f"{s}{q}", "rank": 1, "text": f"{s}'s trial of drug {q}."}],
        }
        for s in ("sysA", "sysB")
        for q in (1, 2)
    ]
    (workdir / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (workdir / "l.jsonl").write_text(
        "".join(json.dumps({"sentence_id": f"q{q}s1", "has_error": True}) + "\n" for q in (1, 2))
    )
    for argv in (
        ["ingest", "generic", "t.jsonl", "-o", "t.parquet"],
        ["disagreements", "--traces", "t.parquet", "--labels", "l.jsonl", "-o", "d.jsonl"],
    ):
        assert run_cli(argv, capsys)[0] == 0
    # each system missed both errors (supported where the label says error): 2 FN each;
    # only sysA's are judged, so sysB's 2 passage rows have no code
    lines = (workdir / "d.jsonl").read_text().splitlines()
    (workdir / "dA.jsonl").write_text("".join(x + "\n" for x in lines if '"sysA"' in x))
    assert run_cli(["judge", "retrieval", "--from", "dA.jsonl", "-o", "rA"], capsys)[0] == 0
    argv = ["attribute", "--from", "d.jsonl", "--retrieval", "rA", "-o", "at", "--format", "json"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    printed = json.loads(out, parse_constant=refuse)
    # rows and coded as above; all_high and not_fully_assessed are the offline judge's codes
    assert printed["retriever_all_high"] == [
        {"retriever": "sysA", "rows": 2, "coded": 2, "all_high": 0, "rate": 0.0,
         "not_fully_assessed": 2},
        {"retriever": "sysB", "rows": 2, "coded": 0, "all_high": 0, "rate": None,
         "not_fully_assessed": 0},
    ]  # fmt: skip
    request = fc.AttributeRequest(source="d.jsonl", retrieval="rA", output="at")
    assert fc.run(request, note=lambda _: None).json_text() + "\n" == out


def test_a_split_percent_table_names_the_code_in_every_part() -> None:
    # The walkthrough notebook's `render_table(percent_table(shares, verifiers), "latex")`:
    # a table too wide for the page is split, each part repeating the first `keys` columns,
    # default 1; part 2 read "evidence_selection & 0.0 \\ evidence_selection & 100.0 \\ ..."
    # with no code column, so no number in it could be told apart from the next.
    import pandas as pd

    import failcodes as fc

    groups = [f"multivers-verifier-checkpoint-{i}" for i in range(6)]
    shares = pd.DataFrame(
        {
            "dimension": ["inference", "inference", "comprehension"],
            "code": ["valid_inference", "overreach", "misread"],
            # checkpoint i: valid i/10, overreach 1 - i/10, misread 0.5
            **{g: [i / 10, 1 - i / 10, 0.5] for i, g in enumerate(groups)},
        }
    )
    text = fc.render_table(fc.percent_table(shares, groups).head(8), "latex", caption="steps")
    parts = text.split(r"\begin{table}")[1:]
    assert len(parts) > 1  # too wide for the page: split
    shown = []
    for part in parts:
        head, body = part.split(r"\midrule")
        cells = head.splitlines()[-1].removesuffix(r" \\").split(" & ")
        assert cells[:2] == ["dimension", "code"]  # every part names the row
        shown += cells[2:]
        # overreach under checkpoint i: (1 - i/10) in percent, in this part's columns
        want = " & ".join(f"{100 - 10 * groups.index(g):.1f}" for g in cells[2:])
        assert f"inference & overreach & {want} \\\\" in body
    assert shown == groups


def test_a_dataframe_given_for_a_path_is_refused_naming_the_field(tmp_path: Path) -> None:
    # `MetricsRequest(traces=df)`: pydantic iterated the DataFrame, so its column names
    # became the trace files (traces=[system, question_id, ...]) and the run said
    # "system: cannot tell the format from the extension '(none)'", naming no DataFrame.
    import pandas as pd

    import failcodes as fc
    from failcodes.errors import ConfigError

    df = pd.DataFrame({"system": ["A"], "question_id": ["q1"], "sentence_id": ["s1"]})
    labels = tmp_path / "l.jsonl"
    said = []
    for model, values in [
        (fc.MetricsRequest, {"traces": df, "labels": labels}),
        (fc.MetricsRequest, {"traces": [df], "labels": labels}),
        (fc.DisagreementsRequest, {"traces": [labels], "labels": df, "out": tmp_path / "d"}),
        (fc.AgreeRequest, {"file": df}),
    ]:
        with pytest.raises(ConfigError) as caught:
            model(**values)
        said.append(str(caught.value))
    why = "a DataFrame, not a path: write it to a file (.jsonl, .csv, ...), give its path"
    assert said == [f"traces: {why}", f"traces: {why}", f"labels: {why}", f"file: {why}"]


def test_metrics_from_python_says_the_notes_the_cli_prints_under_its_table(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `failcodes metrics` prints notes under its table (here: a support classifier never
    # flags an error under 'refuted', so its recall of 0 says nothing of it); they were built
    # in cli/metrics.py, and failcodes.run(MetricsRequest(...)) said none of them.
    import failcodes as fc
    from tests.cli_helpers import run_cli

    verdicts = {"sysA": ["refuted", "supported", "refuted"], "sysS": ["supported"] * 2}
    verdicts["sysS"].append("no_evidence")
    sentences = ["q1s1", "q1s2", "q2s1"]
    rows = [
        {"system": s, "question_id": sid[:2], "sentence_id": sid, "sentence": f"{sid}.",
         "verdict": v}
        for s, vs in verdicts.items()
        for sid, v in zip(sentences, vs, strict=True)
    ]  # fmt: skip
    (workdir / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    errors = {"q1s1": True, "q1s2": False, "q2s1": True}
    (workdir / "l.jsonl").write_text(
        "".join(json.dumps({"sentence_id": s, "has_error": e}) + "\n" for s, e in errors.items())
    )
    assert run_cli(["ingest", "generic", "t.jsonl", "-o", "t.parquet"], capsys)[0] == 0
    code, out, _ = run_cli(["metrics", "--traces", "t.parquet", "--labels", "l.jsonl"], capsys)
    assert code == 0
    said: list[str] = []
    result = fc.run(fc.MetricsRequest(traces=["t.parquet"], labels="l.jsonl"), note=said.append)
    # sysS: supported 2, no_evidence 1, no refuted: TP 0, FN 2 (q1s1, q2s1), recall 0
    s = next(r for r in result.report.results if r.system == "sysS")
    assert (s.tp, s.fp, s.fn, s.tn) == (0, 0, 2, 1)
    flagged = (
        "– sysS never gives a verdict the 'refuted' mapping counts as an error (its verdicts: "
        "supported 2, no_evidence 1), so it flags no sentence; a verifier that does not tell "
        "refuted from unsupported is measured with -m non_supported"
    )
    assert said == [result.assumed, *result.later] and flagged in said
    printed = " ".join(out.split())  # the CLI's lines, as rich wrapped them
    assert all(" ".join(line.split()) in printed for line in said)


def test_the_notebook_functions_refuse_bad_arguments_with_one_failcodes_line() -> None:
    # compute_metrics and find_disagreements (the walkthrough's first calls) raised Enum's
    # and Python's own errors for a bad argument: ValueError "'question' is not a valid
    # Level", "bootstrap must be >= 0", "confidence must be in (0, 1), got 95", AttributeError
    # "'str' object has no attribute 'system'" (labels as a DataFrame) and "'list' object has
    # no attribute 'strip'" (find_disagreements(..., ["refuted"])); bootstrap=True ran 1
    # resample. A notebook catching FailcodesError caught none of them.
    import pandas as pd

    import failcodes as fc
    from failcodes.errors import ConfigError

    traces = [
        fc.Trace(system="A", question_id="q1", sentence_id="s1", claim_id="c1", sentence="x.",
                 claim="x.", verdict="refuted")
    ]  # fmt: skip
    labels = [fc.Label(sentence_id="s1", has_error=True)]
    assert fc.compute_metrics(traces, labels, "refuted").results[0].tp == 1  # by hand: TP
    frame = pd.DataFrame({"sentence_id": ["s1"], "has_error": [True]})
    calls = [
        lambda: fc.compute_metrics(traces, labels, level="question"),
        lambda: fc.compute_metrics(traces, labels, without_claims="drop"),
        lambda: fc.compute_metrics(traces, labels, bootstrap=-1),
        lambda: fc.compute_metrics(traces, labels, bootstrap=True),
        lambda: fc.compute_metrics(traces, labels, bootstrap=100, confidence=95),
        lambda: fc.compute_metrics(traces, frame),
        lambda: fc.find_disagreements(traces, labels, ["refuted"]),
        lambda: fc.find_disagreements(traces, labels, question_scope="some"),
    ]
    said = []
    for call in calls:
        with pytest.raises(ConfigError) as caught:
            call()
        said.append(str(caught.value))
    assert said == [
        "level: 'question' is not one of sentence, claim",
        "without_claims: 'drop' is not one of exclude, no_error",
        "bootstrap: expected a whole number >= 0, not -1",
        "bootstrap: expected a whole number >= 0, not True",
        "confidence: expected a level in (0, 1), not 95",
        "labels: a DataFrame; read the file with failcodes.read_labels",
        "mapping: ['refuted']; give one name or comma-separated verdicts",
        "question_scope: 'some' is not one of auto, answered, all",
    ]


def test_a_request_with_a_token_written_as_json_is_refused_when_read_back(tmp_path: Path) -> None:
    # model_dump_json writes a SecretStr as "**********"; read back (another process, a
    # queue), the push request held that literal as its token and would send it to Label
    # Studio in place of the key (over $LABEL_STUDIO_API_KEY, which it outranks).
    import failcodes as fc
    from failcodes.errors import ConfigError

    request = fc.LabelStudioPushRequest(
        units=tmp_path / "run", part="retrieval", project="1", token="abc123secret"
    )
    text = request.model_dump_json()
    assert '"token":"**********"' in text  # pydantic's dump: the key is not written
    with pytest.raises(ConfigError) as caught:
        fc.LabelStudioPushRequest.model_validate_json(text)
    assert str(caught.value) == (
        "--token: masked ('**********', as model_dump_json writes it): give the token itself, "
        "or leave it out and set $LABEL_STUDIO_API_KEY"
    )
    # the Python dump keeps the SecretStr: the same request back
    same = fc.LabelStudioPushRequest.model_validate(request.model_dump())
    assert same == request and same.token is not None
    assert same.token.get_secret_value() == "abc123secret"


def test_an_ingest_from_python_says_a_system_read_as_closed_book(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `failcodes ingest` (and `failcodes run`, ca00769) says a system whose evidence was read
    # from its traces: sysC has no passages, so it is closed-book and its disagreements are
    # blamed on verification, never on retrieval. failcodes.run(IngestRequest(...)) returned
    # that line in result.said() but said nothing through `note`.
    import failcodes as fc
    from tests.cli_helpers import run_cli

    rows = [
        {"system": s, "question_id": "q1", "sentence_id": "q1s1", "sentence": "x.",
         "verdict": "refuted"}
        | ({"passages": [{"passage_id": "p1", "rank": 1, "text": "y."}]} if s == "sysA" else {})
        for s in ("sysA", "sysC")
    ]  # fmt: skip
    (workdir / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = run_cli(["ingest", "generic", "t.jsonl", "-o", "t.parquet"], capsys)
    assert code == 0
    (line,) = out.splitlines()
    assert line == (
        "wrote 2 traces -> t.parquet (2 system(s): sysA 1, sysC 1; evidence not declared for "
        "sysC: read as closed-book (no passages or retriever on any trace), its disagreements "
        "blamed on verification, never on retrieval; a retrieval pipeline whose passages were "
        "not kept? declare it: --evidence sysC=retrieved)"
    )
    said: list[str] = []
    request = fc.IngestRequest(adapter="generic", paths=["t.jsonl"], out="t2.parquet")
    result = fc.run(request, note=said.append)
    assert said == [line.replace("t.parquet", "t2.parquet")] == result.said()
