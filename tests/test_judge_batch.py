"""Batch mode through the real SDKs against the fake server's batch endpoints (issue 5)."""

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from failcodes.annotations import Status
from failcodes.judge import (
    Batch,
    Grouped,
    JudgeJob,
    JudgeSettings,
    Limits,
    RetryPolicy,
    estimate_run,
    run_judge_async,
)
from failcodes.judge.run import read_annotations
from failcodes.units import Unit, UnitKind, retrieval_units
from tests.fakeserver.answers import ALWAYS_BAD_CODE
from tests.judge_helpers import FAKE_PRICES, fake_coder, fresh_fake, make_codebook, make_traces

CB = make_codebook()
SECRET = "sk-test-FAILCODES-SECRET-batch"
FAST = JudgeSettings(limits=Limits(concurrency=4), retry=RetryPolicy.no_wait())
POLL = Batch(size=4, poll=0.01)


@pytest.fixture
def fake(fake_server, monkeypatch):
    return fresh_fake(fake_server, monkeypatch, SECRET)


def _units(n_claims: int) -> list[Unit]:
    return retrieval_units(make_traces(n_claims))


def _run(fake, provider, units, run_dir: Path, batch=POLL, settings=FAST):
    summary = asyncio.run(
        run_judge_async(
            units,
            fake_coder(fake, provider),
            JudgeJob(
                CB, UnitKind.RETRIEVAL, run_dir, mode=batch, prices=FAKE_PRICES, settings=settings
            ),
        )
    )
    return summary, summary.batches


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batch_run_splits_collects_prices_at_half(fake, provider, tmp_path) -> None:
    units = _units(3)  # 3 claims x 3 distinct passages = 9 units
    assert len(units) == 9
    summary, batches = _run(fake, provider, units, tmp_path / "run")
    # 9 units in batches of at most 4 -> 3 batches (ceil(9 / 4))
    assert batches == 3
    assert summary.judged == 9 and summary.scored == 9 and summary.calls == 9
    calls = fake.stats()["batch_calls"]
    create = "batches.create" if provider == "openai" else "messages.batches.create"
    assert calls[create] == 3
    assert fake.stats()["calls"] == {}  # nothing went through the synchronous endpoint
    anns = read_annotations(tmp_path / "run")
    assert sorted(a.unit_id for a in anns) == sorted(u.id for u in units)
    # cost = usage at the listed prices x 0.5 (batch_discount), from the fake's own usage
    usage = fake.stats()["usage_batch"]
    write = usage.get("cache_write_tokens", 0)
    plain = usage["input_tokens"] - usage["cached_tokens"] - write
    cache_rate = 1250.0 if provider == "anthropic" else 1000.0
    expected = (
        (
            plain * 1000.0
            + usage["cached_tokens"] * 100.0
            + write * cache_rate
            + usage["output_tokens"] * 2000.0
        )
        / 1e6
        * 0.5
    )
    assert summary.cost_usd == pytest.approx(expected)
    assert usage["cached_tokens"] > 0  # the system prefix is served from the prompt cache
    # batch ids are in the journal
    db = sqlite3.connect(tmp_path / "run" / "journal.sqlite")
    ids = [r[0] for r in db.execute("SELECT batch_id FROM batches WHERE collected = 1")]
    db.close()
    assert len(ids) == 3
    # a rerun submits nothing
    again, batches2 = _run(fake, provider, units, tmp_path / "run")
    assert batches2 == 0 and again.already_done == 9 and again.judged == 0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_failed_items_are_retried_and_invalid_answers_resent(fake, provider, tmp_path) -> None:
    units = _units(2)  # 6 units
    bad = units[0].model_copy(update={"claim": units[0].claim + " " + ALWAYS_BAD_CODE})
    bad = bad.model_copy(update={"id": "bad-unit-0001"})
    fake.control(batch_fail_items=2)  # the first two items processed fail once
    summary, batches = _run(fake, provider, [*units, bad], tmp_path / "run")
    anns = {a.unit_id: a for a in read_annotations(tmp_path / "run")}
    assert len(anns) == 7
    assert all(anns[u.id].status is Status.SCORED for u in units)
    # the always-bad unit: 1 answer + invalid_answer_retries (2 in FAST) resends, then unscored
    assert anns[bad.id].status is Status.UNSCORED
    assert "invalid answer after 3 attempts" in (anns[bad.id].reason or "")
    assert summary.invalid_answers == 3
    # 7 first sends + 2 failed items resent + 2 invalid-answer resends = 11 items sent
    assert summary.calls == 11 and summary.retries == 4
    # 7 items in 2 batches (4 + 3); round 2: the 2 failed + the bad unit; round 3: the bad unit
    assert batches == 4


