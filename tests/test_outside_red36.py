"""Shapes from i36red's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

# Answers keyed by system, each claim its own sentence (numbered per answer), a verifier's
# verdict and an expert's label inside each system's answer. The two systems share question
# ids and, in q1 and q2, the same claim text at the same place; q3's first sentence is
# "Statins..." in sysA's answer and "Metformin..." in sysB's: two sentences, one id.
ANSWERS = [
    {
        "id": "q1",
        "answers": {
            "sysA": {
                "claims": [
                    {
                        "claim": "Low-dose aspirin prevents pre-eclampsia.",
                        "v": "Supported",
                        "x": "ok",
                    },
                    {
                        "claim": "Aspirin is safe at any dose in pregnancy.",
                        "v": "Refuted",
                        "x": "bad",
                    },
                ]
            },
            "sysB": {
                "claims": [
                    {"claim": "Low-dose aspirin prevents pre-eclampsia.", "v": "Refuted", "x": "ok"}
                ]
            },
        },
    },
    {
        "id": "q2",
        "answers": {
            "sysA": {
                "claims": [{"claim": "Zinc cures a cold in a day.", "v": "Supported", "x": "bad"}]
            },
            "sysB": {
                "claims": [
                    {"claim": "Zinc cures a cold in a day.", "v": "Refuted", "x": "bad"},
                    {"claim": "Vitamin C does not prevent colds.", "v": "Supported", "x": "ok"},
                ]
            },
        },
    },
    {
        "id": "q3",
        "answers": {
            "sysA": {
                "claims": [{"claim": "Statins lower LDL cholesterol.", "v": "Refuted", "x": "ok"}]
            },
            "sysB": {
                "claims": [
                    {
                        "claim": "Metformin is first-line for type 2 diabetes.",
                        "v": "Supported",
                        "x": "ok",
                    }
                ]
            },
        },
    },
]


def _ingest(tmp_path: Path, *extra: str) -> list[str]:
    src = tmp_path / "answers.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in ANSWERS))
    return [
        *("ingest", "generic", str(src), "-o", str(tmp_path / "t.jsonl")),
        *("--labels-out", str(tmp_path / "l.jsonl"), "--option", "rows=answers.*.claims[]"),
        *("--option", "sentence_ids=question", "--map", "id=question_id"),
        *("--map", "answers.*.claims#=sentence_id", "--map", "answers.*=system"),
        *("--map", "v=verdict", "--label-rule", "x = bad -> error", *extra),
    ]


@pytest.mark.parametrize("sentence_text", [False, True])
def test_answers_keyed_by_system_are_not_merged_into_shared_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sentence_text: bool
) -> None:
    """Without label_scope=system the 8 labelled rows became 5 shared labels, exit 0.

    The labels agreed wherever an id recurred, so nothing was refused, and sysB was scored
    on sysA's "Aspirin is safe at any dose" (q1:2, an error it never wrote: one more FN) and
    its q3:1 "Metformin" sentence under sysA's "Statins" label: TP 1 FP 1 FN 1 TN 2, recall
    0.5, where its own four sentences give recall 1.0. Now the second text of q3:1 is refused.
    """
    extra = ("--map", "claim=claim", "--map", "claim=sentence") if sentence_text else ()
    code, _, err = run_cli(_ingest(tmp_path, *extra), capsys)
    assert code == 2
    assert err.count("\n") == 1
    assert "answers.jsonl:3, field 'sentence_id': sentence 'q3:1' reads 'Metformin" in err
    assert "--option label_scope=system" in err
    assert not (tmp_path / "l.jsonl").exists()


def test_answers_keyed_by_system_score_by_hand_with_label_scope_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each system on its own answer (refuted mapping), counted by hand from ANSWERS.

    sysA: q1:1 ok/Supported TN, q1:2 bad/Refuted TP, q2:1 bad/Supported FN, q3:1 ok/Refuted
    FP -> P 1/2, R 1/2, F1 1/2. sysB: q1:1 ok/Refuted FP, q2:1 bad/Refuted TP, q2:2
    ok/Supported TN, q3:1 ok/Supported TN -> P 1/2, R 1/1, F1 2/3.
    """
    code, _, err = run_cli(_ingest(tmp_path, "--option", "label_scope=system"), capsys)
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "t.jsonl")),
            *("--labels", str(tmp_path / "l.jsonl"), "-m", "refuted", "--format", "json"),
        ],
        capsys,
    )
    assert code == 0, err
    rows = {r["system"]: r for r in json.loads(out)}
    assert [
        (rows[s]["tp"], rows[s]["fp"], rows[s]["fn"], rows[s]["tn"]) for s in ("sysA", "sysB")
    ] == [
        (1, 1, 1, 1),
        (1, 1, 0, 2),
    ]
    assert rows["sysB"]["recall"] == pytest.approx(1.0)
    assert rows["sysB"]["f1"] == pytest.approx(2 / 3)


