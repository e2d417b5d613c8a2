"""Outside red-team of agreement, review and corrected shares, session 14 (t14red2).

Designs the other tests do not use. Each test states the input, what failcodes gave at exit 0
before the fix, and the value computed by hand (or by an independent package) beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from failcodes.annotations import Annotation, CoderKind
from failcodes.codebook import bundled
from failcodes.units import UnitKind
from tests.cli_helpers import AGREE_JSON, run_cli

CB = bundled()


def _ann(unit: str, coder: str, kind: CoderKind, entity: str, scope: str) -> Annotation:
    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=CB.ref(),
        coder=coder,
        coder_kind=kind,
        codes={"entity_match": entity, "scope": scope},
    )


def test_pooled_rows_count_a_coder_who_skipped_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three coders, the second skipped unit u4: every pooled row said 'raters 2' (it counted
    the coders who rated every unit), beside 'raters 3' on the percent and dimension rows.
    Three coders rated (alice and the judge all four units, bob three of them)."""
    rows = [
        ("u1", "exact_entity", "exact_scope"),
        ("u2", "partial_entity", "broader_scope"),
        ("u3", "exact_entity", "exact_scope"),
        ("u4", "entity_mismatch", "narrower_scope"),
    ]
    anns = []
    for unit, entity, scope in rows:
        anns.append(_ann(unit, "alice", CoderKind.HUMAN, entity, scope))
        if unit != "u4":
            anns.append(_ann(unit, "bob", CoderKind.HUMAN, entity, scope))
        anns.append(_ann(unit, "judge", CoderKind.LLM, "exact_entity", scope))
    path = tmp_path / "a.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    pooled = {r["statistic"]: r["n_raters"] for r in json.loads(out) if r["scope"] == "pooled"}
    assert pooled == {
        "percent": 3,
        "fleiss": 3,
        "krippendorff": 3,
        "gwet_ac1": 3,
        "brennan_prediger": 3,
    }


def _ls_task(n: int, project: int, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    from failcodes.labelstudio.tasks import build_tasks
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook

    data = build_tasks([retrieval_unit(n)], toy_codebook(), UnitKind.RETRIEVAL)[0]["data"]
    return {"id": 100 * project + n, "data": data, "annotations": annotations, "project": project}


def _ls_ann(by: int, entity: str, shown: bool) -> dict[str, Any]:
    result = [
        {"from_name": d, "to_name": "claim", "type": "choices", "value": {"choices": [c]}}
        for d, c in (("entity", entity), ("scope", "exact_scope"))
    ]
    prediction = {"id": 9, "result": result, "model_version": "judge"} if shown else {}
    return {
        "id": 1000 * by,
        "completed_by": by,
        "result": result,
        "lead_time": 3.0,
        "prediction": prediction,
        "updated_at": "2026-12-01T09:00:00Z",
    }


def test_a_blind_pull_says_the_reviews_made_with_the_judges_codes_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pull --annotator alice --annotator bob` (one project per annotator, pushed --judged):
    all 2 annotations were made with the judge's codes pre-selected (Label Studio's
    `prediction` field, as a 1.23.2 server writes it). A pull of one shared project says so
    on its first line; the blind pull summed the projects' annotations but not that count,
    and said nothing. Now: 'Assumed: 2 of 2 ...'. Stubbed server (the three calls pull makes).
    """
    from failcodes.labelstudio.client import LabelStudioClient
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook

    projects = {"blind [alice@x.org]": 1, "blind [bob@x.org]": 2}
    exports = {
        1: [_ls_task(1, 1, [_ls_ann(3, "irrelevant", shown=True)])],
        2: [_ls_task(1, 2, [_ls_ann(4, "exact_entity", shown=True)])],
    }
    monkeypatch.setattr(LabelStudioClient, "users", lambda self: {3: "alice@x.org", 4: "bob@x.org"})
    monkeypatch.setattr(LabelStudioClient, "find_project", lambda self, title: projects[title])
    monkeypatch.setattr(LabelStudioClient, "export_tasks", lambda self, pid: exports[pid])
    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k" * 40)
    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    args = ["labelstudio", "pull", "-p", "retrieval", "-c", str(cb), "--project", "blind"]
    args += ["--annotator", "alice@x.org", "--annotator", "bob@x.org"]
    code, out, err = run_cli([*args, "-o", str(tmp_path / "h.jsonl")], capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith(
        "Assumed: 2 of 2 annotations were made with the judge's codes pre-selected"
    )
    assert out.splitlines()[1].startswith("2 annotations from 2 coder(s) on 2 tasks")


def test_import_refuses_one_user_id_named_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import --user 3=alice --user 3=bob`: the last name won with no word, so alice's
    reviews were written as bob's (exit 0). Now one line, exit 2, nothing written."""
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook

    export = tmp_path / "export.json"
    export.write_text(json.dumps([_ls_task(1, 7, [_ls_ann(3, "irrelevant", shown=False)])]))
    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb)]
    code, stdout, err = run_cli(
        [*args, "--user", "3=alice", "--user", "3=bob", "-o", str(out)], capsys
    )
    assert (code, stdout) == (2, "")
    assert err == "failcodes: error: --user: id 3 named twice ('alice' and 'bob')\n"
    assert not out.exists()


