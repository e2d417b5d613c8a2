"""Outside red-team of agreement and review, session 15 (t15red2).

Shapes the other tests do not use. Each test states the input, what failcodes gave at exit 0
before the fix, and the value computed by hand (or by an independent package) beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

# r1, r2 on a 1-5 scale, 8 units; they agree on u2, u4, u5, u6, u8
ORDINAL = "unit,r1,r2\nu1,1,2\nu2,2,2\nu3,3,4\nu4,4,4\nu5,5,5\nu6,1,1\nu7,2,3\nu8,3,3\n"


def test_level_ordinal_without_weights_says_the_kappas_are_unweighted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree --level ordinal` with no --weights: Cohen 0.529 is the unweighted kappa (p_o 5/8,
    margins r1 2,2,2,1,1 and r2 1,2,2,2,1: p_e 13/64, (40 - 13) / (64 - 13) = 27/51), where
    a reader of --level ordinal expects an ordinal kappa (linear: 0.745). Only 'none' in the
    weights column said it; the first line now does, naming the statistics it concerns."""
    table = tmp_path / "r.csv"
    table.write_text(ORDINAL, encoding="utf-8")
    code, out, err = run_cli(["agree", str(table), "--level", "ordinal", *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {r["statistic"]: r for r in json.loads(out)}
    assert rows["cohen"]["value"] == pytest.approx(27 / 51)
    assert (
        "; --level ordinal weighs krippendorff (and gwet_ac2, quadratic by default) only: "
        "percent, cohen, fleiss, conger, brennan_prediger are unweighted (--weights linear "
        "or quadratic weighs them);" in rows["cohen"]["notes"][0]
    )
    code, out, err = run_cli(
        ["agree", str(table), "--stat", "cohen", "--level", "ordinal", "--bootstrap", "0"], capsys
    )
    assert code == 0, err
    assert out.splitlines()[0].endswith(
        "; --level ordinal weighs none of the statistics asked for: cohen is unweighted "
        "(--weights linear or quadratic weighs it)"
    )


def _export(tmp_path: Path, annotations: list[dict[str, object]]) -> tuple[Path, Path]:
    """A Label Studio export of one failcodes task (project 7) and the toy codebook."""
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook
    from tests.test_outside_red14b import _ls_task

    export = tmp_path / "export.json"
    export.write_text(json.dumps([_ls_task(1, 7, annotations)]), encoding="utf-8")
    return export, write_codebook(tmp_path / "cb.yaml", toy_codebook())


def test_import_refuses_a_user_id_no_annotation_is_by(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import --user 5=alice` on an export whose annotations are by users 3 and 4 (a typo,
    or the ids of another server): the name was unused and the reviews written as
    label-studio-user-3 and -4, exit 0, so a later agreement or review status found no
    'alice'. Now one line naming the id and the ids the export holds, exit 2, nothing
    written."""
    from tests.test_outside_red14b import _ls_ann

    export, cb = _export(
        tmp_path, [_ls_ann(3, "irrelevant", shown=False), _ls_ann(4, "exact_entity", False)]
    )
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb), "-o", str(out)]
    code, stdout, err = run_cli([*args, "--user", "3=bob", "--user", "5=alice"], capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {export}: --user 5=alice: no annotation in the export is by user "
        "id 5 (the ids it holds: 3, 4)\n"
    )
    assert not out.exists()
    code, stdout, err = run_cli([*args, "--user", "3=bob", "--user", "4=alice"], capsys)
    assert code == 0, err
    coders = sorted(json.loads(line)["coder"] for line in out.read_text().splitlines())
    assert coders == ["alice", "bob"]


def test_a_blind_pull_refuses_a_reviewers_annotation_in_anothers_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pull --annotator alice@x.org --annotator bob@x.org`: alice reviewed task 1 in her own
    project and again in bob's (where bob's review is beside it). The pull wrote both of
    alice's, exit 0 ('3 annotations from 2 coder(s)'), and `agree` then stopped on "coder
    'alice@x.org' annotated unit ... twice", naming no project or task. Now the pull refuses
    in one line naming the task, the coder and both projects, exit 2, nothing written.
    Stubbed server (the three calls pull makes)."""
    from failcodes.labelstudio.client import LabelStudioClient
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook
    from tests.test_outside_red14b import _ls_ann, _ls_task

    projects = {"blind [alice@x.org]": 1, "blind [bob@x.org]": 2}
    alice_again = {**_ls_ann(3, "exact_entity", shown=False), "id": 3001}
    exports = {
        1: [_ls_task(1, 1, [_ls_ann(3, "irrelevant", shown=False)])],
        2: [_ls_task(1, 2, [_ls_ann(4, "exact_entity", shown=False), alice_again])],
    }
    monkeypatch.setattr(LabelStudioClient, "users", lambda self: {3: "alice@x.org", 4: "bob@x.org"})
    monkeypatch.setattr(LabelStudioClient, "find_project", lambda self, title: projects[title])
    monkeypatch.setattr(LabelStudioClient, "export_tasks", lambda self, pid: exports[pid])
    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k" * 40)
    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "pull", "-p", "retrieval", "-c", str(cb), "--project", "blind"]
    args += ["--annotator", "alice@x.org", "--annotator", "bob@x.org", "-o", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        "failcodes: error: Label Studio project 'blind [bob@x.org]': task 201 holds an "
        "annotation by alice@x.org, not by bob@x.org (their reviews are also in Label Studio "
        "project 'blind [alice@x.org]'): a blind project holds one annotator's reviews; delete "
        "it in Label Studio (or take the coder out of the project) and pull again\n"
    )
    assert not out.exists()
    bob = _ls_task(1, 2, [_ls_ann(4, "exact_entity", shown=False)])
    exports[2] = [bob, _ls_task(2, 2, [alice_again])]  # alice on a task bob left alone
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert "task 202 holds an annotation by alice@x.org, not by bob@x.org" in err
    exports[2] = [bob]  # each reviewer in their own project: pulled
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert stdout.splitlines()[-1].startswith("2 annotations from 2 coder(s) on 2 tasks")


def test_import_says_the_drafts_it_does_not_read_and_the_skipped_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Label Studio 1.23 export (its shape checked on a real server): user 3 submitted task
    1, skipped task 2 (was_cancelled, result []), and saved a draft on task 3 without
    submitting it (the task's 'drafts', an annotation: null). The summary read '2
    annotations from 1 coder(s) on 3 tasks', the skip counted among them and the draft
    dropped with no word, so a reviewer's unsubmitted work looked never done. Now the line
    says 1 of the 2 is a skip and that 1 draft was not read."""
    from tests.test_outside_red14b import _ls_ann, _ls_task

    skipped = {**_ls_ann(3, "irrelevant", False), "id": 3002, "result": [], "was_cancelled": True}
    draft = {
        "id": 1,
        "user": "alice@x.org",
        "result": _ls_ann(3, "irrelevant", False)["result"],
        "lead_time": 5.0,
        "was_postponed": False,
        "task": 703,
        "annotation": None,
    }
    export, cb = _export(tmp_path, [_ls_ann(3, "irrelevant", shown=False)])
    tasks = json.loads(export.read_text())
    tasks += [_ls_task(2, 7, [skipped]), {**_ls_task(3, 7, []), "drafts": [draft]}]
    export.write_text(json.dumps(tasks), encoding="utf-8")
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb), "-o", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert stdout == (
        f"2 annotations from 1 coder(s) on 3 tasks -> {out}; 1 of them a skipped task "
        "(not a review); 1 draft saved in Label Studio and never submitted: not read (submit "
        "it to count it)\n"
    )


def test_the_report_names_agreement_rows_compared_on_code_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree -o STUDY/agreement/ml.json` on a reviewer's and the judge's code sets on the
    multi-label grounding dimension (codebook v2). alice: {g}, {u,f}, {u}, {f}, {g}, {u,f};
    judge: {g}, {u}, {u,f}, {f}, {u}, {u,f}. Exact-set Cohen: p_o 3/6, margins alice g2 uf2
    u1 f1, judge g1 u2 uf2 f1: p_e 9/36, (0.5 - 0.25)/0.75 = 1/3; MASI alpha 0.446 (nltk's
    AnnotationTask(distance=masi_distance).alpha()). The report's row read 'grounding (alice
    vs judge)', Cohen 0.333, as a kappa of a single code would, where the report's own
    review rows say '[code sets]'. Now the subject says it too."""
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import load
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind

    cb = load(Path(__file__).parent.parent / "taxonomy" / "medical-fact-check.v2.yaml")
    g, u, f = "grounded", "ungrounded_reasoning", "fabricated_quote"
    alice = [[g], [u, f], [u], [f], [g], [u, f]]
    judge = [[g], [u], [u, f], [f], [u], [u, f]]
    lines = [
        Annotation(
            unit_id=f"u{i}",
            unit_kind=UnitKind.VERIFICATION,
            codebook=cb.ref(),
            coder=who,
            coder_kind=kind,
            codes={"grounding": sets[i][0]},
            code_sets={"grounding": sets[i]},
        ).model_dump_json()
        for i in range(6)
        for who, kind, sets in (("alice", CoderKind.HUMAN, alice), ("judge", CoderKind.LLM, judge))
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "study" / "agreement" / "ml.json"
    out.parent.mkdir(parents=True)
    code, _, err = run_cli(["agree", str(path), "--bootstrap", "0", "-o", str(out)], capsys)
    assert code == 0, err
    rows = load_run_dir(tmp_path / "study").agreement
    value = {(r.subject, r.statistic, r.weights): r.value for r in rows.itertuples()}
    pair = "grounding (alice vs judge) [code sets]"
    assert value[pair, "cohen", "none"] == pytest.approx(1 / 3)
    assert value[pair, "krippendorff", "masi"] == pytest.approx(0.4460431654676259)
    subjects = set(rows["subject"])
    assert "grounding [code sets]" in subjects
    assert "grounding: grounded (alice vs judge)" in subjects  # per code: 0/1, not sets


def test_per_code_rows_of_a_code_one_coder_never_gave_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """alice (human) and the judge code entity_match on 10 units; the judge says irrelevant
    on u5 and u9, alice never does. irrelevant as 0/1: alice all 0, the judge 0 x 8, 1 x 2:
    p_o 8/10, p_e 1 * 8/10 + 0 * 2/10 = 0.8: Cohen (0.8 - 0.8)/(1 - 0.8) = 0 whatever the
    judge said (the kappa paradox), shown as 'Cohen 0.000' beside percent 0.8 with only a
    zero-width warning, as if the two disagreed on finding it. Now each row says alice
    never gave it and how often the judge did."""
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import bundled
    from failcodes.units import UnitKind

    cb = bundled()
    human = ["exact_entity"] * 6 + ["partial_entity"] * 4
    judge = ["exact_entity"] * 5 + ["irrelevant"] + ["partial_entity"] * 3 + ["irrelevant"]
    lines = [
        Annotation(
            unit_id=f"u{i}",
            unit_kind=UnitKind.RETRIEVAL,
            codebook=cb.ref(),
            coder=who,
            coder_kind=kind,
            codes={"entity_match": codes[i]},
        ).model_dump_json()
        for i in range(10)
        for who, kind, codes in (("alice", CoderKind.HUMAN, human), ("judge", CoderKind.LLM, judge))
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {r["statistic"]: r for r in json.loads(out) if r.get("code") == "irrelevant"}
    assert rows["cohen"]["value"] == pytest.approx(0.0)
    assert rows["percent"]["value"] == pytest.approx(0.8)
    said = (
        "alice never gave irrelevant on the 10 units compared (judge on 2): Cohen's kappa is 0 "
        "whatever judge gave, and percent, AC1 and PABAK count agreement on its absence"
    )
    assert {s: r["warning"].split("; ")[0] for s, r in rows.items()} == dict.fromkeys(
        ("percent", "cohen", "gwet_ac1", "pabak"), said
    )


def test_reviews_of_units_the_judge_never_coded_are_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """alice's reviews pulled from tasks exported before the unit ids changed (session 14:
    a verification id holds its passage ids) and the judge's annotations of the re-judged
    units: 4 of alice's 6 ids are the older ones. `agree` compared the 2 shared units (Fleiss
    -0.333 on '2 +8 single' units) and its first line said nothing of 4 reviews matching no
    judged unit. Now it names the reviewer, the count and a first id."""
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import bundled
    from failcodes.units import UnitKind

    cb = bundled()
    lines = []
    for i in range(6):
        for who, kind, unit, code in (
            ("alice", CoderKind.HUMAN, f"old{i}" if i < 4 else f"u{i}", "partial_entity"),
            ("judge", CoderKind.LLM, f"u{i}", "exact_entity"),
        ):
            ann = Annotation(
                unit_id=unit,
                unit_kind=UnitKind.RETRIEVAL,
                codebook=cb.ref(),
                coder=who,
                coder_kind=kind,
                codes={"entity_match": code},
            )
            lines.append(ann.model_dump_json())
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
    assert code == 0, err
    assert out.splitlines()[0].endswith(
        "; alice (human) annotated 4 of its 6 units where no machine coder did (first: old0): "
        "reviews of other units, or of tasks exported by an earlier failcodes (whose unit ids "
        "held less)? they enter no human vs machine row"
    )


def test_code_sets_say_a_rater_who_skipped_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree --sets ';'` on A, B, C, C leaving u2 and u6 blank. Alpha over the sets as they
    are, nltk's AnnotationTask: nominal 0.2647, MASI 0.3474, Jaccard 0.3957 (equal here).
    The one-category path says 'missing ratings: C rated 4 of 6 units' on the first line;
    the sets path said nothing of it."""
    table = tmp_path / "r.csv"
    table.write_text(
        "unit,A,B,C\nu1,x;y,x,x;y\nu2,y,y,\nu3,x,x;z,z\nu4,z,z,z\nu5,x;y;z,x;y,y\nu6,y,x,\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(["agree", str(table), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {(r["statistic"], r["weights"]): r for r in json.loads(out)}
    assert rows["krippendorff", "none"]["value"] == pytest.approx(0.2647058823529411)
    assert rows["krippendorff", "masi"]["value"] == pytest.approx(0.3474148802017655)
    assert rows["krippendorff", "jaccard"]["value"] == pytest.approx(0.3956611570247932)
    assert rows["percent", "none"]["notes"][0].endswith(
        "; missing ratings: C rated 4 of 6 units (a unit enters with two or more ratings); "
        "units rated by unequal numbers of raters (4 with 3, 2 with 2 ratings): fleiss, conger, "
        "gwet_ac1/ac2 and brennan_prediger in Gwet's (2014) form for them (Fleiss 1971 and "
        "statsmodels' fleiss_kappa need as many ratings on every unit)"
    )


def test_one_zero_one_column_per_rater_and_code_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wide one-hot table of co-occurring codes: A_x, A_y, A_z, B_x, B_y, B_z (rater A or
    B gave code x, y or z: 0/1). It was read as 6 raters of one 0/1 rating each (percent
    0.433, Fleiss -0.166), comparing A's x with B's z, exit 0; codes' names of one letter
    pass the two-fields check (fields of 3+ letters). Per code, by hand: x A 1,0,1,0 / B
    1,0,1,0: Cohen 1; that is what --raters A_x,B_x gives. Now refused in one line naming
    the grid and the way through, exit 2, nothing written."""
    table = tmp_path / "r.csv"
    table.write_text(
        "unit,A_x,A_y,A_z,B_x,B_y,B_z\nu1,1,1,0,1,0,0\nu2,0,1,0,0,1,1\nu3,1,0,0,1,0,0\n"
        "u4,0,0,1,0,1,0\n",
        encoding="utf-8",
    )
    written = tmp_path / "a.json"
    code, out, err = run_cli(["agree", str(table), *AGREE_JSON, "-o", str(written)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {table}:1, field 'A_x': rater columns A_x, A_y, A_z, B_x, B_y, B_z "
        "hold 0/1 and name every pair of A, B and x, y, z: one column per rater and code "
        "(one-hot)? Read as 6 raters, each column is compared with every other code's; per "
        "code, name its raters' columns: --raters A_x,B_x (if A, B are the raters)\n"
    )
    assert not written.exists()
    code, out, err = run_cli(["agree", str(table), *AGREE_JSON, "--raters", "A_x,B_x"], capsys)
    assert code == 0, err
    assert {r["statistic"]: r["value"] for r in json.loads(out)}["cohen"] == pytest.approx(1.0)


def test_review_status_says_reviews_of_the_other_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tests/test_review_plan.py's hand study (a retrieval plan, 12 units drawn, 1 targeted);
    `review status PLAN --reviews FILE` with the same 13 reviews written as verification
    units (a verification pull given to a retrieval plan): 'estimation sample 0/12
    reviewed, targeted 0/1; 0 reviewed unit(s) outside the plan', the 13 reviews ignored with
    no word. Now the line says them."""
    from tests.test_review_plan import hand_study

    hand_study(tmp_path)
    lines = (tmp_path / "review" / "alice.jsonl").read_text(encoding="utf-8").splitlines()
    other = tmp_path / "verification.jsonl"
    other.write_text(
        "".join(json.dumps({**json.loads(x), "unit_kind": "verification"}) + "\n" for x in lines),
        encoding="utf-8",
    )
    plan = tmp_path / "review" / "plans" / "hand.json"
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(other)], capsys)
    assert code == 0, err
    assert out == (
        "plan 'hand' (retrieval): estimation sample 0/12 reviewed, targeted 0/1; 0 reviewed "
        "unit(s) outside the plan (not used); 13 review(s) of verification units not matched "
        "(the plan draws retrieval units)\n"
    )


def test_review_status_counts_the_reviews_the_report_uses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hand study's 13 reviews re-written as made under codebook medical-fact-check v7
    (a version not in the study's lineage). The report leaves all 13 out ('13 stale, left
    out of the agreement and the corrected tables'), while `review status` said 'estimation
    sample 12/12 reviewed, targeted 1/1': the review looked done where the report uses none.
    Now status counts the reviews the report uses (0/12) and says how many it left out."""
    from tests.test_review_plan import hand_study

    hand_study(tmp_path)
    path = tmp_path / "review" / "alice.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    cb = json.loads(lines[0])["codebook"]
    other = {**cb, "version": 7, "hash": "0" * 64}
    path.write_text(
        "".join(json.dumps({**json.loads(x), "codebook": other}) + "\n" for x in lines),
        encoding="utf-8",
    )
    plan = tmp_path / "review" / "plans" / "hand.json"
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(path)], capsys)
    assert code == 0, err
    assert out == (
        "plan 'hand' (retrieval): estimation sample 0/12 reviewed, targeted 0/1; 0 reviewed "
        "unit(s) outside the plan (not used); 13 review(s) made under another codebook version "
        "than the study's (medical-fact-check v1) left out, as the report leaves them (stale: "
        "`failcodes report` says why)\n"
    )


