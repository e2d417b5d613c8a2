"""Outside red-team, session 12 (t12red1): shapes the other tests do not use.

Each test holds the value computed by hand beside its assertion, or the one-line refusal.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

#: One row per claim (= sentence), one verdict column per system (a wide table), verdicts
#: spelt as pipelines write them: trailing spaces, capitals, 'Not enough info', 'NEI', and
#: llama's numeric codes (1 supported, 0 refuted; an empty cell: no verdict, dropped).
_WIDE = """question_id,sentence_id,claim,gpt,claude,llama,gold
q1,s1,Aspirin lowers fever,Supported ,supported,1,correct
q1,s2,Aspirin cures cancer,REFUTED,Not enough info,0,wrong
q2,s3,Statins lower LDL, supported,NEI,1,correct
q2,s4,Vitamin C cures colds,Not Enough Info,refuted,0,wrong
q3,s5,Metformin for T2D,supported,Supported,,correct
q3,s6,Antibiotics treat viruses,supported,REFUTED ,0,wrong
"""

_DATASET = """
[[datasets]]
name = "{name}"
[[datasets.ingest]]
adapter = "generic"
paths = ["{file}"]
verdict_column = ["gpt", "claude", "llama"]
label_rule = "gold = wrong -> error"
alias = ["1=supported", "0=refuted"]
option = ["no_verdict=drop"]
labels = true
[[datasets.pipelines]]
system = "*"
evidence = "none"
"""

_TAIL = """
[metrics]
mappings = ["refuted", "non_supported"]
bootstrap = 0

[disagreements]
mapping = "non_supported"

[judge]
judge = "offline"

[review]
labelstudio = false
"""


def _wide_study(root: Path, datasets: dict[str, str]) -> Path:
    """A closed-book study of the wide table; ``datasets``: name -> the table's rows kept."""
    from failcodes.codebook import bundled_dir

    root.mkdir()
    body = 'name = "wide"\ncodebook = "medical-fact-check.v1.yaml"\n'
    header, *rows = _WIDE.splitlines()
    for name, keep in datasets.items():
        kept = [r for r in rows if r.split(",")[1] in keep.split()]
        (root / f"{name}.csv").write_text("\n".join([header, *kept]) + "\n")
        body += _DATASET.format(name=name, file=f"{name}.csv")
    (root / "failcodes.toml").write_text(body + _TAIL)
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


# ---------------------------------------------------------------------------------------
# report: which error mapping the attributed disagreements are under; overlapping data sets
# ---------------------------------------------------------------------------------------
def test_attribution_names_its_mapping_and_data_sets_that_overlap(tmp_path: Path) -> None:
    import failcodes

    # 'full' holds every row, 'pilot' the rows of q1 and q2 (s1-s4): pilot overlaps full.
    study = _wide_study(tmp_path / "st", {"full": "s1 s2 s3 s4 s5 s6", "pilot": "s1 s2 s3 s4"})
    failcodes.run_study(study)
    # Errors (gold wrong): s2, s4, s6. Under non_supported (flag = not supported):
    #   gpt    flags s2 (REFUTED), s4 (Not Enough Info)          -> full: FN s6      = 1
    #   claude flags s2, s3 (NEI), s4, s6                        -> full: FP s3      = 1
    #   llama  flags s2, s4, s6 (0 = refuted); s5 has no claim   -> 0
    #   pilot (s1-s4): gpt 0, claude FP s3 = 1, llama 0
    # all = 1 + 1 + 1 = 3 rows summed, of which claude's FP s3 is the same disagreement twice.
    table = (study / "report" / "tables" / "attribution.md").read_text().splitlines()
    rows = {line.split("|")[1].strip(): line for line in table if line.startswith("| ")}
    assert rows["full/gpt"].endswith("| 1 |") and rows["full/claude"].endswith("| 1 |")
    assert rows["pilot/claude"].endswith("| 1 |") and rows["all"].endswith("| 3 |")
    caption = table[0]
    # the metrics tables show refuted and non_supported; these disagreements are one mapping's
    # (refuted would give gpt FN s4, FN s6 and claude FN s2: other rows)
    assert "error mapping non_supported (sentence level)" in caption
    assert (
        "1 disagreement(s) have the system, ids and text of one in another data set (overlapping "
        "data sets?): the all row counts each once per data set"
    ) in caption
    page = (study / "report" / "index.html").read_text()
    assert "dominant subcodes; error mapping non_supported (sentence level)" in page


