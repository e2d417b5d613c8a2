"""Session 15 red team of the study and the library layer: the attacks that found a fault.

Each test failed before its fix (issue 30).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def test_the_plan_keeps_a_judges_own_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``judge = ["openai:m@URL"]`` (a panel member on a local server) is run at URL.

    ``run --plan`` and the step's log printed ``--judge openai:m``: the line the docs say to
    type (docs/study.md) sent every unit to the vendor's API instead of the local server.
    A URL's credentials are still redacted on the printed line.
    """
    from failcodes.study.create import init_study

    layout = init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8").replace(
        'judge = "offline"',
        'judge = ["openai:m@http://127.0.0.1:9/v1", "anthropic:c@http://u:pw@127.0.0.1:9"]',
    )
    layout.study_file.write_text(text, encoding="utf-8")
    code, out, _ = run_cli(["run", str(layout.root), "--plan"], capsys)
    assert code == 0
    judge_line = next(line for line in out.splitlines() if "judge retrieval" in line)
    assert (
        "--judge openai:m@http://127.0.0.1:9/v1 --judge anthropic:c@http://***@127.0.0.1:9"
        in judge_line
    ), judge_line
    assert "pw" not in out


def test_a_judge_spec_prints_as_it_parses_back() -> None:
    from failcodes.commands.judge import JudgeRequest

    request = JudgeRequest(source=Path("d.jsonl"), judge=["openai:m@http://127.0.0.1:9/v1"])
    argv = request.argv()
    assert argv[argv.index("--judge") + 1] == "openai:m@http://127.0.0.1:9/v1"
    again = JudgeRequest(source=Path("d.jsonl"), judge=[argv[argv.index("--judge") + 1]])
    assert again == request


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("anthropic:claude-x", "anthropic:claude-x takes no temperature (its API has none)"),
        ("openai:gpt-5-mini", "openai:gpt-5-mini takes no temperature (its API has none)"),
        ("offline", "offline takes no temperature (a deterministic heuristic baseline)"),
    ],
)
def test_a_temperature_the_judge_is_not_sampled_at_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, why: str
) -> None:
    """``--temperature 0.3`` with a judge that takes none.

    The Anthropic SDK's ``messages.create`` has no temperature, and the OpenAI provider drops
    it for a reasoning model: every call went at the API's default, while panel.json recorded
    ``temperatures: {member: 0.3}`` for each member (the fake server saw no temperature in any
    of the 4 bodies of the RAGChecker example's units).
    """
    from tests.judge_helpers import make_traces, write_traces

    src = write_traces(tmp_path / "t.jsonl", make_traces(2))
    out = tmp_path / "run"
    args = ["judge", "retrieval", "--from", str(src), "-o", str(out), "--temperature", "0.3"]
    code, _, err = run_cli([*args, "--judge", spec, "--judge", spec, "--dry-run"], capsys)
    line = f"failcodes: error: --temperature: {why}; leave it out"
    assert (code, err.strip().splitlines()) == (2, [line])
    assert not out.exists()


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"bootstrap": -1}, "--bootstrap: Input should be greater than or equal to 0"),
        ({"level": "token"}, "--level: Input should be 'sentence' or 'claim'"),
        (
            {"bootstrp": 10},
            "bootstrp: unknown field of MetricsRequest (did you mean 'bootstrap'?); its "
            "fields: traces, labels, mapping, level, bootstrap, seed, confidence, without_claims, "
            "question_scope, verdicts, out, out_format",
        ),
    ],
)
def test_a_bad_request_from_python_is_the_clis_one_line(
    fields: dict[str, object], line: str
) -> None:
    """A notebook's bad request raised pydantic's ValidationError over 4 lines.

    Not a FailcodesError (``except failcodes.FailcodesError`` missed it), where the CLI says
    the same problem in one line naming the flag.
    """
    import failcodes

    with pytest.raises(failcodes.FailcodesError) as caught:
        failcodes.MetricsRequest(traces=[Path("t.jsonl")], labels=Path("l.jsonl"), **fields)
    assert str(caught.value) == line


