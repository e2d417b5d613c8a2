"""Session 23 (t23red1): shapes of outside data that gave a wrong number at exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import f1_score

from tests.cli_helpers import run_cli

# units 1-6; the columns as a per-item correctness table writes them (1 = the system was right)
GPT = [1, 1, 0, 1, 1, 0]
CLAUDE = [1, 0, 0, 0, 1, 1]
ERRORS = [1, 0, 1, 0, 1, 0]


def _table(path: Path, header: str, *columns: list[int]) -> Path:
    rows = [
        ",".join(map(str, [i + 1, *cells])) for i, cells in enumerate(zip(*columns, strict=True))
    ]
    path.write_text("\n".join([f"unit,{header}", *rows]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("header", "truth", "field"),
    [
        # correctness columns against the errors: each right answer read as an error flagged
        ("gpt_correct,claude_correct,has_error", "has_error", "gpt_correct"),
        ("gptAccuracy,claudeAccuracy,label", "label", "gptAccuracy"),
        # a reference of correctness against systems' 1 = error flagged (compare's reading)
        ("gpt,claude,is_correct", "is_correct", "is_correct"),
    ],
)
def test_compare_file_columns_of_correctness_against_errors_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: str, truth: str, field: str
) -> None:
    """main read them as errors flagged, exit 0: F1 gpt 0.571, claude 0.667 (below)."""
    path = _table(tmp_path / "c.csv", header, GPT, CLAUDE, ERRORS)
    # main's numbers, by hand, 1 read as an error flagged: gpt TP 2 (units 1, 5), FP 2 (2, 4),
    # FN 1 (3): F1 4/7 = 0.571; claude TP 2 (1, 5), FP 1 (6), FN 1 (3): 4/6 = 0.667 (sklearn)
    assert f1_score(ERRORS, GPT) == pytest.approx(4 / 7)
    assert f1_score(ERRORS, CLAUDE) == pytest.approx(4 / 6)
    code, out, err = run_cli(["compare", str(path), "--truth", truth, "--resamples", "99"], capsys)
    assert code == 2, out
    line = err.strip()
    assert "\n" not in line
    assert line.startswith(f"failcodes: error: {path}:1, field '{field}': ")
    assert "named as correctness (1 = right)" in line
    assert not out


def test_compare_file_correctness_columns_without_truth_give_mcnemar_on_who_was_right(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The way through the refusal: McNemar on the correctness columns."""
    path = _table(tmp_path / "c.csv", "gpt_correct,claude_correct", GPT, CLAUDE)
    code, out, _ = run_cli(["compare", str(path), "--format", "json"], capsys)
    assert code == 0
    test = next(t for t in json.loads(out)["tests"] if t["test"] == "mcnemar_midp")
    # discordant units: 2 and 4 (gpt right alone), 6 (claude right alone): b 2, c 1; mid-p
    # = 2 (P(X < 1) + P(X = 1) / 2), X ~ Binomial(3, 1/2) = 2 (1/8 + 3/16) = 0.625
    assert test["p_value"] == pytest.approx(0.625)
    # difference in rates (b - c) / n = (2 - 1) / 6
    assert test["effect"] == pytest.approx(1 / 6)


@pytest.mark.parametrize(
    ("header", "truth"),
    [
        ("gpt,claude,y_true", "y_true"),  # scikit-learn's reference: says nothing of 1
        ("self_consistency,claude,truth", "truth"),  # a method's name, no correctness
        ("gpt_correct,claude_correct,is_correct", "is_correct"),  # every column one way
        ("gpt,claude,correct_label", "correct_label"),  # the correct label: the reference
        ("gpt,claude,right_answer", "right_answer"),
    ],
)
def test_compare_file_names_that_say_no_opposite_meaning_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: str, truth: str
) -> None:
    path = _table(tmp_path / "c.csv", header, GPT, CLAUDE, ERRORS)
    code, out, _ = run_cli(
        ["compare", str(path), "--truth", truth, "--format", "json", "--resamples", "99"], capsys
    )
    assert code == 0
    f1 = next(t for t in json.loads(out)["tests"] if t["test"] == "permutation_f1")
    # F1 4/7 - 4/6 (sklearn, above) = -0.0952
    assert f1["effect"] == pytest.approx(f1_score(ERRORS, GPT) - f1_score(ERRORS, CLAUDE))
    assert f1["effect"] == pytest.approx(4 / 7 - 4 / 6)