def test_ratings_from_frame_reads_unit_ids_kept_in_a_named_index() -> None:
    """`failcodes.ratings_from_frame(frame.set_index("item"))`: pandas users keep ids there.

    A long table (u1: x a, y a; u2: x b, y b; u3: x a, y b) with its item ids in the index
    was read as a wide table of two raters, 'annotator' and 'code', whose values never meet:
    Fleiss -0.333, percent 0.0 (by hand over the three units: percent 2/3), no error. Now the
    index is a column: the long shape is refused as with the ids in a column. A wide table so
    indexed keeps its ids (they were row numbers 1..5).
    """

    from failcodes import ratings_from_frame
    from failcodes.errors import InputError

    items = pd.Index(["u1", "u1", "u2", "u2", "u3", "u3"], name="item")
    long = pd.DataFrame({"annotator": list("xyxyxy"), "code": list("aabbab")}, index=items)
    with pytest.raises(
        InputError, match=r"^a long table \(one row per unit and rater: units 'item'"
    ):
        ratings_from_frame(long)
    units = pd.Index(["u1", "u2", "u3", "u4", "u5"], name="unit")
    wide = pd.DataFrame({"r1": list("aabba"), "r2": list("abbba")}, index=units)
    table = ratings_from_frame(wide)
    assert (table.unit_column, table.unit_ids, table.raters) == ("unit", list(units), ["r1", "r2"])


