"""Session 27, helper t27left: things said wrong or left unsaid (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_misspelt_required_field_is_named_not_reported_missing() -> None:
    """``MetricsRequest(trace=[...])`` (``traces`` misspelt) said ``--traces: Field required``.

    The field given was not named, so the line read as if no traces had been given at all;
    the unknown field is said first, with the one it is close to and every field there is
    (MetricsRequest's fields, in their order in commands/measure.py).
    """
    import failcodes

    with pytest.raises(failcodes.FailcodesError) as caught:
        failcodes.MetricsRequest(trace=[Path("t.jsonl")], labels=Path("l.jsonl"))  # type: ignore[call-arg]
    assert str(caught.value) == (
        "trace: unknown field of MetricsRequest (did you mean 'traces'?); its fields: traces, "
        "labels, mapping, level, bootstrap, seed, confidence, without_claims, question_scope, "
        "verdicts, out, out_format"
    )
    with pytest.raises(failcodes.FailcodesError) as caught:
        failcodes.JudgeRequest(kind="retrieval", sorce=Path("d.jsonl"))  # type: ignore[call-arg]
    said = str(caught.value)
    assert said.startswith("sorce: unknown field of JudgeRequest (did you mean 'source'?); ")
    assert "\n" not in said


def test_a_verdict_with_a_no_break_space_names_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'No\\u00a0Evidence' (pasted from a web page) was refused as 'No\\xa0Evidence'.

    A reader takes that for the very words asked for (no_evidence); the line names U+00A0.
    """
    from tests.cli_helpers import run_cli

    table = tmp_path / "t.csv"
    table.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict\nA,q1,s1,c1,x,No\u00a0Evidence\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl")], capsys
    )
    assert code == 2
    assert err == (
        f"failcodes: error: {table}:2, field 'verdict': unknown verdict 'No\\xa0Evidence'; it "
        "holds U+00A0 NO-BREAK SPACE, which shows as a space (pasted from a web page or a word "
        "processor?): retype the value (canonical verdicts: ambiguous, no_evidence, "
        "out_of_scope, refuted, supported; map it with `failcodes ingest --alias "
        "RAW=CANONICAL`)\n"
    )
    assert not (tmp_path / "o.jsonl").exists()