def test_the_report_says_reviews_of_units_no_judge_run_coded(tmp_path: Path) -> None:
    """A study's judge coded u0..u3; alice's review file holds u0, u1 and two units under ids
    of an earlier failcodes (old2, old3: tasks exported before the unit ids changed). The
    human vs judge rows were computed over u0 and u1 (n 2) and the report said nothing of the
    2 reviews no judge run coded; now its agreement notes do, with a first id."""
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import bundled
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind

    def ann(unit: str, code: str, coder: str, kind: CoderKind) -> str:
        return Annotation(
            unit_id=unit,
            unit_kind=UnitKind.RETRIEVAL,
            codebook=bundled().ref(),
            coder=coder,
            coder_kind=kind,
            codes={"entity_match": code},
        ).model_dump_json()

    judged = tmp_path / "judge" / "d" / "retrieval" / "annotations.jsonl"
    judged.parent.mkdir(parents=True)
    codes = ["exact_entity", "partial_entity", "irrelevant", "exact_entity"]
    judged.write_text(
        "".join(
            ann(f"u{i}", c, "offline", CoderKind.HEURISTIC) + "\n" for i, c in enumerate(codes)
        ),
        encoding="utf-8",
    )
    review = tmp_path / "review" / "alice.jsonl"
    review.parent.mkdir()
    ids = ["u0", "u1", "old2", "old3"]
    review.write_text(
        "".join(
            ann(u, c, "alice", CoderKind.HUMAN) + "\n" for u, c in zip(ids, codes, strict=True)
        ),
        encoding="utf-8",
    )
    inputs = load_run_dir(tmp_path)
    assert inputs.agreement is not None
    rows = inputs.agreement.set_index(["subject", "statistic"])
    assert rows.loc[("entity_match", "percent"), "n_units"] == 2
    assert (
        "2 reviewed unit(s) no judge run coded (first: old2): not in human vs judge agreement "
        "(reviews of other units, or of tasks exported by an earlier failcodes, whose unit "
        "ids held less?)" in inputs.notes["agreement"]
    )