def test_shared_on_purpose_keeps_one_label_per_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--option label_scope=shared says the ids are one sentence whatever the texts: 5 labels."""
    code, _, err = run_cli(_ingest(tmp_path, "--option", "label_scope=shared"), capsys)
    assert code == 0, err
    assert len((tmp_path / "l.jsonl").read_text().splitlines()) == 5


def test_labels_given_twice_are_refused_not_the_last_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One label file per system passed as --labels A --labels B: only B's were read, exit 0.

    sysA's own labels (q1:2 and q2:1 errors, q1:1 not) were replaced by sysB's three
    no-error labels: sysA read "no clinician-labelled errors" (TP 0, FN 0; recall undefined)
    where its own labels give TP 1, FP 1, FN 1 by hand. Now one line names both paths.
    """
    head = "qid,sid,text,verdict,expert\n"
    files = {
        "sysA": "q1,1,Aspirin prevents pre-eclampsia.,refuted,ok\n"
        "q1,2,Aspirin is safe at any dose.,refuted,bad\nq2,1,Zinc cures colds.,supported,bad\n",
        "sysB": "q1,1,Metformin is first line.,supported,ok\n"
        "q2,1,Vitamin C prevents colds.,refuted,ok\nq2,2,Zinc shortens colds.,supported,ok\n",
    }
    for system, rows in files.items():
        (tmp_path / f"{system}.csv").write_text(head + rows)
        code, _, err = run_cli(
            [
                *("ingest", "generic", str(tmp_path / f"{system}.csv"), "--system", system),
                *("--map", "qid=question_id", "--map", "sid=sentence_id", "--map", "text=claim"),
                *("--option", "sentence_ids=question", "--label-rule", "expert = bad -> error"),
                *("-o", str(tmp_path / f"{system}.t.jsonl")),
                *("--labels-out", str(tmp_path / f"{system}.l.jsonl")),
            ],
            capsys,
        )
        assert code == 0, err
    traces = [
        "--traces",
        str(tmp_path / "sysA.t.jsonl"),
        "--traces",
        str(tmp_path / "sysB.t.jsonl"),
    ]
    for command in ("metrics", "disagreements"):
        out = ["-o", str(tmp_path / "d.jsonl")] if command == "disagreements" else []
        code, _, err = run_cli(
            [
                command,
                *traces,
                *("--labels", str(tmp_path / "sysA.l.jsonl")),
                f"--labels={tmp_path / 'sysB.l.jsonl'}",
                *out,
            ],
            capsys,
        )
        assert code == 2
        assert err.count("\n") == 1
        assert f"{command}: --labels takes one path and was given 2" in err
        assert "sysA.l.jsonl" in err and "sysB.l.jsonl" in err
    assert not (tmp_path / "d.jsonl").exists()
    # the same path twice is harmless; sysA's own labels by hand: q1:1 ok/refuted FP,
    # q1:2 bad/refuted TP, q2:1 bad/supported FN
    labels = str(tmp_path / "sysA.l.jsonl")
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "sysA.t.jsonl"), "--labels", labels),
            *("--labels", labels, "-m", "refuted", "--format", "json"),
        ],
        capsys,
    )
    assert code == 0, err
    row = json.loads(out)[0]
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 1, 1, 0)