# Each system wrote its own answer to q1 and q2 and numbered sentences and claims alike; the
# traces give no sentence text (a claim table: question, sentence id, claim, verdict).
OWN = """system,question_id,sentence_id,claim_id,claim,verdict
gpt,q1,q1:1,q1c1,Aspirin thins blood,Supported
gpt,q1,q1:1,q1c2,Aspirin is an NSAID,Supported
gpt,q1,q1:2,q1c3,Aspirin cures cancer,Refuted
gpt,q2,q2:1,q2c1,Metformin treats diabetes,Supported
gpt,q2,q2:2,q2c2,Metformin causes hair growth,Supported
claude,q1,q1:1,q1c1,Ibuprofen is safe in pregnancy,Supported
claude,q1,q1:2,q1c2,Ibuprofen reduces fever,Refuted
claude,q1,q1:2,q1c3,Ibuprofen is an NSAID,Supported
claude,q2,q2:1,q2c1,Insulin is a hormone,Supported
claude,q2,q2:2,q2c2,Insulin is taken orally,Refuted
"""
# the clinicians' labels of gpt's answer, no system column
GPT_LABELS = (
    "question_id,sentence_id,has_error\nq1,q1:1,false\nq1,q1:2,true\nq2,q2:1,false\nq2,q2:2,true\n"
)


def _own_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> Path:
    table = tmp_path / "own.csv"
    table.write_text(OWN, encoding="utf-8")
    if fmt == "csv":
        return table
    out = tmp_path / f"own.{fmt}"
    assert run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)[0] == 0
    capsys.readouterr()
    return out


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("command", ["metrics", "disagreements", "compare"])
def test_shared_labels_of_one_answer_beside_another_systems_own_answer_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, command: str
) -> None:
    """main scored claude on gpt's labels at exit 0: claude TP 2, FP 0, FN 0, TN 2.

    By hand on main's reading: claude flags q1:2 (q1c2 refuted) and q2:2 (q2c2 refuted),
    gpt's labels say q1:2 and q2:2 are errors: TP 2, TN 2 (q1:1, q2:1), recall 1.0, for an
    answer no clinician labelled.
    """
    traces = _own_traces(tmp_path, capsys, fmt)
    labels = tmp_path / "labels.csv"
    labels.write_text(GPT_LABELS, encoding="utf-8")
    args = [command, "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    out = tmp_path / "d.jsonl"
    args += ["-o", str(out)] if command == "disagreements" else []
    code, stdout, err = run_cli(args, capsys)
    assert code == 2, stdout
    line = err.strip()
    assert "\n" not in line
    assert line == (
        f"failcodes: error: {labels}:2, field 'sentence_id': claim 'q1c1' of sentence 'q1:1' "
        "reads 'Aspirin thins blood' in the traces of system 'gpt' and 'Ibuprofen is safe in "
        "pregnancy' in those of 'claude', and no sentence text tells them apart: this label, "
        "shared by every system (no system column), would score both systems' claims as one "
        "sentence's; if each system wrote its own answer, give the labels a system column "
        "(labels per system); if the systems checked one answer, give the traces that "
        "sentence's text (field sentence)"
    )
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_own_answers_with_labels_per_system_give_the_hand_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """The way through: each label names its system."""
    traces = _own_traces(tmp_path, capsys, fmt)
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "system,"
        + GPT_LABELS.replace("\nq", "\ngpt,q")
        # claude's answer labelled by the clinicians: q1:1 (ibuprofen in pregnancy) wrong,
        # q1:2 right, q2:1 right, q2:2 (insulin orally) wrong
        + "claude,q1,q1:1,true\nclaude,q1,q1:2,false\nclaude,q2,q2:1,false\nclaude,q2,q2:2,true\n",
        encoding="utf-8",
    )
    code, out, _ = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0
    got = {r["system"]: (r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out)}
    # by hand, a sentence flagged when any claim is refuted:
    # gpt: q1:1 no flag, label no error: TN; q1:2 flag, error: TP; q2:1 TN; q2:2 no flag,
    # error: FN -> TP 1, FP 0, FN 1, TN 2
    # claude: q1:1 no flag, error: FN; q1:2 flag (q1c2), no error: FP; q2:1 TN; q2:2 flag,
    # error: TP -> TP 1, FP 1, FN 1, TN 1
    assert got == {"gpt": (1, 0, 1, 2), "claude": (1, 1, 1, 1)}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_one_answer_checked_by_two_systems_without_sentence_text_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """The seed's design (one answer's claims, every system's verdict) is not refused."""
    gpt = [row for row in OWN.splitlines()[1:] if row.startswith("gpt")]
    claude = [
        row.replace("gpt", "claude").replace("Supported", "Refuted")
        if "q2c2" in row
        else row.replace("gpt", "claude")
        for row in gpt
    ]
    table = tmp_path / "own.csv"
    table.write_text("\n".join([OWN.splitlines()[0], *gpt, *claude]) + "\n", encoding="utf-8")
    traces = table
    if fmt != "csv":
        traces = tmp_path / f"own.{fmt}"
        assert run_cli(["ingest", "generic", str(table), "-o", str(traces)], capsys)[0] == 0
        capsys.readouterr()
    labels = tmp_path / "labels.csv"
    labels.write_text(GPT_LABELS, encoding="utf-8")
    code, out, _ = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0
    got = {r["system"]: (r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out)}
    # gpt as above (TP 1, FN 1, TN 2); claude the same verdicts but q2c2 refuted: q2:2 a TP
    assert got == {"gpt": (1, 0, 1, 2), "claude": (2, 0, 0, 2)}


