"""Dedup across retrievers, dry-run estimate vs billed, cascade, scale CLI (issue 5)."""

import json

import pandas as pd
import pytest
from bench.workload import overlapping_traces

from failcodes import codebook as codebook_mod
from failcodes.annotations import CoderKind
from failcodes.attribution import per_passage_codes
from failcodes.judge import (
    Cascade,
    JudgeJob,
    JudgeSettings,
    Limits,
    PerUnit,
    RetryPolicy,
    estimate_run,
    make_coder,
    run_judge,
)
from failcodes.judge.cascade import needs_second_opinion
from failcodes.judge.providers.offline import OfflineCoder
from failcodes.judge.run import read_annotations
from failcodes.units import UnitKind, retrieval_units
from tests.cli_helpers import run_cli
from tests.judge_helpers import FAKE_PRICES, fresh_fake, make_codebook, write_codebook, write_traces

CB = make_codebook()
FAST = JudgeSettings(limits=Limits(concurrency=4), retry=RetryPolicy.no_wait())


@pytest.fixture
def fake(fake_server, monkeypatch):
    return fresh_fake(fake_server, monkeypatch, "sk-test-scale", tiny_cache=False)


def test_pair_retrieved_by_four_retrievers_is_judged_once_counted_per_retriever(tmp_path) -> None:
    traces = list(overlapping_traces(3, retrievers=4, top_k=10, shared=5))
    units = retrieval_units(traces)
    # per claim: 5 shared + 4 x 5 own = 25 distinct pairs; 3 claims -> 75 (of 3 x 4 x 10 = 120)
    assert len(units) == 75
    assert sorted({len(u.provenance) for u in units}) == [1, 4]
    assert sum(len(u.provenance) for u in units) == 120
    assert sum(1 for u in units if len(u.provenance) == 4) == 15  # 5 shared x 3 claims
    summary = run_judge(units, OfflineCoder(), JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "r"))
    assert summary.judged == 75
    anns = read_annotations(tmp_path / "r")
    table = per_passage_codes(traces, anns, CB)
    assert len(table) == 120 and (table["status"] != "missing").all()
    assert table.groupby("retriever").size().to_dict() == {f"retriever{r}": 30 for r in range(4)}
    # the shared pair's codes are the same row for row in every retriever's report
    shared = table[table["passage_id"] == "c0-s0"]
    assert len(shared) == 4 and shared["unit_id"].nunique() == 1
    assert len(shared.drop_duplicates(subset=["entity_match", "scope", "polarity"])) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_dry_run_input_tokens_match_what_the_server_bills(fake, provider, tmp_path) -> None:
    # the bundled codebook: a ~2,800-token prefix, past the APIs' 1,024-token caching minimum
    cb = codebook_mod.bundled()
    units = retrieval_units(overlapping_traces(2, shared=5))  # 50 units
    spec = "openai:fake-model" if provider == "openai" else "anthropic:fake-claude"
    url = fake.openai_base_url if provider == "openai" else fake.anthropic_base_url
    one = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())
    est = estimate_run(
        units,
        make_coder(spec, base_url=url),
        JudgeJob(cb, UnitKind.RETRIEVAL, tmp_path / "est", prices=FAKE_PRICES, settings=one),
    )
    summary = run_judge(
        units,
        make_coder(spec, base_url=url),
        JudgeJob(cb, UnitKind.RETRIEVAL, tmp_path / "run", prices=FAKE_PRICES, settings=one),
    )
    usage = fake.stats()["usage"]
    assert est.calls == 50 and est.rows == 80  # 2 claims x 4 retrievers x 10
    # same ceil(chars / 4) rule as the fake server; the prefix may round apart by 1 per call
    assert abs(est.input_tokens - usage["input_tokens"]) <= est.calls
    # sequential calls: the first pays the prefix (Anthropic: a cache write), the 49 others
    # read it (OpenAI: in 128-token steps, as the API reports them)
    assert abs(est.cached_input_tokens - usage["cached_tokens"]) <= est.calls
    assert abs(est.cache_write_tokens - usage.get("cache_write_tokens", 0)) <= 1
    assert summary.cached_input_tokens == usage["cached_tokens"]