def test_a_v2_table_9_says_its_multi_label_shares_can_add_up_past_100(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Co-occurring codes: inference read 25 + 50 + 50 = 125% with no word on the denominator.

    The 4 traces of tests/test_outside_shapes4.py (`_v2_per_trace`), by hand: overreach on
    t0, t1 (2/4), conflict_synthesis_failure on t0, t2 (2/4), valid_inference on t3 (1/4);
    each share is of the 4 traces, and t0 carries two codes. The caption now says so.
    """
    import pandas as pd

    from failcodes import codebook as codebooks
    from tests.test_outside_shapes4 import _v2_per_trace

    _v2_per_trace(tmp_path)
    cb = codebooks.bundled_dir() / "medical-fact-check.v2.yaml"
    code, _, err = run_cli(
        ["report", str(tmp_path), "--codebook", str(cb), "-o", str(tmp_path / "report")], capsys
    )
    assert code == 0, err
    tables = tmp_path / "report" / "tables"
    caption = (tables / "reasoning_steps.md").read_text().splitlines()[0]
    # the shares' denominator is n, the rows (a passage shared by two systems is a row of each;
    # session 11's red-team: 20 rows for 18 units), not the units; the caption said units
    assert "each share is of the n rows of its column" in caption
    assert "Inference" in caption and "can add up past 100%" in caption
    shares = pd.read_csv(tables / "reasoning_steps.csv")
    inference = shares[shares["dimension"] == "inference"].set_index("code")["v"]
    assert inference.to_dict() == {
        "valid_inference": 0.25,
        "overreach": 0.5,
        "conflict_synthesis_failure": 0.5,
    }
    # Table 8 (v1, one code per dimension) keeps its caption: no multi-label words
    from failcodes.report.tables import multi_label_caption
    from failcodes.units import UnitKind

    assert multi_label_caption(codebooks.bundled(version=1).part(UnitKind.RETRIEVAL)) == ""


@pytest.mark.parametrize(
    ("rule", "line", "value"),
    [
        ("label in {not supported} -> error", 4, "not-supported"),
        ("label in {not supported, not-supported} -> error", 5, "NS"),
        ("label = Not_Supported -> error; otherwise -> no_error", 2, "Not Supported"),
    ],
)
def test_a_label_written_another_way_than_the_rule_names_it_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str, line: int, value: str
) -> None:
    """Clinicians' labels spelt three ways: 'Not Supported', 'not-supported', 'NS'.

    'label in {not supported} -> error' gave the other two the opposite label: 1 error of
    5 sentences (s1), exit 0, where the clinicians marked 3 (s1, s3, s4). Now the first row
    of a spelling the rule does not name is refused naming it; naming all three gives 3.
    """
    rows = "s1,Not Supported\ns2,Supported\ns3,not-supported\ns4,NS\ns5,supported\n"
    (tmp_path / "t.csv").write_text("sid,label\n" + rows)
    base = [
        *("ingest", "generic-labels", str(tmp_path / "t.csv"), "--map", "sid=sentence_id"),
        *("-o", str(tmp_path / "l.jsonl")),
    ]
    code, _, err = run_cli([*base, "--label-rule", rule], capsys)
    assert code == 2, err
    assert err.count("\n") == 1
    assert f"t.csv:{line}, field 'label': {value!r} is not named by --label-rule" in err
    assert not (tmp_path / "l.jsonl").exists()
    code, _, err = run_cli(
        [*base, "--label-rule", "label in {Not Supported, not-supported, NS} -> error"], capsys
    )
    assert code == 0, err
    labels = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert [lb["sentence_id"] for lb in labels if lb["has_error"]] == ["s1", "s3", "s4"]


def test_numbers_and_opposite_words_are_not_read_as_variants(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-1 beside 1, and 'unsupported' beside 'supported', are other values, not spellings."""
    (tmp_path / "t.csv").write_text("sid,label,stance\ns1,-1,supported\ns2,1,unsupported\n")
    for rule, drop, errors in (
        ("label in {-1} -> error", "stance", ["s1"]),
        ("stance = supported -> no_error", "label", ["s2"]),
    ):
        code, _, err = run_cli(
            [
                *("ingest", "generic-labels", str(tmp_path / "t.csv"), "--map", "sid=sentence_id"),
                *("--map", f"{drop}=", "-o", str(tmp_path / "l.jsonl"), "--label-rule", rule),
            ],
            capsys,
        )
        assert code == 0, err
        labels = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text().splitlines()]
        assert [lb["sentence_id"] for lb in labels if lb["has_error"]] == errors