def test_python_api_refuses_a_system_written_two_ways_in_memory() -> None:
    """main's compute_metrics scored 'GPT-4' and 'gpt-4' as two systems, no error.

    One system by hand (s1 refuted, an error: TP; s2 supported, no error: TN): TP 1, TN 1.
    main read two: GPT-4 TP 1, TN 1 (s2 a sentence without its claims: no error flagged) and
    gpt-4 FN 1 (s1 without its claims), TN 1. The CLI refuses it across files.
    """
    import failcodes as fc
    from failcodes.errors import FailcodesError

    def trace(system: str, sid: str, verdict: str) -> fc.Trace:
        return fc.Trace(
            system=system,
            question_id="q1",
            sentence_id=sid,
            claim_id=f"{sid}c1",
            claim=f"claim of {sid}",
            verdict=verdict,
        )

    traces = [trace("GPT-4", "s1", "refuted"), trace("gpt-4", "s2", "supported")]
    labels = [
        fc.Label(sentence_id="s1", has_error=True),
        fc.Label(sentence_id="s2", has_error=False),
    ]
    for call in (
        lambda: fc.compute_metrics(traces, labels, ["refuted"]),
        lambda: fc.find_disagreements(traces, labels, "refuted"),
    ):
        with pytest.raises(FailcodesError) as err:
            call()
        assert "system 'gpt-4' is 'GPT-4' written another way" in str(err.value)
    one = [trace("GPT-4", "s1", "refuted"), trace("GPT-4", "s2", "supported")]
    report = fc.compute_metrics(one, labels, ["refuted"])
    assert [(r.system, r.tp, r.fp, r.fn, r.tn) for r in report.results] == [("GPT-4", 1, 0, 0, 1)]


PER_SYSTEM_LABELS = (
    "system,question_id,sentence_id,has_error\n"
    "gpt,q1,q1:1,false\ngpt,q1,q1:2,true\ngpt,q2,q2:1,false\ngpt,q2,q2:2,true\n"
    "claude,q1,q1:1,true\nclaude,q1,q1:2,false\nclaude,q2,q2:1,false\nclaude,q2,q2:2,true\n"
)


