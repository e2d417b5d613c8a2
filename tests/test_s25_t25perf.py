"""Session 25, helper t25perf: issue 30's judge and start-up costs (behaviour, never timing)."""

import hashlib

import pytest

from failcodes.judge import JudgeJob, JudgeSettings, Limits, RetryPolicy, make_coder, run_judge
from failcodes.judge.schema import answer_schema
from failcodes.units import UnitKind, retrieval_units
from tests.judge_helpers import fresh_fake, make_codebook, make_traces

CB = make_codebook()
SECRET = "sk-test-FAILCODES-SECRET-t25perf"
ADMIN = "sk-admin-FAILCODES-NEVER-SENT"
FAST = JudgeSettings(limits=Limits(concurrency=2), retry=RetryPolicy.no_wait())


@pytest.fixture
def fake(fake_server, monkeypatch):
    return fresh_fake(fake_server, monkeypatch, SECRET)


def test_an_openai_call_is_sent_as_built_without_the_sdks_walk_over_its_parameter_types(
    fake, tmp_path, monkeypatch
) -> None:
    # bench/bench_judge_panel.py, 256 units profiled on 5 December: the SDK's
    # `async_maybe_transform` (the body walked against CompletionCreateParams, each message and
    # the response schema against every member of their unions) was 1.5 of 5.2 client CPU-s
    import openai.resources.chat.completions.completions as sdk_completions

    walked: list[object] = []
    real = sdk_completions.async_maybe_transform

    async def counting(data, expected_type):
        walked.append(expected_type)
        return await real(data, expected_type)

    monkeypatch.setattr(sdk_completions, "async_maybe_transform", counting)
    monkeypatch.setenv("OPENAI_ADMIN_KEY", ADMIN)  # an admin key in the environment
    units = retrieval_units(make_traces(1))[:2]
    coder = make_coder("openai:fake-model", base_url=fake.openai_base_url)
    summary = run_judge(
        units, coder, JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "run", settings=FAST)
    )
    assert (summary.calls, summary.scored) == (2, 2)
    assert walked == []  # main's provider: walked once a call
    bodies = [r["body"] for r in fake.requests()]
    assert len(bodies) == 2
    for body in bodies:  # the body on the wire: what the provider built, nothing added
        assert sorted(body) == ["max_tokens", "messages", "model", "response_format", "temperature"]
        assert body["model"] == "fake-model"
        assert body["temperature"] == 0.0
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["strict"] is True
        assert body["response_format"]["json_schema"]["schema"] == answer_schema(
            CB.part(UnitKind.RETRIEVAL)
        )
    # the bearer key, never the admin key (the SDK sends both kinds unless told which)
    assert fake.stats()["key_digests"] == [hashlib.sha256(SECRET.encode()).hexdigest()]
