"""Outside red-team, session 13 (t13red1): shapes the other tests do not use.

Each test holds the value computed by hand beside its assertion, or the one-line refusal.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

_INGEST = """
[[datasets]]
name = "{name}"
[[datasets.ingest]]
adapter = "generic"
paths = ["{file}"]
label_rule = "gold = bad -> error"
labels = true
[[datasets.pipelines]]
system = "*"
evidence = "none"
"""

_TAIL = """
[metrics]
mappings = ["refuted"]
bootstrap = 0

[judge]
judge = "offline"

[review]
labelstudio = false
"""


def _study(root: Path, tables: dict[str, str], tail: str = _TAIL) -> Path:
    """A closed-book study: one data set per ``tables`` item (name -> a generic CSV)."""
    from failcodes.codebook import bundled_dir

    root.mkdir()
    body = 'name = "red13"\ncodebook = "medical-fact-check.v1.yaml"\n'
    for name, rows in tables.items():
        (root / f"{name}.csv").write_text(rows)
        body += _INGEST.format(name=name, file=f"{name}.csv")
    (root / "failcodes.toml").write_text(body + tail)
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


def _rows(path: Path) -> dict[str, str]:
    """A Markdown table's rows by their first cell."""
    lines = path.read_text().splitlines()
    return {line.split("|")[1].strip(): line for line in lines if line.startswith("| ")}


# ---------------------------------------------------------------------------------------
# report: a system named like the attribution summary's sum row
# ---------------------------------------------------------------------------------------
def test_a_system_named_all_keeps_its_row_beside_the_sum(tmp_path: Path) -> None:
    import failcodes

    # errors (gold bad): s2, s4. Under refuted (flag = refuted):
    #   all   flags s3, s4 -> FN s2, FP s3          = 2 disagreements
    #   gpt   flags s2     -> FN s4                 = 1
    #   exact flags s2, s4 -> none                  = 0
    # the sum row: 2 + 1 + 0 = 3. Before, the sum was written over the system 'all''s own
    # row ('all | 3', its 2 shown nowhere) and 'exact''s 0 disagreements went unsaid.
    gold = ["ok", "bad", "ok", "bad"]  # s1..s4
    table = "system,question_id,sentence_id,claim,verdict,gold\n" + "".join(
        f"{system},q{1 + i // 2},s{i + 1},c{i},{verdict},{gold[i]}\n"
        for system, verdicts in (
            ("all", "supported supported refuted refuted"),
            ("gpt", "supported refuted supported supported"),
            ("exact", "supported refuted supported refuted"),
        )
        for i, verdict in enumerate(verdicts.split())
    )
    study = _study(tmp_path / "st", {"d": table})
    failcodes.run_study(study)
    rows = _rows(study / "report" / "tables" / "attribution.md")
    assert rows["all"].endswith("| 2 | 2 |")
    assert rows["gpt"].endswith("| 1 | 1 |")
    assert rows["all systems"].endswith("| 3 | 3 |")
    assert "exact" not in rows
    page = (study / "report" / "index.html").read_text()
    assert "d: no disagreement for exact: nothing of it was judged" in page


# ---------------------------------------------------------------------------------------
# the CLI: an option that takes one value, given twice
# ---------------------------------------------------------------------------------------
def test_a_second_label_rule_is_refused_not_read_in_place_of_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli_helpers import run_cli

    # gold: s1 ok, s2 bad, s3 partial, s4 bad. A researcher adding a clause as a second
    # --label-rule meant bad and partial -> error: 3 errors (s2, s3, s4) / 1 no-error (s1).
    # The parser kept the last rule alone: 'gold = partial -> error' gave 1 error (s3) and 3
    # no-error, s2 and s4 (bad) among them, exit 0.
    table = tmp_path / "t.csv"
    table.write_text(
        "question_id,sentence_id,claim,verdict,gold\n"
        "q1,s1,a,supported,ok\nq1,s2,b,refuted,bad\nq2,s3,c,refuted,partial\n"
        "q2,s4,d,supported,bad\n"
    )
    labels = tmp_path / "l.jsonl"
    base = ["ingest", "generic", str(table), "-o", str(tmp_path / "t.jsonl")]
    base += ["--labels-out", str(labels), "--system", "A"]
    two = ["--label-rule", "gold = bad -> error", "--label-rule", "gold = partial -> error"]
    code, _, err = run_cli([*base, *two], capsys)
    assert code == 2
    assert err == (
        "failcodes: error: ingest: --label-rule takes one value and was given 2 ('gold = bad "
        "-> error', 'gold = partial -> error'): only the last would be used; give one (one "
        "rule of several clauses: join them with ';')\n"
    )
    assert not labels.exists() and not (tmp_path / "t.jsonl").exists()
    # the same option given twice with one value is harmless; --system A twice: one system
    code, _, err = run_cli(
        [*base, "--system", "A", "--label-rule", "gold in {bad, partial} -> error"], capsys
    )
    assert code == 0
    assert "3 error / 1 no-error sentence labels" in err


