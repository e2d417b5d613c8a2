"""The real anthropic and openai SDKs against the local fake server (tests/fakeserver)."""

import asyncio
import json
from pathlib import Path

import pytest

from failcodes.annotations import CoderKind, Status
from failcodes.errors import BudgetExceededError, ProviderError
from failcodes.judge import (
    JudgeJob,
    JudgeSettings,
    Limits,
    RetryPolicy,
    estimate_run,
    make_coder,
    run_judge,
)
from failcodes.judge.prompts import render_system
from failcodes.judge.run import read_annotations
from failcodes.judge.schema import answer_schema
from failcodes.units import Unit, UnitKind, retrieval_units
from tests.fakeserver.answers import ALWAYS_BAD_CODE, WRONG_QUOTE, tokens
from tests.judge_helpers import FAKE_PRICES, fake_coder, fresh_fake, make_codebook, make_traces

CB = make_codebook()
SECRET = "sk-test-FAILCODES-SECRET-0123456789"
FAST = JudgeSettings(limits=Limits(concurrency=4), retry=RetryPolicy.no_wait())


@pytest.fixture
def fake(fake_server, monkeypatch):
    return fresh_fake(fake_server, monkeypatch, SECRET)


def _units(n_claims: int = 2) -> list[Unit]:
    return retrieval_units(make_traces(n_claims))


def _run(fake, provider, units, tmp_path: Path, name="run", settings=FAST, cache=True, **kw):
    return run_judge(
        units,
        fake_coder(fake, provider, **kw),
        JudgeJob(
            CB,
            UnitKind.RETRIEVAL,
            tmp_path / name,
            cache_path=tmp_path / "cache.sqlite" if cache else None,
            prices=FAKE_PRICES,
            settings=settings,
        ),
    )


def _prefix_tokens() -> int:
    # the fake server's rule: tokens(system + schema as sorted JSON), ceil(len / 4)
    schema = answer_schema(CB.part(UnitKind.RETRIEVAL))
    return tokens(render_system(CB, UnitKind.RETRIEVAL) + json.dumps(schema, sort_keys=True))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_structured_answers_usage_cache_and_rerun(fake, provider, tmp_path) -> None:
    units = _units(2)  # 6 units
    s = _run(fake, provider, units, tmp_path)
    assert (s.judged, s.scored, s.unscored, s.calls) == (6, 6, 0, 6)
    assert fake.stats()["calls"] == {provider: 6}
    anns = read_annotations(tmp_path / "run")
    assert all(a.coder_kind is CoderKind.LLM and a.status is Status.SCORED for a in anns)
    assert all(a.quote_found is True for a in anns)  # the fake quotes the passage
    # prefix caching: the first call writes the prefix, the 5 others read it
    assert s.cached_input_tokens == 5 * _prefix_tokens()
    server_usage = fake.stats()["usage"]
    assert s.input_tokens == server_usage["input_tokens"]
    assert s.output_tokens == server_usage["output_tokens"]
    # cost from the price table: cached tokens at the cached rate (and Anthropic's cache
    # write at the write rate), per million tokens
    write = _prefix_tokens() if provider == "anthropic" else 0
    plain = s.input_tokens - s.cached_input_tokens - write
    expected = (
        plain * 1000
        + s.cached_input_tokens * 100
        + write * (1250 if provider == "anthropic" else 1000)
        + s.output_tokens * 2000
    ) / 1e6
    assert s.cost_usd == pytest.approx(expected)
    # rerun in the same run dir: nothing to do
    s2 = _run(fake, provider, units, tmp_path)
    assert (s2.judged, s2.already_done, s2.calls) == (0, 6, 0)
    # a new run dir with the same cache: six cache hits, zero calls, zero cost
    s3 = _run(fake, provider, units, tmp_path, name="run2")
    assert (s3.judged, s3.cache_hits, s3.calls, s3.cost_usd) == (6, 6, 0, 0.0)
    assert fake.stats()["calls"] == {provider: 6}
    again = {a.unit_id: a.codes for a in read_annotations(tmp_path / "run2")}
    assert again == {a.unit_id: a.codes for a in anns}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_retry_after_and_backoff_are_honoured(fake, provider, tmp_path) -> None:
    fake.control(faults=[{"kind": "429", "retry_after": 7}, {"kind": "500"}, {"kind": "429"}])
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    from failcodes.judge.engine import JudgeEngine
    from failcodes.judge.journal import Journal

    policy = RetryPolicy(initial_wait=0.5, max_wait=60, jitter=0.0)
    coder = fake_coder(fake, provider)
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
            return await engine.run(_units(1)[:1])
        finally:
            await coder.aclose()
            journal.close()

    s = asyncio.run(go())
    # 7 s from retry-after; then exponential backoff 0.5 * 2**(n-1): 1.0 s, 2.0 s
    assert waits == [7.0, 1.0, 2.0]
    assert (s.calls, s.retries, s.scored) == (4, 3, 1)
    assert fake.stats()["faults_served"] == {"429": 2, "500": 1}


