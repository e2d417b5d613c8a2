"""Session 31 (t31red): data shapes nobody tried, run as a researcher would, counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli, write_csv, write_jsonl

#: Two answers of three sentences, one claim each; the system's verdict is right on all six
#: (refuted on the three errors, supported on the rest): TP 3, FP 0, FN 0, TN 3 by hand.
#: (text, verdict, the clinician's error, the sentence's character offset in the answer)
_ANSWERS = {
    "q1": [
        ("Aspirin lowers fever.", "refuted", True, 0),
        ("It is an NSAID.", "supported", False, 22),
        ("It cures cancer.", "refuted", True, 38),
    ],
    "q2": [
        ("Ibuprofen is safe.", "supported", False, 0),
        ("It treats viral infections.", "refuted", True, 19),
        ("Take it with food.", "supported", False, 47),
    ],
}


#: The label rule of the CSV shapes below.
_RULE = ["--label-rule", "label = error -> error; otherwise -> no_error"]


def _offset_study(folder: Path, *, texts: bool) -> tuple[Path, Path]:
    """Traces numbered by place (q1:0, q1:1, q1:2), labels keyed by character offset."""
    traces, labels = [], []
    for q, sentences in _ANSWERS.items():
        for i, (text, verdict, error, offset) in enumerate(sentences):
            sid = f"{q}:{i}"
            traces.append(
                {
                    "system": "gpt",
                    "question_id": q,
                    "sentence_id": sid,
                    "claim_id": sid,
                    "claim": text,
                    "sentence": text,
                    "verdict": verdict,
                }
            )
            label: dict[str, object] = {
                "question_id": q,
                "sentence_id": f"{q}:{offset}",
                "has_error": error,
            }
            if texts:
                label["sentence"] = text
            labels.append(label)
    return write_jsonl(folder / "t.jsonl", traces), write_jsonl(folder / "l.jsonl", labels)


@pytest.mark.parametrize("command", ["metrics", "disagreements"])
def test_labels_keyed_by_character_offset_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # Main read them: 'q1:0'/'q2:0' met their traces, the four offsets (q1:22, q1:38, q2:19,
    # q2:47) none, so they counted as labelled sentences without claims (no error flagged):
    # q1:0 TP, q1:22 TN, q1:38 FN, q2:0 TN, q2:19 FN, q2:47 TN -> TP 1, FP 0, FN 2, TN 3,
    # recall 1/3 for the system's 3/3, exit 0, said only as "labels cover 6 of 10".
    traces, labels = _offset_study(tmp_path, texts=False)
    extra = ["-o", str(tmp_path / "d.jsonl")] if command == "disagreements" else []
    code, out, err = run_cli(
        [command, "--traces", str(traces), "--labels", str(labels), *extra], capsys
    )
    assert code == 2, out
    assert err.count("\n") == 1, err
    assert "l.jsonl:2, field 'sentence_id'" in err  # q1:22, the first label without a trace
    assert "number sentences otherwise than the traces in 2 answers" in err
    assert "'q1:22', 'q1:38'" in err and "'q1:1', 'q1:2' with claims have no label" in err
    assert not (tmp_path / "d.jsonl").exists()


def test_labels_numbered_from_1_for_traces_from_0_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Labels q1:1..q1:3 for traces q1:0..q1:2 (the reverse of the from-0 check): main put
    # each label on the sentence before its own, the last on none. By hand on main: q1:1
    # (error) on 'It is an NSAID.' supported FN, q1:2 (none) on q1:2 refuted FP, q1:3 (error)
    # no claim FN, q2:1 (none) refuted FP, q2:2 (error) supported FN, q2:3 (none) no claim
    # TN -> TP 0, FP 2, FN 3, TN 1 for the system's TP 3, TN 3, exit 0.
    traces, _ = _offset_study(tmp_path, texts=False)
    labels = write_jsonl(
        tmp_path / "l1.jsonl",
        [
            {"question_id": q, "sentence_id": f"{q}:{i + 1}", "has_error": error}
            for q, sentences in _ANSWERS.items()
            for i, (_, _, error, _) in enumerate(sentences)
        ],
    )
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert (code, out) == (2, ""), out
    assert "l1.jsonl:3, field 'sentence_id'" in err  # q1:3, the first without a trace
    assert "labels 'q1:3' name no trace's sentence, past the last with claims, 'q1:2'" in err
    assert "numbers from 1 where the traces count from 0" in err


def test_offset_labels_read_as_given_when_they_give_their_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The way through the refusal names (the labels give their sentence's text): read as
    # given, the counts above by hand (TP 1, FN 2, TN 3), as for sentences without claims.
    traces, labels = _offset_study(tmp_path, texts=True)
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"gpt": (1, 0, 2, 3)}


def test_a_labelled_subset_beside_a_claimless_last_sentence_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not the pattern: in each answer the clinicians labelled q:0 and a claimless closing
    # sentence q:9 (an error in q1, none in q2) and left q:1, q:2 unlabelled (2 skipped, 1
    # label without a trace). By hand: q1:0 refuted/error TP, q1:9 no claim/error FN,
    # q2:0 supported/no error TN, q2:9 no claim/no error TN -> TP 1, FP 0, FN 1, TN 2.
    traces, _ = _offset_study(tmp_path, texts=False)
    labels = write_jsonl(
        tmp_path / "subset.jsonl",
        [
            {"question_id": "q1", "sentence_id": "q1:0", "has_error": True},
            {"question_id": "q1", "sentence_id": "q1:9", "has_error": True},
            {"question_id": "q2", "sentence_id": "q2:0", "has_error": False},
            {"question_id": "q2", "sentence_id": "q2:9", "has_error": False},
        ],
    )
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"gpt": (1, 0, 1, 2)}


def _one_answer_two_ways(folder: Path, q1: str, q1_again: str) -> tuple[Path, Path]:
    """Question q1's two sentences under two spellings of its id, q2's under one."""
    traces = [
        {"system": "gpt", "question_id": q, "sentence_id": s, "claim_id": s, "claim": c}
        | {"verdict": v}
        for q, s, c, v in [
            (q1, "s1", "Aspirin lowers fever.", "refuted"),
            (q1_again, "s2", "It is an NSAID.", "supported"),
            ("q2", "s3", "Ibuprofen is safe.", "supported"),
            ("q2", "s4", "It treats viral infections.", "refuted"),
        ]
    ]
    labels = [
        {"question_id": q, "sentence_id": s, "has_error": e}
        for q, s, e in [
            (q1, "s1", True),
            (q1_again, "s2", False),
            ("q2", "s3", True),
            ("q2", "s4", False),
        ]
    ]
    return write_jsonl(folder / "t.jsonl", traces), write_jsonl(folder / "l.jsonl", labels)


@pytest.mark.parametrize(
    ("q1_again", "how"),
    [("Q1", "case"), ("q\u200b1", "Unicode form"), ("q01", "leading zeros")],
)
def test_question_ids_written_two_ways_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], q1_again: str, how: str
) -> None:
    # One answer's sentences under 'q1' and 'Q1' (or 'q1' with a zero-width space): main
    # counted 3 questions for 2 (the coverage table's questions, the bootstrap's clusters),
    # with no word; 'q01' was said already. By hand: 2 questions; s1 refuted/error TP, s2
    # supported/no error TN, s3 supported/error FN, s4 refuted/no error FP -> 1, 1, 1, 1.
    traces, labels = _one_answer_two_ways(tmp_path, "q1", q1_again)
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"gpt": (1, 1, 1, 1)}
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("Assumed: shared labels"), first
    a, b = sorted(["q1", q1_again])  # (named in the order of the sorted question ids)
    assert (
        f"question ids that differ only in {how} are read as different questions ({a!r} and {b!r})"
    ) in " ".join(out.split())


def test_a_label_id_spaced_otherwise_than_its_trace_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Sentence ids holding a space ('q1 s2'), one trace's written with two ('q1  s2', as a
    # sheet or a text-made id keeps them): main read the label 'q1 s2' as a sentence without
    # claims and the trace as unlabelled: TP 1, FN 1, TN 2 (recall 1/2) for the system's
    # TP 2, TN 2 (both errors refuted, both others supported), exit 0, said only as
    # "labels cover 4 of 5 sentences".
    rows = [
        ("q1", "q1 s1", "refuted", True),
        ("q1", "q1  s2", "refuted", True),
        ("q2", "q2 s1", "supported", False),
        ("q2", "q2 s2", "supported", False),
    ]
    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"system": "gpt", "question_id": q, "sentence_id": s, "claim_id": s}
            | {"claim": f"c {s}", "verdict": v}
            for q, s, v, _ in rows
        ],
    )
    labels = write_jsonl(
        tmp_path / "l.jsonl",
        [
            {"question_id": q, "sentence_id": " ".join(s.split()), "has_error": e}
            for q, s, _, e in rows
        ],
    )
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert (code, out) == (2, ""), out
    assert "l.jsonl:2, field 'sentence_id'" in err
    # (the one-line message shows a run of spaces as one: the clause says it)
    assert "no trace has sentence_id 'q1 s2', but one has 'q1 s2' (ids are compared " in err
    assert "exactly: spacing (two spaces in a row, a tab or a line break where" in err


#: Two verifiers' support scores: mc as shares of 1, ac as a percentage. s1 and s3 are the
#: clinicians' errors. At 0.5: mc s1 .12 and s3 .30 below (no_evidence), s2 .91, s4 .75
#: supported -> non_supported TP 2, TN 2. ac at 50 (its scale) alike: 0 and 12 below, 88,
#: 64 above -> TP 2, TN 2; main read ac at 0.5: 12, 88, 64 supported, 0 alone below ->
#: TP 1, FN 1, TN 2, exit 0, said only as a range in a note.
_SCORES = [
    ["q1", "s1", "Aspirin cures cancer.", "0.12", "0", "error"],
    ["q1", "s2", "Aspirin lowers fever.", "0.91", "88", "ok"],
    ["q2", "s3", "Ibuprofen treats viral infections.", "0.30", "12", "error"],
    ["q2", "s4", "Ibuprofen is an NSAID.", "0.75", "64", "ok"],
]


@pytest.mark.parametrize("columns", [["mc", "ac"], ["ac"]])
def test_scores_past_1_read_with_a_threshold_of_a_share_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], columns: list[str]
) -> None:
    table = write_csv(
        tmp_path / "scores.csv",
        ["question_id", "sentence_id", "claim", "mc", "ac", "label"],
        _SCORES,
    )
    args = ["ingest", "generic", str(table), "-o", str(tmp_path / "t.jsonl")]
    args += ["--labels-out", str(tmp_path / "l.jsonl")]
    args += [*_RULE, "--option", "verdict_threshold=0.5", "--option", "unmapped=drop"]
    for column in columns:
        args += ["--verdict-column", column]
    code, _, err = run_cli(args, capsys)
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert "scores.csv:3, field 'verdict'" in err  # ac's 88 (s2, line 3): the first past 1
    assert "system 'ac': scores from 0 to 88, past 1" in err
    assert "3 of 4 at or above it" in err
    assert not (tmp_path / "t.jsonl").exists() and not (tmp_path / "l.jsonl").exists()


def test_percentages_at_their_own_threshold_and_logits_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ac apart at 50 (its scale): TP 2, TN 2 by hand (above). Logits at 0.5 (below 0: not a
    # scale of shares or percentages; 1.3 and 2.1 above, -2 and -0.7 below) are read too.
    table = write_csv(
        tmp_path / "scores.csv",
        ["question_id", "sentence_id", "claim", "mc", "ac", "label"],
        _SCORES,
    )
    logits = ["-2", "2.1", "-0.7", "1.3"]
    table2 = write_csv(
        tmp_path / "logits.csv",
        ["question_id", "sentence_id", "claim", "nli", "label"],
        [[*r[:3], x, r[5]] for r, x in zip(_SCORES, logits, strict=True)],
    )
    counts = {}
    for path, column, threshold in [(table, "ac", "50"), (table2, "nli", "0.5")]:
        out_t, out_l = tmp_path / f"{column}.jsonl", tmp_path / f"{column}_l.jsonl"
        args = ["ingest", "generic", str(path), "-o", str(out_t), "--labels-out", str(out_l)]
        args += [*_RULE, "--option", f"verdict_threshold={threshold}"]
        args += ["--option", "unmapped=drop", "--verdict-column", column]
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
        args = ["metrics", "--traces", str(out_t), "--labels", str(out_l)]
        code, out, err = run_cli([*args, "-m", "non_supported", "--format", "csv"], capsys)
        assert code == 0, err
        counts.update(metrics_counts(out, "non_supported"))
    assert counts == {"ac": (2, 0, 0, 2), "nli": (2, 0, 0, 2)}


#: A grid of 2 retrievers x 2 verifiers stacked in one long table, a row per claim and pair,
#: the system column the verifier's. s1, s2 are errors. Verdicts (R refuted, S supported)
#: and the counts by hand under "refuted":
#: bm25/gpt R R S S: TP 2, TN 2; bm25/llama R S R S: TP 1, FP 1, FN 1, TN 1;
#: medcpt/gpt S S S S: FN 2, TN 2; medcpt/llama R R R R: TP 2, FP 2.
_GRID = {
    ("bm25", "gpt"): "RRSS",
    ("bm25", "llama"): "RSRS",
    ("medcpt", "gpt"): "SSSS",
    ("medcpt", "llama"): "RRRR",
}


def _grid(folder: Path, pipeline: bool) -> Path:
    rows = []
    for (retriever, verifier), verdicts in _GRID.items():
        for i, code in enumerate(verdicts):
            row = [f"q{i // 2 + 1}", f"s{i + 1}", f"claim {i + 1}", retriever, verifier]
            row += ["refuted" if code == "R" else "supported", "error" if i < 2 else "ok"]
            rows.append(row + ([f"{retriever}/{verifier}"] if pipeline else []))
    header = ["question_id", "sentence_id", "claim", "retriever", "system", "verdict", "label"]
    return write_csv(folder / "grid.csv", header + (["pipeline"] if pipeline else []), rows)


@pytest.mark.parametrize(
    ("options", "field", "pair"),
    [
        (["--option", "ids=claim"], "claim_id", "df['retriever'] + '/' + df['system']"),
        (
            ["--map", "retriever=system", "--map", "system=verifier"],
            "verifier",
            "df['system'] + '/' + df['retriever']",
        ),
    ],
)
def test_a_retriever_x_verifier_grid_is_refused_with_a_way_out_of_the_loop(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    field: str,
    pair: str,
) -> None:
    # Main: the duplicate claim's way (each retriever a system, --map retriever=system) and
    # the two verifiers' way (--map system=system beside --map system=verifier, the system
    # column kept: --map system=retriever) led into each other; no option reads the grid.
    table = _grid(tmp_path, pipeline=False)
    out = ["-o", str(tmp_path / "t.jsonl"), "--labels-out", str(tmp_path / "l.jsonl")]
    code, _, err = run_cli(["ingest", "generic", str(table), *out, *_RULE, *options], capsys)
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert f"grid.csv:6, field '{field}'" in err or f"grid.csv:10, field '{field}'" in err
    assert f"pandas: df['pipeline'] = {pair}, then --map pipeline=system" in err


def test_the_grid_with_a_pipeline_column_is_read_as_four_systems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _grid(tmp_path, pipeline=True)
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    args += [*_RULE, "--map", "pipeline=system", "--map", "system=verifier"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {
        "bm25/gpt": (2, 0, 0, 2),
        "bm25/llama": (1, 1, 1, 1),
        "medcpt/gpt": (0, 0, 2, 2),
        "medcpt/llama": (2, 2, 0, 0),
    }