def test_a_statistics_interval_does_not_depend_on_the_others_asked_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``agree --stat percent --stat cohen`` and ``agree --stat cohen``, seed 0, same data.

    RAGChecker's meta-evaluation (bundled), completeness: Cohen's kappa 0.463 read
    [0.391, 0.540] beside percent and [0.391, 0.545] alone (and alone again after percent
    when asked second): the units were pooled by their rows in every statistic's columns, so
    another statistic changed the groups and the draws. The report's agreement table (the
    demo asks four statistics at once) did not equal what ``agree --stat cohen`` printed.
    """
    import json

    from failcodes import bundled

    path = bundled.path("ragchecker", "meta_eval_human_labels.csv")
    base = ["agree", str(path), "--raters", "annotator_1,annotator_2", "--by", "dimension"]
    base += ["--unit-column", "instance_id", "--bootstrap", "1000", "--seed", "0"]

    def cohen(*stats: str) -> tuple[float, float]:
        code, out, err = run_cli([*base, *stats, "--format", "json"], capsys)
        assert code == 0, err
        (row,) = [
            r
            for r in json.loads(out)
            if r["dimension"] == "completeness" and r["statistic"] == "cohen"
        ]
        return round(row["ci_low"], 3), round(row["ci_high"], 3)

    alone = cohen("--stat", "cohen")
    assert alone == (0.391, 0.545)  # the interval `agree --stat cohen --seed 0` prints
    assert cohen("--stat", "percent", "--stat", "cohen") == alone
    assert cohen("--stat", "all") == alone


def test_a_judges_own_endpoint_may_carry_credentials() -> None:
    """``openai:m@http://user:pw@host/v1``: the spec was split at its last '@'.

    That '@' is the URL's own (user:pw@host), so no endpoint was read: the whole text became
    the model name, refused as 'the model name is an API key' (a study's judge step failed
    with that line), where the same URL given to --base-url ran.
    """
    from failcodes.judge.spec import JudgeSpec

    spec = JudgeSpec.of("openai:m@http://u:pw@127.0.0.1:9/v1")
    assert (spec.name, spec.model, spec.base_url) == ("openai:m", "m", "http://u:pw@127.0.0.1:9/v1")
    assert JudgeSpec.of("openai:m@HTTPS://h/v1").base_url == "HTTPS://h/v1"


def test_every_commands_request_is_a_public_name() -> None:
    """Each use case the CLI runs through a typed request is reachable as ``failcodes.X``.

    ``AgreeRequest``, ``CompareRequest``, ``ReviewPlanRequest`` and the saturate requests
    were not: a notebook reached them only through private module paths.
    """
    import importlib
    import pkgutil

    import failcodes
    import failcodes.commands
    from failcodes.commands.base import Request

    found = set()
    for info in pkgutil.iter_modules(failcodes.commands.__path__):
        module = importlib.import_module(f"failcodes.commands.{info.name}")
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, Request)
                and value is not Request
                and value.__module__ == module.__name__
            ):
                found.add(name)
    assert "AgreeRequest" in found and "JudgeRequest" in found
    assert sorted(found - set(failcodes.__all__)) == []
    assert all(getattr(failcodes, name).__name__ == name for name in found)


def test_a_panel_repeating_the_offline_judge_says_its_agreement_is_by_construction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--judge offline --judge offline`` (a study's ``judge = ["offline", "offline"]``).

    The heuristic baseline is deterministic: its two copies code every unit alike, so the
    panel printed inter-judge agreement 1.000 (Fleiss, alpha, AC1) and '4 unanimous' on the
    RAGChecker example, and the report's panel tables showed 1.000 with no word that it is
    one judge twice.
    """
    import json

    from tests.judge_helpers import make_traces, write_traces

    src = write_traces(tmp_path / "t.jsonl", make_traces(3))
    out = tmp_path / "run"
    args = ["judge", "retrieval", "--from", str(src), "-o", str(out)]
    code, printed, err = run_cli([*args, "--judge", "offline", "--judge", "offline"], capsys)
    assert code == 0, err
    line = (
        "offline#1, offline#2 are one deterministic heuristic baseline coding every unit "
        "alike: their agreement is 1 and their consensus unanimous by construction, not a "
        "measurement; a panel's agreement needs LLM judges (or one model sampled at a "
        "temperature)"
    )
    assert f"warning: {line}" in printed.splitlines()
    assert line in json.loads((out / "panel.json").read_text(encoding="utf-8"))["warnings"]


