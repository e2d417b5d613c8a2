"""Session 25, helper t25perf: issue 30's judge and start-up costs (behaviour, never timing)."""

import hashlib

import pytest

from failcodes.judge import JudgeJob, JudgeSettings, Limits, RetryPolicy, make_coder, run_judge
from failcodes.judge.schema import answer_schema
from failcodes.traces import Passage
from failcodes.units import Unit, UnitKind, retrieval_units, unit_id
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


def _unit(claim: str, text: str, pid: str) -> Unit:
    passage = Passage(passage_id=pid, rank=1, text=text, source="pubmed")
    return Unit(
        id=unit_id(UnitKind.RETRIEVAL, claim, (text,)),
        kind=UnitKind.RETRIEVAL,
        claim=claim,
        passages=(passage,),
    )


def test_the_offline_quote_finds_the_words_of_a_recurring_token_once(monkeypatch) -> None:
    # _quote_span ran the word pattern on every whitespace token of every passage it quoted
    # (the quote's search was 17% of the offline judge on bench_study's 1x retrieval units,
    # profiled 5 December); a passage's vocabulary recurs across passages
    from failcodes.judge.providers import offline

    seen: list[str] = []
    real = offline._WORD

    class Counting:
        def findall(self, text: str) -> list[str]:
            seen.append(text)
            return real.findall(text)

    monkeypatch.setattr(offline, "_WORD", Counting())
    for name in ("_words", "_content", "_numbers", "_sentences", "_token_stems"):
        cached = getattr(offline, name, None)  # _token_stems: not on main
        if cached is not None:
            cached.cache_clear()
    # 30 words, no sentence punctuation: each passage is one sentence of more than 20 words,
    # so the quote is searched token by token; the second passage holds the same words in
    # reverse order
    words = [f"t25w{i:02d}" for i in range(30)]
    words[3:6] = ["Aspirin", "halves", "strokes"]
    first, second = " ".join(words), " ".join(reversed(words))
    claim = "Aspirin halves strokes in older adults."  # a claim no other test uses
    part = CB.part(UnitKind.RETRIEVAL)
    coder = offline.OfflineCoder()
    a = coder.code(_unit(claim, first, "t25-1"), part).answer
    b = coder.code(_unit(claim, second, "t25-2"), part).answer
    assert a is not None and b is not None
    # the quote: the first 20-word run holding the most claim words (words 3..5). Forward:
    # runs starting at 0..3 hold all three, the first is words 0..19. Reversed, word k is
    # token 29 - k, so the hits are tokens 24..26: runs starting at 7..24 hold all three, the
    # first is tokens 7..26 (words 22 down to 3)
    assert {d.quote for d in a.dimensions.values()} == {" ".join(words[:20])}
    assert {d.quote for d in b.dimensions.values()} == {" ".join(words[::-1][7:27])}
    per_token = {w.lower(): seen.count(w.lower()) for w in words}
    assert per_token == dict.fromkeys(per_token, 1)  # main: 2 each (once per passage)


def test_a_judge_run_asks_what_its_coder_is_once_not_per_unit(monkeypatch, tmp_path) -> None:
    # isinstance against a runtime_checkable Protocol walks the protocol's members each time:
    # UnitJudge.judge and judge_direct asked it for every unit (6% of the offline judge on
    # bench_study's 1x retrieval units, profiled 5 December)
    import typing

    from failcodes.judge.providers.base import DirectCoder, LLMProvider

    asked: list[str] = []
    real = typing._ProtocolMeta.__instancecheck__  # type: ignore[attr-defined]

    def counting(cls, instance):
        if cls in (LLMProvider, DirectCoder):
            asked.append(cls.__name__)
        return real(cls, instance)

    monkeypatch.setattr(typing._ProtocolMeta, "__instancecheck__", counting)  # type: ignore[attr-defined]
    units = retrieval_units(make_traces(3))  # 3 claims x 3 passages
    assert len(units) == 9
    counts = []
    for n in (1, 9):
        asked.clear()
        job = JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / f"run{n}", settings=FAST)
        summary = run_judge(units[:n], make_coder("offline"), job)
        assert summary.scored == n
        counts.append(len(asked))
    assert counts[0] == counts[1]  # main: 2 more for each unit (5 + 2n: 7 and 23)


def test_a_quote_several_dimensions_share_is_checked_once(monkeypatch) -> None:
    # quote_checks normalised the unit's whole judged text once per dimension, though the
    # offline baseline gives every dimension the same quote (5 normalisations of the passage
    # a retrieval unit; quote checks were 9% of the offline judge, profiled 5 December)
    from failcodes.judge import schema

    calls: list[str] = []
    real = schema.normalise

    def counting(text: str) -> str:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(schema, "normalise", counting)
    text = "Metformin lowered HbA1c by 1.1 points in 400 adults with type 2 diabetes."
    unit = _unit("Metformin lowers HbA1c in adults.", text, "t25-q")
    part = CB.part(UnitKind.RETRIEVAL)
    same = {
        d.id: {
            "rationale": "r",
            "quote": "lowered HbA1c",
            "code": d.code_ids()[0],
            "uncertain": False,
        }
        for d in part.dimensions
    }
    answer = schema.parse_answer(part, same)
    assert len(answer.dimensions) >= 2
    checks = schema.quote_checks(answer, unit)
    assert checks == dict.fromkeys(answer.dimensions, True)
    assert calls.count(text) == 1  # main: once per dimension
    # two distinct quotes, one not in the text: each checked, once
    ids = list(answer.dimensions)
    mixed = dict(same)
    mixed[ids[0]] = {**same[ids[0]], "quote": "halved mortality"}
    calls.clear()
    checks = schema.quote_checks(schema.parse_answer(part, mixed), unit)
    assert checks == {d: d != ids[0] for d in ids}
    assert calls.count(text) == 2