def test_one_systems_traces_with_every_systems_labels_name_both_ways(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scored one system after another: main's refusal named no way through."""
    traces = tmp_path / "gpt.csv"
    traces.write_text(
        "\n".join(row for row in OWN.splitlines() if not row.startswith("claude")) + "\n",
        encoding="utf-8",
    )
    labels = tmp_path / "labels.csv"
    labels.write_text(PER_SYSTEM_LABELS, encoding="utf-8")
    code, _, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {labels}:6, field 'system': no trace has system 'claude' (systems: "
        "'gpt'); labels of several systems' answers, scored one system at a time? give every "
        "system's traces together (--traces A --traces B), or this file's rows of the traces' "
        "systems alone (3 more such labels)"
    )
    # the second way: gpt's rows alone give gpt's counts by hand (TP 1, FP 0, FN 1, TN 2: the
    # per-system test above)
    labels.write_text("\n".join(PER_SYSTEM_LABELS.splitlines()[:5]) + "\n", encoding="utf-8")
    code, out, _ = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out)] == [
        ("gpt", 1, 0, 1, 2)
    ]


def test_python_api_refuses_a_totals_rows_label_in_memory() -> None:
    """main counted a label 'Total' (under q1) as a labelled sentence without claims.

    s1 refuted, an error: TP; s2 supported, no error: TN; by hand TP 1, TN 1. main's
    compute_metrics gave TP 1, FN 1, TN 1 (the 'Total' label an error no claim flagged), no
    error, where every labels reader refuses the row.
    """
    import failcodes as fc
    from failcodes.errors import FailcodesError

    traces = [
        fc.Trace(system="g", question_id="q1", sentence_id=s, claim_id=f"{s}c1", claim=s, verdict=v)
        for s, v in (("s1", "refuted"), ("s2", "supported"))
    ]
    labels = [
        fc.Label(sentence_id="s1", has_error=True),
        fc.Label(sentence_id="s2", has_error=False),
    ]
    total = fc.Label(sentence_id="Total", question_id="q1", has_error=True)
    for call in (
        lambda: fc.compute_metrics(traces, [*labels, total], ["refuted"]),
        lambda: fc.find_disagreements(traces, [*labels, total], "refuted"),
    ):
        with pytest.raises(FailcodesError) as err:
            call()
        assert "its sentence_id 'Total' names a total, not a label: delete the row" in str(
            err.value
        )
    report = fc.compute_metrics(traces, labels, ["refuted"])
    assert [(r.tp, r.fp, r.fn, r.tn) for r in report.results] == [(1, 0, 0, 1)]


@pytest.mark.parametrize("sentence", [False, True])
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_one_answer_whose_second_file_is_in_nfd_is_read_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, sentence: bool
) -> None:
    """claude's file written in NFD (macOS): 'café' with its accent a mark of its own.

    The texts compared by their letters read 'cafe' beside 'café', two texts: main refused
    the shared label ("sentence 'q1:1' reads ... in those of 'claude'") for one answer.
    """
    import unicodedata

    head, *rows = OWN.splitlines()
    gpt = [r.replace("blood", "blood in café users") for r in rows if r.startswith("gpt")]
    if sentence:
        head += ",sentence"
        gpt = [f"{r},Sentence {r.split(',')[2]} of the café answer" for r in gpt]
    claude = [unicodedata.normalize("NFD", r.replace("gpt", "claude", 1)) for r in gpt]
    table = tmp_path / "one.csv"
    table.write_text("\n".join([head, *gpt, *claude]) + "\n", encoding="utf-8")
    traces = table
    if fmt != "csv":
        traces = tmp_path / f"one.{fmt}"
        assert run_cli(["ingest", "generic", str(table), "-o", str(traces)], capsys)[0] == 0
        capsys.readouterr()
    labels = tmp_path / "labels.csv"
    labels.write_text(GPT_LABELS, encoding="utf-8")
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    got = {r["system"]: (r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out)}
    # one answer, the same verdicts: both as gpt above, TP 1, FP 0, FN 1, TN 2
    assert got == {"gpt": (1, 0, 1, 2), "claude": (1, 0, 1, 2)}