def test_the_demos_review_agreement_is_what_agree_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report's human review vs judge table and ``agree`` on the same two files.

    The demo's reviewer was named 'SIMULATED reviewer (SciFact gold rationales)': ``agree``
    refused its file ('named like a consensus ('gold')'), so no per-step command could give
    the numbers the report shows for it.
    """
    import csv
    import json

    from failcodes.demo import STEPS, DemoContext

    ctx = DemoContext(out_dir=tmp_path)
    for step in STEPS:
        if step.name in ("study", "codebook", "review-loop", "report"):
            step.run(ctx)
    both = tmp_path / "both.jsonl"
    both.write_text(
        (tmp_path / "review" / "simulated-scifact-gold.jsonl").read_text(encoding="utf-8")
        + (tmp_path / "judge" / "scifact-dev" / "retrieval" / "annotations.jsonl").read_text(
            encoding="utf-8"
        ),
        encoding="utf-8",
    )
    code, out, err = run_cli(["agree", str(both), "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0, err
    (row,) = [
        r
        for r in json.loads(out)
        if r["scope"] == "dimension"
        and r["dimension"] == "evidence_polarity"
        and r["statistic"] == "percent"
    ]
    # the reviewer answers direct_polarity on all 30 reviewed units, the judge on 10: 10/30
    assert (row["n_units"], row["value"]) == (30, pytest.approx(10 / 30))
    with (tmp_path / "report" / "tables" / "agreement.csv").open(encoding="utf-8") as fh:
        shown = [
            r
            for r in csv.DictReader(fh)
            if r["source"] == "human review vs judge"
            and r["subject"] == "evidence_polarity"
            and r["statistic"] == "percent"
        ]
    assert [float(r["value"]) for r in shown] == [pytest.approx(10 / 30)]


def test_report_on_a_study_takes_the_studys_codebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``failcodes report STUDY -o OUT`` (no --codebook) on a v2 study judged by a panel.

    docs/study.md: ``failcodes report STUDY`` alone builds from the outputs ``failcodes run``
    left. It was built under the bundled version 1: run box 'medical-fact-check v1', the
    codebook table single-label ('Evidence selection' where v2's is multi-label), its first
    line 'coded under the bundled codebook medical-fact-check v1'.
    """
    from failcodes.study.create import init_study

    layout = init_study(tmp_path / "st", codebook_version=2)
    text = layout.study_file.read_text(encoding="utf-8")  # a panel: its members' folders
    text = text.replace('judge = "offline"', 'judge = ["offline", "offline"]')
    layout.study_file.write_text(text, encoding="utf-8")
    assert run_cli(["run", str(layout.root)], capsys)[0] == 0
    out = tmp_path / "again"
    code, _, err = run_cli(["report", str(layout.root), "-o", str(out)], capsys)
    assert code == 0, err
    shown = (out / "tables" / "codebook.csv").read_text(encoding="utf-8")
    assert "Evidence selection (multi-label)" in shown  # medical-fact-check v2
    assert shown == (layout.report_dir / "tables" / "codebook.csv").read_text(encoding="utf-8")
    assert "bundled codebook medical-fact-check v1" not in err


def test_the_report_names_a_panels_judges_and_their_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A study judged by a panel: the report's run box had no Judge row and no Cost row.

    A panel's run folder holds panel.json and its members' folders, no annotations.jsonl or
    summary.json of its own, and the run box read those alone: an offline panel's report
    never said 'heuristic baseline' (a single offline judge's says it on each table), and an
    LLM panel's cost ($0.1479 over three judge runs on the fake server) was shown nowhere.
    """
    from failcodes.study.create import init_study

    layout = init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('judge = "offline"', 'judge = ["offline", "offline"]')
    layout.study_file.write_text(text, encoding="utf-8")
    assert run_cli(["run", str(layout.root)], capsys)[0] == 0
    html = (layout.report_dir / "index.html").read_text(encoding="utf-8")
    assert "<td>Judge</td><td>offline</td>" in html
    assert "<td>Cost</td><td>$0.0000</td>" in html  # the heuristic baseline makes no call
    assert "(offline heuristic baseline)" in html


def test_a_review_of_a_panel_judged_study_is_compared_with_its_consensus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review/alice.jsonl in a study judged by a panel: no human vs judge table at all.

    The report compared reviews with the judge folders' own annotations.jsonl, which a
    panel's folder does not hold: alice's 20 reviews were left out with no word (exit 0),
    though the panel's consensus is what Tables 8-9 and the Label Studio tasks show.
    """
    import json

    from failcodes.study.create import init_study

    layout = init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('judge = "offline"', 'judge = ["offline", "offline"]')
    layout.study_file.write_text(text, encoding="utf-8")
    assert run_cli(["run", str(layout.root)], capsys)[0] == 0
    member = next((layout.root / "judge").glob("*/retrieval/panel/1-*/annotations.jsonl"))
    lines = member.read_text(encoding="utf-8").splitlines()
    reviews = []
    for i, line in enumerate(lines):
        ann = json.loads(line)
        ann.update(coder="alice", coder_kind="human")
        if i == 0:  # alice differs from the (unanimous) consensus on one unit's scope
            scope = ann["codes"]["scope"]
            ann["codes"]["scope"] = "exact_scope" if scope != "exact_scope" else "broader_scope"
        reviews.append(json.dumps(ann))
    (layout.root / "review" / "alice.jsonl").write_text("\n".join(reviews) + "\n", "utf-8")
    out = tmp_path / "rep"
    code, _, err = run_cli(["report", str(layout.root), "-o", str(out)], capsys)
    assert code == 0, err
    import csv

    with (out / "tables" / "agreement.csv").open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["source"] == "human review vs judge"]
    scope = [r for r in rows if r["subject"] == "scope" and r["statistic"] == "percent"]
    assert len(lines) == 4  # RAGChecker's example: 4 retrieved chunks, alice reviews all 4
    # alice agrees with the consensus on 3 of the 4 units' scope: 3/4
    assert [(float(r["value"]), r["n_units"]) for r in scope] == [(3 / 4, "4")]
    assert {r["coders"] for r in rows} == {"alice vs panel(offline#1+offline#2)"}


