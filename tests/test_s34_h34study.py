"""Session 34 (h34study): whole studies on designs the tests did not use, read by hand."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from failcodes.codebook import bundled_dir

SENTENCES = ["q1s1", "q1s2", "q2s1", "q2s2", "q3s1", "q3s2"]
#: the clinicians' errors (sentence labels) and what each system refutes (one claim a sentence)
ERRORS = {"q1s1", "q2s1"}
REFUTES = {"A": {"q1s1", "q2s2"}, "B": {"q1s2", "q3s1"}}
HEAD = 'name = "{name}"\ncodebook = "medical-fact-check.v1.yaml"\n\n'
TAIL = (
    '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n{metrics}\n[judge]\njudge = "offline"\n\n'
    "[review]\nlabelstudio = false\n"
)


def _rows(system: str, retriever: str, refutes: Iterable[str] | None = None) -> str:
    """One claim a sentence (its text the same for every system), two passages that repeat
    it (the offline baseline codes them all-high: each disagreement is verification)."""
    return "".join(
        json.dumps(
            {
                "question_id": s[:2],
                "sentence_id": s,
                "claim_id": f"{system}-{s}",
                "claim": f"drug {s} lowers blood pressure",
                "verdict": "refuted" if s in set(refutes or REFUTES[system]) else "supported",
                "reasoning": f"The passages about drug {s} decide it.",
                "retriever": retriever,
                "passages": [
                    {"passage_id": f"{s}-{k}", "rank": k, "text": f"Drug {s} trial {k} lowers it."}
                    for k in (1, 2)
                ],
            }
        )
        + "\n"
        for s in SENTENCES
    )


def _labels(errors: Iterable[str] = ERRORS) -> str:
    return "".join(
        json.dumps({"sentence_id": s, "question_id": s[:2], "has_error": s in set(errors)}) + "\n"
        for s in SENTENCES
    )


def _ingest(path: str, system: str | None = None, adapter: str = "generic") -> str:
    named = f'system = "{system}"\n' if system else ""
    return f'[[datasets.ingest]]\nadapter = "{adapter}"\npaths = ["{path}"]\n{named}\n'


def _study(root: Path, name: str, body: str, metrics: str = "") -> Path:
    text = HEAD.format(name=name) + body + TAIL.format(metrics=metrics)
    (root / "failcodes.toml").write_text(text)
    shutil.copy(bundled_dir() / "medical-fact-check.v1.yaml", root)
    return root


def test_the_codebooks_freq_names_the_data_sets_tables_8_9_pool_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Data sets dA (system A) and dB (system B) hold the same labels: one set of sentences
    split by system, which Tables 8-9 pool (a column per retriever over both). The codebook's
    Freq. caption said a unit counts "once per retriever and data set"; its count is once over
    the pooled data sets, as Table 8's n (h33study's split design).

    By hand: errors q1s1, q2s1. A refutes q1s1, q2s2: disagreements q2s1 (miss), q2s2 (false
    alarm), 2 claims x 2 passages = 4 units; B refutes q1s2, q3s1: q1s1, q2s1 (misses), q1s2,
    q3s1 (false alarms): 8 units. A's q2s1 passages are B's (same text): r1 n = 4 + 8 - 2 = 10,
    exact_entity Freq. 10; once per data set would read 4 + 8 = 12.
    """
    import failcodes
    from failcodes.report import figures

    drawn: list[str] = []
    flow = figures.attribution_flow

    def spy(*args: Any) -> Any:
        fig = flow(*args)
        drawn.append(fig.axes[1].get_xlabel())
        return fig

    monkeypatch.setattr(figures, "attribution_flow", spy)
    root = tmp_path / "split"
    root.mkdir()
    body = ""
    for ds, system in (("dA", "A"), ("dB", "B")):
        (root / f"{system}.jsonl").write_text(_rows(system, "r1"))
        body += f'[[datasets]]\nname = "{ds}"\n\n' + _ingest(f"{system}.jsonl", system)
        body += _ingest("labels.jsonl", adapter="generic-labels")
        body += '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
    (root / "labels.jsonl").write_text(_labels())
    failcodes.run_study(_study(root, "split", body), say=None)
    tables = root / "report" / "tables"
    table8 = (tables / "retrieval_quality.md").read_text()
    assert "| dimension | code | r1 (n=10) |" in table8
    assert "| Entity match | Exact entity | 100.0 |" in table8
    book = (tables / "codebook.md").read_text()
    caption = book.splitlines()[0]
    assert (
        "(a (claim, passage) unit once per retriever and data set, data sets dA + dB counted as "
        "one (they hold the same labels, a data set per system: Tables 8-9 pool them), a trace "
        "once per system)"
    ) in caption
    exact = next(line for line in book.splitlines() if "| exact_entity" in line)
    assert exact.split(" | ")[-2] == "10"
    # Figure 1's x label said the same words: now it names the pooled data sets too
    assert drawn == [
        "as Tables 8-9 count: retrieval a (claim, passage)\nunit once per retriever and data "
        "set\n(data sets dA + dB counted as one),\nverification a claim once per system"
    ]
    assert figures.flow_codes_unit([]) == figures.FLOW_CODES_UNIT