def test_a_long_table_without_unit_ids_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`annotator,code` rows (x a, y a, x b, y b, x a, y b) and no unit column: read as a
    wide table of two raters whose values never meet, percent 0.000 and Fleiss -0.333 at
    exit 0 (paired as exported, the units agree on 2 of 3). Now one line, exit 2, nothing
    written; a wide table with a rater-named column of ratings (`judge,dr_a`) stays wide."""
    path = tmp_path / "l.csv"
    path.write_text("annotator,code\nx,a\ny,a\nx,b\ny,b\nx,a\ny,b\n", encoding="utf-8")
    out = tmp_path / "agreement.json"
    code, stdout, err = run_cli(["agree", str(path), *AGREE_JSON, "-o", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {path}, field 'annotator': column 'annotator' is named like a rater "
        "and holds names, none of them a rating of the other columns: one row per unit and "
        "rater, without a unit id column? add the unit ids (--long RATER,RATING --unit-column "
        "UNIT), or name the raters with --raters\n"
    )
    assert not out.exists()
    wide = tmp_path / "w.csv"
    wide.write_text("judge,dr_a\na,a\nb,a\na,a\nb,b\n", encoding="utf-8")
    code, stdout, err = run_cli(["agree", str(wide), "--stat", "percent", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(3 / 4)  # agree on rows 1, 3, 4


def test_per_code_rows_of_a_code_nobody_gave_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Alice (human) and the judge code entity_match on u1..u4; neither ever gives
    `irrelevant`. Its per-code rows read percent 1.000, AC1 1.000 and PABAK 1.000 (by hand:
    p_o = 4/4; AC1's chance agreement 2 pi (1 - pi) = 0 with pi = 0, so (1 - 0) / (1 - 0);
    PABAK 2 p_o - 1) with only "zero-width interval; estimate on the boundary": perfect
    agreement on finding a code nobody found. Now each says it first."""
    entity = ["exact_entity", "partial_entity", "exact_entity", "entity_mismatch"]
    anns = []
    for i, code in enumerate(entity):
        anns.append(_ann(f"u{i}", "alice", CoderKind.HUMAN, code, "exact_scope"))
        anns.append(_ann(f"u{i}", "judge", CoderKind.LLM, code, "exact_scope"))
    path = tmp_path / "a.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {
        r["statistic"]: r
        for r in json.loads(out)
        if r["scope"] == "code" and r["code"] == "irrelevant"
    }
    said = (
        "neither coder gave irrelevant on the 4 units compared: agreement on its absence "
        "only, 1 by construction; "
    )
    for stat in ("percent", "gwet_ac1", "pabak"):
        assert rows[stat]["value"] == 1.0
        assert rows[stat]["warning"].startswith(said), rows[stat]["warning"]
    assert rows["cohen"]["value"] is None
    exact = {r["statistic"]: r for r in json.loads(out) if r.get("code") == "exact_entity"}
    assert "neither coder" not in (exact["gwet_ac1"]["warning"] or "")


