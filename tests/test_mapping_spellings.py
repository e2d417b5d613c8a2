"""Two spellings of one error mapping are refused, not reported twice (issue 30, i36map).

Before: ``-m refuted,no_evidence -m refuted+no_evidence`` gave every metrics row twice and
every compare test twice (each copy Holm-adjusted within its own set, exit 0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

from failcodes import labelio, traceio
from failcodes.errors import ConfigError, InputError
from failcodes.labels import Label
from failcodes.mapping import resolve_mappings
from failcodes.study.config import parse_study
from failcodes.traces import Trace
from failcodes.verdicts import Verdict
from tests.cli_helpers import run_cli

R, NE, S = Verdict.REFUTED, Verdict.NO_EVIDENCE, Verdict.SUPPORTED
#: One question, 12 sentences s0..s11: s0-s5 have an error, s6-s11 none.
VERDICTS = {
    "A": [R, R, R, R, R, NE, S, S, S, S, NE, R],
    "B": [R, NE, S, S, S, S, S, S, S, NE, S, S],
    "C": [NE, NE, NE, S, S, S, R, R, S, S, S, S],
}


def _files(tmp_path: Path) -> list[str]:
    traces = [
        Trace(
            system=system,
            question_id=f"q{i}",  # one sentence a question: compare's units are questions
            sentence_id=f"s{i}",
            claim_id=f"s{i}c",
            claim="c",
            verdict=v,
        )
        for system, verdicts in VERDICTS.items()
        for i, v in enumerate(verdicts)
    ]
    labels = [Label(question_id=f"q{i}", sentence_id=f"s{i}", has_error=i < 6) for i in range(12)]
    traceio.write_traces(tmp_path / "t.jsonl", traces)
    labelio.write_labels(tmp_path / "l.jsonl", labels)
    return ["--traces", str(tmp_path / "t.jsonl"), "--labels", str(tmp_path / "l.jsonl")]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("refuted,no_evidence", "refuted+no_evidence"),
        ("refuted+no_evidence", "conservative"),
        ("no_evidence, Refuted", "conservative"),
        ("strict", "out_of_scope,refuted,no_evidence"),
    ],
)
def test_two_spellings_of_one_mapping_are_refused(first: str, second: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_mappings(["refuted", first, second])
    assert f"mappings {first.strip()!r} and {second!r} are the same mapping" in str(err.value)


def test_one_spelling_twice_is_one_mapping() -> None:
    """The same name twice (or one verdict list in two orders) is one mapping, one set."""
    names = [m.name for m in resolve_mappings(["refuted,no_evidence", "no_evidence,refuted"])]
    assert names == ["no_evidence,refuted"]


@pytest.mark.parametrize("command", ["metrics", "compare", "disagreements"])
def test_cli_refuses_two_spellings_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out = tmp_path / ("d.jsonl" if command == "disagreements" else "o.json")
    args = [command, *_files(tmp_path), "-m", "refuted,no_evidence", "-m", "refuted+no_evidence"]
    code, stdout, err = run_cli([*args, "-o", str(out)] if command != "compare" else args, capsys)
    assert code == 2
    assert stdout == ""
    assert err.count("\n") == 1
    assert "'refuted,no_evidence' and 'refuted+no_evidence' are the same mapping" in err
    assert not out.exists()


def test_compare_holm_counts_each_pair_once_per_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """McNemar on the 6 error sentences under refuted+no_evidence, counted by hand.

    Hits: A s0-s5 (6), B s0-s1 (2), C s0-s2 (3). Discordant pairs: A vs B 4/0 -> mid-p
    (Fagerland et al. 2013: the exact two-sided 2 * 0.5**4 minus P(X = 0) = 1/16) 0.0625;
    A vs C 3/0 -> 0.25 - 1/8 = 0.125; B vs C 0/1 -> 1 - 1/2 = 0.5. Holm over these 3 pairs:
    0.1875, 0.25, 0.5 (statsmodels' multipletests below). Had the duplicate spelling been
    let through and pooled, 6 tests would give 0.375 for A vs B. (Each sentence its own
    question: were all in one, compare would take that question as its one unit, p 1.)
    """
    args = ["compare", *_files(tmp_path), "-m", "refuted+no_evidence", "-m", "refuted"]
    code, out, err = run_cli(
        [*args, "--resamples", "200", "--seed", "0", "--format", "json"], capsys
    )
    assert code == 0, err
    tests = json.loads(out)["tests"]
    assert [t["mapping"] for t in tests if t["test"] == "cochran_q"] == [
        "refuted+no_evidence",
        "refuted",
    ]
    mcnemar = [
        (t["comparison"], t["p_value"], t["p_holm"])
        for t in tests
        if t["mapping"] == "refuted+no_evidence" and t["test"].startswith("mcnemar")
    ]
    assert [(c, p) for c, p, _ in mcnemar] == [
        ("A vs B", pytest.approx(0.0625)),
        ("A vs C", pytest.approx(0.125)),
        ("B vs C", pytest.approx(0.5)),
    ]
    holm3 = multipletests([0.0625, 0.125, 0.5], method="holm")[1]
    assert list(holm3) == pytest.approx([0.1875, 0.25, 0.5])
    assert [h for _, _, h in mcnemar] == pytest.approx(list(holm3))
    holm6 = multipletests([0.0625, 0.125, 0.5] * 2, method="holm")[1]
    assert holm6[0] == pytest.approx(0.375)  # what a counted-twice family would have said


def test_study_file_refuses_two_spellings_naming_line_and_field() -> None:
    """A study's [metrics] mappings: refused when the file is read, not at the metrics step."""
    text = (
        'name = "s"\ncodebook = "c.yaml"\n\n'
        '[metrics]\nmappings = ["refuted", "refuted+no_evidence", "conservative"]\n'
    )
    with pytest.raises(InputError) as err:
        parse_study(text, Path("failcodes.toml"))
    assert err.value.one_line() == (
        "failcodes.toml:5, field 'metrics.mappings': mappings 'refuted+no_evidence' and "
        "'conservative' are the same mapping (errors: no_evidence, refuted); give it once"
    )
