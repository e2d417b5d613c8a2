"""Outside red-team of the judge side, session 13 (t13red3): shapes the other tests do not use.

Each test states the input, what main gave at exit 0 before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.cli.main import main
from failcodes.disagreementio import write_disagreements
from failcodes.disagreements import ClaimRecord, Disagreement
from failcodes.hashing import content_hash
from failcodes.traces import Passage
from failcodes.verdicts import Verdict

_CLAIM = "Metformin lowers HbA1c in adults with type 2 diabetes."
_P1 = "In a 24-week RCT of 300 adults with type 2 diabetes, metformin lowered HbA1c by 1.1%."
_P2 = "Aspirin reduces fever in children."


def _trace(system: str, retriever: str, passages: list[tuple[str, str]]) -> dict[str, object]:
    return {
        "system": system,
        "question_id": "q1",
        "sentence_id": "s1",
        "claim_id": "c1",
        "claim": _CLAIM,
        "verdict": "supported",
        "retriever": retriever,
        "verifier": "gpt",
        "reasoning": "The passage says metformin lowered HbA1c.",
        "passages": [
            {"passage_id": pid, "rank": rank, "text": text, "source": "pubmed"}
            for rank, (pid, text) in enumerate(passages, 1)
        ],
    }


def _traces(tmp_path: Path) -> Path:
    """Two retrievers, three (claim, passage) units: bm25 p1 p2, dense p1 (p1 shared)."""
    path = tmp_path / "traces.jsonl"
    rows = [
        _trace("bm25-gpt", "bm25", [("p1", _P1), ("p2", _P2)]),
        _trace("dense-gpt", "dense", [("p1", _P1), ("p3", "Metformin is cheap.")]),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _disagreements(tmp_path: Path) -> Path:
    """The same units as a disagreements file (read by the columnar dry run, issue 18)."""
    items = [
        Disagreement(
            id=content_hash([system, "refuted", "q1", "s1"]),
            kind="FN",
            level="sentence",
            system=system,
            mapping="refuted",
            error_verdicts=("refuted",),
            question_id="q1",
            sentence_id="s1",
            label_has_error=True,
            predicted_error=False,
            claims=(
                ClaimRecord(
                    claim_id="c1",
                    claim=_CLAIM,
                    verdict=Verdict.SUPPORTED,
                    maps_to_error=False,
                    passages=tuple(
                        Passage(passage_id=pid, rank=rank, text=text, source="pubmed")
                        for rank, (pid, text) in enumerate(passages, 1)
                    ),
                ),
            ),
        )
        for system, passages in (
            ("bm25-gpt", [("p1", _P1), ("p2", _P2)]),
            ("dense-gpt", [("p1", _P1), ("p3", "Metformin is cheap.")]),
        )
    ]
    return write_disagreements(tmp_path / "dis.jsonl", items)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("source", [_traces, _disagreements])
def test_a_dry_run_into_another_judges_folder_is_refused_as_the_run_is(
    source, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The offline baseline coded the 3 units into run/. `--dry-run --judge openai:gpt-5-mini
    # -o run` then said "3 deduplicated units (3 already done, 0 cached); 0 to call in 0 calls
    # ... estimated cost $0.0000", exit 0, counting the offline judge's units as done for
    # gpt-5-mini; the run itself refuses the folder ("holds a run with judge='offline'").
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = source(tmp_path)
    run = tmp_path / "run"
    base = ["judge", "retrieval", "--from", str(src), "-o", str(run), "--no-cache"]
    code, out, _ = _cli(base, capsys)
    assert code == 0 and "retrieval units: 3 (0 already done, 3 judged now)" in out
    journal = (run / "journal.sqlite").read_bytes()
    code, out, err = _cli([*base, "--judge", "openai:gpt-5-mini", "--dry-run"], capsys)
    assert code == 2
    assert "$0.0000" not in out and "already done" not in out
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {run} holds a run with judge='offline', not 'openai:gpt-5-mini'; "
        "use another output folder (-o) for a different run"
    )
    assert (run / "journal.sqlite").read_bytes() == journal  # nothing written
    # the same judge's dry run still counts its own units as done: 3 of 3, nothing to judge
    code, out, _ = _cli([*base, "--dry-run"], capsys)
    assert code == 0 and "3 deduplicated units (3 already done, 0 cached)" in out


def test_a_dry_run_after_the_codebook_was_edited_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A codebook edited between runs (one question reworded) is another codebook: the run
    # refuses the folder, the dry run said "3 already done ... $0.0000" at exit 0.
    book = Path(__file__).parents[1] / "docs" / "examples" / "judge-example.v1.yaml"
    edited = tmp_path / "cb.yaml"
    edited.write_text(book.read_text(encoding="utf-8"), encoding="utf-8")
    src = _traces(tmp_path)
    run = tmp_path / "run"
    base = ["judge", "retrieval", "--from", str(src), "-o", str(run), "--codebook", str(edited)]
    assert _cli([*base, "--no-cache"], capsys)[0] == 0
    text = edited.read_text(encoding="utf-8")
    assert "Does the passage talk about" in text
    edited.write_text(text.replace("talk about", "discuss"), encoding="utf-8")
    code, out, err = _cli([*base, "--no-cache", "--dry-run"], capsys)
    assert code == 2 and "already done" not in out
    assert f"{run} holds a run with codebook_hash=" in err


def _shown_twice(tmp_path: Path, name: str, sources: dict[str, str]) -> Path:
    """One claim, one passage text, each system's retriever showing it under its own source."""
    path = tmp_path / name
    rows = []
    for system, src in sources.items():
        row = _trace(system, system.split("-")[0], [("x", _P1)])
        row["passages"][0]["source"] = src  # type: ignore[index]
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _all_high(folder: Path) -> dict[str, str]:
    lines = (folder / "retriever_all_high.csv").read_text(encoding="utf-8").splitlines()
    return {line.split(",")[0]: line.split(",")[4] for line in lines[1:]}


