"""Odd Anthropic Messages API replies through the real SDK against the fake server.

Each case of a model or server going wrong is checked against the rules of the OpenAI path
(tests/test_judge_providers.py): an answer that holds none is sent back as invalid, then the
unit is unscored with the reason, never coded; a provider failure ends the run with one line
naming the endpoint, finished units committed, and the run resumes.
"""

import asyncio
import json
import warnings
from pathlib import Path

import pytest

from failcodes.annotations import Status
from failcodes.errors import ProviderError
from failcodes.judge import JudgeJob, JudgeSettings, Limits, RetryPolicy, run_judge
from failcodes.judge.run import read_annotations
from failcodes.units import Unit, UnitKind, retrieval_units
from tests.cli_helpers import run_cli
from tests.fakeserver.answers import tokens
from tests.judge_helpers import (
    FAKE_PRICES,
    fake_coder,
    fresh_fake,
    make_codebook,
    make_traces,
    write_codebook,
    write_traces,
)

CB = make_codebook()
ONE = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())
ROUNDS = 1 + ONE.retry.invalid_answer_retries  # 3: the first answer and two sent back
TOOL = "the tool `record_codes`"


@pytest.fixture
def fake(fake_server, monkeypatch):
    return fresh_fake(fake_server, monkeypatch, "sk-test-anthropic-faults")


def _units(n: int) -> list[Unit]:
    return retrieval_units(make_traces(1))[:n]


def _run(fake, units, tmp_path: Path, provider: str = "anthropic", settings=ONE):
    return run_judge(
        units,
        fake_coder(fake, provider),
        JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "run", prices=FAKE_PRICES, settings=settings),
    )


# what each fault's reply holds instead of an answer (the reason validation sends back)
NO_ANSWER = {
    "text_answer": f"no call of {TOOL}, and no JSON answer (content: text)",
    "wrong_tool": f"no call of {TOOL} (a call of `some_other_tool` instead)",
    "max_tokens": "the answer was cut off at the output token limit (stop_reason max_tokens)",
    "empty_content": f"no call of {TOOL}: the reply was empty",
    "refusal": "the model refused to answer (stop_reason refusal)",
    "unknown_block_only": f"no call of {TOOL}, and no JSON answer (content: server_thought)",
}


@pytest.mark.parametrize("kind", sorted(NO_ANSWER))
def test_a_reply_without_an_answer_is_sent_back_then_unscored(fake, tmp_path, kind) -> None:
    # before: sent back with "the answer is not valid JSON (Expecting value at 0)" and, for
    # an empty reply or a refusal, an empty assistant turn the real API refuses (HTTP 400,
    # which ended the run); a unknown block alone raised TypeError (a traceback)
    fake.control(faults=[{"kind": kind}] * ROUNDS)
    s = _run(fake, _units(1), tmp_path)
    assert (s.calls, s.invalid_answers, s.scored, s.unscored) == (3, 3, 0, 1)
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.status is Status.UNSCORED and ann.codes == {}
    assert ann.reason == f"invalid answer after 3 attempts: {NO_ANSWER[kind]}"
    # the reason was sent back, after a non-empty assistant turn (the fake refuses an empty one)
    last = fake.requests()[-1]["body"]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert all(m["content"] for m in last)
    assert NO_ANSWER[kind] in last[-1]["content"]


@pytest.mark.parametrize("kind", sorted(NO_ANSWER))
def test_a_reply_without_an_answer_once_is_asked_again_and_scored(fake, tmp_path, kind) -> None:
    fake.control(faults=[{"kind": kind}])
    s = _run(fake, _units(1), tmp_path)
    assert (s.calls, s.invalid_answers, s.scored, s.unscored) == (2, 1, 1, 0)


def test_a_json_answer_in_a_text_block_is_taken_as_the_openai_path_takes_it(fake, tmp_path):
    # a compatible server that ignores tool_choice: strict JSON text is validated as the
    # OpenAI path validates its text answers (json_payload), scored on the first call
    fake.control(faults=[{"kind": "text_json"}])
    s = _run(fake, _units(1), tmp_path)
    assert (s.calls, s.invalid_answers, s.scored) == (1, 0, 1)


