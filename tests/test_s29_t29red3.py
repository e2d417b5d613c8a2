"""Session 29 round 2 (t29red3): outside shapes at the command line, each counted by hand."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli, write_csv

#: Four sentences, one claim each (no claim id column: ``--option ids=claim`` makes them).
_CLAIMS = [
    ["q1", "s1", "Aspirin lowers fever."],
    ["q1", "s2", "Aspirin cures cancer."],
    ["q2", "s3", "Ibuprofen is an NSAID."],
    ["q2", "s4", "Ibuprofen is safe in late pregnancy."],
]


@pytest.mark.parametrize(
    "b_text",
    [
        {"s2": "Aspirin cures cancer. ", "s4": "Ibuprofen is safe in\r\nlate pregnancy."},
        # decomposed 'ü' (a macOS export, NFD), HealthFC's German claims have umlauts
        {"s2": "Aspirin heilt Krebs fu\u0308r immer.", "s4": "Ibuprofen ist su\u0308\u00df."},
    ],
    ids=["whitespace", "nfd"],
)
def test_ids_claim_folds_whitespace_so_a_claim_keeps_one_id_in_every_systems_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], b_text: dict[str, str]
) -> None:
    # A's table carries the clinicians' claim labels (s2, s4 wrong); B's export of the same
    # claims has a trailing space on s2's text and a line break inside s4's (an Excel cell).
    # Both systems refute s2 and s4 and support s1 and s3: by hand, claim level, -m refuted,
    # each TP 2 (s2, s4), TN 2 (s1, s3). main hashed the raw text: B's s2 and s4 got other
    # claim ids than A's labels, left out as 'unlabelled': B n 2, TP 0, FP 0, FN 0, TN 2.
    # (nfd: A's texts are the same words composed, NFC: 'für', 'süß'.)
    verdict = {"s1": "supported", "s2": "refuted", "s3": "supported", "s4": "refuted"}
    wrong = {"s2", "s4"}
    a_text = {s: unicodedata.normalize("NFC", " ".join(t.split())) for s, t in b_text.items()}
    a = write_csv(
        tmp_path / "a.csv",
        ["question_id", "sentence_id", "claim", "verdict", "label"],
        [
            [q, s, a_text.get(s, c), verdict[s], "wrong" if s in wrong else "ok"]
            for q, s, c in _CLAIMS
        ],
    )
    b = write_csv(
        tmp_path / "b.csv",
        ["question_id", "sentence_id", "claim", "verdict"],
        [[q, s, b_text.get(s, c), verdict[s]] for q, s, c in _CLAIMS],
    )
    ids = ["--option", "ids=claim"]
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(a), "-o", str(tmp_path / "a.jsonl"), "--system", "A"),
            *ids,
            *("--labels-out", str(tmp_path / "l.jsonl")),
            *("--label-rule", "label in {wrong} -> error"),
        ],
        capsys,
    )
    assert code == 0, err
    code, _, err = run_cli(
        ["ingest", "generic", str(b), "-o", str(tmp_path / "b.jsonl"), "--system", "B", *ids],
        capsys,
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "a.jsonl")),
            *("--traces", str(tmp_path / "b.jsonl"), "--labels", str(tmp_path / "l.jsonl")),
            *("-m", "refuted", "--level", "claim", "--format", "csv"),
        ],
        capsys,
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"A": (2, 0, 0, 2), "B": (2, 0, 0, 2)}


#: s2 and s4 refuted by the system; the clinicians mark s2 alone. By hand, -m refuted: TP 1
#: (s2), FP 1 (s4), FN 0, TN 2 (s1, s3). Verdicts read the other way round (s1, s3 refuted):
#: TP 0, FP 2, FN 1, TN 1; labels read the other way round (s1, s3, s4 errors): TP 1, FP 1,
#: FN 2, TN 0.
_FLAGGED = {"s2", "s4"}
_RIGHT = {"A": (1, 1, 0, 2)}


def _labels(folder: Path, column: str = "has_error") -> Path:
    return write_csv(
        folder / "labels.csv",
        ["question_id", "sentence_id", column],
        [[q, s, "true" if s == "s2" else "false"] for q, s, _ in _CLAIMS],
    )


def _metrics(
    folder: Path, traces: Path, labels: Path, mapping: str, capsys: pytest.CaptureFixture[str]
) -> dict[str, tuple[int, int, int, int]]:
    code, out, err = run_cli(
        [
            "metrics",
            "--traces",
            str(traces),
            "--labels",
            str(labels),
            "-m",
            mapping,
            "--format",
            "csv",
        ],
        capsys,
    )
    assert code == 0, err
    return metrics_counts(out, mapping)


@pytest.mark.parametrize(
    "column", ["is_untrue", "inconsistent", "ungrounded", "unverified", "invalid", "not_factual"]
)
def test_a_true_false_verdict_column_named_as_an_error_in_un_or_not_words_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    # true on s2 and s4 (the flagged claims). main read true as supported (the default
    # aliases), with a generic note only: TP 0, FP 2, FN 1, TN 1 for TP 1, FP 1, TN 2, exit 0
    # (as is_hallucination was, before it was refused).
    table = write_csv(
        tmp_path / "t.csv",
        ["question_id", "sentence_id", "claim", column],
        [[q, s, c, "true" if s in _FLAGGED else "false"] for q, s, c in _CLAIMS],
    )
    out = tmp_path / "t.jsonl"
    args = [
        "ingest",
        "generic",
        str(table),
        "-o",
        str(out),
        "--system",
        "A",
        "--map",
        f"{column}=verdict",
    ]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and not out.exists()
    assert "its name says true marks an error" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli([*args, "--alias", "true=refuted", "--alias", "false=supported"], capsys)
    assert code == 0, err
    assert _metrics(tmp_path, out, _labels(tmp_path), "refuted", capsys) == _RIGHT


@pytest.mark.parametrize(
    "column", ["nonfactual_prob", "inconsistency_score", "risk_score", "nli_contra"]
)
def test_a_score_column_named_as_an_error_is_not_read_as_support(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    # 0.9 on s2 and s4, 0.1 on s1 and s3. main read the scores as support (s2, s4 supported,
    # s1, s3 no_evidence): -m non_supported TP 0, FP 2, FN 1, TN 1 for TP 1, FP 1, TN 2, exit 0.
    table = write_csv(
        tmp_path / "t.csv",
        ["question_id", "sentence_id", "claim", column],
        [[q, s, c, "0.9" if s in _FLAGGED else "0.1"] for q, s, c in _CLAIMS],
    )
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--system", "A"]
    args += ["--map", f"{column}=verdict", "--option", "verdict_threshold=0.5"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and not out.exists()
    assert "--option score_means=error" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli([*args, "--option", "score_means=error"], capsys)
    assert code == 0, err
    assert _metrics(tmp_path, out, _labels(tmp_path), "non_supported", capsys) == _RIGHT


@pytest.mark.parametrize("column", ["is_nonfactual", "untrue", "inconsistent", "invalid"])
def test_has_error_named_as_an_error_in_un_or_non_words_is_read_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    # true on s2 alone (the clinicians' error). main refused `--map COLUMN=has_error` as a
    # column whose true "means correct" and named --label-rule 'COLUMN = false -> error',
    # which reads s1, s3, s4 as errors: TP 1, FP 1, FN 2, TN 0 for TP 1, FP 1, TN 2.
    traces = write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "verdict"],
        [["A", q, s, s, c, "refuted" if s in _FLAGGED else "supported"] for q, s, c in _CLAIMS],
    )
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            *("ingest", "generic-labels", str(_labels(tmp_path, column))),
            *("-o", str(out), "--map", f"{column}=has_error"),
        ],
        capsys,
    )
    assert code == 0, err
    assert _metrics(tmp_path, traces, out, "refuted", capsys) == _RIGHT


def test_a_blank_passage_text_is_no_passage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each claim's retrieved list holds one real passage and one blank ('' or spaces: a
    # retriever's empty hit, a list padded to k). By hand: 4 passages, one per claim. main
    # kept the blanks as passages: 8, and `judge retrieval --dry-run` counted 8 rows to judge.
    table = write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim", "verdict", "ctx"],
        [
            [
                "A",
                q,
                s,
                c,
                "supported",
                json.dumps([f"Trial text on {s}.", "" if s < "s3" else "  "]),
            ]
            for q, s, c in _CLAIMS
        ],
    )
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--map", "ctx=passages"], capsys
    )
    assert code == 0, err
    kept = [[p["text"] for p in json.loads(x)["passages"]] for x in out.read_text().splitlines()]
    assert kept == [[f"Trial text on {s}."] for _, s, _ in _CLAIMS]
    # the trace format read directly: a passage whose text is spaces alone
    own = tmp_path / "own.jsonl"
    own.write_text(
        json.dumps(
            {
                "system": "A",
                "question_id": "q1",
                "sentence_id": "s1",
                "claim_id": "c1",
                "claim": "Aspirin cures cancer.",
                "verdict": "refuted",
                "passages": [
                    {"passage_id": "p1", "rank": 1, "text": "A trial of aspirin in cancer."},
                    {"passage_id": "p2", "rank": 2, "text": "   "},
                ],
            }
        )
        + "\n"
    )
    code, said, err = run_cli(
        ["judge", "retrieval", "--from", str(own), "--judge", "offline", "--dry-run"], capsys
    )
    assert code == 0, err
    assert "1 (trace, passage) rows" in said + err  # main: 2
