"""A second researcher's shapes through ``failcodes init`` + ``run`` + ``report``, no script.

Issue 28: one file per system (several ingests merged into one data set), an agreement-only
study (a ratings table, no traces), and the study file's refusals for them. The answers keyed
by system with asserted claims and post-hoc citations run in tests/test_tutorial.py (the page
docs/your-own-data.md runs them). Every count is worked out by hand beside its assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.errors import InputError
from failcodes.study import StudyLayout, load_study
from failcodes.traceio import read_traces
from tests.conftest import REPO
from tests.test_cli_ingest import assert_one_line_error, run

# Three LLMs' verdicts on the same four claims, one file each, and the gold labels.
VERDICTS = {
    "gpt4.csv": ["SUPPORTED", "REFUTED", "REFUTED", "SUPPORTED"],
    "llama.csv": ["SUPPORTED", "SUPPORTED", "SUPPORTED", "SUPPORTED"],
    "claude.csv": ["REFUTED", "REFUTED", "SUPPORTED", "SUPPORTED"],
}
CLAIMS = ["Aspirin prevents pre-eclampsia.", "Zinc cures colds.",
          "Statins cause diabetes in everyone.", "Vitamin C prevents scurvy."]  # fmt: skip
GOLD = "sentence_id,has_error\nc1,false\nc2,true\nc3,true\nc4,false\n"  # errors: c2, c3


def _three_llms(root: Path, *, claude_as: str = "claude") -> Path:
    for name, verdicts in VERDICTS.items():
        rows = [f"c{i},{c},{v}" for i, (c, v) in enumerate(zip(CLAIMS, verdicts, strict=True), 1)]
        (root / name).write_text("id,claim,label\n" + "\n".join(rows) + "\n")
    (root / "gold.csv").write_text(GOLD)
    assert run("init", "study", cwd=root).returncode == 0
    entries = [
        f'[[datasets.ingest]]\nadapter = "generic"\npaths = ["../{file}"]\n'
        f'map = ["id=claim_id", "label=verdict"]\nsystem = "{system}"\n'
        for file, system in (("gpt4.csv", "gpt-4o"), ("llama.csv", "llama-3"),
                             ("claude.csv", claude_as))
    ]  # fmt: skip
    (root / "study" / "failcodes.toml").write_text(
        'name = "three-llms"\ncodebook = "medical-fact-check.v1.yaml"\n\n'
        '[[datasets]]\nname = "claims"\n\n' + "\n".join(entries) + "\n"
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["../gold.csv"]\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 200\n'
    )
    return root / "study"


def test_one_file_per_system_merges_into_one_data_set(tmp_path: Path) -> None:
    study = _three_llms(tmp_path)
    plan = run("run", "study", "--plan", cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    # each ingest writes its part; one merge step reads them (with the pipelines' evidence)
    assert "study/data/claims.parts/3-claude.traces.jsonl" in plan.stdout
    merge = next(ln for ln in plan.stdout.splitlines() if "-o study/data/claims.traces" in ln)
    assert merge.startswith("failcodes ingest generic study/data/claims.parts/1-gpt4.traces.jsonl")
    assert merge.endswith("--evidence none")
    done = run("run", "study", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    layout = StudyLayout.of(study)
    rows = json.loads(layout.metrics("claims").read_text())
    got = {r["system"]: (r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows}
    # errors c2, c3. gpt-4o refutes c2, c3: TP 2, TN 2. llama-3 supports all: FN 2, TN 2.
    # claude refutes c1 (FP) and c2 (TP), supports c3 (FN) and c4 (TN).
    assert got == {"gpt-4o": (2, 0, 0, 2), "llama-3": (0, 0, 2, 2), "claude": (1, 1, 1, 1)}
    traces = [t.model_dump(mode="json") for t in read_traces(layout.traces("claims"))]
    assert len(traces) == 12 and {t["evidence_source"] for t in traces} == {"none"}
    assert (layout.report_dir / "index.html").is_file()


def test_one_table_with_a_verdict_column_per_system(tmp_path: Path) -> None:
    # The same three LLMs' verdicts as columns of one table (verdict_column), the gold label a
    # column of it too; claude left c3 empty (no_verdict=drop)
    cols = list(VERDICTS)
    gold = {"c1": "ok", "c2": "wrong", "c3": "wrong", "c4": "ok"}
    rows = [
        ",".join([f"c{i}", claim, *(VERDICTS[c][i - 1] for c in cols), gold[f"c{i}"]])
        for i, claim in enumerate(CLAIMS, 1)
    ]
    rows[2] = rows[2].replace(",SUPPORTED,wrong", ",,wrong")  # claude's c3 cell
    (tmp_path / "wide.csv").write_text("id,claim,gpt4,llama,claude,gold\n" + "\n".join(rows) + "\n")
    assert run("init", "study", cwd=tmp_path).returncode == 0
    (tmp_path / "study" / "failcodes.toml").write_text(
        'name = "wide"\ncodebook = "medical-fact-check.v1.yaml"\n\n[[datasets]]\nname = "c"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["../wide.csv"]\n'
        'map = ["id=claim_id"]\nverdict_column = ["gpt4=gpt-4o", "llama", "claude"]\n'
        'option = ["no_verdict=drop"]\nlabels = true\nlabel_rule = "gold = wrong -> error"\n\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n'
    )
    done = run("run", "study", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    layout = StudyLayout.of(tmp_path / "study")
    traces = [t.model_dump(mode="json") for t in read_traces(layout.traces("c"))]
    assert len(traces) == 11  # 4 rows x 3 columns, claude's empty c3 dropped
    rows_got = json.loads(layout.metrics("c").read_text())
    got = {r["system"]: (r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows_got}
    # errors c2, c3 (gold wrong). gpt-4o refutes c2, c3: TP 2, TN 2; llama supports all:
    # FN 2, TN 2; claude refutes c1 (FP) and c2 (TP), has no verdict on c3 (a labelled
    # sentence without a claim: no error flagged, FN), supports c4 (TN)
    assert got == {
        "gpt-4o": (4, 2, 0, 0, 2),
        "llama": (4, 0, 0, 2, 2),
        "claude": (4, 1, 1, 1, 1),
    }
    assert (layout.report_dir / "index.html").is_file()


def test_a_claim_of_one_system_in_two_ingests_names_both(tmp_path: Path) -> None:
    _three_llms(tmp_path, claude_as="gpt-4o")  # claude's file declared as gpt-4o by mistake
    done = run("run", "study", cwd=tmp_path)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "failcodes: error: study/data/claims.parts/3-claude.traces.jsonl:1, field 'claim_id': "
        "duplicate (system, claim_id) = ('gpt-4o', 'c1'); first at "
        "study/data/claims.parts/1-gpt4.traces.jsonl:1"
    )
    assert not (tmp_path / "study" / "data" / "claims.traces.jsonl").exists()


def test_labels_from_two_ingests_are_merged_and_a_target_twice_refused(tmp_path: Path) -> None:
    # a traces table carrying its own labels (labels = true) and a second label file
    (tmp_path / "t.csv").write_text(
        "sentence_id,claim,verdict,gold\ns1,A.,supported,ok\ns2,B.,refuted,wrong\n"
    )
    (tmp_path / "more.csv").write_text("sentence_id,has_error\ns3,true\n")
    (tmp_path / "t2.csv").write_text("sentence_id,claim,verdict\ns3,C.,supported\n")
    assert run("init", "study", cwd=tmp_path).returncode == 0
    (tmp_path / "study" / "failcodes.toml").write_text(
        'name = "mixed"\ncodebook = "medical-fact-check.v1.yaml"\n\n'
        '[[datasets]]\nname = "d"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["../t.csv"]\nsystem = "s"\n'
        'labels = true\nlabel_rule = "gold = wrong -> error"\n\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["../t2.csv"]\nsystem = "s"\n\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["../more.csv"]\n\n'
        "[metrics]\nbootstrap = 0\n"
    )
    done = run("run", "study", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    layout = StudyLayout.of(tmp_path / "study")
    labels = [json.loads(x) for x in layout.labels("d").read_text().splitlines()]
    # s1 ok, s2 wrong (the rule), s3 an error (the second file)
    assert sorted((lb["sentence_id"], lb["has_error"]) for lb in labels) == [
        ("s1", False),
        ("s2", True),
        ("s3", True),
    ]
    [row] = json.loads(layout.metrics("d").read_text())
    # s2 refuted and an error: TP; s3 supported, an error: FN; s1: TN
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 1, 1)
    (tmp_path / "more.csv").write_text("sentence_id,has_error\ns2,false\n")  # s2 labelled twice
    again = run("run", "study", cwd=tmp_path)
    assert again.returncode == 2
    assert "study/data/d.parts/3-more.labels.jsonl:1" in again.stderr
    assert "study/data/d.parts/1-t.labels.jsonl" in again.stderr


def test_an_agreement_only_study(tmp_path: Path) -> None:
    assert run("init", "study", cwd=tmp_path).returncode == 0
    (tmp_path / "study" / "failcodes.toml").write_text(
        'name = "physicians"\ncodebook = "medical-fact-check.v1.yaml"\n\n'
        "[[agreements]]\n"
        'name = "physicians"\npath = "../ratings.csv"\nraters = ["dr_a", "dr_b", "dr_c"]\n'
        'statistics = ["fleiss", "krippendorff", "gwet_ac1"]\nbootstrap = 0\n'
    )
    ratings = (REPO / "docs" / "tutorial" / "physician-ratings.csv").read_text()
    (tmp_path / "ratings.csv").write_text(ratings)
    plan = run("run", "study", "--plan", cwd=tmp_path)
    assert plan.stdout.splitlines()[0] == (
        "failcodes agree study/../ratings.csv --stat fleiss --stat krippendorff --stat gwet_ac1 "
        "-o study/agreement/physicians.json --bootstrap 0 --raters dr_a,dr_b,dr_c"
    )
    done = run("run", "study", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "study" / "agreement" / "physicians.json").read_text())
    got = {r["statistic"]: r["value"] for r in rows}
    # Six units, three raters, yes/no; yes counts per unit 3,2,0,1,3,1 (10 of 18 ratings).
    # Fleiss: P_i = (sum n_ij^2 - 3)/6 = 1, 1/3, 1, 1/3, 1, 1/3 -> P = 2/3;
    #   Pe = (10/18)^2 + (8/18)^2 = 164/324; kappa = (2/3 - 164/324)/(1 - 164/324) = 52/160.
    assert got["fleiss"] == pytest.approx(52 / 160)
    # Krippendorff nominal: coincidences o_yy = 7, o_nn = 5, o_yn = o_ny = 3 (pairs weighted
    #   1/(m-1) = 1/2); D_o = 6/18, D_e = 2 * 10 * 8 / (18 * 17) = 160/306;
    #   alpha = 1 - (6/18)/(160/306) = 1 - 1836/2880.
    assert got["krippendorff"] == pytest.approx(1 - 1836 / 2880)
    # Gwet AC1: Pe = 2 * (10/18)(8/18) / (2 - 1) = 160/324; (2/3 - 160/324)/(1 - 160/324)
    assert got["gwet_ac1"] == pytest.approx((2 / 3 - 160 / 324) / (1 - 160 / 324))
    md = (tmp_path / "study" / "report" / "tables" / "agreement.md").read_text()
    assert "| physicians<sup>a</sup> | 6 | 3 | 0.325 [" in md


def test_agree_writes_its_rows_and_takes_several_statistics(tmp_path: Path) -> None:
    ratings = REPO / "docs" / "tutorial" / "physician-ratings.csv"
    done = run(
        "agree", ratings, "--stat", "fleiss", "--stat", "percent", "--bootstrap", "0",
        "-o", "out.json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "out.json").read_text())
    # both statistics, in the order given; percent agreement = mean P_i = 2/3 (above)
    assert [r["statistic"] for r in rows] == ["fleiss", "percent"]
    assert rows[1]["value"] == pytest.approx(2 / 3)
    assert "wrote 2 coefficient(s) -> out.json" in done.stderr
    twice = run("agree", ratings, "--stat", "fleiss", "--stat", "fleiss", cwd=tmp_path)
    assert_one_line_error(twice, "--stat fleiss given twice")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('name = "x"\ncodebook = "c.yaml"\n', "a study needs a [[datasets]]"),
        (
            'name = "x"\ncodebook = "c.yaml"\n[[agreements]]\nname = "a"\npath = "r.csv"\n'
            'statistics = ["fleis"]\n',
            "field 'agreements[0].statistics': statistics: must be one of",
        ),
        (
            'name = "x"\ncodebook = "c.yaml"\n[[agreements]]\nname = "a"\npath = "r.csv"\n'
            '[[agreements]]\nname = "a"\npath = "s.csv"\n',
            "agreement name 'a' is used twice",
        ),
        (
            'name = "x"\ncodebook = "c.yaml"\n[[datasets]]\nname = "d"\n[[datasets.ingest]]\n'
            'adapter = "generic"\npaths = ["t.csv"]\n[[datasets.pipelines]]\nevidence = "none"\n'
            'verdict = "asserted"\n',
            "field 'datasets[0].pipelines[0].verdict': Input should be 'supported'",
        ),
    ],
)
def test_bad_study_fields_name_the_field(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "failcodes.toml"
    path.write_text(body)
    with pytest.raises(InputError) as info:
        load_study(path)
    assert message in str(info.value)


def test_a_declared_verdict_needs_the_generic_adapter(tmp_path: Path) -> None:
    assert run("init", "study", cwd=tmp_path).returncode == 0
    (tmp_path / "study" / "failcodes.toml").write_text(
        'name = "x"\ncodebook = "medical-fact-check.v1.yaml"\n[[datasets]]\nname = "d"\n'
        '[[datasets.ingest]]\nadapter = "ragchecker"\n'
        'paths = ["bundled:ragchecker/checking_outputs.json"]\nlabels = true\n'
        '[[datasets.pipelines]]\nevidence = "post-hoc"\nverdict = "supported"\n'
    )
    done = run("run", "study", "--plan", cwd=tmp_path)
    assert_one_line_error(
        done,
        "data set 'd': a pipeline declares verdict = ... (an asserting pipeline), which the "
        "generic adapter applies; this data set's traces come from another adapter",
    )