def test_an_adjudicated_annotator_is_not_one_more_vote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long label file with two or three clinicians and their 'adjudicated' label.

    --option consensus=majority counted the adjudication as a vote ("majority of 3:
    adjudicated, dr_a, dr_b"), exit 0: s1 and s2 split 1-1 between the clinicians and the
    adjudicator's row decided them, where the clinicians alone tie (refused, or decided by
    --option ties); on s4 (dr_a, dr_b error, dr_c not) it made 3-1 of 2-1. Now refused,
    naming the first row of the annotator. The clinicians alone, ties skipped: s3 no error
    (0 of 2), s4 error (2 of 3), s1 and s2 tied and left out.
    """
    votes = {
        "s1": {"dr_a": True, "dr_b": False, "adjudicated": True},
        "s2": {"dr_a": True, "dr_b": False, "adjudicated": False},
        "s3": {"dr_a": False, "dr_b": False, "adjudicated": False},
        "s4": {"dr_a": True, "dr_b": True, "dr_c": False, "adjudicated": True},
    }
    rows = [
        f"{sid},q1,{who},{str(err).lower()}\n"
        for sid, by in votes.items()
        for who, err in by.items()
    ]
    head = "sentence_id,question_id,annotator,has_error\n"
    (tmp_path / "all.csv").write_text(head + "".join(rows))
    (tmp_path / "clin.csv").write_text(head + "".join(r for r in rows if "adjud" not in r))
    out = str(tmp_path / "c.jsonl")
    base = ["ingest", "generic-labels", "--option", "consensus=majority", "-o", out]
    code, _, err = run_cli([*base, str(tmp_path / "all.csv")], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "all.csv:4, field 'annotator': annotator 'adjudicated' is named like a consensus" in err
    assert not (tmp_path / "c.jsonl").exists()
    code, _, err = run_cli([*base, str(tmp_path / "clin.csv"), "--option", "ties=skip"], capsys)
    assert code == 0, err
    labels = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert [(lb["sentence_id"], lb["has_error"]) for lb in labels] == [("s3", False), ("s4", True)]


def test_every_warned_interval_in_the_metrics_table_is_marked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CI warnings below the table list 6 cells per warning, then "and N more".

    Two systems on 3 questions each (ANSWERS, per-system labels), 200 resamples: every one
    of the 14 intervals is warned, and the line 'only 3 clusters (< 20)' named 6 of its 8
    cells "and 2 more": sysB's J and specificity intervals had no word beside them or
    below. Now each warned interval carries a '*' (counted against the JSON's
    *_ci_warning fields).
    """
    code, _, err = run_cli(_ingest(tmp_path, "--option", "label_scope=system"), capsys)
    assert code == 0, err
    args = ["metrics", "--traces", str(tmp_path / "t.jsonl"), "--labels"]
    args += [str(tmp_path / "l.jsonl"), "-m", "refuted", "--bootstrap", "200"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    warned = sum(
        1 for row in json.loads(out) for k, v in row.items() if k.endswith("_ci_warning") and v
    )
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert warned == 14
    assert out.count("]*") == warned
    assert "* after an interval: it may not cover" in out


def test_label_files_of_two_systems_merged_alike_must_be_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One file per system, each ingested with its labels; merged as a study merges them.

    `generic-labels A B --option duplicates=same` kept one label per sentence id labelled
    alike: sysA's q1:1 'Aspirin prevents pre-eclampsia.' and sysB's q1:1 'Metformin is
    first line.' (both no error) became one shared label, and each system was scored on the
    other's sentences (the shape of test 1 across files), exit 0. Now refused naming both.
    """
    head = "qid,sid,text,verdict,expert\n"
    files = {
        "sysA": "q1,1,Aspirin prevents pre-eclampsia.,refuted,ok\n"
        "q1,2,Aspirin is safe.,refuted,bad\n",
        "sysB": "q1,1,Metformin is first line.,supported,ok\n",
    }
    for system, rows in files.items():
        (tmp_path / f"{system}.csv").write_text(head + rows)
        code, _, err = run_cli(
            [
                *("ingest", "generic", str(tmp_path / f"{system}.csv"), "--system", system),
                *("--map", "qid=question_id", "--map", "sid=sentence_id"),
                *("--map", "text=claim", "--map", "text=sentence"),
                *("--option", "sentence_ids=question", "--label-rule", "expert = bad -> error"),
                *("-o", str(tmp_path / f"{system}.t.jsonl")),
                *("--labels-out", str(tmp_path / f"{system}.l.jsonl")),
            ],
            capsys,
        )
        assert code == 0, err
    merge = ["ingest", "generic-labels", "--option", "duplicates=same"]
    merge += ["-o", str(tmp_path / "m.jsonl")]
    code, _, err = run_cli(
        [*merge, str(tmp_path / "sysA.l.jsonl"), str(tmp_path / "sysB.l.jsonl")], capsys
    )
    assert code == 2 and err.count("\n") == 1
    assert "sysB.l.jsonl:1, field 'sentence_id': sentence 'q1:1' reads 'Metformin" in err
    assert "label_scope=system" in err
    assert not (tmp_path / "m.jsonl").exists()
    # the same sentence in both files (one answer, two verifiers) is still one label
    (tmp_path / "sysB.l.jsonl").write_text((tmp_path / "sysA.l.jsonl").read_text())
    code, _, err = run_cli(
        [*merge, str(tmp_path / "sysA.l.jsonl"), str(tmp_path / "sysB.l.jsonl")], capsys
    )
    assert code == 0, err
    assert len((tmp_path / "m.jsonl").read_text().splitlines()) == 2


def test_a_judges_codes_saved_in_review_are_not_read_as_a_persons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second judge's annotations (coder_kind llm) saved in review/ were human review.

    On the demo study, a file of 20 reviews by coder 'gpt-judge' (llm) gave Table 8's
    "human-only" shares (Exact entity 25.0 [10.2, 46.4]) and the human side of PPI++, with
    no word. The report now refuses the file naming its line and coder_kind; a person's
    reviews of the same units are read (by hand below: alice vs judge on scope, 3 of 4).
    """
    from failcodes import codebook as codebooks
    from failcodes.annotations import CoderKind
    from tests.review_versions import coded, write_annotations

    v1 = codebooks.bundled(version=1)
    high = {
        "entity_match": "exact_entity",
        "scope": "exact_scope",
        "trustworthy": "trustworthy_source",
        "evidence_polarity": "direct_polarity",
        "chunking": "well_chunked",
    }
    judge = ["exact_scope", "exact_scope", "broader_scope", "broader_scope"]
    alice = ["exact_scope", "broader_scope", "broader_scope", "broader_scope"]
    write_annotations(
        tmp_path / "judge" / "d1" / "retrieval" / "annotations.jsonl",
        [
            coded(f"r{i}", v1.ref(), "judge", {**high, "scope": s}, retrieval=True)
            for i, s in enumerate(judge)
        ],
    )
    other = [
        coded(f"r{i}", v1.ref(), "alice", {**high, "scope": s}, retrieval=True)
        for i, s in enumerate(alice)
    ]
    llm = [a.model_copy(update={"coder": "gpt-judge", "coder_kind": CoderKind.LLM}) for a in other]
    write_annotations(tmp_path / "review" / "second.jsonl", [other[0], *llm[1:]])
    cb_file = codebooks.bundled_dir() / f"{v1.name}.v1.yaml"
    out = tmp_path / "report"
    args = ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "review/second.jsonl:2, field 'coder_kind': coder 'gpt-judge' is llm" in err
    write_annotations(tmp_path / "review" / "second.jsonl", other)
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    import pandas as pd

    agreement = pd.read_csv(out / "tables" / "agreement.csv")
    row = next(
        r for r in agreement.itertuples() if (r.subject, r.statistic) == ("scope", "percent")
    )
    assert (row.coders, row.n_units, row.value) == ("alice vs judge", 4, 0.75)