def test_a_label_and_a_mapping_with_invisible_characters_name_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """has_error 'tr\\u2009ue' (a thin space) and ``-m refuted\\u200b`` were refused unnamed."""
    import json

    from tests.cli_helpers import run_cli

    traces = tmp_path / "t.jsonl"
    row = {"system": "A", "question_id": "q1", "sentence_id": "s1", "claim_id": "c1"}
    traces.write_text(json.dumps({**row, "claim": "x", "verdict": "supported"}) + "\n")
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        json.dumps({"question_id": "q1", "sentence_id": "s1", "has_error": "tr\u2009ue"}) + "\n"
    )
    code, _, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 2
    assert "got 'tr\\u2009ue'; it holds U+2009 THIN SPACE, which shows as a space" in err
    good = tmp_path / "g.jsonl"
    good.write_text(json.dumps({"question_id": "q1", "sentence_id": "s1", "has_error": True}))
    args = ["metrics", "--traces", str(traces), "--labels", str(good), "-m", "refuted\u200b"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "; it holds U+200B ZERO WIDTH SPACE, which shows as nothing" in err


def test_a_review_choice_with_a_byte_order_mark_inside_names_it() -> None:
    """A hand-edited export's choice 'irre\\ufefflevant' was 'unknown choice' with no word why."""
    from failcodes.labelstudio.results import annotations_from_export
    from failcodes.units import UnitKind
    from tests.test_labelstudio_tasks import exported, toy_codebook

    data = exported()
    data[1]["annotations"][1]["result"][0]["value"]["choices"] = ["irre\ufefflevant"]
    res = annotations_from_export(data, toy_codebook(), UnitKind.RETRIEVAL, users={}, project=7)
    [said] = [p.message for p in res.problems if p.value == "irre\ufefflevant"]
    assert said == (
        "unknown choice 'irre\\ufefflevant' in dimension 'entity' (valid: exact_entity, "
        "partial_entity, irrelevant); it holds U+FEFF ZERO WIDTH NO-BREAK SPACE, which shows as "
        "nothing (pasted from a web page or a word processor?): retype the value; not kept"
    )


def test_a_grouped_batch_run_on_a_warm_cache_sends_no_group_the_cache_answers(
    fake_server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A second grouped batch run (a new run folder, the same response cache) sent every group.

    3 claims x 3 passages in one chunk: the first run sends 3 group items (3 units each) and
    caches each group's answer; the second, with nothing in its journal, found no unit's own
    answer in the cache (a group's answer is cached under the group's key alone), sent the 3
    groups again (3 items, the fake server's batches.create called once more) and its dry run
    counted 3 calls. By hand: every group's answer is cached, so 0 items and 0 calls, the 9
    units coded from the cache with the first run's codes.
    """
    import asyncio

    from failcodes.judge import Batch, Grouped, JudgeJob, estimate_run, run_judge_async
    from failcodes.judge.run import read_annotations
    from failcodes.units import UnitKind, retrieval_units
    from tests.judge_helpers import FAKE_PRICES, fake_coder, fresh_fake, make_codebook, make_traces

    fake = fresh_fake(fake_server, monkeypatch, "sk-t27left-batch")
    units = retrieval_units(make_traces(3))
    assert len(units) == 9 and len({u.claim for u in units}) == 3
    mode = Batch(size=50, poll=0.01, group=Grouped(size=10))
    cache = tmp_path / "cache.sqlite"

    def job(run: str) -> JudgeJob:
        return JudgeJob(
            make_codebook(),
            UnitKind.RETRIEVAL,
            tmp_path / run,
            mode=mode,
            cache_path=cache,
            prices=FAKE_PRICES,
        )

    first = asyncio.run(run_judge_async(units, fake_coder(fake, "openai"), job("one")))
    assert (first.groups, first.grouped_units, first.judged_alone) == (3, 9, 0)
    created = fake.stats()["batch_calls"]["batches.create"]
    estimate = estimate_run(units, fake_coder(fake, "openai"), job("two"))
    again = asyncio.run(run_judge_async(units, fake_coder(fake, "openai"), job("two")))
    assert fake.stats()["batch_calls"]["batches.create"] == created  # no batch sent
    assert (again.groups, again.judged_alone, again.cache_hits, again.judged) == (0, 0, 9, 9)
    assert estimate.calls == 0 and estimate.cache_hits == 9
    codes = {a.unit_id: a.codes for a in read_annotations(tmp_path / "one")}
    assert {a.unit_id: a.codes for a in read_annotations(tmp_path / "two")} == codes


def _ranked_traces(folder: Path) -> Path:
    """Claim c1's passages ranked 1, 3, 5 (a reranker's kept ones); c2's ranked 1, 2."""
    import json

    def passage(rank: int, text: str) -> dict[str, object]:
        return {"rank": rank, "text": text, "passage_id": f"p{rank}"}

    ids = {"system": "A", "retriever": "bm25"}
    rows = [
        {
            **ids,
            **{"question_id": "q1", "sentence_id": "s1", "claim_id": "c1"},
            "claim": "Metformin lowers HbA1c.",
            "verdict": "refuted",
            "passages": [
                passage(1, "Metformin lowers HbA1c in adults."),
                passage(3, "Insulin is a hormone."),
                passage(5, "Aspirin thins blood."),
            ],
        },
        {
            **ids,
            **{"question_id": "q2", "sentence_id": "s2", "claim_id": "c2"},
            "claim": "Statins lower LDL.",
            "verdict": "supported",
            "passages": [passage(1, "Statins lower LDL cholesterol."), passage(2, "LDL is fat.")],
        },
    ]
    path = folder / "rk.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


#: RankGaps' line for _ranked_traces under --top-k 2: c1 keeps 1 passage (rank 1) of its 3
#: where 2 were asked (ranks 3 and 5 are past 2); c2 keeps both of its 2 (no gap): 1 claim.
GAPS_K2 = (
    "--top-k 2: 1 claim(s) hold fewer than 2 passages ranked 2 or better though they hold "
    "more (first: system 'A', claim 'c1': 1 of its 3): a rank is the retriever's, so ranks "
    "that skip (a reranker's or a filter's kept passages) leave fewer than 2 in the top 2; "
    "number the ranks 1, 2, 3... to take each claim's first 2 passages"
)


def test_judge_retrieval_says_a_claim_whose_ranks_skip_within_top_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """judge retrieval --top-k 2 judged 1 passage of c1 (ranks 1, 3, 5) with no word.

    ``attribute`` says it (RankGaps); judge, on the same data and cut, said nothing, though
    its per-passage codes are what Table 8 counts. 3 units: c1's rank 1, c2's ranks 1, 2.
    """
    from tests.cli_helpers import run_cli

    traces = _ranked_traces(tmp_path)
    args = ["judge", "retrieval", "--from", str(traces), "--judge", "offline", "--top-k", "2"]
    code, out, err = run_cli([*args, "-o", str(tmp_path / "run")], capsys)
    assert code == 0, err
    assert err.splitlines()[0] == GAPS_K2
    assert "retrieval units: 3 (0 already done, 3 judged now)" in out + err
    # the disagreements file (read by the fast reader) says it too: c1 is an FP (refuted,
    # labelled no error); c2 supported under an error label is an FN
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"question_id": "q1", "sentence_id": "s1", "has_error": false}\n'
        '{"question_id": "q2", "sentence_id": "s2", "has_error": true}\n'
    )
    dis = tmp_path / "d.jsonl"
    code, _, err = run_cli(
        ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(dis)],
        capsys,
    )
    assert code == 0, err
    args = ["judge", "retrieval", "--from", str(dis), "--judge", "offline", "--top-k", "2"]
    code, _, err = run_cli([*args, "-o", str(tmp_path / "run2")], capsys)
    assert code == 0, err
    assert err.splitlines()[0] == GAPS_K2
    # without --top-k, or with ranks that do not skip within it (--top-k 1), nothing is said
    args = ["judge", "retrieval", "--from", str(traces), "--judge", "offline", "--top-k", "1"]
    code, _, err = run_cli([*args, "-o", str(tmp_path / "run3")], capsys)
    assert code == 0 and "--top-k" not in err