def test_a_block_of_an_unknown_type_before_the_call_is_skipped_quietly(fake, tmp_path) -> None:
    # before: scored, but model_dump printed a dozen pydantic serializer warnings to stderr
    fake.control(faults=[{"kind": "unknown_block"}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = _run(fake, _units(1), tmp_path)
    assert (s.calls, s.invalid_answers, s.scored) == (1, 0, 1)


def test_missing_usage_counts_zero_tokens(fake, tmp_path) -> None:
    # before: AttributeError ('NoneType' object has no attribute 'cache_read_input_tokens')
    # and TypeError (int + None): tracebacks that ended the run
    fake.control(faults=[{"kind": "no_usage"}, {"kind": "partial_usage"}])
    s = _run(fake, _units(2), tmp_path)
    assert (s.calls, s.scored, s.output_tokens, s.cached_input_tokens) == (2, 2, 0, 0)
    # partial_usage keeps only input_tokens: the fake's count of the non-cached part, which
    # for the first call of a prefix (written to the cache, not read) is the user message
    user = fake.requests()[1]["body"]["messages"][0]["content"]
    assert s.input_tokens == tokens(user)


def test_overloaded_529_honours_retry_after_then_gives_up_naming_the_endpoint(fake, tmp_path):
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    from failcodes.judge.engine import JudgeEngine
    from failcodes.judge.journal import Journal

    fake.control(faults=[{"kind": "529", "retry_after": 4}])
    policy = RetryPolicy(initial_wait=0.5, max_wait=60, jitter=0.0)
    coder = fake_coder(fake, "anthropic")
    journal = Journal(tmp_path / "run")
    engine = JudgeEngine(
        coder,
        CB,
        UnitKind.RETRIEVAL,
        journal=journal,
        settings=JudgeSettings(limits=Limits(concurrency=1), retry=policy),
        sleep=record,
    )

    async def go():
        try:
            return await engine.run(_units(1))
        finally:
            await coder.aclose()
            journal.close()

    s = asyncio.run(go())
    assert waits == [4.0]  # the server's retry-after
    assert (s.calls, s.retries, s.scored) == (2, 1, 1)
    # overloaded on every attempt: one error naming the status, its type and the endpoint
    fake.control(faults=[{"kind": "529"}] * 3)
    three = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait(max_attempts=3))
    with pytest.raises(ProviderError) as info:
        _run(fake, _units(2), tmp_path / "again", settings=three)
    assert str(info.value) == (
        "anthropic:fake-claude: giving up after 3 attempts: "
        f"HTTP 529 (overloaded_error) from {fake.url}/v1/messages"
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_body_nested_100000_deep_is_sent_back(fake, tmp_path, provider) -> None:
    # a tool input (Anthropic) or content (a compatible server) of '[' nested 100,000 deep:
    # before, the SDK's JSON decoding raised RecursionError, a traceback that ended the run
    fake.control(faults=[{"kind": "deep_tool_input"}] * ROUNDS)
    s = _run(fake, _units(2), tmp_path, provider)
    assert (s.calls, s.invalid_answers, s.scored, s.unscored) == (4, 3, 1, 1)
    reasons = sorted(str(a.reason) for a in read_annotations(tmp_path / "run"))
    assert reasons == [
        "None",
        "invalid answer after 3 attempts: the answer is not valid JSON (nested too deeply)",
    ]


NOT_JSON = {
    "not_json": "('<html><body>Bad gateway</body></html>')",
    "broken_json": "(Expecting value at 31)",
}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("kind", sorted(NOT_JSON))
def test_a_body_that_is_not_json_stops_the_run_keeping_finished_units(
    fake, tmp_path, provider, kind
) -> None:
    # before: AttributeError ('str' object has no attribute 'content' / 'model_dump') and
    # json.JSONDecodeError: tracebacks
    path = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
    spec = "anthropic:fake-claude" if provider == "anthropic" else "openai:fake-model"
    units = _units(3)
    fake.control(faults=[{"kind": "none"}, {"kind": kind}])
    with pytest.raises(ProviderError) as info:
        _run(fake, units, tmp_path, provider)
    assert str(info.value) == (
        f"{spec}: {fake.url}{path} answered with a body that is not JSON {NOT_JSON[kind]}"
    )
    assert fake.stats()["calls"] == {provider: 2}  # not retried: a misconfigured endpoint
    assert len(read_annotations(tmp_path / "run")) == 1
    s = _run(fake, units, tmp_path, provider)  # resume
    assert (s.already_done, s.judged, s.calls) == (1, 2, 2)


def test_the_cli_ends_a_provider_failure_with_one_line(fake, workdir, capsys) -> None:
    traces = write_traces(workdir / "traces.jsonl", make_traces(1))
    cb = write_codebook(workdir / "cb.yaml")
    args = ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb), "--no-cache"]
    args += ["--judge", "anthropic:fake-claude", "--base-url", fake.anthropic_base_url]
    args += ["--concurrency", "1", "--max-attempts", "2", "-o", "run"]
    fake.control(faults=[{"kind": "none"}, {"kind": "529"}, {"kind": "529"}])
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("failcodes: error:")]
    assert errors == [
        "failcodes: error: anthropic:fake-claude: giving up after 2 attempts: "
        f"HTTP 529 (overloaded_error) from {fake.url}/v1/messages"
    ]
    assert err.strip().splitlines()[-1] == errors[0]
    lines = (workdir / "run" / "annotations.jsonl").read_text().splitlines()
    assert len(lines) == 1  # the unit judged before the failure is kept
    code, out, err = run_cli(args, capsys)  # resume
    assert code == 0, err
    assert "units: 3 (1 already done, 2 judged now)" in out
    assert [json.loads(x)["status"] for x in lines] == ["scored"]


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("refusal", "the model refused to answer: I can't help with that."),
        ("max_tokens", "the answer was cut off at the output token limit (finish_reason length)"),
        ("empty_content", "the reply was empty"),
    ],
)
def test_the_openai_path_gives_the_same_reasons(fake, tmp_path, kind, reason) -> None:
    # before: each was "the answer is not valid JSON (...)", saying nothing of why
    fake.control(faults=[{"kind": kind}] * ROUNDS)
    s = _run(fake, _units(1), tmp_path, "openai")
    assert (s.calls, s.invalid_answers, s.unscored) == (3, 3, 1)
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.reason == f"invalid answer after 3 attempts: {reason}"