@pytest.mark.parametrize("flag", ["is_hard", "hasCitation"])
def test_compare_file_a_property_column_is_not_a_third_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """A per-item flag kept beside the systems' columns was read as a third system.

    main: Cochran's Q df 2, McNemar gpt vs claude p 0.625 Holm-adjusted over 3 pairs to 1.0,
    exit 0 (the first line listed it among the systems).
    """
    path = _table(tmp_path / "c.csv", f"gpt,claude,{flag}", GPT, CLAUDE, [0, 1, 1, 0, 0, 1])
    code, out, err = run_cli(["compare", str(path)], capsys)
    assert code == 2, out
    assert err.strip().startswith(
        f"failcodes: error: {path}:1, field '{flag}': column '{flag}' is named like a property "
        "of each unit (a flag: "
    )
    code, out, _ = run_cli(
        ["compare", str(path), "--systems", "gpt,claude", "--format", "json"], capsys
    )
    assert code == 0
    tests = {t["test"]: t for t in json.loads(out)["tests"]}
    assert tests["cochran_q"]["df"] == 1
    # one pair: b 2, c 1, mid-p 0.625 (above), and Holm over one pair leaves it
    assert tests["mcnemar_midp"]["p_value"] == pytest.approx(0.625)
    assert tests["mcnemar_midp"]["p_holm"] == pytest.approx(0.625)


@pytest.mark.parametrize("column", ["prompt", "query"])
def test_compare_file_a_prompt_column_groups_its_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    """A prompt's text beside the systems' 0/1 columns: main refused it as a system's column.

    ("field 'prompt': expected 0/1 (or true/false), got 'P1'", with a pivot hint the table did
    not need). Read as the question of each row, P1's two rows are one cluster.
    """
    path = tmp_path / "c.csv"
    path.write_text(
        f"{column},gpt,claude\nP1,1,0\nP1,1,0\nP2,1,1\nP3,0,1\nP4,1,0\n", encoding="utf-8"
    )
    code, out, err = run_cli(["compare", str(path), "--format", "json"], capsys)
    assert code == 0, err
    test = next(t for t in json.loads(out)["tests"] if t["test"] == "mcnemar_midp")
    # question totals d = b - c: P1 2, P2 0, P3 -1, P4 1; sign flips of (2, 1, 1) give |S| 4,
    # 2, 2, 0, 0, 2, 2, 4 (8 equally likely), observed |S| 2: mid-p P(|S| > 2) + P(|S| = 2)/2
    # = 2/8 + 4/16 = 0.5 (as rows, b 3, c 1: 0.375)
    assert test["p_value"] == pytest.approx(0.5)
    assert (test["unit"], test["clustered"]) == ("question", True)


def test_a_support_score_written_as_a_percent_is_its_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'85%' (a sheet's percent cell saved as text): main refused it as no number."""
    table = tmp_path / "scores.csv"
    table.write_text(
        "question_id,sentence_id,claim,score,wrong\n"
        "q1,s1,a,85%,no\nq1,s2,b,40%,yes\nq2,s3,c,90 %,no\nq2,s4,d,30%,yes\n",
        encoding="utf-8",
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
         "--map", "score=verdict", "--option", "verdict_threshold=0.5", "--system", "m",
         "--label-rule", "wrong = yes -> error"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    # 0.85, 0.40, 0.90, 0.30 against 0.5: 2 at or above it, 2 below, range 0.3 to 0.9
    assert "2 of 4 scores at or above it (supported), 2 below (no_evidence)" in err
    assert "the scores run from 0.3 to 0.9" in err
    code, out, _ = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "non_supported",
         "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0
    # s2, s4 below the threshold (no_evidence: flagged under non_supported) and labelled wrong;
    # s1, s3 supported and right: TP 2, FP 0, FN 0, TN 2
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out)] == [(2, 0, 0, 2)]