def test_an_export_of_drafts_alone_is_refused_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reviewer saved a draft on each of 2 tasks and submitted none (Label Studio keeps
    them in the task's 'drafts'). The import was refused as 'no annotations in its 2
    task(s) (exported before anyone annotated?)', which sends the user to export again;
    the line now says the 2 drafts are there, never submitted."""
    from tests.test_outside_red14b import _ls_ann, _ls_task

    draft = {"id": 1, "user": "alice@x.org", "result": _ls_ann(3, "irrelevant", False)["result"]}
    tasks = [{**_ls_task(n, 7, []), "drafts": [{**draft, "task": 700 + n}]} for n in (1, 2)]
    export, cb = _export(tmp_path, [])
    export.write_text(json.dumps(tasks), encoding="utf-8")
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb), "-o", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        f"failcodes: error: {export}: no annotations in its 2 task(s), but 2 drafts saved in "
        "Label Studio and never submitted: submit them (the drafts are not reviews)\n"
    )
    assert not out.exists()


def test_a_rating_outside_categories_names_its_unit_and_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree --categories low,mid,high` on a table where A wrote 'medium' for u4: refused as
    "ratings ['medium'] are not in the category list [...]", naming no unit or column (one
    of hundreds of cells to find by hand). Now the unit and the rater column are named."""
    table = tmp_path / "r.csv"
    table.write_text(
        "unit,A,B\nu1,low,low\nu2,mid,high\nu3,high,high\nu4,medium,mid\nu5,low,mid\n",
        encoding="utf-8",
    )
    args = ["agree", str(table), "--categories", "low,mid,high", *AGREE_JSON]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {table}, field 'A': rating 'medium' of unit 'u4' is not in the "
        "category list (--categories: low, mid, high)\n"
    )
    numbers = tmp_path / "n.csv"
    numbers.write_text("unit,A,B\nu1,1,1\nu2,2,4\nu3,3,3\n", encoding="utf-8")
    args = ["agree", str(numbers), "--categories", "1,2,3", *AGREE_JSON]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {numbers}, field 'B': rating '4' of unit 'u2' is not in the "
        "category list (--categories: 1, 2, 3)\n"
    )


