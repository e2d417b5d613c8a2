import json

import pandas as pd
import pytest

from failcodes.disagreements import ClaimRecord, Disagreement, DisagreementKind
from failcodes.judge.cache import ResponseCache
from failcodes.metrics import Level
from tests.cli_helpers import run_cli
from tests.judge_helpers import make_traces, write_codebook, write_disagreements, write_traces


def test_judge_then_attribute_offline(workdir, capsys) -> None:
    traces = write_traces(workdir / "t.jsonl", make_traces(2))
    cb = write_codebook(workdir / "cb.yaml")
    base = ["--from", str(traces), "--codebook", str(cb)]
    assert run_cli(["judge", "retrieval", *base, "-o", "r"], capsys)[0] == 0
    assert run_cli(["judge", "reasoning", *base, "-o", "v"], capsys)[0] == 0
    code, out, err = run_cli(
        [
            "attribute",
            *base,
            "--retrieval",
            "r",
            "--reasoning",
            "v",
            "-o",
            "out",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["heuristic_baseline"] is True
    assert "heuristic baseline" in err
    # Claim i reads "... type 2 diabetes (claim i).". For i=0 the number 0 is in no passage,
    # so the offline scope rule gives broader_scope everywhere -> retrieval. For i=1, P_GOOD
    # ("... by about 1 percentage point.", pubmed) holds 8 of the claim's 9 content stems,
    # the numbers {1, 2} and 'adults' -> all five dimensions high -> verification.
    expected = {"retrieval": 1, "verification": 1, "evidence": 0, "mixed": 0}
    expected |= {"undetermined": 0, "total": 2}
    assert data["stages"] == [{"system": s, **expected} for s in ("sysA", "sysB")]
    for name in (
        "attribution",
        "per_passage",  # study layout names (what `failcodes report` reads)
        "retriever_all_high",
        "per_trace",
        "verifier_all_correct",
        "retrieval_dominant_errors",
    ):
        assert (workdir / "out" / f"{name}.csv").is_file()
    pp = pd.read_csv(workdir / "out" / "per_passage.csv")
    assert len(pp) == 8
    assert pp["all_high"].tolist().count(True) == 2  # P_GOOD for claim 1, in sysA and sysB
    assert set(pp["coder_kind"]) == {"heuristic"}


def test_judge_reads_disagreements(workdir, capsys) -> None:
    ts = make_traces(1)
    claims = tuple(
        ClaimRecord(
            claim_id=t.claim_id,
            claim=t.claim,
            verdict=t.verdict,
            maps_to_error=False,
            reasoning=t.reasoning,
            passages=t.passages,
            retriever=t.retriever,
        )
        for t in ts
    )
    items = [
        Disagreement(
            id=f"d-{t.system}",
            kind=DisagreementKind.FN,
            level=Level.SENTENCE,
            system=t.system,
            mapping="refuted",
            error_verdicts=("refuted",),
            question_id=t.question_id,
            sentence_id=t.sentence_id,
            label_has_error=True,
            predicted_error=False,
            claims=(c,),
        )
        for t, c in zip(ts, claims, strict=True)
    ]
    path = write_disagreements(workdir / "dis.jsonl", items)
    cb = write_codebook(workdir / "cb.yaml")
    code, out, _ = run_cli(
        ["judge", "retrieval", "--from", str(path), "--codebook", str(cb), "-o", "r"], capsys
    )
    assert code == 0
    # sysA: (P_GOOD, P_FRAGMENT), sysB: (P_GOOD, P_WEB) for one claim -> 3 distinct pairs
    assert "units: 3 (0 already done, 3 judged now)" in out
    code, out, _ = run_cli(
        ["attribute", "--from", str(path), "--codebook", str(cb), "--retrieval", "r", "-o", "o"],
        capsys,
    )
    assert code == 0
    table = pd.read_csv(workdir / "o" / "attribution.csv")
    assert table["item_id"].tolist() == ["d-sysA", "d-sysB"]


def test_cache_stats_and_prune(workdir, capsys) -> None:
    cache = ResponseCache(workdir / "c.sqlite")
    for i, model in enumerate(["m1", "m2"]):
        cache.put(
            f"k{i}",
            provider="openai",
            model=model,
            template_hash="t",
            codebook_hash="abc",
            payload={},
            usage={},
            raw_request={},
            raw_response={},
        )
    cache.close()
    code, out, _ = run_cli(["cache", "stats", "--cache", "c.sqlite", "--json"], capsys)
    assert code == 0
    st = json.loads(out)
    assert st["entries"] == 2 and st["by_model"] == {"openai:m1": 1, "openai:m2": 1}
    code, _, err = run_cli(["cache", "prune", "--cache", "c.sqlite"], capsys)
    assert code == 2 and "--older-than" in err
    code, out, _ = run_cli(
        ["cache", "prune", "--cache", "c.sqlite", "--model", "openai:m1"], capsys
    )
    assert code == 0 and "pruned 1 entries" in out
    code, out, _ = run_cli(["cache", "prune", "--cache", "c.sqlite", "--older-than", "1"], capsys)
    assert "pruned 0 entries" in out
    code, out, _ = run_cli(["cache", "prune", "--cache", "c.sqlite", "--all"], capsys)
    assert "pruned 1 entries" in out


@pytest.mark.parametrize("cmd", [["cache", "stats", "--cache", "nope.sqlite"]])
def test_cache_missing_file(workdir, capsys, cmd) -> None:
    code, _, err = run_cli(cmd, capsys)
    assert code == 2 and "no cache file" in err


def test_attribute_evidence_option_declares_the_pipeline(workdir, capsys) -> None:
    # The same traces and codes as test_judge_then_attribute_offline (claim 0 -> retrieval,
    # claim 1 -> verification per system), declared differently on the command line.
    traces = write_traces(workdir / "t.jsonl", make_traces(2))
    cb = write_codebook(workdir / "cb.yaml")
    base = ["--from", str(traces), "--codebook", str(cb)]
    assert run_cli(["judge", "retrieval", *base, "-o", "r"], capsys)[0] == 0
    args = ["attribute", *base, "--retrieval", "r", "--format", "json"]
    # sysA closed-book: both claims verification; sysB provided: the poor one is 'evidence'
    code, out, err = run_cli(
        [*args, "-o", "o1", "--evidence", "sysA=none", "--evidence", "sysB=provided"], capsys
    )
    assert code == 0, err
    stages = {row["system"]: row for row in json.loads(out)["stages"]}
    assert (stages["sysA"]["retrieval"], stages["sysA"]["verification"]) == (0, 2)
    assert (stages["sysB"]["retrieval"], stages["sysB"]["evidence"]) == (0, 1)
    assert stages["sysB"]["verification"] == 1
    table = pd.read_csv(workdir / "o1" / "attribution.csv")
    assert sorted(set(zip(table["system"], table["evidence_source"], strict=True))) == [
        ("sysA", "none"),
        ("sysB", "provided"),
    ]
    code, _, err = run_cli([*args, "-o", "o2", "--evidence", "sysZ=none"], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        "failcodes: error: --evidence names system 'sysZ', not in the input (systems: sysA, sysB)"
    ]
    assert not (workdir / "o2").exists()