# ---------------------------------------------------------------------------------------
# report: the level of the metrics' intervals
# ---------------------------------------------------------------------------------------
def test_the_metrics_caption_says_the_level_its_intervals_were_computed_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import failcodes
    from tests.cli_helpers import run_cli

    table = "system,question_id,sentence_id,claim,verdict,gold\n" + "".join(
        f"A,q{i},s{i},c{i},{'refuted' if i % 3 else 'supported'},{'bad' if i % 2 else 'ok'}\n"
        for i in range(8)
    )
    tail = _TAIL.replace("bootstrap = 0", "bootstrap = 200")
    study = _study(tmp_path / "st", {"d": table}, tail)
    failcodes.run_study(study)
    caption = (study / "report" / "tables" / "prf_sentence.md").read_text().splitlines()[0]
    # the study's metrics: 200 resamples at metrics' default level, 0.95
    assert caption == "**P / R / F1 (%) with 95% cluster-bootstrap CIs, sentence level**"
    # metrics written again by hand at --confidence 0.5: a 50% interval was captioned 95%
    data = study / "data"
    code, _, _ = run_cli(
        [
            *("metrics", "--traces", str(data / "d.traces.parquet")),
            *("--labels", str(data / "d.labels.jsonl"), "-m", "refuted", "--bootstrap", "200"),
            *("--confidence", "0.5", "-o", str(study / "metrics" / "d.json")),
        ],
        capsys,
    )
    assert code == 0
    failcodes.run(failcodes.ReportRequest(run_dir=study))
    caption = (study / "report" / "tables" / "prf_sentence.md").read_text().splitlines()[0]
    assert caption == "**P / R / F1 (%) with 50% cluster-bootstrap CIs, sentence level**"
    page = (study / "report" / "index.html").read_text()
    assert "Recall and F1 by system (mapping: refuted), 50% cluster-bootstrap CIs" in page


def test_metrics_without_resamples_are_not_captioned_with_intervals(tmp_path: Path) -> None:
    import failcodes

    table = "system,question_id,sentence_id,claim,verdict,gold\nA,q1,s1,c,refuted,bad\n"
    study = _study(tmp_path / "st", {"d": table})  # [metrics] bootstrap = 0
    failcodes.run_study(study)
    caption = (study / "report" / "tables" / "prf_sentence.md").read_text().splitlines()[0]
    # it read 'with 95% cluster-bootstrap CIs' over a table with no interval in it
    assert caption == (
        "**P / R / F1 (%), sentence level; no intervals (metrics ran without --bootstrap)**"
    )


def test_the_agreement_caption_says_the_level_of_its_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import failcodes
    from failcodes.codebook import bundled_dir
    from tests.cli_helpers import run_cli

    study = tmp_path / "st"
    study.mkdir()
    # two raters agree on u1, u3, u4, u5: percent agreement 4/6 = 0.667
    (study / "r.csv").write_text("unit,r1,r2\nu1,a,a\nu2,a,b\nu3,b,b\nu4,a,a\nu5,b,b\nu6,a,b\n")
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", study)
    (study / "failcodes.toml").write_text(
        'name = "ag"\ncodebook = "medical-fact-check.v1.yaml"\n[[agreements]]\nname = "ag"\n'
        'path = "r.csv"\nraters = ["r1", "r2"]\nstatistics = ["percent"]\n'
    )
    failcodes.run_study(study)
    first = (study / "report" / "tables" / "agreement.md").read_text().splitlines()
    assert first[0].endswith(": value [95% CI] per statistic; n: units, raters: coders**")
    # the same table agreed again by hand at --confidence 0.5: its 50% intervals read 95%
    code, _, _ = run_cli(
        [
            *("agree", str(study / "r.csv"), "--raters", "r1,r2", "--stat", "percent"),
            *("--confidence", "0.5", "-o", str(study / "agreement" / "ag.json")),
        ],
        capsys,
    )
    assert code == 0
    failcodes.run(failcodes.ReportRequest(run_dir=study))
    table = (study / "report" / "tables" / "agreement.md").read_text().splitlines()
    assert table[0].endswith(": value [50% CI] per statistic; n: units, raters: coders**")
    assert "| 0.667 [" in table[4]