# ---------------------------------------------------------------------------------------
# ingest: a label rule's implied opposite given to R's missing mark 'NA'
# ---------------------------------------------------------------------------------------
def test_a_missing_mark_is_no_value_under_a_rule_with_an_implied_opposite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli_helpers import run_cli

    # R's write.csv writes a missing gold as NA; the same frame as Parquet holds a null, which
    # is refused ("no value ... add 'otherwise -> skip'"). Read as a value, NA got no_error:
    # s3 a true negative it was never labelled as (2 error / 2 no-error, exit 0).
    table = tmp_path / "t.csv"
    table.write_text(
        "question_id,sentence_id,claim,verdict,gold\n"
        "q1,s1,a,supported,ok\nq1,s2,b,refuted,bad\nq2,s3,c,supported,NA\nq2,s4,d,refuted,bad\n"
    )
    out = [str(tmp_path / "t.jsonl"), "--labels-out", str(tmp_path / "l.jsonl")]
    base = ["ingest", "generic", str(table), "-o", *out, "--system", "A"]
    code, _, err = run_cli([*base, "--label-rule", "gold = bad -> error"], capsys)
    assert code == 2
    # the header is line 1, s3 line 4
    assert f"{table}:4, field 'gold': no value ('NA', a missing mark), and" in err
    assert not (tmp_path / "l.jsonl").exists()
    # 'otherwise -> skip' leaves it unlabelled: s1 no error, s2 and s4 errors, s3 skipped
    rule = "gold = bad -> error; gold = ok -> no_error; otherwise -> skip"
    code, _, err = run_cli([*base, "--label-rule", rule], capsys)
    assert code == 0
    assert "2 error / 1 no-error sentence labels, 1 row(s) skipped" in err
    # a rule naming NA reads it as that value: s3 no error -> 2 error / 2 no-error
    code, _, err = run_cli(
        [*base, "--label-rule", "gold in {bad} -> error; gold in {ok, NA} -> no_error"], capsys
    )
    assert code == 0
    assert "2 error / 2 no-error sentence labels" in err


# ---------------------------------------------------------------------------------------
# report: a study input edited after `failcodes run`, then `failcodes report` alone
# ---------------------------------------------------------------------------------------
def test_report_says_when_the_study_changed_since_its_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import failcodes
    from tests.cli_helpers import run_cli

    study = _wide_study(tmp_path / "st", {"w": "s1 s2 s3 s4 s5 s6"})
    failcodes.run_study(study)
    capsys.readouterr()  # the run says its NEI / Not Enough Info read as no_evidence
    code, _, err = run_cli(["report", str(study)], capsys)
    assert code == 0 and err == ""  # up to date: nothing to say
    # a clinician corrects s1 (gold wrong): the labels now hold 4 errors, the metrics file
    # (TP/FN of 3 errors) and the report built from it do not
    table = study / "w.csv"
    table.write_text(
        table.read_text().replace(
            "Aspirin lowers fever,Supported ,supported,1,correct",
            "Aspirin lowers fever,Supported ,supported,1,wrong",
        )
    )
    code, _, err = run_cli(["report", str(study)], capsys)
    assert code == 0
    first = err.splitlines()[0]
    assert first.startswith("the study changed since `failcodes run` ran these steps: ingest w")
    # metrics w, disagreements w and attribute w read ingest's outputs, unchanged as yet
    assert "this report shows the outputs of that run" in first
    page = " ".join((study / "report" / "index.html").read_text().split())
    assert "the study changed since `failcodes run` ran these steps: ingest w" in page
    failcodes.run_study(study)  # up to date again
    capsys.readouterr()
    code, _, err = run_cli(["report", str(study)], capsys)
    assert code == 0 and err == ""