def _two_claims(root: Path, claim_labels: dict[str, bool] | None = None) -> Path:
    """2 claims a sentence (ids shared by A and B); errors q1s1, q2s1 labelled by sentence,
    ``claim_labels`` beside them. A refutes q1s1-c1; B refutes q1s2-c1."""
    root.mkdir()
    for system, refuted, retriever in (("A", "q1s1-c1", "r1"), ("B", "q1s2-c1", "r2")):
        rows = [
            {
                "question_id": s[:2],
                "sentence_id": s,
                "claim_id": f"{s}-{c}",
                "claim": f"drug {s}-{c} lowers blood pressure",
                "verdict": "refuted" if f"{s}-{c}" == refuted else "supported",
                "reasoning": f"The passages about drug {s}-{c} decide it.",
                "retriever": retriever,
                "passages": [
                    {"passage_id": f"{s}-{c}-{k}", "rank": k, "text": f"Drug {s}-{c} trial {k}."}
                    for k in (1, 2)
                ],
            }
            for s in SENTENCES
            for c in ("c1", "c2")
        ]
        (root / f"{system}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    claims = "".join(
        json.dumps({"sentence_id": c[:4], "claim_id": c, "question_id": c[:2], "has_error": e})
        + "\n"
        for c, e in (claim_labels or {}).items()
    )
    (root / "labels.jsonl").write_text(_labels() + claims)
    body = '[[datasets]]\nname = "d"\n\n' + _ingest("A.jsonl", "A") + _ingest("B.jsonl", "B")
    body += _ingest("labels.jsonl", adapter="generic-labels")
    body += '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
    return _study(root, "claims", body, metrics='level = "claim"\n')


def test_claim_level_metrics_from_sentence_labels_say_each_claim_took_its_sentences(
    tmp_path: Path,
) -> None:
    """`[metrics] level = "claim"` with sentence labels alone: each claim took its sentence's
    label (both claims of q1s1 and of q2s1 are errors), and the Data line said only the general
    rule "a claim's own label, else its sentence's" (h33study's left item).

    By hand (refuted): errors are the 4 claims of q1s1, q2s1 of 12 a system. A flags q1s1-c1:
    TP 1, FP 0, FN 3, TN 8; B flags q1s2-c1: TP 0, FP 1, FN 4, TN 7.
    """
    import failcodes

    root = _two_claims(tmp_path / "st")
    failcodes.run_study(root, say=None)
    prf = (root / "report" / "tables" / "prf_claim.md").read_text()
    assert "| A | refuted | 100.0 | 25.0 | 40.0 | 1 | 0 | 3 | 8 |" in prf
    assert "| B | refuted | 0.0 | 0.0 | 0.0 | 0 | 1 | 4 | 7 |" in prf
    said = (
        "claim level: no label names a claim, so each claim takes its sentence&#39;s label (a "
        "sentence labelled an error makes each of its claims one)"
    )
    assert said in (root / "report" / "index.html").read_text()
    # one claim label beside them (q1s1-c2 no error: both systems' claim of that id): it is
    # its own, the other 22 labelled claims took their sentence's; A's FN 3 -> 2, TN 8 -> 9
    mixed = _two_claims(tmp_path / "mixed", {"q1s1-c2": False})
    failcodes.run_study(mixed, say=None)
    prf = (mixed / "report" / "tables" / "prf_claim.md").read_text()
    assert "| A | refuted | 100.0 | 33.3 | 50.0 | 1 | 0 | 2 | 9 |" in prf
    assert "| B | refuted | 0.0 | 0.0 | 0.0 | 0 | 1 | 3 | 8 |" in prf
    assert (
        "claim level: a claim&#39;s own label, else its sentence&#39;s (22 of the 24 labelled "
        "claims took their sentence&#39;s)"
    ) in (mixed / "report" / "index.html").read_text()