def test_one_passage_text_under_two_sources_is_said_by_attribute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The text of p1 comes from 'pubmed' under bm25 and from 'healthblog forum' under web. A
    # retrieval unit is (claim, passage text): judged once, shown as pubmed, so the offline
    # baseline coded it trustworthy_source for both, and web's all-high rate was 1.000
    # (judged alone, web's row is untrustworthy_source: rate 0.000). Nothing said, exit 0.
    both = _shown_twice(
        tmp_path, "both.jsonl", {"bm25-gpt": "pubmed", "web-gpt": "healthblog forum"}
    )
    alone = _shown_twice(tmp_path, "alone.jsonl", {"web-gpt": "healthblog forum"})
    for src, run, out in ((both, "j1", "a1"), (alone, "j2", "a2")):
        run_dir, out_dir = tmp_path / run, tmp_path / out
        assert _cli(["judge", "retrieval", "--from", str(src), "-o", str(run_dir)], capsys)[0] == 0
        args = ["attribute", "--from", str(src), "--retrieval", str(run_dir), "-o", str(out_dir)]
        code, _, err = _cli(args, capsys)
        assert code == 0
        if src is both:
            assert _all_high(out_dir) == {"bm25": "1.0", "web": "1.0"}  # the codes are shared
            assert (
                "note: 1 passage row(s) hold a passage text another row shows under a different "
                "source or title (first: system 'web-gpt', claim 'c1', rank 1, source "
                "'healthblog forum', title None): a (claim, passage text) is judged once"
            ) in " ".join(err.split())
        else:
            assert _all_high(out_dir) == {"web": "0.0"}  # the blog's own trust code
            assert "passage row(s) hold a passage text" not in err
    # one source for both: nothing to say
    same = _shown_twice(tmp_path, "same.jsonl", {"bm25-gpt": "pubmed", "web-gpt": "pubmed"})
    assert (
        _cli(["judge", "retrieval", "--from", str(same), "-o", str(tmp_path / "j3")], capsys)[0]
        == 0
    )
    args = ["attribute", "--from", str(same), "--retrieval", str(tmp_path / "j3")]
    code, _, err = _cli([*args, "-o", str(tmp_path / "a3")], capsys)
    assert code == 0 and "passage row(s) hold a passage text" not in err


def test_a_dry_run_says_when_its_estimate_crosses_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `--dry-run --budget 0.001` printed the estimate ($0.0043 for these 3 units at gpt-5-mini
    # prices) and nothing about the budget, exit 0: the run would stop after about a quarter.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = _traces(tmp_path)
    base = ["judge", "retrieval", "--from", str(src), "--judge", "openai:gpt-5-mini"]
    base += ["--dry-run", "--no-cache"]
    code, out, _ = _cli([*base, "-o", str(tmp_path / "a"), "--budget", "0.001"], capsys)
    cost = next(line for line in out.splitlines() if line.startswith("estimated cost $"))
    dollars = float(cost.split("$")[1].split()[0])
    assert code == 0 and dollars > 0.001
    assert (
        f"over budget: the estimate ${dollars:.4f} crosses --budget $0.0010; the run stops "
        "scheduling before the spend would cross it (exit 2), units left unjudged"
    ) in out
    code, out, _ = _cli([*base, "-o", str(tmp_path / "b"), "--budget", "1"], capsys)
    assert code == 0 and "over budget" not in out
    # a panel: each member's block says it (each stops at the budget on its own)
    panel = [*base, "--judge", "openai:gpt-5-mini", "-o", str(tmp_path / "c")]
    code, out, _ = _cli([*panel, "--budget", "0.001"], capsys)
    assert code == 0 and out.count("  over budget: the estimate $") == 2


def test_attribute_refuses_a_reasoning_run_given_as_retrieval_and_the_reverse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `attribute --retrieval annotations/reasoning` (the two folders swapped): the other
    # kind's annotations were skipped, both items 'undetermined', Table 8 'rows 2 coded 0' for
    # each retriever, exit 0 and no word. Now one line naming the folder, exit 2, no -o.
    src = _traces(tmp_path)
    reasoning, retrieval = tmp_path / "reasoning", tmp_path / "retrieval"
    for kind, run in (("reasoning", reasoning), ("retrieval", retrieval)):
        assert _cli(["judge", kind, "--from", str(src), "-o", str(run)], capsys)[0] == 0
    out = tmp_path / "att"
    base = ["attribute", "--from", str(src), "-o", str(out)]
    code, _, err = _cli([*base, "--retrieval", str(reasoning)], capsys)
    assert code == 2 and not out.exists()
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {reasoning}: given as --retrieval, it holds 2 verification "
        "annotation(s) (failcodes judge reasoning) and no retrieval one: give --retrieval the "
        "run of failcodes judge retrieval"
    )  # 2 verification units: the two systems' (claim, passages, reasoning) differ
    code, _, err = _cli([*base, "--reasoning", str(retrieval)], capsys)
    assert code == 2 and not out.exists()
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {retrieval}: given as --reasoning, it holds 3 retrieval "
        "annotation(s) (failcodes judge retrieval) and no verification one: give --reasoning "
        "the run of failcodes judge reasoning"
    )  # 3 (claim, passage text) units: p1 (both systems), p2, p3
    args = [*base, "--retrieval", str(retrieval), "--reasoning", str(reasoning)]
    assert _cli(args, capsys)[0] == 0
