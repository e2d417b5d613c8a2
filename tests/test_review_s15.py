"""Session 16's review of session 15's diff (ff3de7c..f4ad151): the faults it found.

Each test failed before its fix (issue 30).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _panel_study(root: Path, capsys: pytest.CaptureFixture[str], version: int) -> Path:
    """A study on codebook ``version`` judged by a panel of two offline judges, run."""
    from failcodes.study.create import init_study

    layout = init_study(root, codebook_version=version)
    text = layout.study_file.read_text(encoding="utf-8")  # a panel: its members' folders
    text = text.replace('judge = "offline"', 'judge = ["offline", "offline"]')
    layout.study_file.write_text(text, encoding="utf-8")
    assert run_cli(["run", str(root)], capsys)[0] == 0
    return root


def test_review_status_of_a_panel_judged_study_uses_the_studys_codebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """22b3ad9's `review status` took the codebook of the judge folders' own annotations.jsonl,
    which a panel's folder does not hold, else the bundled v1: on a v2 study judged by a panel
    alice's 4 reviews (made under v2, the study's) were said 'made under another codebook
    version than the study's (medical-fact-check v1) left out', 0/2 reviewed, where the report
    compares them with the consensus (2 in the plan)."""
    root = _panel_study(tmp_path / "st", capsys, version=2)
    plan_args = ["review", "plan", str(root), "--part", "retrieval", "-n", "2"]
    assert run_cli(plan_args, capsys)[0] == 0
    member = next((root / "judge").glob("*/retrieval/panel/1-*/annotations.jsonl"))
    reviews = root / "review" / "alice.jsonl"
    reviews.write_text(
        "".join(
            json.dumps({**json.loads(x), "coder": "alice", "coder_kind": "human"}) + "\n"
            for x in member.read_text(encoding="utf-8").splitlines()
        ),
        encoding="utf-8",
    )
    plan = root / "review" / "plans" / "ragchecker-example.retrieval.json"
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(reviews)], capsys)
    assert code == 0, err
    # the plan draws 2 of the 4 retrieval units; alice reviewed all 4 (2 outside the plan)
    assert out == (
        "plan 'ragchecker-example.retrieval' (retrieval): estimation sample 2/2 reviewed, "
        "targeted 0/0; 2 reviewed unit(s) outside the plan (not used)\n"
    )


def test_report_after_the_study_file_names_a_new_codebook_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/study.md's bump: the study file pointed at medical-fact-check.v2.yaml after a run
    under v1, before `failcodes run` re-codes. `report STUDY` took the study file's codebook as
    if given by --codebook (022112f) and exited 2: 'annotations were made under codebook
    medical-fact-check@1+7e76b8948be6, which is neither in the study folder nor bundled' (it is
    both); before 022112f it built the report of that run under v1, its first line saying the
    study changed since. Now it does so again."""
    from failcodes.codebook import bundled_dir
    from failcodes.study.create import init_study

    layout = init_study(tmp_path / "st")
    assert run_cli(["run", str(layout.root)], capsys)[0] == 0
    v2 = layout.root / "medical-fact-check.v2.yaml"
    v2.write_bytes((bundled_dir() / "medical-fact-check.v2.yaml").read_bytes())
    text = layout.study_file.read_text(encoding="utf-8")
    layout.study_file.write_text(
        text.replace("medical-fact-check.v1.yaml", "medical-fact-check.v2.yaml"), "utf-8"
    )
    out = tmp_path / "rep"
    code, _, err = run_cli(["report", str(layout.root), "-o", str(out)], capsys)
    assert code == 0, err
    assert "this report shows the outputs of that run" in err
    shown = (out / "tables" / "codebook.csv").read_text(encoding="utf-8")
    assert "Evidence selection (multi-label)" not in shown  # the run's v1, single-label


