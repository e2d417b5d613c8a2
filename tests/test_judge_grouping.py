"""Grouping all passages of a claim into one call, and the byte-stable cached prefix (issue 5)."""

import asyncio
import json

import pytest

from failcodes.annotations import Status
from failcodes.judge import (
    Grouped,
    JudgeEngine,
    JudgeSettings,
    Limits,
    RetryPolicy,
)
from failcodes.judge.grouping import groups_by_claim, parse_group
from failcodes.judge.journal import Journal
from failcodes.judge.prompts import render_system, render_user
from failcodes.judge.providers.base import Message, ProviderRequest
from failcodes.judge.schema import SCHEMA_NAME, Answer, answer_schema
from failcodes.traces import Passage
from failcodes.units import UnitKind, retrieval_units
from tests.fakeserver.answers import ALWAYS_BAD_CODE
from tests.judge_helpers import FAKE_PRICES, fake_coder, fresh_fake, make_codebook, make_traces

CB = make_codebook()
PART = CB.part(UnitKind.RETRIEVAL)
FAST = JudgeSettings(limits=Limits(concurrency=2), retry=RetryPolicy.no_wait())


@pytest.fixture
def fake(fake_server, monkeypatch):
    return fresh_fake(fake_server, monkeypatch, "sk-test-grouping")


def _run(fake, provider, units, tmp_path):
    async def go():
        coder = fake_coder(fake, provider)
        journal = Journal(tmp_path / "run")
        engine = JudgeEngine(
            coder, CB, UnitKind.RETRIEVAL, journal=journal, prices=FAKE_PRICES, settings=FAST
        )
        try:
            summary = await engine.run(units, mode=Grouped())
            anns = {a.unit_id: a for a in journal.annotations()}
            return summary, anns, journal.totals()
        finally:
            journal.close()
            await coder.aclose()

    return asyncio.run(go())


def test_groups_by_claim_split_at_size() -> None:
    units = retrieval_units(make_traces(2))  # 2 claims x 3 distinct passages
    groups = groups_by_claim(units, size=2)
    # each claim's 3 passages -> a group of 2 and a group of 1
    assert [len(g) for g in groups] == [2, 1, 2, 1]
    assert all(len({u.claim for u in g}) == 1 for g in groups)


def test_parse_group_validates_each_item_alone() -> None:
    good = {
        d.id: {"rationale": "r", "quote": "", "code": d.code_ids()[0], "uncertain": False}
        for d in PART.dimensions
    }
    bad = {**good, "scope": {**good["scope"], "code": "nonsense"}}
    out = parse_group(
        PART, {"results": [{"passage": "p1", **good}, {"passage": "p2", **bad}]}, ["p1", "p2", "p3"]
    )
    assert isinstance(out["p1"], Answer)
    assert "'nonsense' is not a code of 'scope'" in str(out["p2"])
    assert out["p3"] == "no result for this passage"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_one_call_per_claim_tokens_shared(fake, provider, tmp_path) -> None:
    units = retrieval_units(make_traces(2))  # 6 units, 2 claims
    summary, anns, totals = _run(fake, provider, units, tmp_path)
    assert fake.stats()["calls"][provider] == 2  # one call per claim
    assert (summary.groups, summary.grouped_units, summary.judged_alone) == (2, 6, 0)
    assert summary.scored == 6 and len(anns) == 6
    usage = fake.stats()["usage"]
    # the group's tokens are split over its passages: the journal sums to what was billed
    assert totals.input_tokens == usage["input_tokens"]
    assert totals.cached_input_tokens == usage["cached_tokens"]
    assert totals.output_tokens == usage["output_tokens"]
    assert usage["cached_tokens"] > 0  # the second group reads the prefix from the cache


def test_invalid_item_is_rejudged_alone(fake, tmp_path) -> None:
    traces = make_traces(1)
    bad = Passage(
        passage_id="bad", rank=3, text=f"A passage that trips the judge {ALWAYS_BAD_CODE}"
    )
    traces[0] = traces[0].model_copy(update={"passages": (*traces[0].passages, bad)})
    units = retrieval_units(traces)  # 4 units of one claim
    summary, anns, _ = _run(fake, "openai", units, tmp_path)
    # 1 group call + the bad passage alone: 1 call + 2 invalid-answer retries (FAST)
    assert fake.stats()["calls"]["openai"] == 4
    assert summary.grouped_units == 3 and summary.judged_alone == 1
    bad_unit = next(u for u in units if u.passages[0].passage_id == "bad")
    assert anns[bad_unit.id].status is Status.UNSCORED
    assert summary.scored == 3 and summary.unscored == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_prefix_is_byte_stable_across_units(fake, provider) -> None:
    coder = fake_coder(fake, provider)
    units = retrieval_units(make_traces(3))
    system, schema = render_system(CB, UnitKind.RETRIEVAL), answer_schema(PART)
    bodies = [
        coder.build(  # type: ignore[union-attr]
            ProviderRequest(system, (Message("user", render_user(u)),), schema, SCHEMA_NAME, 512)
        )
        for u in units
    ]
    if provider == "anthropic":
        prefixes = {json.dumps([b["tools"], b["system"]], sort_keys=True) for b in bodies}
        assert bodies[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    else:
        prefixes = {
            json.dumps([b["messages"][0], b["response_format"]], sort_keys=True) for b in bodies
        }
        assert bodies[0]["messages"][0]["role"] == "system"
    assert len(prefixes) == 1  # 9 different units, one prefix byte for byte
    assert len({json.dumps(b, sort_keys=True) for b in bodies}) == len(units)
    asyncio.run(coder.aclose())  # type: ignore[union-attr]