# -- the Message Batches API --------------------------------------------------------------

BATCH_FAILED = {
    "errored": "api_error: server error (fake)",
    "expired": "expired",
    "canceled": "canceled",
    "errored_bare": "error: no message",  # before: AttributeError, a traceback
    "unknown_result": "postponed",  # a result type the SDK does not know
}


def _batch(fake, units, tmp_path: Path):
    from failcodes.judge import Batch, run_judge_async

    settings = JudgeSettings(
        limits=Limits(concurrency=1), retry=RetryPolicy.no_wait(max_attempts=3)
    )
    job = JudgeJob(
        CB,
        UnitKind.RETRIEVAL,
        tmp_path / "run",
        mode=Batch(size=4, poll=0.01),
        prices=FAKE_PRICES,
        settings=settings,
    )
    return asyncio.run(run_judge_async(units, fake_coder(fake, "anthropic"), job))


@pytest.mark.parametrize("kind", sorted(BATCH_FAILED))
def test_a_failed_batch_item_is_resent_then_unscored_with_its_reason(fake, tmp_path, kind):
    fake.control(batch_item_faults=[kind] * 3)  # max_attempts 3: every attempt fails
    s = _batch(fake, _units(1), tmp_path)
    assert (s.calls, s.batches, s.retries, s.scored, s.unscored) == (3, 3, 2, 0, 1)
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.reason == f"batch item failed after 3 attempts: {BATCH_FAILED[kind]}"
    # failing once: the item is resent in a second batch and scored
    fake.control(batch_item_faults=[kind])
    s = _batch(fake, _units(2)[1:], tmp_path / "once")
    assert (s.calls, s.batches, s.retries, s.scored) == (2, 2, 1, 1)


def test_a_batch_answer_calling_another_tool_is_sent_back_then_unscored(fake, tmp_path):
    # before: a batch result's call of any tool was taken as the answer (scored at once)
    fake.control(batch_item_faults=["wrong_tool"] * 3)
    s = _batch(fake, _units(1), tmp_path)
    assert (s.calls, s.invalid_answers, s.scored, s.unscored) == (3, 3, 0, 1)
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.reason == f"invalid answer after 3 attempts: {NO_ANSWER['wrong_tool']}"


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("refusal", NO_ANSWER["refusal"]),
        ("max_tokens", NO_ANSWER["max_tokens"]),
        # a batch result comes without its request: the tool is not named
        ("empty_content", "no call of the answer tool: the reply was empty"),
    ],
)
def test_a_batch_answer_without_an_answer_gets_the_same_reason(fake, tmp_path, kind, reason):
    fake.control(batch_item_faults=[kind] * 3)
    s = _batch(fake, _units(1), tmp_path)
    assert (s.calls, s.invalid_answers, s.unscored) == (3, 3, 1)
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.reason == f"invalid answer after 3 attempts: {reason}"