def test_import_takes_a_team_roster_of_user_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """b9d0e8a refused every `--user ID=NAME` whose id no annotation of the export is by: the
    team's roster given to each blind project's export (`--user 3=bob --user 4=alice --user
    5=carol`, carol's project exported apart) was refused ('no annotation in the export is by
    user id 5'), though every annotation's user is named and none is written as
    label-studio-user-N. An unused id is refused only when it may have been meant for an
    annotator left unnamed (a typo: 5 for 4), as b9d0e8a's test has it."""
    from tests.test_outside_red14b import _ls_ann
    from tests.test_outside_red15b import _export

    export, cb = _export(
        tmp_path, [_ls_ann(3, "irrelevant", shown=False), _ls_ann(4, "exact_entity", False)]
    )
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb), "-o", str(out)]
    roster = ["--user", "3=bob", "--user", "4=alice", "--user", "5=carol"]
    code, _, err = run_cli([*args, *roster], capsys)
    assert code == 0, err
    coders = sorted(json.loads(line)["coder"] for line in out.read_text().splitlines())
    assert coders == ["alice", "bob"]


def test_a_pandas_row_index_in_a_csv_is_named_with_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """5af820a refuses a value under a header cell left empty. pandas' `to_csv` writes its row
    index so by default (an empty first header cell, 0, 1, ... below): every CSV a researcher
    saves from a DataFrame without index=False, read before as the same numbers (the column
    dropped), was refused as 'a value in column A, which has no header name' with no word of
    pandas or of the way through. (agree read that column as a rater 'Unnamed: 0' when the
    ratings are 0/1: a third rater, Fleiss over the row numbers; so the refusal stays.)"""
    table = tmp_path / "t.csv"
    table.write_text(
        ",question_id,sentence_id,claim_id,claim,verdict,system\n"
        "0,q1,s1,c1,Aspirin cures cancer,supported,A\n",
        encoding="utf-8",
    )
    out = tmp_path / "t.jsonl"
    code, stdout, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {table}:2: a value in column A, which has no header name (a row "
        "index? write the file with pandas' to_csv(index=False) or R's write.csv(row.names = "
        "FALSE))\n"
    )
    assert not out.exists()


def test_a_listed_system_whose_rows_all_lack_a_verdict_is_not_a_typo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bce503a refuses a name of `--option systems` that no row has (a typo). A listed system
    whose verifier failed on every row (`--option no_verdict=drop`, which names such a system
    in a note: 'system(s) with no verdict on any row') was refused as "--option systems names
    'C', which no row has (the rows' systems: A, gold)": line 3 is C's. Now ingest writes A's
    trace, leaves gold out and says C's dropped row, as without --option systems."""
    table = tmp_path / "t.csv"
    table.write_text(
        "question_id,sentence_id,claim_id,claim,verdict,system\n"
        "q1,s1,c1,X.,supported,A\nq1,s1,c1,X.,,C\nq1,s1,c1,X.,supported,gold\n",
        encoding="utf-8",
    )
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--option", "systems=A,C"]
    code, stdout, err = run_cli([*args, "--option", "no_verdict=drop"], capsys)
    assert code == 0, err
    assert stdout.startswith(
        f"wrote 1 traces -> {out} (1 system(s): A 1; left out, not among --option systems: gold 1;"
    )
    assert "system(s) with no verdict on any row, so no trace and in no output: C" in err
    code, stdout, err = run_cli([*args[:-1], "systems=A,D", "--option", "no_verdict=drop"], capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {table}, field 'system': --option systems names 'D', which no row "
        "has (the rows' systems: A, C, gold)\n"
    )


def test_a_pipeline_retrieving_for_some_claims_only_is_told_its_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """b6ab2b6 refuses a system whose undeclared traces have passages on some claims only, and
    its line offered --evidence SYSTEM=... and --retriever: one source for the whole system.
    A pipeline that decides per claim whether to retrieve (adaptive retrieval) has both kinds
    by design, and neither flag is right for it; the way through is each trace's own
    evidence_source (a field or column), which the refusal leaves alone: said now."""
    passage = [{"passage_id": "p1", "rank": 1, "text": "A is so."}]
    rows = [("s1", "c1", passage, "retrieved"), ("s2", "c2", [], "none")]
    lines = [
        {"system": "S", "question_id": "q1", "sentence_id": s, "claim_id": c, "claim": c}
        | {"verdict": "supported", "passages": p, "evidence_source": e}
        for s, c, p, e in rows
    ]
    src = tmp_path / "s.jsonl"
    bare = [{k: v for k, v in x.items() if k != "evidence_source"} for x in lines]
    src.write_text("".join(json.dumps(x) + "\n" for x in bare), encoding="utf-8")
    out = tmp_path / "t.jsonl"
    code, stdout, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {src}, field 'passages': system 'S': 1 of its 2 traces have neither "
        "passages nor a retriever, the others passages: read trace by trace, those would be "
        "closed-book (evidence source none) and their disagreements blamed on verification, not "
        "on a retrieval that found nothing; declare the pipeline's evidence: --evidence "
        "S=retrieved (or provided, none; a study: its [[datasets.pipelines]] evidence), or "
        "--retriever NAME; a pipeline that retrieves for some claims only: each trace's "
        "evidence_source (a field or column)\n"
    )
    assert not out.exists()
    src.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    code, stdout, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert code == 0, err
    written = [json.loads(x)["evidence_source"] for x in out.read_text().splitlines()]
    assert written == ["retrieved", "none"]