def test_a_pipeline_entry_naming_a_system_no_ingest_gives_is_named_in_the_study_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """B's ingest removed from the study file, its `[[datasets.pipelines]]` entry left: refused
    "--evidence names system 'B', not in the input (systems: A, C)", words of a flag the user
    never wrote, naming no line of failcodes.toml (h33study's left item). Now the study file's
    line and field, in one line; with a second system's ingest removed too, the data set's one
    traces ingest is refused the same way (its own step, not the merge)."""
    from tests.cli_helpers import run_cli

    root = tmp_path / "rm"
    root.mkdir()
    for system in "AB":
        (root / f"{system}.jsonl").write_text(_rows(system, "r1"))
    (root / "C.jsonl").write_text(_rows("C", "r1", {"q1s1"}))
    (root / "labels.jsonl").write_text(_labels())
    body = '[[datasets]]\nname = "d"\n\n' + _ingest("A.jsonl", "A") + _ingest("C.jsonl", "C")
    body += _ingest("labels.jsonl", adapter="generic-labels")
    for system, evidence in (("A", "retrieved"), ("B", "retrieved"), ("C", "none")):
        body += f'[[datasets.pipelines]]\nsystem = "{system}"\nevidence = "{evidence}"\n\n'
    _study(root, "rm", body)
    lines = (root / "failcodes.toml").read_text().splitlines()
    line = lines.index('system = "B"', lines.index("[[datasets.pipelines]]")) + 1
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 2
    assert err.count("\n") == 1, err
    assert err.startswith(
        f"failcodes: error: {root / 'failcodes.toml'}:{line}, field "
        "'datasets[0].pipelines[1].system': [[datasets.pipelines]] names system 'B', which no "
        "ingest of data set 'd' gives (its traces' systems: A, C): remove that entry, or ingest "
        "the traces of 'B' (step 'merge traces d' failed"
    ), err
    assert "--evidence" not in err
    # one traces ingest left (A's): its own step refuses it, the same words
    text = (root / "failcodes.toml").read_text()
    (root / "failcodes.toml").write_text(text.replace(_ingest("C.jsonl", "C"), ""))
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 2
    assert f"{root / 'failcodes.toml'}:{line - 5}, field 'datasets[0].pipelines[1].system'" in err
    assert "(its traces' systems: A): remove that entry" in err
    assert "(step 'ingest d (1)' failed" in err


