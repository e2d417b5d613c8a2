"""Outside red-team of agreement and review, session 16 (t16red2).

Each test states the input, what failcodes gave before the fix, and the value computed by
hand (or published) beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

# a long table where a rater gives several codes to a unit, one row each: unit 1 both {x, y},
# unit 2 a {x} b {y}, unit 3 a {z} b {x, z}, unit 4 both {y}
SEVERAL = (
    "unit,rater,code\n1,a,x\n1,a,y\n1,b,x\n1,b,y\n2,a,x\n2,b,y\n3,a,z\n3,b,z\n3,b,x\n4,a,y\n4,b,y\n"
)


def test_a_long_table_of_several_codes_per_unit_and_rater_is_read_as_code_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was refused "unit '1' is rated by 'a' twice" with no way through; the refusal now
    names --sets, and --sets ';' joins a (unit, rater) pair's rows into one code set."""
    table = tmp_path / "l.csv"
    table.write_text(SEVERAL, encoding="utf-8")
    code, _, err = run_cli(["agree", str(table), "--bootstrap", "0"], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:3, field 'code': unit '1' is rated by 'a' twice (several "
        "codes per unit and rater, one row each? --sets ';' joins them into one code set)"
    )
    code, out, err = run_cli(["agree", str(table), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {(r["statistic"], r["weights"]): r for r in json.loads(out) if not r.get("code")}
    # exact sets: agree on units 1 and 4 -> p_o 2/4; margins a {x,y},{x},{z},{y}, b {x,y},{y},
    # {x,z},{y}: p_e = (1/4)(1/4) + (1/4)(2/4) = 3/16; kappa = (1/2 - 3/16)/(13/16) = 5/13
    assert rows[("percent", "none")]["value"] == pytest.approx(0.5)
    assert rows[("cohen", "none")]["value"] == pytest.approx(5 / 13)
    assert rows[("cohen", "none")]["n_units"] == 4
    assert (
        "3 row(s) gave one more code to a (unit, rater) pair: each pair's codes joined into "
        "one code set on ';'" in rows[("cohen", "none")]["notes"]
    )
    # the same sets written wide, one cell each: the same rows
    wide = tmp_path / "w.csv"
    wide.write_text("unit,a,b\n1,x;y,x;y\n2,x,y\n3,z,x;z\n4,y,y\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(wide), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    same = {
        (r["statistic"], r["weights"]): r["value"] for r in json.loads(out) if not r.get("code")
    }
    assert same == {k: r["value"] for k, r in rows.items()}


def test_agree_prints_the_level_its_intervals_are_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree --confidence 0.5`: the table's column said "95% CI" over a 50% interval."""
    table = tmp_path / "w.csv"
    table.write_text("unit,a,b\n1,x,x\n2,x,y\n3,y,y\n4,y,y\n5,x,x\n6,y,x\n", encoding="utf-8")
    args = ["agree", str(table), "--bootstrap", "0", "--confidence", "0.5", "--stat", "percent"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    header, row = out.splitlines()[2], out.splitlines()[4]
    assert "50% CI" in header and "95%" not in out
    # p_o 4/6 agreeing units: Clopper-Pearson at 50% (t19red2; it was Wald's [0.524, 0.809]):
    # statsmodels proportion_confint(4, 6, alpha=0.5, method='beta') = (0.4468, 0.8388)
    assert "[0.447, 0.839] clopper_pearson" in row


# three raters, c and b leaving units blank: units 3 and 5 rated by a alone
MISSING3 = "unit,a,b,c\n1,x,x,x\n2,x,y,\n3,y,,\n4,y,y,x\n5,x,,\n6,y,x,y\n"


def test_single_rated_units_in_the_margins_are_counted_in_their_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Units rated by one rater enter Gwet's missing-data margins (the first line says so),
    but every row said n_single_rated 0 (ratings tables, and `agree --missing-data` on
    annotations): the reader of the JSON saw 4 units and nothing else."""
    table = tmp_path / "m.csv"
    table.write_text(MISSING3, encoding="utf-8")
    code, out, err = run_cli(["agree", str(table), *AGREE_JSON], capsys)
    assert code == 0, err
    fleiss = next(r for r in json.loads(out) if r["statistic"] == "fleiss")
    # Gwet (2014) missing-data form: p_a over the 4 units with 2+ ratings: (1 + 0 + 1/3 + 1/3)
    # / 4 = 5/12; pi_x = mean over all 6 units of r_ix / r_i = (1 + 1/2 + 0 + 1/3 + 1 + 1/3)/6
    # = 19/36; p_e = (19/36)^2 + (17/36)^2
    p_e = (19 / 36) ** 2 + (17 / 36) ** 2
    assert fleiss["value"] == pytest.approx((5 / 12 - p_e) / (1 - p_e))
    assert (fleiss["n_units"], fleiss["n_single_rated"]) == (4, 2)
    # annotations: the judge coded 6 units, alice 4 of them; with --missing-data the 2 units
    # the judge coded alone enter the margins, and are counted as before without it
    from failcodes.annotations import CoderKind
    from tests.test_report_review import _ann

    judge = ["exact_entity", "exact_entity", "partial_entity", "irrelevant", "irrelevant"]
    alice = ["exact_entity", "partial_entity", "partial_entity", "irrelevant"]
    anns = [_ann(f"u{i}", c, "judge", CoderKind.HEURISTIC) for i, c in enumerate([*judge, *judge])]
    anns = anns[:6] + [_ann(f"u{i}", c, "alice", CoderKind.HUMAN) for i, c in enumerate(alice)]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8")
    for extra in ((), ("--missing-data",)):
        code, out, err = run_cli(["agree", str(path), *AGREE_JSON, *extra], capsys)
        assert code == 0, err
        percent = next(
            r for r in json.loads(out) if r["scope"] == "dimension" and r["statistic"] == "percent"
        )
        # agree on u0, u2, u3 of the 4 both coded
        assert percent["value"] == pytest.approx(3 / 4)
        assert (percent["n_units"], percent["n_single_rated"]) == (4, 2), extra


def _review_study(tmp_path: Path, judge: list[str], reviews: dict[str, list[str]]) -> Path:
    """A run folder: the offline judge's entity_match codes and each reviewer's file."""
    from failcodes.annotations import CoderKind
    from tests.test_report_review import _ann, _write

    if judge:
        _write(
            tmp_path / "judge" / "d" / "retrieval" / "annotations.jsonl",
            [_ann(f"u{i}", c, "offline", CoderKind.HEURISTIC) for i, c in enumerate(judge)],
        )
    for name, codes in reviews.items():
        _write(
            tmp_path / "review" / f"{name}.jsonl",
            [_ann(f"u{i}", c, name, CoderKind.HUMAN) for i, c in enumerate(codes)],
        )
    return tmp_path


def test_two_reviewers_are_each_compared_with_the_judge_and_apart_with_each_other(
    tmp_path: Path,
) -> None:
    """The "human review vs judge" row with two reviewers was one Fleiss over alice, bob and
    the judge (0.486): alice and bob's own agreement entered a row captioned human vs judge.
    Now each reviewer vs the judge, and the reviewers' agreement in a table of its own."""
    from failcodes.report.build import build_report
    from failcodes.report.rundir import REVIEWERS_SOURCE, load_run_dir

    ee, pe, irr = "exact_entity", "partial_entity", "irrelevant"
    root = _review_study(
        tmp_path,
        [ee, ee, pe, irr, ee, irr],
        {"alice": [ee, pe, pe, irr, ee, ee], "bob": [ee, pe, pe, irr, irr, ee]},
    )
    inputs = load_run_dir(root)
    assert inputs.agreement is not None
    rows = inputs.agreement
    dims = rows[(rows["subject"] == "entity_match") & (rows["statistic"] == "fleiss")]
    got = {(s, c): v for s, c, v in zip(dims["source"], dims["coders"], dims["value"], strict=True)}
    # Fleiss (Scott's pi) of two coders, p_e from the pooled margins:
    # alice vs offline: agree on u0, u2, u3, u4 -> 4/6; margins ee 6/12, pe 3/12, irr 3/12:
    #   p_e = 3/8, (2/3 - 3/8) / (5/8) = 7/15
    # bob vs offline: agree on u0, u2, u3 -> 3/6; ee 5/12, pe 3/12, irr 4/12: p_e = 50/144,
    #   (1/2 - 50/144) / (94/144) = 11/47
    # alice vs bob: agree on 5/6; ee 5/12, pe 4/12, irr 3/12: p_e = 50/144, (120 - 50)/94 = 35/47
    assert got == pytest.approx(
        {
            ("human review vs judge", "alice vs offline"): 7 / 15,
            ("human review vs judge", "bob vs offline"): 11 / 47,
            (REVIEWERS_SOURCE, "alice vs bob"): 35 / 47,
        }
    )
    assert not rows["coders"].str.contains("alice vs bob vs offline").any()
    build_report(inputs, tmp_path / "report")
    tables = tmp_path / "report" / "tables"
    judge_md = (tables / "agreement.md").read_text(encoding="utf-8")
    assert judge_md.startswith("**Agreement per subject, human review vs judge:")
    assert "alice vs bob" not in judge_md
    reviewers_md = (tables / "agreement_2.md").read_text(encoding="utf-8")
    assert reviewers_md.startswith(
        "**Agreement per subject, human review: reviewer vs reviewer (alice vs bob):"
    )
    assert "offline" not in reviewers_md


def test_per_code_rows_say_prevalence_and_a_degenerate_kappa_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge gave exact_entity on every unit: the report's per-code row showed Cohen
    0.000 [0.000, 0.000] (codebook table 0.00 [0.00, 0.00] *) with "zero-width interval" as
    its only footnote, and per-code rows carried Cohen and AC1 only. Now each per-code row
    gives each coder's prevalence, percent, Cohen, AC1 and PABAK, and beside the Cohen that is
    0 by construction, why (and PABAK beside it in the codebook table)."""
    from failcodes.report.build import build_report
    from failcodes.report.rundir import load_run_dir

    ee, pe, irr = "exact_entity", "partial_entity", "irrelevant"
    alice = [ee, pe, ee, ee, ee, irr]
    root = _review_study(tmp_path, [ee] * 6, {"alice": alice})
    inputs = load_run_dir(root)
    assert inputs.agreement is not None
    rows = inputs.agreement[inputs.agreement["subject"] == "entity_match: exact_entity"]
    got = dict(zip(rows["statistic"], rows["value"], strict=True))
    # exact_entity, 6 units: offline 1,1,1,1,1,1; alice 1,0,1,1,1,0. p_o = 4/6.
    # Cohen: p_e = 1 * 4/6 + 0 * 2/6 = 4/6 = p_o -> 0 (degenerate).
    # PABAK = 2 p_o - 1 = 1/3 (Byrt, Bishop & Carlin 1993).
    # AC1 (Gwet 2008): pi = (6/6 + 4/6) / 2 = 5/6, p_e = 2 pi (1 - pi) = 10/36,
    #   (24/36 - 10/36) / (26/36) = 7/13.
    assert got == pytest.approx(
        {"percent": 2 / 3, "cohen": 0.0, "gwet_ac1": 7 / 13, "pabak": 1 / 3}
    )
    assert set(rows["prevalence"]) == {"alice 0.67, offline 1.00"}
    cohen = rows[rows["statistic"] == "cohen"].iloc[0]
    assert cohen["beside"] == "(degenerate: prevalence offline 1)"
    assert (
        "offline gave exact_entity on every unit compared (prevalence 1; alice on 4 of 6)"
        in (cohen["warning"])
    )
    build_report(inputs, tmp_path / "report")
    md = (tmp_path / "report" / "tables" / "agreement.md").read_text(encoding="utf-8")
    line = next(ln for ln in md.splitlines() if ln.startswith("| entity_match: exact_entity"))
    assert "| 0.000 [0.000, 0.000] (degenerate: prevalence offline 1) |" in line
    assert "| alice 0.67, offline 1.00 |" in line
    book = (tmp_path / "report" / "tables" / "codebook.md").read_text(encoding="utf-8")
    row = next(ln for ln in book.splitlines() if "| exact_entity" in ln)
    assert "| 0.00 [0.00, 0.00] (degenerate: prevalence offline 1; PABAK 0.33) * |" in row
    # agree on the same annotations: the same numbers, prevalence in the JSON rows
    path = tmp_path / "both.jsonl"
    path.write_text(
        (root / "judge" / "d" / "retrieval" / "annotations.jsonl").read_text(encoding="utf-8")
        + (root / "review" / "alice.jsonl").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    mine = [r for r in json.loads(out) if r["scope"] == "code" and r["code"] == ee]
    assert {r["statistic"]: r["value"] for r in mine} == pytest.approx(got)
    assert all(r["prevalence"] == pytest.approx({"alice": 2 / 3, "offline": 1.0}) for r in mine)
    assert next(r for r in mine if r["statistic"] == "cohen")["beside"] == (
        "(degenerate: prevalence offline 1)"
    )


def test_a_panel_of_the_offline_judge_and_a_model_says_it_includes_the_heuristic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`judge --judge offline --judge openai:M`: the consensus (its ties broken by the offline
    primary) was coded llm, so `attribute` said nothing of the heuristic baseline
    ("heuristic_baseline": false), and the report's page said every code was the offline
    judge's. Now both say the codes include the heuristic baseline."""
    import shutil

    from tests.fakeserver import FakeServer
    from tests.judge_helpers import make_traces, write_codebook, write_traces

    monkeypatch.setenv("OPENAI_API_KEY", "sk-mixed-panel")
    monkeypatch.chdir(tmp_path)
    traces = write_traces(tmp_path / "traces.jsonl", make_traces(2))
    cb = write_codebook(tmp_path / "cb.yaml")
    with FakeServer() as fake:
        judge = ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb)]
        judge += ["--judge", "offline", "--judge", "openai:panel-b", "-o", "run"]
        judge += ["--base-url", fake.openai_base_url, "--price-as", "openai:gpt-5-mini"]
        code, _, err = run_cli(judge, capsys)
        assert code == 0, err
    attribute = ["attribute", "--from", str(traces), "--codebook", str(cb), "--retrieval", "run"]
    code, out, err = run_cli([*attribute, "-o", "att"], capsys)
    assert code == 0, err
    assert "Attribution (codes: include the heuristic baseline)" in out
    code, out, err = run_cli([*attribute, "-o", "att", "--format", "json"], capsys)
    assert code == 0, err
    shown = json.loads(out)
    assert (shown["heuristic_baseline"], shown["with_model_codes"]) == (True, True)
    root = tmp_path / "study"
    shutil.copytree(tmp_path / "run", root / "judge" / "d" / "retrieval")
    shutil.copytree(tmp_path / "att", root / "attribution" / "d")
    code, _, err = run_cli(["report", str(root), "-o", "rep", "--codebook", str(cb)], capsys)
    assert code == 0, err
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert "<strong>Includes the heuristic baseline.</strong>" in page
    assert "(includes the offline heuristic baseline)" in page
    assert "<strong>Heuristic baseline.</strong>" not in page


def test_reviewers_of_disjoint_units_are_not_compared_and_that_is_said(tmp_path: Path) -> None:
    """alice reviewed u0-u2 (one system's units), bob u3-u5 (the other's): the one Fleiss over
    alice, bob and the judge read as human agreement though no unit had two reviewers. Now
    each is compared with the judge on its own units, and the note says why there is no
    reviewer vs reviewer row."""
    from failcodes.report.rundir import REVIEWERS_SOURCE, load_run_dir

    ee, pe, irr = "exact_entity", "partial_entity", "irrelevant"
    root = _review_study(tmp_path, [ee, ee, pe, irr, ee, irr], {})
    _review_study(tmp_path, [], {"alice": [ee, pe, pe]})
    bob = _review_study(tmp_path / "b", [], {"bob": [ee, pe, pe, irr, ee, ee]})
    lines = (bob / "review" / "bob.jsonl").read_text(encoding="utf-8").splitlines()[3:]
    (root / "review" / "bob.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    inputs = load_run_dir(root)
    assert inputs.agreement is not None
    rows = inputs.agreement
    assert REVIEWERS_SOURCE not in set(rows["source"])
    percent = rows[(rows["subject"] == "entity_match") & (rows["statistic"] == "percent")]
    # alice vs judge on u0-u2: agree on u0, u2 -> 2/3; bob vs judge on u3-u5: u3, u4 -> 2/3
    shown = zip(percent["coders"], percent["value"], percent["n_units"], strict=True)
    got = {c: (v, n) for c, v, n in shown}
    assert got == {
        "alice vs offline": (pytest.approx(2 / 3), 3),
        "bob vs offline": (pytest.approx(2 / 3), 3),
    }
    assert (
        "Reviewers alice, bob reviewed no unit in common: no reviewer vs reviewer agreement"
        in " ".join(inputs.notes["agreement"])
    )


def test_import_says_a_later_skip_was_kept_over_the_same_users_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two annotations by one Label Studio user on one task, a review (09:00) and a skip
    (10:00): the latest was kept, "kept the latest", and the summary explained its warnings as
    "a choice not in the codebook is dropped; ...": that the unit lost its review was unsaid."""
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook
    from tests.test_outside_red14b import _ls_ann, _ls_task

    review = _ls_ann(3, "exact_entity", False)
    skip = {"id": 3002, "completed_by": 3, "result": [], "was_cancelled": True}
    skip |= {"lead_time": 1.0, "updated_at": "2026-12-01T10:00:00Z"}
    export = tmp_path / "export.json"
    export.write_text(json.dumps([_ls_task(1, 7, [review, skip])]), encoding="utf-8")
    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    out = tmp_path / "rev.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "--codebook", str(cb)]
    code, stdout, err = run_cli([*args, "-o", str(out), "--user", "3=alice"], capsys)
    assert code == 0, err
    assert err.strip().endswith(
        "coder alice: several annotations by the same coder; kept the latest: a skip, over a "
        "review with codes (the unit has no review by this coder)"
    )
    assert stdout.strip().endswith("1 warning(s) above (each says what was dropped or kept)")
    (kept,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert (kept["status"], kept["reason"]) == ("unscored", "skipped in Label Studio")


def test_the_report_says_reviews_it_has_no_judge_to_compare_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review/alice.jsonl in a folder with no judge run the report reads (none here; or one
    under judge/d/verification, where the layout reads retrieval and reasoning): the reviews
    entered no table and nothing said so (exit 0, no agreement section, no note)."""
    ee, pe = "exact_entity", "partial_entity"
    root = _review_study(tmp_path, [], {"alice": [ee, pe, pe]})
    code, out, err = run_cli(["report", str(root), "-o", str(tmp_path / "rep")], capsys)
    assert code == 0, err
    said = (
        "review/alice.jsonl: not read: the folder holds no judge annotations (judge/<data set>/"
        "retrieval or reasoning) to compare the reviews with, nor coded tables naming their "
        "codebook"
    )
    assert said in out + err
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert said.replace("<", "&lt;").replace(">", "&gt;") in page


def test_a_reviewer_vs_the_judge_counts_no_unit_another_reviewer_saw_as_single_rated(
    tmp_path: Path,
) -> None:
    """alice reviewed u0-u5, bob u0-u3. Bob's row vs the judge read n_single_rated 2: the
    judge's codes of u4, u5, which only alice reviewed, counted as units one coder rated
    (session 18's study try: bob's 12 of 20 units read 8). Each row is over its reviewer's
    own units, as the caption says, so bob's has none single-rated."""
    from failcodes.report.rundir import load_run_dir

    ee, pe, irr = "exact_entity", "partial_entity", "irrelevant"
    root = _review_study(
        tmp_path,
        [ee, ee, pe, irr, ee, irr],
        {"alice": [ee, pe, pe, irr, ee, ee], "bob": [ee, pe, pe, irr]},
    )
    inputs = load_run_dir(root)
    assert inputs.agreement is not None
    rows = inputs.agreement
    dims = rows[(rows["subject"] == "entity_match") & (rows["statistic"] == "fleiss")]
    got = {
        c: (n, single, v)
        for c, n, single, v in zip(
            dims["coders"], dims["n_units"], dims["n_single_rated"], dims["value"], strict=True
        )
    }
    # bob vs offline on u0-u3: agree on u0, u2, u3 -> 3/4; margins ee 2/8, pe 3/8, irr 3/8:
    #   p_e = (4 + 9 + 9)/64 = 22/64, (48/64 - 22/64) / (42/64) = 26/42 = 13/21
    assert got["bob vs offline"] == (4, 0, pytest.approx(13 / 21))
    # alice vs offline unchanged (7/15, as in the test above), every unit rated by both
    assert got["alice vs offline"] == (6, 0, pytest.approx(7 / 15))
