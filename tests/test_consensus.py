"""Several clinicians' labels of one sentence made one reference label (majority, any, all).

Every expected value is counted by hand from the votes written next to it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.consensus import Rule, Ties, combine
from failcodes.errors import InputError
from failcodes.labels import Label
from tests.cli_helpers import run_cli

P = Path("labels.csv")
# sentence: votes of dr_a, dr_b, dr_c (True = error)
VOTES = {
    "s1": (True, True, True),  # unanimous error
    "s2": (True, True, False),  # 2 of 3
    "s3": (True, False, False),  # 1 of 3
    "s4": (False, False, False),  # unanimous no error
}


def _located(votes: dict[str, tuple[bool, ...]]) -> list[tuple[Label, Path, int]]:
    out = []
    line = 2
    for sid, marks in votes.items():
        for who, mark in zip(("dr_a", "dr_b", "dr_c", "dr_d"), marks, strict=False):
            label = Label(
                sentence_id=sid, has_error=mark, annotator=who, rationale=f"{who} on {sid}"
            )
            out.append((label, P, line))
            line += 1
    return out


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (Rule.MAJORITY, {"s1": True, "s2": True, "s3": False, "s4": False}),
        (Rule.ANY, {"s1": True, "s2": True, "s3": True, "s4": False}),
        (Rule.ALL, {"s1": True, "s2": False, "s3": False, "s4": False}),
    ],
)
def test_rules(rule: Rule, expected: dict[str, bool]) -> None:
    labels, summary = combine(_located(VOTES), rule)
    assert {lb.sentence_id: lb.has_error for lb in labels} == expected
    assert (summary.targets, summary.annotators, summary.unanimous, summary.split) == (4, 3, 2, 2)
    s2 = labels[1]
    assert s2.annotator == f"{rule.value} of 3: dr_a, dr_b, dr_c"
    # the rationales of those who voted with the outcome
    if rule is Rule.MAJORITY:
        assert s2.rationale == "dr_a on s2 | dr_b on s2"


def test_majority_ties() -> None:
    votes = {"s1": (True, False), "s2": (True, True), "s3": (False, True)}
    with pytest.raises(InputError) as info:
        combine(_located(votes), Rule.MAJORITY)
    # two ties; the first is s1, whose second vote is on line 3
    assert "2 target(s) tie under the majority rule (first: sentence 's1', 1 error / 1 no " in str(
        info.value
    )
    assert (info.value.path, info.value.line) == (str(P), 3)
    labels, summary = combine(_located(votes), Rule.MAJORITY, Ties.SKIP)
    assert [lb.sentence_id for lb in labels] == ["s2"] and summary.skipped == 2
    labels, _ = combine(_located(votes), Rule.MAJORITY, Ties.ERROR)
    assert [lb.has_error for lb in labels] == [True, True, True]
    labels, _ = combine(_located(votes), Rule.MAJORITY, Ties.NO_ERROR)
    assert [lb.has_error for lb in labels] == [False, True, False]


def test_one_vote_per_annotator() -> None:
    again = (Label(sentence_id="s1", has_error=False, annotator="dr_a"), P, 9)
    twice = [*_located({"s1": (True,)}), again]
    with pytest.raises(InputError) as info:
        combine(twice, Rule.ANY)
    assert "annotator 'dr_a' labels sentence 's1' twice (first at line 2)" in str(info.value)
    assert info.value.line == 9


CSV = "sentence_id,clinician,verdict\n" + "".join(
    f"{sid},{who},{'incorrect' if mark else 'correct'}\n"
    for sid, marks in VOTES.items()
    for who, mark in zip(("dr_a", "dr_b", "dr_c"), marks, strict=True)
)
TRACES = "".join(
    json.dumps(
        {"system": "rag", "question_id": "q", "sentence_id": sid, "claim_id": sid, "claim": sid,
         "verdict": verdict}
    ) + "\n"
    for sid, verdict in (
        ("s1", "refuted"), ("s2", "supported"), ("s3", "refuted"), ("s4", "supported")
    )
)  # fmt: skip


def test_cli_three_clinicians_to_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "c.csv").write_text(CSV)
    (tmp_path / "t.jsonl").write_text(TRACES)
    base = ["ingest", "generic-labels", str(tmp_path / "c.csv"), "--map", "clinician=annotator",
            "--label-rule", "verdict = incorrect -> error"]  # fmt: skip
    # three labels per sentence: metrics refuse them, naming the file, the line and the way out
    code, _, err = run_cli([*base, "-o", str(tmp_path / "all.jsonl")], capsys)
    assert code == 0, err
    code, _, err = run_cli(
        ["metrics", "--traces", str(tmp_path / "t.jsonl"), "--labels", str(tmp_path / "all.jsonl")],
        capsys,
    )
    assert code == 2 and "all.jsonl:2, field 'sentence_id': two labels for sentence 's1'" in err
    assert "--option consensus=majority" in err
    out = tmp_path / "majority.jsonl"
    code, _, err = run_cli([*base, "-o", str(out), "--option", "consensus=majority"], capsys)
    assert code == 0, err
    assert "consensus (majority) of 3 annotators over 4 targets: 2 unanimous, 2 split" in err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(tmp_path / "t.jsonl"), "--labels", str(out), "-m", "refuted",
         "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (row,) = json.loads(stdout)
    # majority: s1, s2 errors. refuted: s1 (TP), s3 (FP); s2 missed (FN); s4 TN
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 1, 1, 1)


def test_ties_needs_majority(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.csv").write_text(CSV)
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(tmp_path / "c.csv"), "-o", str(tmp_path / "o.jsonl"),
         "--map", "clinician=annotator", "--label-rule", "verdict = incorrect -> error",
         "--option", "consensus=any", "--option", "ties=skip"],
        capsys,
    )  # fmt: skip
    assert code == 2 and "give consensus=majority" in err
    assert not (tmp_path / "o.jsonl").exists()