def test_the_label_studio_export_says_a_claim_whose_ranks_skip_within_top_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """labelstudio export --top-k 2 made tasks of 1 passage of c1 (ranks 1, 3, 5), unsaid."""
    import json

    import failcodes
    from tests.cli_helpers import run_cli

    traces = _ranked_traces(tmp_path)
    out = tmp_path / "tasks.json"
    args = ["labelstudio", "export", str(traces), "--part", "retrieval", "--top-k", "2"]
    code, _, err = run_cli([*args, "-o", str(out)], capsys)
    assert code == 0, err
    assert GAPS_K2 in err.splitlines()
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 3  # c1 p1, c2 p1, c2 p2
    request = failcodes.ExportRequest(
        units=traces, part="retrieval", top_k=2, out=tmp_path / "t2.json"
    )
    said: list[str] = []
    result = failcodes.run(request, note=said.append)
    assert result.said() == [GAPS_K2] and said == [GAPS_K2]


def test_the_report_says_a_claim_whose_ranks_skip_within_the_studys_top_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A study with [judge] top_k = 2: attribute's first line said c1's gap, the report not.

    Table 8 and Figure 1 then read as each claim's top 2 passages, where c1 (ranks 1, 3, 5)
    had 1 judged. Disagreements by hand: c1 refuted under a no-error label (FP), c2
    supported under an error label (FN); c1's ranks skip within 2, c2's (1, 2) do not.
    """
    import html

    from tests.cli_helpers import run_cli, small_study

    root = tmp_path / "st"
    dataset = (
        '[[datasets]]\nname = "rk"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["rk.jsonl"]\n\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["l.jsonl"]\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n'
    )
    small_study(root, capsys, "rk", dataset, judge='kinds = ["retrieval"]\ntop_k = 2')
    _ranked_traces(root)
    (root / "l.jsonl").write_text(
        '{"question_id": "q1", "sentence_id": "s1", "has_error": false}\n'
        '{"question_id": "q2", "sentence_id": "s2", "has_error": true}\n'
    )
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    assert GAPS_K2 in err.splitlines()  # judge's and attribute's step
    page = html.unescape((root / "report" / "index.html").read_text(encoding="utf-8"))
    assert f"Assumed: {GAPS_K2}" in page


def _doc_blocks(name: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``docs/NAME`` as (language, body), in page order."""
    import re

    from tests.conftest import REPO

    text = (REPO / "docs" / name).read_text(encoding="utf-8")
    fence = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)
    return [(m.group(1), m.group(2)) for m in fence.finditer(text)]