def test_a_system_no_label_applies_to_is_said_unscored_not_agreeing(tmp_path: Path) -> None:
    """Labels with a system column naming A alone (per-system labels): B has none, so nothing
    of it is scored. The report said "B: labels cover 0 of 6 sentences; precision, recall and
    F1 hold for the labelled subset only ...", "no disagreement for B ... (0 disagreements)"
    (read as B agreeing with every label) and "labels cover part of the units of B".

    By hand: errors q1s1, q2s1 (A's labels); A refutes q1s1, q2s2: TP 1, FP 1, FN 1, TN 3,
    2 disagreements; B: n 0 (6 sentences unlabelled).
    """
    import failcodes

    root = tmp_path / "somelab"
    root.mkdir()
    for system, retriever in (("A", "r1"), ("B", "r2")):
        (root / f"{system}.jsonl").write_text(_rows(system, retriever))
    (root / "labels.jsonl").write_text(
        "".join(
            json.dumps({"system": "A", **json.loads(line)}) + "\n"
            for line in _labels().splitlines()
        )
    )
    body = '[[datasets]]\nname = "d"\n\n' + _ingest("A.jsonl", "A") + _ingest("B.jsonl", "B")
    body += _ingest("labels.jsonl", adapter="generic-labels")
    body += '[[datasets.pipelines]]\nsystem = "*"\nevidence = "retrieved"\n\n'
    failcodes.run_study(_study(root, "somelab", body), say=None)
    tables = root / "report" / "tables"
    prf = (tables / "prf_sentence.md").read_text()
    assert "| A | refuted | 50.0 | 50.0 | 50.0 | 1 | 1 | 1 | 3 |" in prf
    assert "| B | refuted | – | – | – | 0 | 0 | 0 | 0 |" in prf
    assert "| A | 2 | 2 |" in (tables / "attribution.md").read_text()
    page = (root / "report" / "index.html").read_text().replace("&#39;", "'")
    assert (
        "B: no label applies to it (0 of its 6 sentences labelled): it has no precision, recall "
        "or F1, and no disagreement"
    ) in page
    assert "labels cover 0 of" not in page
    assert (
        "d: no disagreement for B: nothing of it was judged, so the attribution summary has no "
        "row of it (0 disagreements); no label applies to B: nothing of it was scored"
    ) in page
    assert (
        "(labels cover none of the units of B, and P/R/F1 only the labelled ones)"
        in (tables / "verdicts.md").read_text().splitlines()[0]
    )


def test_a_declaration_overriding_the_traces_own_evidence_source_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sharded by system (docs/judging-at-scale.md): C's shard ingested `--evidence C=none`
    (closed-book, no passages), the shards merged, and the study over the merged Parquet kept
    `failcodes init`'s `system = "*"`, `evidence = "retrieved"`. The declaration overrode C's
    own evidence_source: its 2 disagreements (errors q1s1, q2s1; C refutes q1s1, q3s2: q2s1
    missed, q3s2 a false alarm) read retrieval, "no passage retrieved", for verification
    (closed-book), exit 0. Now refused in one line, nothing written."""
    from tests.cli_helpers import run_cli

    parts = tmp_path / "parts"
    parts.mkdir()
    for system, refutes, evidence in (("A", None, "retrieved"), ("C", {"q1s1", "q3s2"}, "none")):
        rows = [json.loads(line) for line in _rows(system, "r1", refutes).splitlines()]
        if evidence == "none":
            for row in rows:
                del row["retriever"], row["passages"]
        source = tmp_path / f"{system}.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in rows))
        args = ["ingest", "generic", str(source), "--system", system, "--evidence"]
        code, _, err = run_cli([*args, evidence, "-o", str(parts / f"{system}.parquet")], capsys)
        assert code == 0, err
    merged = tmp_path / "traces.parquet"
    code, _, err = run_cli(
        ["ingest", "generic", *map(str, sorted(parts.iterdir())), "-o", str(merged)], capsys
    )
    assert code == 0, err
    out = tmp_path / "declared.parquet"
    code, _, err = run_cli(
        ["ingest", "generic", str(merged), "--evidence", "retrieved", "-o", str(out)], capsys
    )
    assert (code, out.exists()) == (2, False), err
    assert err.strip().splitlines() == [
        "failcodes: error: --evidence declares retrieved for system 'C', whose traces give "
        "their own evidence_source none (6 of 6): a declaration would override them; declare "
        "'C' as its traces do (--evidence C=none, a study's [[datasets.pipelines]] entry for "
        "it), or leave it undeclared to keep each trace's own"
    ]
    # declared as its traces say: read as before (A retrieved, C closed-book)
    code, _, err = run_cli(
        ["ingest", "generic", str(merged), "--evidence", "A=retrieved", "--evidence", "C=none",
         "-o", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