# ---------------------------------------------------------------------------------------
# ingest: a wide table with one reasoning (or passage) column per system
# ---------------------------------------------------------------------------------------
def test_a_column_of_one_system_is_not_given_to_every_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli_helpers import run_cli

    # gpt's and claude's verdicts, each with its own reasoning and passage column
    table = tmp_path / "w.csv"
    table.write_text(
        "question_id,sentence_id,claim,gpt,claude,gpt_reasoning,claude_reasoning,gpt-4o doc\n"
        "q1,s1,A lowers B,supported,refuted,GPT: a trial shows it,Claude: no trial,p1\n"
        "q1,s2,C cures D,refuted,supported,GPT: no,Claude: yes,p2\n"
    )
    base = ["ingest", "generic", str(table), "-o", str(tmp_path / "t.jsonl")]
    wide = ["--verdict-column", "gpt", "--verdict-column", "claude", "--map", "gpt-4o doc="]
    # --map gpt_reasoning=reasoning: claude's two traces held GPT's reasoning ('GPT: no' for
    # claude's 'supported'), which `judge reasoning` coded as claude's (exit 0)
    args = [*base, *wide, "--map", "gpt_reasoning=reasoning", "--map", "claude_reasoning="]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert (
        "column 'gpt_reasoning' names system 'gpt', but --verdict-column gives every system's "
        "trace the same columns (claude's would hold it too)"
    ) in err
    assert not (tmp_path / "t.jsonl").exists()
    # the same with a passage column named after a system named by --verdict-column COL=SYSTEM
    wide2 = ["--verdict-column", "gpt=gpt-4o", "--verdict-column", "claude"]
    drop = ["--map", "gpt_reasoning=", "--map", "claude_reasoning="]
    code, _, err = run_cli([*base, *wide2, *drop, "--passage-column", "gpt-4o doc"], capsys)
    assert code == 2
    assert "column 'gpt-4o doc' names system 'gpt-4o'" in err
    # one system's columns alone: its traces hold its reasoning (2 traces, GPT's reasoning)
    one = ["--verdict-column", "gpt", "--map", "claude=", "--map", "gpt-4o doc="]
    code, out, err = run_cli([*base, *one, "--map", "gpt_reasoning=reasoning", *drop[2:]], capsys)
    assert code == 0, err
    assert "wrote 2 traces" in out + err


# ---------------------------------------------------------------------------------------
# report: the codebook table's Freq. column over data sets that share units
# ---------------------------------------------------------------------------------------
_RETRIEVED = """
[[datasets]]
name = "{name}"
[[datasets.ingest]]
adapter = "generic"
paths = ["{name}.jsonl"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["{name}.labels.jsonl"]
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"
"""