def test_compare_file_a_claim_text_column_names_unit_column_as_a_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A claim's text beside the 0/1 columns: main's line named pivot and transpose alone."""
    path = tmp_path / "c.csv"
    path.write_text(
        "claim,gpt,claude,truth\nAspirin thins blood,1,0,1\nAspirin cures cancer,1,1,1\n"
        "Water is wet,0,0,1\nThe sun is cold,1,0,0\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["compare", str(path), "--truth", "truth"], capsys)
    assert code == 2
    assert err.strip().endswith(
        "; or, a text of each unit's own (a claim's?), name the system columns with --systems "
        "or this one with --unit-column"
    )
    code, out, _ = run_cli(
        ["compare", str(path), "--truth", "truth", "--unit-column", "claim", "--format", "json",
         "--resamples", "99"],
        capsys,
    )  # fmt: skip
    assert code == 0
    f1 = next(t for t in json.loads(out)["tests"] if t["test"] == "permutation_f1")
    # gpt TP 2, FP 1, FN 1: F1 4/6; claude TP 1, FP 0, FN 2: 2/4; difference 1/6
    assert f1["effect"] == pytest.approx(4 / 6 - 2 / 4)


def test_cochrans_q_of_two_systems_points_to_the_pairs_small_sample_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two systems, 3 discordant units: Q's asymptotic p 0.083 beside McNemar's mid-p 0.125.

    main showed both for the one pair with no word; the Cochran row now says which to read.
    """
    import numpy as np
    from statsmodels.stats.contingency_tables import cochrans_q

    path = tmp_path / "c.csv"
    path.write_text("unit,gpt,claude\n1,1,0\n2,1,0\n3,1,0\n4,0,0\n5,1,1\n", encoding="utf-8")
    code, out, _ = run_cli(["compare", str(path), "--format", "json"], capsys)
    assert code == 0
    rows = {t["test"]: t for t in json.loads(out)["tests"]}
    # statsmodels: Q 3, p chi2(1) 0.0833; McNemar mid-p, b 3, c 0: 2 (P(X = 0) / 2) = 1/8
    reference = cochrans_q(np.array([[1, 0], [1, 0], [1, 0], [0, 0], [1, 1]]))
    assert rows["cochran_q"]["statistic"] == pytest.approx(reference.statistic)
    assert rows["cochran_q"]["p_value"] == pytest.approx(reference.pvalue)
    assert rows["mcnemar_midp"]["p_value"] == pytest.approx(0.125)
    assert rows["cochran_q"]["note"] == (
        "2 systems: McNemar's chi-square, asymptotic; the mcnemar_midp row is the "
        "small-sample test of the pair (p 0.125)"
    )


KEYED = [
    {"id": "c1", "claim": "Aspirin thins blood", "gold": "SUPPORTED",
     "predictions": {"gpt": "SUPPORTED", "claude": "REFUTED"}},
    {"id": "c2", "claim": "Aspirin cures cancer", "gold": "REFUTED",
     "predictions": {"gpt": "REFUTED", "claude": "REFUTED"}},
    {"id": "c3", "claim": "Water is wet", "gold": "SUPPORTED",
     "predictions": {"gpt": "SUPPORTED", "claude": "SUPPORTED"}},
    {"id": "c4", "claim": "The sun is cold", "gold": "REFUTED",
     "predictions": {"gpt": "SUPPORTED", "claude": "REFUTED"}},
]  # fmt: skip


def test_verdict_columns_inside_an_object_name_the_flattening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Predictions keyed by system inside each record: main said 'did the verifier fail?'."""
    import pandas as pd

    source = tmp_path / "keyed.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in KEYED), encoding="utf-8")
    columns = [
        "--verdict-column",
        "predictions.gpt=gpt",
        "--verdict-column",
        "predictions.claude=claude",
    ]
    rule = ["--label-rule", "gold = REFUTED -> error", "--map", "id=claim_id"]
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    out = ["-o", str(traces), "--labels-out", str(labels)]
    code, _, err = run_cli(["ingest", "generic", str(source), *columns, *rule, *out], capsys)
    assert code == 2
    assert (
        "no verdict: no row so far gives column 'predictions.gpt' a value (--verdict-column "
        "predictions.gpt: a typo? a key inside an object? flatten the records first, as "
        "pandas.json_normalize does;"
    ) in err
    # the way through: pandas.json_normalize names the keys predictions.gpt, predictions.claude
    flat = tmp_path / "flat.csv"
    pd.json_normalize(KEYED).to_csv(flat, index=False)
    code, _, err = run_cli(["ingest", "generic", str(flat), *columns, *rule, *out], capsys)
    assert code == 0, err
    code, got, _ = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0
    # errors c2, c4 (gold REFUTED). gpt flags c2: TP 1, FN 1 (c4), TN 2; claude flags c1, c2,
    # c4: TP 2, FP 1 (c1), TN 1 (c3)
    counts = {r["system"]: (r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(got)}
    assert counts == {"gpt": (1, 0, 1, 2), "claude": (2, 1, 0, 1)}