def test_a_bootstrap_interval_from_a_handful_of_resamples_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree --bootstrap 5`: a "95%" BCa interval whose endpoints are about the extremes of
    5 resamples, with no Monte Carlo error (computed from 200 on) and no word. Measured (two
    raters, binary, 100 units, population kappa 0.445, 300 seeded replicates through
    failcodes.stats.agreement.agreements): coverage 0.61 at 5 resamples, 0.83 at 20, 0.95 at
    2000. Now the row says how few; at 200 (Monte Carlo error given) it does not."""
    rows = "".join(f"{i},{'ab'[i % 2]},{'ab'[(i // 3) % 2]}\n" for i in range(30))
    path = tmp_path / "r.csv"
    path.write_text("unit,r1,r2\n" + rows, encoding="utf-8")
    note = "interval from only 5 bootstrap resamples (fewer than 200: its endpoints are near"
    args = ["agree", str(path), "--stat", "fleiss", "--format", "json"]
    code, out, err = run_cli([*args, "--bootstrap", "5"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["ci_method"] == "bootstrap_bca" and row["ci_mc_error"] is None
    assert note in row["warning"]
    code, out, err = run_cli([*args, "--bootstrap", "200"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["ci_mc_error"] is not None
    assert "bootstrap resamples" not in row["warning"]


def test_agreement_says_the_plan_drew_its_strata_at_different_rates(tmp_path: Path) -> None:
    """A plan of 8 stratified by the judge's all-high flag over 40 judge-high and 4 judge-low
    units: proportional allocation with at least 2 per stratum draws 6 of 40 (0.15) and 2 of
    4 (0.5). Alice agrees with the judge on the 6 high units and on one of the 2 low ones.
    Human vs judge percent agreement on entity_match counts each reviewed unit once: 7/8 =
    0.875, where weighting the strata by their units gives (40 + 2) / 44 = 0.955. Nothing said
    so; now the agreement notes do (the value is the unweighted one, as before)."""
    from failcodes.report.rundir import load_run_dir
    from failcodes.reviewplan import StratifyBy
    from tests.review_helpers import drawn_plan
    from tests.test_review_plan import human, write_reviews

    entity = {f"h{i:02d}": "exact_entity" for i in range(40)}
    entity |= {f"l{i}": "partial_entity" for i in range(4)}
    plan = drawn_plan(tmp_path, entity, size=8, stratify=[StratifyBy.CODE])
    assert sorted((s.sampled, s.population) for s in plan.strata) == [(2, 4), (6, 40)]
    drawn = sorted(plan.estimation_ids())
    low = [u for u in drawn if u.startswith("l")]
    reviews = [human(u, "exact_entity" if u == low[1] else entity[u]) for u in drawn]
    write_reviews(tmp_path / "review" / "alice.jsonl", reviews)
    judged = [
        human(u, c).model_copy(update={"coder": "judge", "coder_kind": CoderKind.LLM})
        for u, c in entity.items()
    ]
    write_reviews(tmp_path / "judge" / "ds" / "retrieval" / "annotations.jsonl", judged)
    inputs = load_run_dir(tmp_path)
    assert inputs.agreement is not None
    rows = inputs.agreement.set_index(["subject", "statistic"])
    assert rows.loc[("entity_match", "percent"), "value"] == pytest.approx(7 / 8)
    assert inputs.notes["agreement"] == [_rates_note("0.15 to 0.5")]


def _rates_note(span: str) -> str:
    return (
        f"plan 'p': its strata's units were reviewed at different rates ({span} of each "
        "stratum; drawn so, or reviewed unevenly): human vs judge agreement counts each "
        "reviewed unit once, so the strata reviewed at higher rates weigh more than their share "
        "of the units (the corrected shares weight them)"
    )


def test_the_report_says_what_agree_assumed_of_an_agreement_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree physicians.csv -o STUDY/agreement/physicians.json` on three physicians and their
    majority_label: agree's first line says the majority column was left out (a consensus,
    Fleiss without it), and every JSON row keeps that line in `notes`. The report showed the
    rows' numbers and dropped the line: the report's agreement table gave no word of which
    columns were the raters. Now the report's agreement notes carry it, naming the file."""
    from failcodes.report.rundir import load_run_dir

    rows = ["a,a,a,a", "a,a,b,a", "b,b,b,b", "b,a,b,b", "a,b,b,b", "a,a,a,a"]
    table = tmp_path / "physicians.csv"
    table.write_text(
        "unit,dr_a,dr_b,dr_c,majority_label\n" + "".join(f"u{i},{r}\n" for i, r in enumerate(rows)),
        encoding="utf-8",
    )
    out = tmp_path / "study" / "agreement" / "physicians.json"
    out.parent.mkdir(parents=True)
    code, stdout, err = run_cli(
        ["agree", str(table), "--stat", "fleiss", "--bootstrap", "0", "-o", str(out)], capsys
    )
    assert code == 0, err
    first = stdout.splitlines()[0]
    assert first.startswith("Assumed: raters (3): dr_a, dr_b, dr_c; left out: majority_label")
    inputs = load_run_dir(tmp_path / "study")
    assert inputs.notes["agreement"] == [f"agreement/physicians.json: {first}"]


def test_metrics_intervals_from_a_handful_of_resamples_say_so(tmp_path: Path) -> None:
    """`metrics --bootstrap 5` (tests/test_engine.py's two questions): every interval came
    from 5 resamples with no word of it, as agree's did; the same reason now, one place
    (failcodes.stats.bootstrap.interval_warning). With 200 it is not given."""
    from tests.cli_helpers import exit_code
    from tests.test_engine import _files

    traces, _, _, labels = _files(tmp_path)
    for resamples, said in (("5", True), ("200", False)):
        out = tmp_path / f"m{resamples}.json"
        args = ["metrics", "--traces", traces, "--labels", labels, "-o", out]
        assert exit_code(*args, "--bootstrap", resamples) == 0
        warnings = [
            row[f"{name}_ci_warning"] or ""
            for row in json.loads(out.read_text(encoding="utf-8"))
            for name in ("precision", "recall", "f1")
            if row[f"{name}_ci_low"] is not None
        ]
        assert warnings
        note = f"interval from only {resamples} bootstrap resamples (fewer than 200"
        assert all((note in w) is said for w in warnings), warnings