def test_cascade_sends_only_uncertain_units_and_records_the_coder(fake, tmp_path, capsys) -> None:
    traces = list(overlapping_traces(2, shared=5))
    units = retrieval_units(traces)
    offline = OfflineCoder()
    part = CB.part(UnitKind.RETRIEVAL)
    doubtful = [
        u for u in units if (r := offline.code(u, part)).answer is None or r.answer.uncertain
    ]
    assert 0 < len(doubtful) < len(units)  # the heuristic is unsure of some, not all

    summary = run_judge(
        units,
        make_coder("openai:fake-model", base_url=fake.openai_base_url),
        JudgeJob(
            CB,
            UnitKind.RETRIEVAL,
            tmp_path / "run",
            mode=Cascade(offline, PerUnit()),
            prices=FAKE_PRICES,
            settings=FAST,
        ),
    )
    result = summary.cascade
    assert result is not None
    assert fake.stats()["calls"]["openai"] == len(doubtful)
    assert result.escalated == len(doubtful) and result.kept == len(units) - len(doubtful)
    anns = read_annotations(tmp_path / "run")
    assert len(anns) == len(units)
    by_id = {a.unit_id: a for a in anns}
    for u in doubtful:
        assert by_id[u.id].coder == "openai:fake-model"
    assert sum(a.coder_kind is CoderKind.HEURISTIC for a in anns) == result.kept
    assert result.coded_by == {
        "offline (heuristic baseline)": result.kept,
        "openai:fake-model": len(doubtful),
    }
    assert not any(needs_second_opinion(a) for a in anns if a.coder_kind is CoderKind.HEURISTIC)
    # the attribution report says who coded how many units, and per row
    src = write_traces(tmp_path / "traces.jsonl", traces)
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    args = ["attribute", "--from", str(src), "--codebook", str(cb), "--retrieval"]
    code, out = _cli([*args, str(tmp_path / "run"), "-o", str(tmp_path / "rep")], capsys)
    assert code == 0, out
    assert f"units coded by: offline (heuristic baseline): {result.kept}, " in out
    assert f"openai:fake-model: {len(doubtful)}" in out
    rows = pd.read_csv(tmp_path / "rep" / "per_passage.csv")
    assert set(rows["coder"]) == {"offline", "openai:fake-model"} and len(rows) == 80


def _cli(args: list[str], capsys) -> tuple[int, str]:
    code, out, err = run_cli(args, capsys)
    return code, out + err


def test_cli_batch_and_group_and_dry_run(fake, tmp_path, capsys) -> None:
    traces = list(overlapping_traces(2, shared=5))
    src = write_traces(tmp_path / "traces.jsonl", traces)
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "openai:fake-model: {input: 1000, cached_input: 100, output: 2000, batch_discount: 0.5}\n"
    )
    base = [
        *("judge", "retrieval", "--from", str(src), "--codebook", str(cb)),
        *("--judge", "openai:fake-model", "--base-url", fake.openai_base_url, "--no-cache"),
        *("--prices", str(prices)),
    ]
    code, out = _cli([*base, "--batch", "--dry-run", "-o", str(tmp_path / "b")], capsys)
    assert code == 0, out
    assert "80 (trace, passage) rows -> 50 deduplicated units" in out
    assert "at batch prices" in out
    code, out = _cli(
        [*base, "--batch", "--poll-interval", "0.01", "-o", str(tmp_path / "b")], capsys
    )
    assert code == 0, out
    assert "batch mode: 1 provider batch(es) submitted" in out
    assert "estimate vs actual" in out
    assert fake.stats()["batch_calls"]["batches.create"] == 1
    code, out = _cli([*base, "--group-by-claim", "-o", str(tmp_path / "g")], capsys)
    assert code == 0, out
    assert "grouped by claim: 2 group call(s) coded 50 units" in out
    assert fake.stats()["calls"]["openai"] == 2
    assert len(read_annotations(tmp_path / "g")) == 50
    est = json.loads((tmp_path / "g" / "estimate.json").read_text())
    assert est["calls"] == 2 and est["grouped"] is True
    # the modes compose: grouped requests sent as batch items (the fake's batch endpoints)
    calls_before = fake.stats()["calls"].get("openai", 0)
    code, out = _cli(
        [
            *base,
            *("--batch", "--group-by-claim", "--poll-interval", "0.01"),
            *("--format", "json", "-o", str(tmp_path / "x")),
        ],
        capsys,
    )
    assert code == 0, out
    data = json.loads(out)
    assert (data["mode"], data["batches"], data["groups"], data["grouped_units"]) == (
        "batch, grouped",
        1,
        2,
        50,
    )
    assert fake.stats()["batch_calls"]["batches.create"] == 2  # the --batch run + this one
    assert fake.stats()["calls"].get("openai", 0) == calls_before  # no synchronous call
    assert len(read_annotations(tmp_path / "x")) == 50


def test_same_reasoning_trace_seen_twice_is_one_verification_unit() -> None:
    from failcodes.units import verification_units
    from tests.judge_helpers import make_traces

    trace = make_traces(1)[0]
    twin = trace.model_copy(update={"system": "sysZ", "retriever": "retZ"})
    units = verification_units([trace, twin, trace])
    # identical claim, passages, reasoning and verdict: one unit, two distinct provenances
    assert len(units) == 1
    assert [p.system for p in units[0].provenance] == ["sysA", "sysZ"]


def test_dry_run_needs_no_key(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = write_traces(tmp_path / "traces.jsonl", list(overlapping_traces(1, shared=5)))
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    base = ["judge", "retrieval", "--from", str(src), "--codebook", str(cb), "-o", str(tmp_path)]
    code, out = _cli([*base, "--judge", "openai:gpt-5-mini", "--batch", "--dry-run"], capsys)
    assert code == 0, out
    # 1 claim x 4 retrievers x 10 = 40 rows; 5 shared + 4 x 5 own = 25 units
    assert "40 (trace, passage) rows -> 25 deduplicated units" in out
    code, out = _cli([*base, "--judge", "openai:gpt-5-mini"], capsys)
    assert code == 2 and "OPENAI_API_KEY" in out  # a real run still needs the key
    code, out = _cli([*base, "--judge", "nosuch:model", "--dry-run"], capsys)
    assert code == 2 and "unknown judge" in out