def test_import_refuses_two_user_ids_given_one_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import --user 3=alice --user 4=alice` (a copy-paste slip): users 3 and 4 both
    reviewed task 1 (irrelevant, exact_entity); both became coder alice, and the import kept
    one ('several annotations by the same coder; kept the one with the higher annotation
    id'), so user 3's review was lost, exit 0: '1 annotations from 1 coder(s)'. Now one line,
    exit 2, nothing written."""
    from tests.test_outside_red14b import _ls_ann

    export, cb = _export(
        tmp_path, [_ls_ann(3, "irrelevant", shown=False), _ls_ann(4, "exact_entity", False)]
    )
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb), "-o", str(out)]
    code, stdout, err = run_cli([*args, "--user", "3=alice", "--user", "4=alice"], capsys)
    assert (code, stdout) == (2, "")
    assert err == (
        "failcodes: error: --user: ids 3 and 4 both named 'alice' (two Label Studio users are "
        "two reviewers: their reviews of one unit would be one coder's, and one dropped)\n"
    )
    assert not out.exists()


def test_export_says_judged_annotations_of_units_not_in_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`labelstudio export units.jsonl --judged annotations.jsonl`, the annotations file
    copied without its journal: 1 of its 4 units is one of these 4 units, the other 3 are
    under other ids (an earlier failcodes' unit ids: the journal beside a run folder would
    have said so). The line read '4 tasks (1 with predictions)', the 3 unmatched annotations
    unsaid; now it says how many."""
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import bundled
    from failcodes.units import UnitKind
    from tests.labelstudio_helpers import retrieval_unit

    cb = bundled()
    part = next(p for p in cb.parts if p.id is UnitKind.RETRIEVAL)
    codes = {d.id: d.code_ids()[0] for d in part.dimensions}
    units = [retrieval_unit(i) for i in range(4)]
    ids = [u.id if i == 0 else u.id[::-1] for i, u in enumerate(units)]
    (tmp_path / "units.jsonl").write_text(
        "".join(u.model_dump_json() + "\n" for u in units), encoding="utf-8"
    )
    judged = tmp_path / "annotations.jsonl"
    judged.write_text(
        "".join(
            Annotation(
                unit_id=uid,
                unit_kind=UnitKind.RETRIEVAL,
                codebook=cb.ref(),
                coder="offline",
                coder_kind=CoderKind.HEURISTIC,
                codes=codes,
            ).model_dump_json()
            + "\n"
            for uid in ids
        ),
        encoding="utf-8",
    )
    out = tmp_path / "tasks.json"
    args = ["labelstudio", "export", str(tmp_path / "units.jsonl"), "-p", "retrieval"]
    code, stdout, err = run_cli([*args, "--judged", str(judged), "-o", str(out)], capsys)
    assert code == 0, err
    assert stdout == (
        f"4 tasks (1 with predictions) -> {out}; 3 unit(s) of --judged are none of these "
        "units: another input's, or an earlier failcodes' unit ids?\n"
    )