def test_failcodes_run_of_an_agree_request_says_what_it_assumed(tmp_path: Path) -> None:
    """`failcodes.run(AgreeRequest(...))` (docs/study.md's API; a study's agreement step): the
    CLI prints agree's first line, the API said nothing, so three physicians and their
    majority_label came back as Fleiss over three raters with no word of the column left
    out. `failcodes.run` says a result's `assumed` through `note`; agree's result has it now."""
    import failcodes as fc
    from failcodes.commands.agree import AgreeRequest

    table = tmp_path / "physicians.csv"
    rows = ["a,a,a,a", "a,a,b,a", "b,b,b,b", "b,a,b,b", "a,b,b,b", "a,a,a,a"]
    table.write_text(
        "unit,dr_a,dr_b,dr_c,majority_label\n" + "".join(f"u{i},{r}\n" for i, r in enumerate(rows)),
        encoding="utf-8",
    )
    said: list[str] = []
    result = fc.run(AgreeRequest(file=table, stat=["fleiss"], bootstrap=0), note=said.append)
    assert result.rows[0]["raters"] == ["dr_a", "dr_b", "dr_c"]
    assert [x for x in said if x.startswith("Assumed")] == [result.notes[0]]
    assert "left out: majority_label (named like a consensus column" in said[0]


def test_statistic_options_on_an_annotation_file_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An annotation file's statistics are fixed per scope: `--weights quadratic` (or
    `--stat cohen`, `--level ordinal`, `--categories`, `--sets`) was ignored without a word,
    the rows unweighted ('weights: none') at exit 0 for a user who asked for weights. Now one
    line, exit 2, nothing written, as --by/--raters were refused already."""
    anns = [
        _ann(f"u{i}", coder, kind, "exact_entity", "exact_scope")
        for i in range(3)
        for coder, kind in (("alice", CoderKind.HUMAN), ("judge", CoderKind.LLM))
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8")
    out = tmp_path / "agreement.json"
    for extra in (["--weights", "quadratic"], ["--stat", "cohen"], ["--level", "ordinal"]):
        code, stdout, err = run_cli(["agree", str(path), *extra, "-o", str(out)], capsys)
        assert (code, stdout) == (2, "")
        assert err == f"failcodes: error: {extra[0]}: for ratings tables, not annotation files\n"
        assert not out.exists()


def test_agreement_says_a_stratum_reviewed_less_than_the_others(tmp_path: Path) -> None:
    """40 judge-high and 40 judge-low units, a plan of 8 stratified by the flag: 4 of each
    (0.1 and 0.1, drawn alike). Alice reviewed the 4 high ones only, and agrees with the
    judge: human vs judge agreement is over judge-high units alone (every unit exact_entity,
    percent 1.0), nothing said (the drawn rates were equal). Now the note gives the reviewed
    rates, 0 to 0.1; reviewed in full, no note."""
    from failcodes.report.rundir import load_run_dir
    from failcodes.reviewplan import StratifyBy
    from tests.review_helpers import drawn_plan
    from tests.test_review_plan import human, write_reviews

    entity = {f"h{i:02d}": "exact_entity" for i in range(40)}
    entity |= {f"l{i:02d}": "partial_entity" for i in range(40)}
    plan = drawn_plan(tmp_path, entity, size=8, stratify=[StratifyBy.CODE])
    assert sorted((s.sampled, s.population) for s in plan.strata) == [(4, 40), (4, 40)]
    judged = [
        human(u, c).model_copy(update={"coder": "judge", "coder_kind": CoderKind.LLM})
        for u, c in entity.items()
    ]
    write_reviews(tmp_path / "judge" / "ds" / "retrieval" / "annotations.jsonl", judged)
    drawn = sorted(plan.estimation_ids())
    high = [u for u in drawn if u.startswith("h")]
    write_reviews(tmp_path / "review" / "alice.jsonl", [human(u, entity[u]) for u in high])
    assert load_run_dir(tmp_path).notes["agreement"] == [_rates_note("0 to 0.1")]
    write_reviews(tmp_path / "review" / "alice.jsonl", [human(u, entity[u]) for u in drawn])
    assert load_run_dir(tmp_path).notes["agreement"] == []


def test_review_status_refuses_a_judges_annotations_given_as_reviews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tests/test_review_plan.py's hand study (12 units drawn); `review status PLAN --reviews
    FILE` with the judge's annotations of those units (coder_kind llm) said "estimation sample
    12/12 reviewed" at exit 0: the review looked done where no person had looked. The report
    refuses such a file in review/; status now does too, naming file, line and field."""
    from tests.test_review_plan import hand_study

    hand_study(tmp_path)
    reviews = tmp_path / "review" / "alice.jsonl"
    lines = reviews.read_text(encoding="utf-8").splitlines()
    judge = tmp_path / "judge.jsonl"
    judge.write_text(
        "".join(
            json.dumps({**json.loads(x), "coder": "judge", "coder_kind": "llm"}) + "\n"
            for x in lines
        ),
        encoding="utf-8",
    )
    plan = tmp_path / "review" / "plans" / "hand.json"
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(judge)], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(
        f"failcodes: error: {judge}:1, field 'coder_kind': coder 'judge' is llm, not a person"
    )
    assert err.count("\n") == 1
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(reviews)], capsys)
    assert code == 0, err
    assert out.startswith("plan 'hand' (retrieval): estimation sample 12/12 reviewed")