def test_the_python_and_shell_snippets_of_judging_at_scale_run_as_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/judging-at-scale.md's Python block named codebook, kind and units, defined nowhere.

    Run as written (NameError: codebook) it did not run. Now it runs against the fake server
    (OPENAI_BASE_URL): 3 claims x 2 systems of tests.judge_helpers share passages: 9 distinct
    (claim, passage) units (3 claims x {good, fragment, web}), batched in 3 groups of 3 (one
    per claim), so the dry run says 3 calls and the run judges 9 units. The shell block's two
    ingests (one system's outputs, no system field, named by --system; then the merge) write
    system A's 3 traces as 'rerank'. The SQL block needs DuckDB over object storage: shown,
    not run.
    """
    import glob
    import json
    import shlex

    from tests.cli_helpers import run_cli
    from tests.judge_helpers import fn_disagreements, fresh_fake, make_traces, write_disagreements

    fake = fresh_fake(fake_server, monkeypatch, "sk-t27left-docs")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
    monkeypatch.chdir(tmp_path)
    write_disagreements(tmp_path / "disagreements.jsonl", fn_disagreements(make_traces(3)))
    blocks = _doc_blocks("judging-at-scale.md")
    assert [lang for lang, _ in blocks] == ["python", "bash", "sql"]
    exec(compile(blocks[0][1], "judging-at-scale.md", "exec"), {"__name__": "__doc__"})
    assert capsys.readouterr().out == "3 calls estimated; 9 units judged\n"
    (tmp_path / "outputs").mkdir()
    rows = [t.model_dump(mode="json", exclude={"system"}) for t in make_traces(3)[::2]]
    (tmp_path / "outputs" / "rerank.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    (tmp_path / "parts").mkdir()
    for line in blocks[1][1].splitlines():
        if line.strip() and not line.startswith("#"):
            argv = [w for word in shlex.split(line) for w in sorted(glob.glob(word)) or [word]]
            assert argv[0] == "failcodes"
            code, _, err = run_cli(argv[1:], capsys)
            assert code == 0, (line, err)
    from failcodes.traceio import read_traces

    assert {t.system for t in read_traces(tmp_path / "traces.parquet")} == {"rerank"}
    assert len(read_traces(tmp_path / "traces.parquet")) == 3


def test_a_study_part_whose_system_lost_every_row_is_named_by_failcodes_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A study data set of two ingests (parts, then a merge); in b.csv B's every verdict blank.

    Under ``option = ["no_verdict=drop"]`` B's 2 rows were left out (C's 2 kept): the part's
    ingest said
    'system(s) with no verdict on any row, so no trace and in no output: B' in the step's log
    alone, and the parts are JSONL, which carry no record of it to the merged traces, so
    metrics and the report showed A alone with no word. ``failcodes run`` says it on stderr.
    """

    from tests.cli_helpers import run_cli, small_study
    from tests.test_s27_t27drop import A_CSV, B_CSV, GONE_DATASET, LABELS

    root = tmp_path / "st"
    small_study(root, capsys, "gone", GONE_DATASET)
    (root / "a.csv").write_text(A_CSV)
    (root / "b.csv").write_text(B_CSV)
    (root / "l.jsonl").write_text(LABELS)
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    assert "system(s) with no verdict on any row, so no trace and in no output: B" in err