def test_compare_gives_the_same_p_values_on_every_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``compare`` without --seed drew its permutations unseeded.

    SciFact x MultiVerS, permutation F1 healthver vs scifact: p 0.1344, 0.1247, 0.1214, 0.1236
    on four runs of one command (and fc.run(CompareRequest(...)) yet another), where metrics
    and agree default to seed 0; nothing said the p-values would move.
    """
    import json

    out = tmp_path / "sf.jsonl"
    labels = tmp_path / "sf.labels.jsonl"
    args = ["ingest", "scifact", "bundled:scifact", "-o", str(out), "--labels-out", str(labels)]
    assert run_cli(args, capsys)[0] == 0
    base = ["compare", "--traces", str(out), "--labels", str(labels), "--resamples", "2000"]

    def p_values(*more: str) -> list[float | None]:
        code, printed, err = run_cli([*base, *more, "--format", "json"], capsys)
        assert code == 0, err
        return [t["p_value"] for t in json.loads(printed)["tests"]]

    first = p_values()
    assert p_values() == first
    assert p_values("--seed", "0") == first


def test_agreement_table_from_python_is_seeded_as_the_cli() -> None:
    """``fc.agreement_table(table, ["cohen"], n_bootstrap=...)`` with no seed was unseeded.

    A notebook's interval moved on every call, and was not the one ``failcodes agree`` prints
    for the same table (its --seed defaults to 0).
    """
    import pandas as pd

    import failcodes as fc
    from failcodes import bundled

    frame = pd.read_csv(bundled.path("ragchecker", "meta_eval_human_labels.csv"))
    part = frame[frame["dimension"] == "completeness"]
    table = fc.ratings_from_frame(
        part, unit_column="instance_id", raters=["annotator_1", "annotator_2"]
    )
    (row,) = fc.agreement_table(table, ["cohen"], n_bootstrap=1000)
    # agree --stat cohen --bootstrap 1000 --seed 0 on this table: 0.463 [0.391, 0.545]
    assert (round(row.ci_low, 3), round(row.ci_high, 3)) == (0.391, 0.545)


def test_an_offline_panels_consensus_is_the_heuristic_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A study judged by ``judge = ["offline", "offline"]``: its consensus was coder_kind llm.

    attribution/<ds>/per_passage.csv said ``panel(offline#1+offline#2),llm``, so Table 8 of
    the study's report never said '(offline heuristic baseline)'.
    """
    import csv

    from failcodes.study.create import init_study

    layout = init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace('judge = "offline"', 'judge = ["offline", "offline"]')
    layout.study_file.write_text(text, encoding="utf-8")
    assert run_cli(["run", str(layout.root)], capsys)[0] == 0
    (coded,) = (layout.root / "attribution").glob("*/per_passage.csv")
    with coded.open(encoding="utf-8") as fh:
        kinds = {(r["coder"], r["coder_kind"]) for r in csv.DictReader(fh)}
    assert kinds == {("panel(offline#1+offline#2)", "heuristic")}
    table = (layout.report_dir / "tables" / "retrieval_quality.md").read_text(encoding="utf-8")
    assert "heuristic baseline" in table