def test_a_weight_matrix_over_a_scale_with_a_level_nobody_gave(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two raters on a 1-5 scale who never gave 3 (r1 1,2,4,5,1,4; r2 2,2,5,5,1,4), a linear
    agreement-weight matrix in a CSV. The 5 x 5 matrix of the scale was refused naming no
    category ("must be 4 x 4 (one row per category)"); the 4 x 4 one then made to fit was read
    over the ranks of 1, 2, 4, 5 (2 against 4 one step), Cohen 0.739, with nothing on the first
    line, where --weights linear says it. scikit-learn's cohen_kappa_score(weights='linear'):
    0.7391 over the values given, 0.8125 with labels=[1..5]. Now the 4 x 4 run says it, the
    5 x 5 refusal names the 4 categories, and with --categories 1,2,3,4,5 it gives 0.8125."""
    table = tmp_path / "r.csv"
    pairs = [(1, 2), (2, 2), (4, 5), (5, 5), (1, 1), (4, 4)]
    table.write_text(
        "unit,r1,r2\n" + "".join(f"{i},{a},{b}\n" for i, (a, b) in enumerate(pairs)),
        encoding="utf-8",
    )

    def linear(q: int) -> Path:
        path = tmp_path / f"w{q}.csv"
        rows = [",".join(f"{1 - abs(i - j) / (q - 1):.6f}" for j in range(q)) for i in range(q)]
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        return path

    args = ["agree", str(table), "--stat", "cohen", "--bootstrap", "0"]
    code, out, err = run_cli([*args, "--weights-matrix", str(linear(4))], capsys)
    assert code == 0, err
    assert out.splitlines()[0].endswith(
        "weights on the ranks of the values given (1, 2, 4, 5), 3 never given (--categories "
        "1,2,3,4,5 weighs the whole scale)"
    )
    written = tmp_path / "a.json"
    code, out, err = run_cli(
        [*args, "--weights-matrix", str(linear(5)), "-o", str(written)], capsys
    )
    assert (code, out) == (2, "")
    assert err == (
        "failcodes: error: --weights-matrix is 5 x 5: its rows and columns are the 4 categories "
        "in order (1, 2, 4, 5); --categories lists the whole scale\n"
    )
    assert not written.exists()
    whole = ["--weights-matrix", str(linear(5)), "--categories", "1,2,3,4,5", "--format", "json"]
    code, out, err = run_cli([*args, *whole], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(0.8125)