# ---------------------------------------------------------------------------------------
# the Python API: labels that cover part of the sentences
# ---------------------------------------------------------------------------------------
def test_the_python_api_says_the_labels_cover_part_of_the_sentences(tmp_path: Path) -> None:
    import json

    import failcodes

    # 6 sentences (one per question), claims s1, s3, s5 refuted; labels for s0, s1, s2 only
    # (s1 an error): TP 1 (s1), TN 2 (s0, s2), n 3; P = R = F1 = 100%, of half the sentences.
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    traces.write_text(
        "".join(
            json.dumps(
                {
                    "system": "A",
                    "question_id": f"q{i}",
                    "sentence_id": f"s{i}",
                    "claim_id": f"c{i}",
                    "claim": "c",
                    "verdict": "refuted" if i % 2 else "supported",
                }
            )
            + "\n"
            for i in range(6)
        )
    )
    labels.write_text(
        "".join(
            json.dumps({"question_id": f"q{i}", "sentence_id": f"s{i}", "has_error": i == 1}) + "\n"
            for i in range(3)
        )
    )
    said: list[str] = []
    request = failcodes.MetricsRequest(traces=[traces], labels=labels, mapping=["refuted"])
    result = failcodes.run(request, note=said.append)
    row = result.report.results[0]
    assert (row.tp, row.fp, row.fn, row.tn, row.n_unlabelled) == (1, 0, 0, 2, 3)
    # the CLI's second line; the API said the first (Assumed: ...) alone
    assert said[1:] == [
        "labels cover 3 of 6 sentences; the other 3 are left out (unlabelled)",
        *result.later,  # and the notes under the CLI's table (t22api)
    ]
    said.clear()
    out = tmp_path / "d.jsonl"
    failcodes.run(
        failcodes.DisagreementsRequest(traces=[traces], labels=labels, out=out), note=said.append
    )
    assert "labels cover 3 of 6 sentences; the other 3 are left out (unlabelled)" in said


# ---------------------------------------------------------------------------------------
# report: metrics written by an older failcodes, before their assumptions were recorded
# ---------------------------------------------------------------------------------------
def test_a_metrics_file_of_an_older_version_says_its_assumptions_were_not_recorded(
    tmp_path: Path,
) -> None:
    import json

    import failcodes
    from failcodes.report.rundir import load_run_dir

    table = "system,question_id,sentence_id,claim,verdict,gold\nA,q1,s1,c,refuted,bad\n"
    study = _study(tmp_path / "st", {"d": table})
    failcodes.run_study(study)
    # this version's file: the run box says what metrics assumed
    meta = load_run_dir(study).meta
    assert meta is not None
    data = dict(meta.extra)["Data"]
    assert data.startswith("Assumed: shared labels")
    # the same file as an older failcodes wrote it: no label design, no question scope. Its
    # TP 1 (s1 refuted, labelled an error) was shown with no word of what it assumed.
    path = study / "metrics" / "d.json"
    rows = json.loads(path.read_text())
    new = ("labels", "question_shape", "question_scope", "without_claims_policy")
    path.write_text(json.dumps([{k: v for k, v in r.items() if k not in new} for r in rows]))
    meta = load_run_dir(study).meta
    assert meta is not None
    assert dict(meta.extra)["Data"] == (
        "not recorded: metrics/d.json was written by an older failcodes, before what metrics "
        "assumed of the labels was saved (shared or per-system, the questions counted); "
        "compute it again (failcodes run STUDY --force) to have it said"
    )
    assert rows[0]["tp"] == 1


