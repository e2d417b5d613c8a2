"""Session 30 (t30red): new outside shapes at the command line, each counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli, write_csv

#: Four sentences, one claim each; s2 of each question is a clinician's error.
_SENTENCES = [
    ("q1", "q1:s1", "Aspirin lowers fever."),
    ("q1", "q1:s2", "Aspirin cures cancer."),
    ("q2", "q2:s1", "Ibuprofen is an NSAID."),
    ("q2", "q2:s2", "Ibuprofen is safe in late pregnancy."),
]
#: Two versions of one system (gpt-4o), each decomposing the answer anew (claim texts differ).
_S, _R = "supported", "refuted"
_VERSIONS = {
    "2024-05": {"q1:s1": _S, "q1:s2": _R, "q2:s1": _S, "q2:s2": _S},
    "2024-11": {"q1:s1": _R, "q1:s2": _R, "q2:s1": _S, "q2:s2": _R},
}


def _two_versions(folder: Path, column: str) -> tuple[Path, Path]:
    rows = [
        ["gpt-4o", version, q, s, text if version == "2024-05" else f"{text} ({version})", v[s]]
        for version, v in _VERSIONS.items()
        for q, s, text in _SENTENCES
    ]
    table = write_csv(
        folder / "long.csv",
        ["system", column, "question_id", "sentence_id", "claim", "verdict"],
        rows,
    )
    labels = write_csv(
        folder / "labels.csv",
        ["question_id", "sentence_id", "has_error"],
        [[q, s, "true" if s.endswith("s2") else "false"] for q, s, _ in _SENTENCES],
    )
    return table, labels


@pytest.mark.parametrize("column", ["model_version", "run_id", "seed", "checkpoint"])
@pytest.mark.parametrize("drop", ["--option unmapped=drop", "--map {column}="])
def test_a_left_out_run_column_pooling_two_versions_of_one_system_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, drop: str
) -> None:
    # A long export, a row per claim and version of gpt-4o, the version in its own column.
    # Left out, main pooled each sentence's claims of both versions into one sentence:
    # gpt-4o TP 2, FP 1, FN 0, TN 1 (a sentence is flagged when any claim is refuted:
    # q1:s1 S+R flagged, no error -> FP; q1:s2 R+R -> TP; q2:s1 S+S -> TN; q2:s2 S+R -> TP),
    # exit 0. By hand, version 2024-05: q1:s2 TP, q2:s2 FN, q1:s1 and q2:s1 TN (1, 0, 1, 2);
    # 2024-11: q1:s2 and q2:s2 TP, q1:s1 FP, q2:s1 TN (2, 1, 0, 1).
    table, labels = _two_versions(tmp_path, column)
    out = tmp_path / "t.jsonl"
    option = drop.format(column=column).split()
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), *option, "--option", "ids=claim"],
        capsys,
    )
    assert code == 2 and not out.exists()
    assert f"long.csv:6, field '{column}': sentence 'q1:s1' of question 'q1'" in err
    assert "two runs or versions under one system name" in err
    assert len(err.strip().splitlines()) == 1
    # the way it names scores each version on its own: the hand counts above
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--option", "ids=claim",
         "--map", f"{column}=system", "--map", "system=verifier"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    lab = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(labels), "-o", str(lab)], capsys)
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(lab), "-m", "refuted", "--format",
         "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"2024-05": (1, 0, 1, 2), "2024-11": (2, 1, 0, 1)}


def test_a_left_out_column_of_each_claim_or_one_run_is_read_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a per-claim column so named (model_output, run_time) differs across a sentence's
    # claims as a run's would; a run column with one value is one run: neither is refused.
    from failcodes.ingest.runcolumns import run_name

    assert run_name("model_version") and run_name("runId") and run_name("seed")
    assert not run_name("model_output") and not run_name("run_time")
    assert not run_name("model_score") and not run_name("prompt")
    table, labels = _two_versions(tmp_path, "model_output")
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--option", "unmapped=drop",
         "--option", "ids=claim"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    one = write_csv(
        tmp_path / "one.csv",
        ["system", "model_version", "question_id", "sentence_id", "claim", "verdict"],
        [["gpt-4o", "2024-05", q, s, t, _VERSIONS["2024-05"][s]] for q, s, t in _SENTENCES],
    )
    code, _, err = run_cli(
        ["ingest", "generic", str(one), "-o", str(out), "--option", "unmapped=drop"], capsys
    )
    assert code == 0, err
    lab = tmp_path / "l.jsonl"
    assert run_cli(["ingest", "generic-labels", str(labels), "-o", str(lab)], capsys)[0] == 0
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(lab), "-m", "refuted", "--format",
         "csv"],
        capsys,
    )  # fmt: skip
    assert metrics_counts(stdout, "refuted") == {"gpt-4o": (1, 0, 1, 2)}


def test_a_sentence_error_no_claim_label_carries_is_said_at_claim_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q1:s1 'Aspirin lowers fever and cures cancer.' is labelled an error (an omission, say)
    # while each of its two claims is labelled no error; q1:s2 (one refuted claim) is an
    # error, q2:s1 none. By hand, sentence level: q1:s1 no claim refuted -> FN, q1:s2 TP,
    # q2:s1 TN: TP 1, FN 1, TN 1 (recall 1/2). Claim level: c1, c2 of q1:s1 take their own
    # no-error labels (TN 2), q1:s2:c1 its sentence's error (TP), q2:s1:c1 TN: TP 1, FN 0,
    # TN 3, recall 1/1; the clinician's error in q1:s1 counts nowhere. main said nothing.
    sent = "Aspirin lowers fever and cures cancer."
    traces = write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "sentence", "verdict"],
        [
            ["A", "q1", "q1:s1", "q1:s1:c1", "Aspirin lowers fever.", sent, "supported"],
            ["A", "q1", "q1:s1", "q1:s1:c2", "Aspirin cures cancer.", sent, "supported"],
            ["A", "q1", "q1:s2", "q1:s2:c1", "Take it daily.", "Take it daily.", "refuted"],
            ["A", "q2", "q2:s1", "q2:s1:c1", "It is an NSAID.", "It is an NSAID.", "supported"],
        ],
    )
    labels = write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "claim_id", "has_error"],
        [
            ["q1", "q1:s1", "", "true"],
            ["q1", "q1:s1", "q1:s1:c1", "false"],
            ["q1", "q1:s1", "q1:s1:c2", "false"],
            ["q1", "q1:s2", "", "true"],
            ["q2", "q2:s1", "", "false"],
        ],
    )
    out, lab = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    assert run_cli(["ingest", "generic", str(traces), "-o", str(out)], capsys)[0] == 0
    assert run_cli(["ingest", "generic-labels", str(labels), "-o", str(lab)], capsys)[0] == 0
    base = ["--traces", str(out), "--labels", str(lab)]
    code, stdout, err = run_cli(["metrics", *base, "--format", "csv"], capsys)
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (1, 0, 1, 1)}
    clause = "1 sentence(s) labelled an error whose claim labels all say no error (first 'q1:s1')"
    assert clause not in err  # sentence level counts it: nothing to say
    code, stdout, err = run_cli(["metrics", *base, "--level", "claim", "--format", "csv"], capsys)
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (1, 0, 0, 3)}
    assert clause in err and "--level sentence counts it" in err
    code, stdout, err = run_cli(["metrics", *base, "--level", "claim"], capsys)
    assert stdout.startswith("Assumed:") and clause in stdout.splitlines()[0]
    code, stdout, err = run_cli(
        ["disagreements", *base, "--level", "claim", "-o", str(tmp_path / "d.jsonl")], capsys
    )
    assert code == 0, err
    assert clause in (stdout + err).splitlines()[0]


def test_score_columns_named_in_opposite_directions_under_one_threshold_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A wide table of two score verifiers: MiniCheck's support probability beside
    # SelfCheckGPT's hallucination score. main refused the second ("give --option
    # score_means=error"), and following that read minicheck's high support as errors:
    # mc under non_supported TP 0, FP 2, FN 2, TN 0, exit 0. By hand (threshold 0.5):
    # mc flags the 0.12 and 0.33 claims (both errors): TP 2, TN 2; sc flags 0.85 (an
    # error), not 0.30 (an error): TP 1, FN 1, TN 2.
    rows = [
        ["q1", "q1:s1", "Aspirin lowers fever.", "0.91", "0.10", "ok"],
        ["q1", "q1:s2", "Aspirin cures cancer.", "0.12", "0.85", "wrong"],
        ["q2", "q2:s1", "Ibuprofen is an NSAID.", "0.88", "0.20", "ok"],
        ["q2", "q2:s2", "Ibuprofen is safe in late pregnancy.", "0.33", "0.30", "wrong"],
    ]
    head = ["question_id", "sentence_id", "claim", "minicheck_support", "selfcheck_hallucination"]
    table = write_csv(tmp_path / "w.csv", [*head, "label"], rows)
    out, lab = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    both = ["--verdict-column", "minicheck_support=mc", "--verdict-column"]
    both += ["selfcheck_hallucination=sc", "--option", "verdict_threshold=0.5", "--map", "label="]
    for means in ([], ["--option", "score_means=error"]):
        code, _, err = run_cli(
            ["ingest", "generic", str(table), "-o", str(out), *both, *means], capsys
        )
        assert code == 2 and not out.exists()
        assert "'selfcheck_hallucination' is named as an error score and 'minicheck_support'" in err
        assert "ingest each system apart" in err and len(err.strip().splitlines()) == 1
    # the way it names: each system apart, its own score_means
    mc, sc = tmp_path / "mc.jsonl", tmp_path / "sc.jsonl"
    rule = ["--label-rule", "label = wrong -> error", "--labels-out", str(lab)]
    common = ["--option", "verdict_threshold=0.5", "--option", "unmapped=drop"]
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(mc), "--verdict-column",
         "minicheck_support=mc", *common, *rule],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(sc), "--verdict-column",
         "selfcheck_hallucination=sc", "--option", "score_means=error", *common],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(mc), "--traces", str(sc), "--labels", str(lab), "-m",
         "non_supported", "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "non_supported") == {"mc": (2, 0, 0, 2), "sc": (1, 0, 1, 2)}