def test_a_batch_result_nested_100000_deep_is_sent_back_and_the_stream_goes_on(fake, tmp_path):
    # before: RecursionError out of the SDK's JSONL decoder ended the collection and the run
    deep = "deep_tool_input"
    fake.control(batch_item_faults=[deep, "none", deep, deep])  # "none": a good answer
    s = _batch(fake, _units(2), tmp_path)
    # batch 1: the first item runs away, the second (after it in the stream) is scored;
    # the first goes again alone (three rounds: one answer, two sent back)
    assert (s.calls, s.batches, s.invalid_answers, s.scored, s.unscored) == (4, 3, 3, 1, 1)
    reasons = sorted(str(a.reason) for a in read_annotations(tmp_path / "run"))
    assert reasons == [
        "None",
        "invalid answer after 3 attempts: the answer is not valid JSON (nested too deeply)",
    ]


def test_an_overloaded_batch_poll_is_polled_again_then_gives_up_and_resumes(fake, tmp_path):
    # before: the 529 of a batch retrieve escaped as anthropic.OverloadedError (a traceback)
    fake.control(batch_retrieve_overloaded=2)  # max_attempts 3: two failed polls are fine
    s = _batch(fake, _units(1), tmp_path / "ok")
    assert (s.batches, s.scored) == (1, 1)
    assert fake.stats()["batch_calls"]["messages.batches.retrieve"] == 4  # 2 failed, 2 ok
    fake.reset()
    fake.control(batch_retrieve_overloaded=3)
    with pytest.raises(ProviderError) as info:
        _batch(fake, _units(1), tmp_path)
    import sqlite3

    con = sqlite3.connect(tmp_path / "run" / "journal.sqlite")
    (batch_id,) = con.execute("SELECT batch_id FROM batches WHERE collected = 0").fetchone()
    con.close()
    assert str(info.value) == (
        "anthropic:fake-claude: giving up after 3 attempts: HTTP 529 (overloaded_error) "
        f"from {fake.url}/v1/messages/batches/{batch_id}"
    )
    s = _batch(fake, _units(1), tmp_path)  # resume: the batch is collected, not resubmitted
    assert (s.batches, s.judged, s.scored) == (0, 1, 1)
    assert fake.stats()["batch_calls"]["messages.batches.create"] == 1


def test_a_grouped_request_without_an_answer_goes_on_unit_by_unit(fake, tmp_path) -> None:
    # one claim's 3 passages in one request; the group's reply is a refusal: each passage
    # counts one invalid answer and is judged alone (3 more calls), all scored
    from failcodes.judge.modes import Grouped

    fake.control(faults=[{"kind": "refusal"}])
    job = JudgeJob(
        CB, UnitKind.RETRIEVAL, tmp_path / "run", mode=Grouped(), prices=FAKE_PRICES, settings=ONE
    )
    s = run_judge(_units(3), fake_coder(fake, "anthropic"), job)
    assert (s.calls, s.invalid_answers, s.scored, s.unscored) == (4, 3, 3, 0)
    first = fake.requests()[0]["body"]["tool_choice"]["name"]
    assert first == "record_codes_per_passage"


def test_a_batch_error_echoing_the_key_is_masked_in_the_reason_and_the_ledger(fake, tmp_path):
    # before: "invalid x-api-key: sk-ant-api03-..." was stored whole in the unscored
    # annotation's reason (annotations.jsonl, journal.sqlite) and the ledger's last_error
    from tests.fakeserver.batch import ECHOED

    fake.control(batch_item_faults=["errored_key"] * 3)
    s = _batch(fake, _units(1), tmp_path)
    assert (s.calls, s.unscored) == (3, 1)
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.reason == "batch item failed after 3 attempts: api_error: invalid x-api-key: ***"
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert ECHOED.encode() not in path.read_bytes(), path
