"""Session 29 (t29tidy): small honest fixes to messages and captions left by t29tab/red/att."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_csv
from tests.test_s29_t29tab import PART_SET

REPO = Path(__file__).resolve().parents[1]


_HEADER = ["system", "question_id", "sentence_id", "claim", "verdict"]
_ROWS = [
    ["gpt-4o", "q1", "q1:s1", "Aspirin lowers fever.", "supported"],
    ["gpt-4o", "q1", "q1:s2", "Aspirin cures cancer.", "refuted"],
]


def test_a_system_name_with_a_cyrillic_letter_names_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'gpt-4\u043e' ends in U+043E CYRILLIC SMALL LETTER O: the refusal said "(case, spacing
    # or Unicode form)", none of which tells the two names apart (they show alike).
    rows = [*_ROWS, ["gpt-4\u043e", "q2", "q2:s1", "Ibuprofen is an NSAID.", "supported"]]
    table = write_csv(tmp_path / "t.csv", _HEADER, rows)
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert (
        "written another way (a character that looks like another: U+043E CYRILLIC SMALL "
        "LETTER O): it would be scored as a system of its own" in err
    )
    assert len(err.strip().splitlines()) == 1


def test_two_trace_files_naming_a_system_with_a_cyrillic_letter_name_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One system, gpt-4o, in two ingested files, the second spelling it with U+043E: metrics
    # over both refused it "(case, spacing or Unicode form)".
    outs = []
    for i, system in enumerate(["gpt-4o", "gpt-4\u043e"]):
        table = write_csv(tmp_path / f"t{i}.csv", _HEADER, [[system, *_ROWS[i][1:]]])
        outs.append(tmp_path / f"t{i}.jsonl")
        code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(outs[-1])], capsys)
        assert code == 0, err
    labels = write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "false"], ["q1", "q1:s2", "true"]],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(outs[0]), "--traces", str(outs[1]), "--labels",
         str(labels), "-m", "refuted", "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert (code, stdout) == (2, "")
    assert "(a character that looks like another: U+043E CYRILLIC SMALL LETTER O)" in err


def test_a_label_id_with_a_cyrillic_letter_names_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'q1:\u04552': U+0455 CYRILLIC SMALL LETTER DZE drawn as s; the refusal gave the code
    # point alone ("U+0455"), now its name too.
    table = write_csv(tmp_path / "t.csv", _HEADER, _ROWS)
    out = tmp_path / "t.jsonl"
    assert run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)[0] == 0
    labels = write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "false"], ["q1", "q1:\u04552", "true"]],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"], capsys
    )
    assert (code, stdout) == (2, "")
    assert "U+0455 CYRILLIC SMALL LETTER DZE" in err


@pytest.mark.parametrize("index", ["__index_level_0__", "Unnamed: 0"])
def test_ingest_generic_names_pandas_row_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index: str
) -> None:
    # pandas' to_parquet of a frame with a non-default index writes '__index_level_0__';
    # read_csv of a to_csv file keeps the index as 'Unnamed: 0'. ingest generic refused it
    # as an unknown column naming --map alone (metrics names to_parquet(index=False)).
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    columns = {name: [r[i] for r in _ROWS] for i, name in enumerate(_HEADER)}
    columns[index] = ["7", "9"]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table(columns), path)
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(path), "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert f"field '{index}': unknown column" in err
    assert "index=False" in err and "pandas' row index" in err
    assert len(err.strip().splitlines()) == 1


def test_bench_study_help_shows_generate() -> None:
    # docs/benchmarks.md and the briefs tell people to run bench_study.py --generate DIR; its
    # --help left it out (argparse.SUPPRESS).
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_study.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--generate DIR" in done.stdout


def _page(root: Path) -> str:
    import html
    import re

    text = (root / "report" / "index.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text)))


#: One data set, system A (retriever r1): q1s1 (an error) has two claims, both supported (A
#: misses it); q1s2 (no error) one claim, supported. Sentence labels from the 'gold' column.
CLAIM_SET = """
[[datasets]]
name = "d1"
[[datasets.ingest]]
adapter = "generic"
paths = ["d1.csv"]
labels = true
passage_column = ["passage=wiki"]
label_rule = "gold = incorrect -> error"
option = ["label_level=sentence"]
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"
"""
CLAIM_ROWS = (
    "question_id,sentence_id,claim_id,claim,verdict,system,retriever,reasoning,passage,gold\n"
    "q1,q1s1,q1s1c1,claim one,supported,A,r1,because a1,Passage one.,incorrect\n"
    "q1,q1s1,q1s1c2,claim two,supported,A,r1,because a2,Passage two.,incorrect\n"
    "q1,q1s2,q1s2c1,claim three,supported,A,r1,because a3,Passage three.,correct\n"
)


@pytest.mark.parametrize("level", ["sentence", "claim"])
def test_table_8_9_captions_say_what_n_counts_at_each_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], level: str
) -> None:
    """By hand, under 'refuted': sentence level, 1 disagreement (q1s1, FN) with 2 claims, so
    Table 9 A n=2 beside an attribution summary of 1 (the caption's "n can exceed"); claim
    level, each of q1s1's claims is a disagreement (labelled by its sentence): 2 in the
    summary, Table 9 A n=2, equal. The claim-level caption said "every claim of a
    sentence-level disagreement counts ... n can exceed the attribution summary's count".
    """
    from tests.cli_helpers import small_study

    study = small_study(
        tmp_path, capsys, "tidy", CLAIM_SET, judge='kinds = ["retrieval", "reasoning"]'
    )
    text = study.read_text(encoding="utf-8")
    study.write_text(text.replace("bootstrap = 0\n", f'bootstrap = 0\nlevel = "{level}"\n'))
    (tmp_path / "d1.csv").write_text(CLAIM_ROWS, encoding="utf-8")
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    tables = tmp_path / "report" / "tables"
    summary = (tables / "attribution.md").read_text(encoding="utf-8")
    n_att = 1 if level == "sentence" else 2
    assert f"| A | {n_att} | {n_att} |" in summary
    steps = (tables / "reasoning_steps.md").read_text(encoding="utf-8")
    assert "| A (n=2) |" in steps
    page = _page(tmp_path)
    sentence_words = "so n can exceed the attribution summary's count"
    claim_words = (
        "n: the disagreements' claims, one per claim and system (claim level: each "
        "disagreement is one claim, so n is the attribution summary's count less any claim "
        "with no reasoning coded"
    )
    if level == "sentence":
        assert sentence_words in page and claim_words not in page
    else:
        assert claim_words in page and "sentence-level disagreement" not in page
        assert (
            "units retrieved for the disagreements' claims (claim level: each disagreement is "
            "one claim)" in page
        )


#: A (r1) has claims for q1s1 and q1s2; F (r3) for q1s2 only. Labels: q1s1 error, q1s2 not.
CLAIMLESS_SET = PART_SET  # d1.csv's traces, l.jsonl's labels


def test_a_system_whose_disagreements_are_all_claimless_is_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """By hand, under 'refuted': A misses q1s1 (supported: FN, retrieval or verification);
    F made no claim for q1s1 (FN, attributed undetermined: no claims) and q1s2 is TN. Table 8
    has r1 only: F has no claim behind its disagreement, so "its claims retrieved none" (the
    note t29tab added) read as if it had claims.
    """
    from tests.cli_helpers import small_study

    small_study(tmp_path, capsys, "tidy", CLAIMLESS_SET, judge='kinds = ["retrieval", "reasoning"]')
    (tmp_path / "d1.csv").write_text(
        "question_id,sentence_id,claim,verdict,system,retriever,reasoning,passage\n"
        "q1,q1s1,claim one,supported,A,r1,because a1,Passage one.\n"
        "q1,q1s2,claim two,supported,A,r1,because a2,Passage two.\n"
        "q1,q1s2,claim two,supported,F,r3,because f2,Passage two.\n",
        encoding="utf-8",
    )
    (tmp_path / "l.jsonl").write_text(
        '{"question_id": "q1", "sentence_id": "q1s1", "has_error": true}\n'
        '{"question_id": "q1", "sentence_id": "q1s2", "has_error": false}\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    tables = tmp_path / "report" / "tables"
    summary = (tables / "attribution.md").read_text(encoding="utf-8")
    assert "| F |" in summary and "undetermined" in summary
    assert "| dimension | code | r1 (n=1) |\n" in (tables / "retrieval_quality.md").read_text(
        encoding="utf-8"
    )
    page = _page(tmp_path)
    assert (
        "d1: no disagreement of F has a claim (each is a sentence it made no claim for: "
        "undetermined): Table 8 counts no unit of it, and a retriever no other system uses "
        "has no column there"
    ) in page
    assert "no disagreement of F has a passage coded" not in page


def test_docs_name_both_summary_row_labels() -> None:
    # Table 8's summary row reads 'All assessable dimensions high quality' when a dimension was
    # coded not_assessable (report.tables.summary_row); docs/study.md named only 'All
    # dimensions high quality'.
    from failcodes.report.tables import summary_row

    doc = (REPO / "docs" / "study.md").read_text(encoding="utf-8")
    flat = " ".join(doc.split())
    for flag in ("all_high", "all_correct"):
        for partial in (False, True):
            assert f"`{summary_row(flag, partial=partial)[1]}`" in flat


def test_a_labels_system_with_a_cyrillic_letter_names_the_character_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Labels of system 'gpt-4\u043e' (U+043E) beside traces of 'gpt-4o': the refusal said
    # "(U+043E: a zero-width or fullwidth character, another dash)", kinds none of which a
    # Cyrillic letter is; it names the character now, and nothing else.
    table = write_csv(tmp_path / "t.csv", _HEADER, _ROWS)
    out = tmp_path / "t.jsonl"
    assert run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)[0] == 0
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"system": "gpt-4\u043e", "question_id": "q1", "sentence_id": "q1:s1", '
        '"has_error": false}\n'
        '{"system": "gpt-4\u043e", "question_id": "q1", "sentence_id": "q1:s2", '
        '"has_error": true}\n',
        encoding="utf-8",
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted"], capsys
    )
    assert (code, stdout) == (2, "")
    assert (
        "is written with a character that looks like nothing or like another (U+043E "
        "CYRILLIC SMALL LETTER O) than the traces' 'gpt-4o'" in err
    )