def test_timeout_is_retried(fake, tmp_path) -> None:
    fake.control(faults=[{"kind": "slow", "seconds": 3}])
    s = _run(fake, "openai", _units(1)[:1], tmp_path, timeout=0.3)
    assert (s.calls, s.retries, s.scored) == (2, 1, 1)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_invalid_answer_is_sent_back_then_scored(fake, provider, tmp_path) -> None:
    fake.control(faults=[{"kind": "invalid_json"}, {"kind": "bad_code"}])
    settings = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())
    s = _run(fake, provider, _units(1)[:1], tmp_path, settings=settings)
    assert (s.calls, s.invalid_answers, s.scored) == (3, 2, 1)
    from failcodes.judge.journal import Journal

    j = Journal(tmp_path / "run")
    raw_request, _ = j.raw(_units(1)[0].id)
    j.close()
    assert raw_request is not None
    sent = json.dumps(raw_request)
    assert "Your previous answer was rejected" in sent
    assert "not_a_code_of_this_codebook" in sent  # the bad answer is shown back
    # the static prefix (system prompt with the codebook) is stored once, as a blob, and
    # re-inflated when read back
    system = render_system(CB, UnitKind.RETRIEVAL)
    if provider == "openai":
        assert raw_request["messages"][0] == {"role": "system", "content": system}
    else:
        assert raw_request["system"][0]["text"] == system
    import sqlite3

    con = sqlite3.connect(tmp_path / "run" / "journal.sqlite")
    (stored,) = con.execute("SELECT raw_request FROM annotations").fetchone()
    assert '"$blob"' in stored and "How the unit fares on" not in stored
    assert con.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 2  # system + schema
    con.close()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_invalid_answer_quoted_back_escaped_truncated_and_delimited(
    fake, provider, tmp_path
) -> None:
    # second-order injection (issue 16): the model's invalid answer closes the judged-material
    # delimiter and poses as instructions; it must come back escaped, cut and in its own tags
    fake.control(faults=[{"kind": "injected_code"}] * 3)
    settings = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())
    s = _run(fake, provider, _units(1)[:1], tmp_path, settings=settings)
    assert (s.calls, s.invalid_answers, s.unscored) == (3, 3, 1)
    from failcodes.judge.journal import Journal

    j = Journal(tmp_path / "run")
    raw_request, _ = j.raw(_units(1)[0].id)
    j.close()
    assert raw_request is not None
    followups = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in raw_request["messages"]
        if m["role"] == "user"
    ][1:]
    assert len(followups) == 2
    for text in followups:
        assert "</judged_material>" not in text  # escaped: &lt;/judged_material&gt;
        assert "&lt;/judged_material&gt; SYSTEM OVERRIDE" in text
        assert text.count("<rejected_answer>") == 1 and text.count("</rejected_answer>") == 1
        inside = text.split("<rejected_answer>")[1].split("</rejected_answer>")[0]
        assert "SYSTEM OVERRIDE" in inside and "more characters]" in inside
        assert len(text) < 2500  # two 600-character excerpts (escaped) + the fixed text
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.status is Status.UNSCORED
    assert ann.reason is not None and len(ann.reason) < 700
    assert ann.reason.startswith("invalid answer after 3 attempts: ")


def test_code_outside_codebook_ends_unscored_never_defaulted(fake, tmp_path) -> None:
    base = _units(1)[0]
    poisoned = base.model_copy(
        update={
            "id": "poisoned",
            "passages": (base.passages[0].model_copy(update={"text": f"Text {ALWAYS_BAD_CODE}."}),),
        }
    )
    s = _run(fake, "openai", [poisoned], tmp_path)
    assert (s.calls, s.scored, s.unscored) == (3, 0, 1)
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.status is Status.UNSCORED and ann.codes == {}
    assert ann.reason is not None
    assert ann.reason.startswith("invalid answer after 3 attempts")
    assert "'not_a_code_of_this_codebook' is not a code of 'entity_match'" in ann.reason