# ---------------------------------------------------------------------------------------
# attribute: the tables of an earlier run the new one does not write
# ---------------------------------------------------------------------------------------
def test_a_pipeline_redeclared_closed_book_leaves_no_retrieval_table_of_the_earlier_run(
    tmp_path: Path,
) -> None:
    import json

    import failcodes

    # gold: s1 ok, s2 bad, s3 ok, s4 bad; refuted on s1 and s4: FP s1, FN s2 (2 disagreements)
    verdicts = {"s1": "refuted", "s2": "supported", "s3": "supported", "s4": "refuted"}
    gold = {"s1": "ok", "s2": "bad", "s3": "ok", "s4": "bad"}
    rows = [
        {
            "system": "A",
            "question_id": f"q{1 + i // 2}",
            "sentence_id": s,
            "claim": f"Aspirin claim {s}",
            "verdict": verdicts[s],
            "gold": gold[s],
            "passages": [{"text": f"Aspirin lowers fever {s}.", "rank": 1}],
        }
        for i, s in enumerate(verdicts)
    ]
    study = _study(tmp_path / "st", {})
    (study / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    body = _INGEST.format(name="d", file="t.jsonl").replace('"none"', '"retrieved"')
    toml = study / "failcodes.toml"
    head, tail = toml.read_text().split("\n[metrics]", 1)
    toml.write_text(head + body + "\n[metrics]" + tail)
    failcodes.run_study(study)
    attribution = study / "attribution" / "d"
    assert (attribution / "per_passage.csv").is_file()  # Table 8: the retrieved passages
    # the pipeline was closed-book after all (its passages are citations): attribute runs
    # again without a retrieval run, and Table 8 must go with it. It stayed: the report showed
    # the earlier run's 'retrieval quality' of a closed-book pipeline's citations.
    toml.write_text(toml.read_text().replace('evidence = "retrieved"', 'evidence = "none"'))
    # the earlier retrieval run is no longer the study's: the report refuses it (its quote
    # checks were shown), and runs once it is moved out
    with pytest.raises(failcodes.errors.FailcodesError, match=r"judge/d/retrieval \(no passage"):
        failcodes.run_study(study)
    shutil.rmtree(study / "judge" / "d" / "retrieval")
    failcodes.run_study(study)
    stages = (attribution / "attribution.csv").read_text().splitlines()[1:]
    assert [line.split(",")[6] for line in stages] == ["verification", "verification"]
    assert not (attribution / "per_passage.csv").exists()
    assert not (attribution / "retriever_all_high.csv").exists()
    assert not (study / "report" / "tables" / "retrieval_quality.md").exists()


# ---------------------------------------------------------------------------------------
# the library: compute_metrics called as find_disagreements is, and with a generator
# ---------------------------------------------------------------------------------------
def test_compute_metrics_takes_one_mapping_and_traces_filtered_by_a_generator() -> None:
    import failcodes as fc

    traces = [
        fc.Trace(system=s, question_id="q1", sentence_id=i, claim_id=i, claim="c", verdict=v)
        for s, verdicts in (("A", "refuted supported"), ("B", "refuted refuted"))
        for i, v in zip(("s1", "s2"), verdicts.split(), strict=True)
    ]
    labels = [
        fc.Label(question_id="q1", sentence_id="s1", has_error=True),
        fc.Label(question_id="q1", sentence_id="s2", has_error=False),
    ]
    # A: s1 refuted (error) TP, s2 supported (no error) TN
    only_a = (t for t in traces if t.system == "A")  # a notebook's filter
    report = fc.compute_metrics(only_a, labels, "refuted")  # type: ignore[arg-type]
    # before: the label checks used the generator up ("no trace has sentence_id 's1'"), and
    # 'refuted' was read letter by letter ("unknown error mapping or verdict 'r'")
    assert [(r.system, r.mapping, r.tp, r.fp, r.fn, r.tn) for r in report.results] == [
        ("A", "refuted", 1, 0, 0, 1)
    ]
    # B: s1 TP, s2 refuted (no error) FP; the list and the generator agree
    both = fc.compute_metrics(traces, labels, ["refuted"])
    assert [(r.system, r.tp, r.fp, r.fn, r.tn) for r in both.results] == [
        ("A", 1, 0, 0, 1),
        ("B", 1, 1, 0, 0),
    ]