def test_a_study_temperature_the_judge_takes_none_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """87ad714 refuses a temperature the judge is not sampled at, checked across the whole
    [judge] table: a study file's `temperature = 0.5` beside `judge = "offline"` was refused
    at the table's header line, field 'judge', as '--temperature: offline takes no
    temperature ...', a flag the study file has not. Now the line and field are the
    temperature's; the CLI's line is unchanged (tests/test_outside_red15c.py)."""
    from failcodes.study.create import init_study

    layout = init_study(tmp_path / "st")
    lines = layout.study_file.read_text(encoding="utf-8").splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith('judge = "offline"'))
    lines.insert(at + 1, "temperature = 0.5")
    layout.study_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli(["run", str(layout.root), "--plan"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {layout.study_file}:{at + 2}, field 'judge.temperature': offline "
        "takes no temperature (a deterministic heuristic baseline); leave it out\n"
    )


def test_attribute_says_a_system_read_as_partly_closed_book(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """b6ab2b6 refuses at `ingest` a system whose undeclared traces have passages on some
    claims only, but traces a user writes in failcodes' format (docs/trace-format.md), or
    ingested before it, go to `disagreements` (which writes each claim's derived source) and
    `attribute` unchecked: B's retriever found a gold passage for c1 and nothing for c2, both
    refuted, both sentences correct, and attribute blamed s2 on verification ("closed-book
    pipeline ... no retrieval stage"): verification 2, retrieval 0 where docs/attribution.md
    step 4 gives 1 and 1, exit 0, no word. The disagreements file no longer tells a derived
    source from a declared one (an adaptive pipeline's), so attribute says it on its first
    line, with the way through (--evidence B=retrieved: s1 verification, s2 retrieval).
    Since t17red1 `disagreements` refuses such traces unless declared; the file is made here
    from traces declaring each claim's source (c2 none), which it writes alike."""
    gold = [{"passage_id": "p1", "rank": 1, "text": "t", "gold": True}]
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        "".join(
            json.dumps(
                {"system": "B", "question_id": "q1", "sentence_id": s, "claim_id": c}
                | {"claim": c, "verdict": "refuted", "passages": p, "evidence_source": e}
            )
            + "\n"
            for s, c, p, e in (("s1", "c1", gold, "retrieved"), ("s2", "c2", [], "none"))
        ),
        encoding="utf-8",
    )
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
        '{"sentence_id": "s2", "question_id": "q1", "has_error": false}\n',
        encoding="utf-8",
    )
    d = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(d)]
    assert run_cli(args, capsys)[0] == 0
    att = tmp_path / "att"
    code, _, err = run_cli(["attribute", "--from", str(d), "-o", str(att)], capsys)
    assert code == 0, err
    assert err.splitlines()[0] == (
        "system 'B': 1 of its 2 claims here are closed-book (evidence source none), the "
        "others retrieved: attributed so, the closed-book ones to verification; if its "
        "retriever found nothing for them (a source derived from no passages), --evidence "
        "B=retrieved attributes them to retrieval (docs/attribution.md step 4)"
    )
    args = ["attribute", "--from", str(d), "-o", str(att), "--evidence", "B=retrieved"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert "closed-book" not in err
    rows = [json.loads(x) for x in (att / "attribution.jsonl").read_text().splitlines()]
    assert sorted((r["sentence_id"], r["stage"]) for r in rows) == [
        ("s1", "verification"),
        ("s2", "retrieval"),
    ]