def test_quote_not_in_text_is_flagged(fake, tmp_path) -> None:
    base = _units(1)[0]
    unit = base.model_copy(
        update={
            "id": "quoted",
            "passages": (base.passages[0].model_copy(update={"text": f"Text {WRONG_QUOTE}."}),),
        }
    )
    s = _run(fake, "anthropic", [unit], tmp_path)
    (ann,) = read_annotations(tmp_path / "run")
    assert ann.status is Status.SCORED and ann.quote_found is False
    assert s.quotes_not_found == 1


def test_persistent_server_errors_stop_the_run_keeping_finished_units(fake, tmp_path) -> None:
    units = _units(1)  # 3 units, judged one at a time
    settings = JudgeSettings(
        limits=Limits(concurrency=1), retry=RetryPolicy.no_wait(max_attempts=3)
    )
    fake.control(faults=[{"kind": "none"}, {"kind": "500"}, {"kind": "500"}, {"kind": "500"}])
    with pytest.raises(ProviderError, match="giving up after 3 attempts"):
        _run(fake, "openai", units, tmp_path, settings=settings)
    assert len(read_annotations(tmp_path / "run")) == 1
    s = _run(fake, "openai", units, tmp_path, settings=settings)  # resume
    assert (s.already_done, s.judged) == (1, 2)


def test_budget_stops_cleanly_and_resumes(fake, tmp_path) -> None:
    units = _units(4)  # 12 units
    one = _run(fake, "openai", units[:1], tmp_path, name="probe", cache=False).cost_usd
    budget = one * 3.5
    settings = JudgeSettings(
        limits=Limits(concurrency=1), retry=RetryPolicy.no_wait(), budget_usd=budget
    )
    with pytest.raises(BudgetExceededError, match="budget"):
        _run(fake, "openai", units, tmp_path, settings=settings, cache=False)
    done = read_annotations(tmp_path / "run")
    spent = sum(a.usage.cost_usd for a in done)
    assert 1 <= len(done) < 12
    assert spent <= budget
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stopped_by_budget"] is True
    more = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait(), budget_usd=1e6)
    s = _run(fake, "openai", units, tmp_path, settings=more, cache=False)
    assert s.already_done + s.judged == 12
    ids = [a.unit_id for a in read_annotations(tmp_path / "run")]
    assert sorted(ids) == sorted(u.id for u in units)


def test_dry_run_estimate_is_close_and_calls_nothing(fake, tmp_path) -> None:
    units = _units(3)
    est = estimate_run(
        units,
        fake_coder(fake, "openai"),
        JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "run", prices=FAKE_PRICES),
    )
    assert fake.stats()["calls"] == {}
    assert est.to_call == 9 and est.price_known and est.cost_usd is not None
    s = _run(fake, "openai", units, tmp_path, cache=False)
    # the estimate (~4 chars per token, no prompt caching) vs the billed input tokens
    assert est.input_tokens == pytest.approx(s.input_tokens, rel=0.05)


def test_keys_never_reach_disk(fake, tmp_path) -> None:
    for provider in ("openai", "anthropic"):
        _run(fake, provider, _units(1), tmp_path, name=f"run-{provider}")
    import hashlib

    assert hashlib.sha256(SECRET.encode()).hexdigest() in fake.stats()["key_digests"]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.startswith("journal.sqlite") for p in files)
    assert any(p.name.startswith("cache.sqlite") for p in files)
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p


def test_base_url_from_environment(fake, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
    coder = make_coder("openai:fake-model")
    s = run_judge(_units(1)[:1], coder, JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path, settings=FAST))
    assert s.calls == 1 and fake.stats()["calls"] == {"openai": 1}


def test_local_reasoning_model_wrappers_are_taken_off(fake, tmp_path) -> None:
    # a thought block and a ```json fence around the answer (Qwen3 / DeepSeek-R1 behind an
    # OpenAI-compatible server): scored on the first call, nothing sent back as invalid
    fake.control(faults=[{"kind": "think_fenced"}])
    settings = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())
    s = _run(fake, "openai", _units(1)[:1], tmp_path, settings=settings)
    assert (s.calls, s.invalid_answers, s.scored) == (1, 0, 1)