def test_codebook_frequencies_say_what_they_count(tmp_path: Path) -> None:
    import json

    import failcodes
    from failcodes.codebook import bundled_dir

    root = tmp_path / "st"
    root.mkdir()
    # A and B, one claim per sentence, one passage each; errors s2, s4, s6; A refutes s2
    # only, B refutes s2 and has no trace of q3. full = q1-q3, pilot = q1-q2.
    verdicts = {"s1": "supported", "s2": "refuted", "s3": "supported", "s4": "supported"}
    verdicts |= {"s5": "supported", "s6": "supported"}
    errors = {"s2", "s4", "s6"}
    body = 'name = "ret"\ncodebook = "medical-fact-check.v1.yaml"\n'
    for name, sids in (("full", "s1 s2 s3 s4 s5 s6"), ("pilot", "s1 s2 s3 s4")):
        rows, labels = [], []
        for k, sid in enumerate(sids.split()):
            qid = f"q{k // 2 + 1}"
            labels.append({"question_id": qid, "sentence_id": sid, "has_error": sid in errors})
            for system in ("A", "B"):
                if system == "B" and qid == "q3":
                    continue
                passage = {"passage_id": f"p{sid}", "rank": 1, "text": f"A trial of drug {sid}."}
                rows.append(
                    {
                        "system": system,
                        "question_id": qid,
                        "sentence_id": sid,
                        "claim_id": sid,
                        "claim": f"drug {sid} works",
                        "verdict": verdicts[sid],
                        "retriever": "bm25",
                        "verifier": "gpt",
                        "passages": [passage],
                    }
                )
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (root / f"{name}.labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
        body += _RETRIEVED.format(name=name)
    (root / "failcodes.toml").write_text(
        body
        + '[metrics]\nbootstrap = 0\n[judge]\njudge = "offline"\n[review]\nlabelstudio = false\n'
    )
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    failcodes.run_study(root)
    # Disagreements (refuted): full A FN s4, FN s6; full B FN s4, FN s6 (no claim: no passage);
    # pilot A FN s4, B FN s4. Table 8 rows (claim x passage): full 3 (A s4, A s6, B s4),
    # pilot 2 (A s4, B s4): 5 rows; distinct (claim, passage) units: ps4, ps6 = 2. Table 8
    # counts each unit of a retriever once within a data set (session 25): full 2 (ps4,
    # ps6), pilot 1 (ps4); the data sets hold different sentences, so each its own column.
    quality = (root / "report" / "tables" / "retrieval_quality.md").read_text()
    assert "full/bm25 (n=2)" in quality and "pilot/bm25 (n=1)" in quality
    codebook = (root / "report" / "tables" / "codebook.md").read_text().splitlines()
    # every unit of Table 8 has one entity-match code: the four codes' Freq. add up to 2 + 1
    entity = [line.split("|")[6].strip() for line in codebook if "| Entity match |" in line]
    assert sum(int(v) for v in entity if v != "–") == 3
    assert (
        "Freq.: the rows of Tables 8-9 coded with the subcode, summed over data sets as those "
        "tables count them (a (claim, passage) unit once per retriever and data set, a trace "
        "once per system)"
    ) in codebook[0]


# ---------------------------------------------------------------------------------------
# ingest: support scores of two verifiers on two scales, one threshold
# ---------------------------------------------------------------------------------------
def test_score_threshold_note_is_per_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli_helpers import run_cli

    # minicheck scores 0-1, align 0-100 (a percentage): at 0.5 every align claim is
    # supported (recall 0 under non_supported). The pooled note read "6 of 8 ... from 0.2 to
    # 95" and never said that one system's scores all fell on one side. (Session 31: such
    # percentages at a threshold of at most 1 are refused, naming align; the per-system note
    # is kept for scales that may go below 0, align's logits here.)
    table = tmp_path / "sc.csv"
    table.write_text(
        "question_id,sentence_id,claim,minicheck,align\n"
        "q1,s1,a,0.9,95\nq1,s2,b,0.2,20\nq2,s3,c,0.7,80\nq2,s4,d,0.4,30\n"
    )
    args = ["ingest", "generic", str(table), "-o", str(tmp_path / "t.jsonl")]
    args += ["--verdict-column", "minicheck", "--verdict-column", "align"]
    code, _, err = run_cli([*args, "--option", "verdict_threshold=0.5"], capsys)
    assert code == 2
    assert "sc.csv:2, field 'verdict': system 'align': scores from 20 to 95, past 1" in err
    table.write_text(
        "question_id,sentence_id,claim,minicheck,align\n"
        "q1,s1,a,0.9,4.5\nq1,s2,b,0.2,-2\nq2,s3,c,0.7,3\nq2,s4,d,0.4,1.5\n"
    )
    code, _, err = run_cli([*args, "--option", "verdict_threshold=0.5"], capsys)
    assert code == 0
    # minicheck: 0.9 and 0.7 at or above 0.5 (2 of 4); align: 4.5, 3, 1.5 (3 of 4)
    assert "5 of 8 scores at or above it (supported), 3 below (no_evidence)" in err
    assert (
        "per system: align 3 of 4 at or above (from -2 to 4.5); minicheck 2 of 4 at or above "
        "(from 0.2 to 0.9)"
    ) in err