def test_resume_collects_submitted_batches_without_resubmitting(fake, tmp_path) -> None:
    units = _units(3)
    fake.control(batch_delay=3600.0)  # batches stay in progress
    run_dir = tmp_path / "run"

    async def first() -> None:
        task = asyncio.ensure_future(
            run_judge_async(
                units,
                fake_coder(fake, "openai"),
                JudgeJob(
                    CB, UnitKind.RETRIEVAL, run_dir, mode=POLL, prices=FAKE_PRICES, settings=FAST
                ),
            )
        )
        while fake.stats()["batch_calls"].get("batches.retrieve", 0) < 1:
            await asyncio.sleep(0.01)
        task.cancel()  # the process "dies" while polling
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(first())
    assert fake.stats()["batch_calls"]["batches.create"] == 3
    db = sqlite3.connect(run_dir / "journal.sqlite")
    assert db.execute("SELECT COUNT(*) FROM batches WHERE collected = 0").fetchone()[0] == 3
    db.close()
    fake.control(batch_delay=0.0)
    summary, batches = _run(fake, "openai", units, run_dir)
    assert batches == 0  # nothing resubmitted: the recorded batches were collected
    assert fake.stats()["batch_calls"]["batches.create"] == 3
    assert summary.judged == 9
    anns = read_annotations(run_dir)
    assert len(anns) == 9 and len({a.unit_id for a in anns}) == 9
    raw = json.loads((run_dir / "summary.json").read_text())
    assert raw["journal_units"] == 9


def test_grouped_batch_dry_run_prices_the_items_the_run_sends(fake, tmp_path) -> None:
    # issue 30: a batch run groups within chunks of commit_every units; the dry run grouped
    # across the whole run (60 items predicted, 108 sent on a file ordered by system).
    # 4 claims x 3 passages, interleaved (c0p0 c1p0 c2p0 c3p0 c0p1 | c1p1 c2p1 c3p1 c0p2 c1p2 |
    # c2p2 c3p2 in chunks of 5): chunk 1 groups c0 {p0, p1} + 3 singles, chunk 2 c1 {p1, p2} +
    # 3 singles, chunk 3 2 singles -> 2 groups of 2 and 8 single items = 10 items (one group
    # per claim, 4 items, across chunks).
    by_claim: dict[str, list[Unit]] = {}
    for unit in _units(4):
        by_claim.setdefault(unit.claim, []).append(unit)
    assert [len(v) for v in by_claim.values()] == [3, 3, 3, 3]
    units = [members[i] for i in range(3) for members in by_claim.values()]
    mode = Batch(size=50, poll=0.01, group=Grouped(size=10), commit_every=5)
    job = JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "run", mode=mode, prices=FAKE_PRICES)
    estimate = estimate_run(units, fake_coder(fake, "openai"), job)
    summary, _ = _run(fake, "openai", units, tmp_path / "run", batch=mode)
    assert (summary.groups, summary.grouped_units, summary.judged_alone) == (2, 4, 8)
    assert estimate.calls == summary.groups + summary.judged_alone == 10
    assert estimate.units == summary.judged == 12