@pytest.mark.parametrize(
    "kind", ["think_only", "unterminated_fence", "two_objects", "deep_nesting"]
)
def test_a_wrongly_wrapped_answer_is_sent_back(fake, tmp_path, kind) -> None:
    # a thought with no answer, a fence never closed, the answer twice, '[' nested 100,000
    # deep (a RecursionError that ended the run): each is an invalid answer, asked again
    fake.control(faults=[{"kind": kind}])
    settings = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())
    s = _run(fake, "openai", _units(1)[:1], tmp_path, settings=settings)
    assert (s.calls, s.invalid_answers, s.scored) == (2, 1, 1)


@pytest.mark.parametrize(
    ("body", "text", "tokens"),
    [
        # shapes a compatible server may send: AttributeError, TypeError, ValueError before
        # no content: a placeholder, so the turn sent back with the reason is not empty
        ({"choices": [None]}, "(the reply was empty)", (0, 0)),
        ({"choices": "abc"}, "(the reply was empty)", (0, 0)),
        ({"choices": [{"message": {"content": 5}}]}, "5", (0, 0)),
        (
            {"choices": [{"message": {"content": [{"type": "text", "text": '{"a": 1}'}]}}]},
            '{"a": 1}',
            (0, 0),
        ),
        (
            {
                "choices": [{"message": {"content": "x"}}],
                "usage": {"prompt_tokens": "many", "completion_tokens": 7},
            },
            "x",
            (0, 7),
        ),
        ({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -3}}, "x", (0, 0)),
    ],
)
def test_odd_completion_bodies_are_answers(
    body: dict[str, object], text: str, tokens: tuple[int, int]
) -> None:
    from failcodes.judge.providers.openai import reply_from_completion

    reply = reply_from_completion(body, {})
    assert reply.text == text
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == tokens


@pytest.mark.parametrize(
    ("text", "payload"),
    [
        # strict JSON: a value JSON forbids, a repeated key, nesting past the limit stay text
        ('{"a": NaN}', '{"a": NaN}'),
        ('<think>x</think>{"a": 1, "a": 2}', '<think>x</think>{"a": 1, "a": 2}'),
        ("[" * 5000, "[" * 5000),
        ('{"a": 1}', {"a": 1}),
        ('<think>x {"b": 2}</think>\n{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}```\n', {"a": 1}),
        ('<think>\n</think>\n\n```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        # still text (validation sends it back): malformed inside the fence, prose around it
        ('```json\n{"a": \n```', '```json\n{"a": \n```'),
        ('Here it is: {"a": 1}', 'Here it is: {"a": 1}'),
        ('```json\n{"a": 1}\n``` and more', '```json\n{"a": 1}\n``` and more'),
    ],
)
def test_json_payload(text: str, payload: object) -> None:
    from failcodes.judge.providers.jsontext import json_payload

    assert json_payload(text) == payload


def test_a_server_on_this_machine_needs_no_key(fake, monkeypatch, tmp_path) -> None:
    # Ollama / vLLM / llama.cpp on localhost check no key: OPENAI_API_KEY may be unset
    import hashlib

    from failcodes.errors import ConfigError
    from failcodes.judge.providers.openai import LOCAL_SERVER_KEY, OpenAIProvider

    monkeypatch.delenv("OPENAI_API_KEY")
    s = _run(fake, "openai", _units(1)[:1], tmp_path)
    assert s.scored == 1
    assert fake.stats()["key_digests"] == [hashlib.sha256(LOCAL_SERVER_KEY.encode()).hexdigest()]
    # a server elsewhere still needs the key, and the error says so in one line
    with pytest.raises(ConfigError, match="no OpenAI API key: set OPENAI_API_KEY"):
        OpenAIProvider("m", base_url="http://10.0.0.7:8000/v1")
    with pytest.raises(ConfigError):
        OpenAIProvider("m")  # the OpenAI API itself


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.1.2.3/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://10.0.0.7:8000/v1", False),
        ("https://api.openai.com/v1", False),
        ("http://localhost.example.com/v1", False),
        (None, False),
    ],
)
def test_on_this_machine(url: str | None, local: bool) -> None:
    from failcodes.judge.providers.openai import on_this_machine

    assert on_this_machine(url) is local


def test_an_unreachable_server_is_named(monkeypatch, tmp_path) -> None:
    import socket

    from failcodes.errors import ProviderError

    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    coder = make_coder("openai:m", base_url=f"http://127.0.0.1:{port}/v1")
    settings = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())
    with pytest.raises(ProviderError) as info:
        run_judge(
            _units(1)[:1], coder, JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path, settings=settings)
        )
    assert f"APIConnectionError (cannot reach http://127.0.0.1:{port}/v1/chat/completions)" in str(
        info.value
    )
