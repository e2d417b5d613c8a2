"""Red-team of agreement, review and the codebook side, session 23 (t23red2).

Each test states the input, what failcodes gave before the fix, and the value computed by
hand (or by an independent library) beside the assertion.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.test_s22_t22ppi import SKEW_ON_UNCERTAIN, _reviewed_where_the_judge_was_unsure


def test_agreement_over_reviews_of_the_units_the_judge_was_unsure_of_is_warned(
    tmp_path: Path,
) -> None:
    # alice reviewed only the 10 drawn units the judge flagged uncertain (of 20 drawn, 40
    # coded): partial_entity on each, the judge exact_entity. Human vs judge entity_match:
    # percent 0/10 = 0.0; Fleiss (p_o 0, pi 0.5/0.5, p_e 0.5): (0 - 0.5) / 0.5 = -1.0. The
    # corrected shares said the reviews were not a random part (t22ppi); beside the agreement
    # nothing was said, though it is the judge's agreement on the units it doubted.
    from failcodes.report.rundir import SKEWED_AGREEMENT, SKEWED_WARNING, load_run_dir

    _reviewed_where_the_judge_was_unsure(tmp_path)
    inputs = load_run_dir(tmp_path)
    assert inputs.notes["agreement"] == [
        f"Plan 'p': {SKEW_ON_UNCERTAIN}; on retrieval, {SKEWED_AGREEMENT}"
    ]
    table = inputs.agreement
    assert table is not None
    rows = table[table["subject"] == "entity_match"].set_index("statistic")
    assert rows.loc["percent", "value"] == 0.0
    assert rows.loc["fleiss", "value"] == -1.0
    assert all(str(w).endswith(SKEWED_WARNING) for w in rows["warning"])


def _reviewed_where_the_panel_split(root: Path) -> None:
    """The t22ppi study with a judge panel in place of one judge: 40 units; members a and b
    code exact_entity, but b codes partial_entity on 20 units (10 of the 20 drawn by
    `review plan -n 20 --seed 0`, 10 not drawn): a tie the primary a breaks, so the consensus
    is exact_entity on all 40 and the panel splits on those 20. alice reviewed just the 10
    drawn split units, partial_entity on each."""
    from failcodes.annotations import Annotation
    from failcodes.codebook import bundled
    from failcodes.judge.panelrun import PanelReport
    from failcodes.panel import consensus, split_units
    from failcodes.study.layout import StudyLayout
    from failcodes.units import UnitKind
    from tests.review_helpers import drawn_plan_study, judge_annotations
    from tests.test_review_plan import human, write_reviews

    cb = bundled()
    judge = {f"u{n:02d}": "exact_entity" for n in range(40)}
    layout = StudyLayout.of(root)
    drawn = drawn_plan_study(root, judge)
    split = drawn[:10] + sorted(set(judge) - set(drawn))[:10]

    def member(name: str, differs: list[str]) -> list[Annotation]:
        codes = {u: "partial_entity" if u in differs else code for u, code in judge.items()}
        return judge_annotations(codes, coder=name)

    panel = {"openai:a": member("openai:a", []), "openai:b": member("openai:b", split)}
    units = consensus(panel, cb.part(UnitKind.RETRIEVAL), "openai:a")
    report = PanelReport(
        kind=UnitKind.RETRIEVAL,
        codebook=str(cb.ref()),
        members=list(panel),
        run_dirs={"openai:a": "panel/1-openai_a", "openai:b": "panel/2-openai_b"},
        cost_usd=0.0,
        units=units,
        split_units=split_units(units),
        agreement=[],
        quotes=[],
        primary="openai:a",
    )
    assert sorted(report.split_units) == sorted(split)
    run = layout.judge_run("ds", "retrieval")
    run.mkdir(parents=True)
    (run / "panel.json").write_text(report.model_dump_json(), encoding="utf-8")
    write_reviews(root / "review" / "alice.jsonl", [human(u, "partial_entity") for u in drawn[:10]])


#: Fisher's exact test on the 20 drawn units, reviewed (10) vs not (10), of the split "the
#: judge panel split on": 10 of 10 vs 0 of 10; two-sided p = 2 / C(20, 10) = 1.08e-5, the only
#: split (the consensus is exact_entity on all 40 units), so no Bonferroni factor.
SKEW_ON_SPLITS = (
    "the reviewed units are not a random part of the drawn ones: the judge panel split on 10 "
    "of 10 reviewed and 0 of 10 drawn but not reviewed (Fisher p = 1.1e-05); counting those "
    "as not drawn biases the human and corrected shares toward the units reviewed"
)


def test_reviews_of_the_units_a_judge_panel_split_on_are_said_not_missing_at_random(
    tmp_path: Path,
) -> None:
    # Before: a panel's folder holds panel.json and no annotations.jsonl, so the check had no
    # judge-uncertain split there (t22ppi left it): partial_entity read corrected 100.0
    # [69.2, 100.0] for the 40 units (10 of 10 reviewed; Clopper-Pearson 10/10: 0.025^(1/10)
    # = 0.692), the caption "10 not yet, ... assumes they are missing at random", and the
    # agreement (percent 0/10 = 0.0 vs the panel) had no word either.
    from failcodes.report.rundir import SKEWED_AGREEMENT, load_run_dir
    from failcodes.units import UnitKind

    _reviewed_where_the_panel_split(tmp_path)
    inputs = load_run_dir(tmp_path)
    [(caption, table)] = inputs.corrected[UnitKind.RETRIEVAL]
    assert caption.endswith(
        "(10 not yet, counted as not drawn, which assumes they are missing at random); "
        f"{SKEW_ON_SPLITS}"
    )
    partial = table[table["code"] == "partial_entity"].iloc[0]
    assert partial["corrected (%)"] == "100.0 [69.2, 100.0]"
    assert partial["note"] == "the missing reviews are not missing at random (caption)"
    assert inputs.notes["agreement"] == [
        f"Plan 'p': {SKEW_ON_SPLITS}; on retrieval, {SKEWED_AGREEMENT}"
    ]
    agreement = inputs.agreement
    assert agreement is not None
    rows = agreement[agreement["subject"] == "entity_match"].set_index("statistic")
    assert rows.loc["percent", "value"] == 0.0


def test_review_status_warns_of_reviews_of_the_units_a_judge_panel_split_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _reviewed_where_the_panel_split(tmp_path)
    plan = tmp_path / "review" / "plans" / "p.json"
    reviews = tmp_path / "review" / "alice.jsonl"
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(reviews)], capsys)
    assert code == 0 and "estimation sample 10/20 reviewed" in out
    assert err == f"failcodes: warning: {SKEW_ON_SPLITS}\n"


def test_the_reports_agreement_table_names_each_code_of_a_sets_ratings_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `agree ratings.csv --sets ';' -o STUDY/agreement/drs.json`: exact-set rows, then one set
    # of rows per code (a 'code', no 'scope'). The report named every per-code row by the file
    # ('drs'), so its table showed code a's values alone as the file's agreement: percent
    # 0.833, Cohen 0.667, and codes b and c were dropped. By hand (A, B over six units):
    #   a: A {1,3,5}, B {1,3,5,6}: p_o 5/6, p_e 1/2*4/6 + 1/2*2/6 = 1/2, kappa (5/6-1/2)/(1/2) = 2/3
    #   b: A {1,2,6}, B {2,3}: p_o 3/6 (units 2, 4, 5), p_e 1/2*2/6 + 1/2*4/6 = 1/2, kappa 0
    #   c: A {4,5}, B {4,5}: p_o 1, kappa 1
    # exact sets: units 2, 4, 5 equal: percent 3/6 = 0.500.
    from failcodes.report.rundir import load_run_dir
    from failcodes.report.tables import agreement_table

    ratings = tmp_path / "ratings.csv"
    ratings.write_text(
        "item,rater,codes\n1,A,a;b\n1,B,a\n2,A,b\n2,B,b\n3,A,a\n3,B,a;b\n"
        "4,A,c\n4,B,c\n5,A,a;c\n5,B,a;c\n6,A,b\n6,B,a\n",
        encoding="utf-8",
    )
    out = tmp_path / "study" / "agreement" / "drs.json"
    args = ["agree", str(ratings), "--sets", ";", "--bootstrap", "0", "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    long = load_run_dir(tmp_path / "study").agreement
    assert long is not None
    table = agreement_table(long.drop(columns=["source", "confidence"])).set_index("subject")
    assert list(table.index) == ["drs [code sets]", "drs: a", "drs: b", "drs: c"]
    assert table.loc["drs [code sets]", "percent"].startswith("0.500 ")
    assert [table.loc[f"drs: {c}", "cohen"].split()[0] for c in "abc"] == [
        "0.667",
        "0.000",
        "1.000",
    ]
    assert [table.loc[f"drs: {c}", "percent"].split()[0] for c in "abc"] == [
        "0.833",
        "0.500",
        "1.000",
    ]


def test_a_study_agreement_on_annotations_of_its_own_codebook_uses_its_code_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A study whose codebook is its own (the bundled v1 renamed: no bundled codebook has its
    # hash) and an [[agreements]] entry on its annotations: alice and the judge code
    # entity_match on 10 units with 2 of its 4 codes, agreeing on 8. The step ran `agree
    # ann.jsonl` with no --codebook (AgreementSpec has none), so the code lists were the codes
    # observed: Brennan-Prediger (0.8 - 1/2) / (1 - 1/2) = 0.600, where the study's codebook
    # (q = 4: exact_entity, partial_entity, entity_mismatch, irrelevant) gives
    # (0.8 - 1/4) / (1 - 1/4) = 0.55 / 0.75 = 0.733; its first line asked for a --codebook the
    # study cannot give.
    import json

    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import load
    from failcodes.units import UnitKind

    study = tmp_path / "study"
    study.mkdir()
    source = Path(__file__).parent.parent / "taxonomy" / "medical-fact-check.v1.yaml"
    own = study / "my-codes.v1.yaml"
    own.write_text(
        source.read_text(encoding="utf-8").replace("name: medical-fact-check", "name: my-codes", 1),
        encoding="utf-8",
    )
    ref = load(own).ref()
    alice = ["exact_entity"] * 5 + ["partial_entity"] * 5
    judge = ["partial_entity", *alice[1:5], "exact_entity", *alice[6:]]  # units 0 and 5 differ
    anns = [
        Annotation(
            unit_id=f"u{i}",
            unit_kind=UnitKind.RETRIEVAL,
            codebook=ref,
            coder=who,
            coder_kind=kind,
            codes={"entity_match": codes[i]},
        )
        for i in range(10)
        for who, kind, codes in (("alice", CoderKind.HUMAN, alice), ("gpt", CoderKind.LLM, judge))
    ]
    (study / "ann.jsonl").write_text("".join(a.model_dump_json() + "\n" for a in anns))
    (study / "failcodes.toml").write_text(
        'name = "own"\ncodebook = "my-codes.v1.yaml"\n\n[[agreements]]\n'
        'name = "reviewers"\npath = "ann.jsonl"\nbootstrap = 0\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    rows = json.loads((study / "agreement" / "reviewers.json").read_text(encoding="utf-8"))
    dim = {
        r["statistic"]: r
        for r in rows
        if r.get("scope") == "dimension" and r["dimension"] == "entity_match"
    }
    assert dim["percent"]["value"] == pytest.approx(0.8)
    assert dim["brennan_prediger"]["n_categories"] == 4
    assert dim["brennan_prediger"]["value"] == pytest.approx(0.55 / 0.75)
    assert "code lists: my-codes@1 (--codebook)" in rows[0]["notes"][0]


def test_a_panels_agreement_counts_not_assessable_as_agree_does() -> None:
    # Two panel members code trustworthy on 10 units: both not_assessable on 6; on the other
    # 4 T/T, T/U, U/T, U/U (T trustworthy_source, U untrustworthy_source). panel.json's
    # inter-judge agreement (the report's panel table) read not_assessable as a missing code:
    # Fleiss 0.000 over 4 units (p_o 2/4, p_e 1/2), where `agree RUN_DIR` (the same members)
    # reads it as an answer. By hand over 10 units: p_o = 8/10; margins NA 12/20, T 4/20,
    # U 4/20: p_e = 0.36 + 0.04 + 0.04 = 0.44; Fleiss = (0.8 - 0.44) / (1 - 0.44) = 0.643.
    from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind
    from failcodes.codebook import bundled
    from failcodes.coderagreement import annotation_agreement
    from failcodes.panel import inter_judge_agreement
    from failcodes.units import UnitKind
    from tests.test_review_plan import HIGH

    cb = bundled()
    first = [NOT_ASSESSABLE] * 6 + ["trustworthy_source"] * 2 + ["untrustworthy_source"] * 2
    second = [NOT_ASSESSABLE] * 6 + ["trustworthy_source", "untrustworthy_source"] * 2
    panel = {
        name: [
            Annotation(
                unit_id=f"u{i}",
                unit_kind=UnitKind.RETRIEVAL,
                codebook=cb.ref(),
                coder=name,
                coder_kind=CoderKind.LLM,
                codes={**HIGH, "entity_match": "exact_entity", "trustworthy": code},
            )
            for i, code in enumerate(codes)
        ]
        for name, codes in (("m1", first), ("m2", second))
    }
    rows = {
        r.statistic: r
        for r in inter_judge_agreement(panel, cb.part(UnitKind.RETRIEVAL))
        if r.dimension == "trustworthy" and r.code is None
    }
    assert rows["fleiss"].n_units == 10
    assert rows["fleiss"].value == pytest.approx(0.36 / 0.56)
    agree = {
        r.result.statistic: r.result.value
        for r in annotation_agreement(
            [*panel["m1"], *panel["m2"]], categories=cb.code_lists(), codebook_hash=cb.hash
        )
        if r.scope == "dimension" and r.dimension == "trustworthy"
    }
    assert {s: r.value for s, r in rows.items()} == pytest.approx({s: agree[s] for s in rows})


def test_a_study_agreement_on_its_judge_panel_uses_the_studys_code_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bundled study (ragchecker example) with its codebook renamed (no bundled codebook
    # has its hash), a panel of two offline judges on retrieval, then an [[agreements]] entry
    # on the panel's run folder (`agree RUN_DIR`: the members' agreement). The step gave no
    # --codebook, so each dimension's categories were the codes the members gave: chunking
    # read n_categories 2 (AC1's and Brennan-Prediger's q), where the study's codebook lists
    # 4 (well_chunked, truncated, merged_unrelated, garbled).
    import json

    study = tmp_path / "study"
    code, _, err = run_cli(["init", str(study)], capsys)
    assert code == 0, err
    bundled = study / "medical-fact-check.v1.yaml"
    (study / "my-codes.v1.yaml").write_text(
        bundled.read_text(encoding="utf-8").replace(
            "name: medical-fact-check", "name: my-codes", 1
        ),
        encoding="utf-8",
    )
    bundled.unlink()
    toml = study / "failcodes.toml"
    text = toml.read_text(encoding="utf-8")
    for old, new in (
        ('codebook = "medical-fact-check.v1.yaml"', 'codebook = "my-codes.v1.yaml"'),
        ('judge = "offline"', 'judge = ["offline", "offline"]'),
        ('kinds = ["retrieval", "reasoning"]', 'kinds = ["retrieval"]'),
        ("labelstudio = true", "labelstudio = false"),
    ):
        assert old in text
        text = text.replace(old, new)
    toml.write_text(text, encoding="utf-8")
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    run = "judge/ragchecker-example/retrieval"
    toml.write_text(
        text + f'\n[[agreements]]\nname = "panel"\npath = "{run}"\nbootstrap = 0\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(study)], capsys)
    assert code == 0, err
    rows = json.loads((study / "agreement" / "panel.json").read_text(encoding="utf-8"))
    chunking = [r for r in rows if r.get("scope") == "dimension" and r["dimension"] == "chunking"]
    assert {r["n_categories"] for r in chunking} == {4}
    assert "code lists: my-codes@1 (--codebook)" in rows[0]["notes"][0]


def test_reviewed_units_the_judge_left_unscored_are_said_beside_the_agreement(
    tmp_path: Path,
) -> None:
    # 40 units, a plan of 20 (`review plan -n 20 --seed 0`), alice reviewed all 20; the judge
    # gave no valid answer on 5 of them (unscored), where alice coded partial_entity, and
    # exact_entity on the rest, as alice did. Human vs judge entity_match read percent 1.000
    # over 15 units (15 of 15 alike), with no word of the 5 reviewed units the judge failed on:
    # the judge's agreement over the units it could answer, read as over the units reviewed.
    from failcodes.report.rundir import load_run_dir
    from failcodes.study.layout import StudyLayout
    from tests.review_helpers import drawn_plan_study, judge_annotations
    from tests.test_review_plan import human, write_reviews

    judge = {f"u{n:02d}": "exact_entity" for n in range(40)}
    layout = StudyLayout.of(tmp_path)
    drawn = drawn_plan_study(tmp_path, judge)
    failed = set(drawn[:5])
    machine = judge_annotations(judge, unscored=failed)
    write_reviews(layout.judge_run("ds", "retrieval") / "annotations.jsonl", machine)
    reviews = [human(u, "partial_entity" if u in failed else "exact_entity") for u in drawn]
    write_reviews(tmp_path / "review" / "alice.jsonl", reviews)
    inputs = load_run_dir(tmp_path)
    agreement = inputs.agreement
    assert agreement is not None
    rows = agreement[agreement["subject"] == "entity_match"].set_index("statistic")
    assert (rows.loc["percent", "value"], rows.loc["percent", "n_units"]) == (1.0, 15)
    assert inputs.notes["agreement"] == [
        f"5 reviewed unit(s) the judge left unscored (no valid answer, or a panel tie; first: "
        f"{drawn[0]}): not in human vs judge agreement, which is over the units the judge "
        "answered"
    ]
