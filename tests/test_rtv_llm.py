"""The RtV LLM judge adapter through the real SDKs against the local fake server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from failcodes.judge.providers import LLMProvider, make_coder
from failcodes.judge.schema import NoAnswer
from failcodes.rtv import metrics
from failcodes.rtv.documents import load_documents
from failcodes.rtv.evaluate import RtvConfig, build_indexes, run
from failcodes.rtv.items import ROB2_ITEM, RtvItem, read_items
from failcodes.rtv.judge import RtvVerdict
from failcodes.rtv.llm_judge import LLMVerdictJudge
from tests.fakeserver import FakeServer
from tests.fakeserver.answers import ALWAYS_INVALID_JSON, WRONG_QUOTE

DATA = Path(__file__).parent / "data" / "rtv"
SMALL = RtvConfig(chunk_size=200, overlap=50, k=2)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


@pytest.fixture
def fake(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    server.reset()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rtv-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-rtv-0123456789")
    return server


@pytest.mark.parametrize("spec", ["openai:fake-model", "anthropic:fake-claude"])
def test_llm_judge_end_to_end(fake: FakeServer, spec: str) -> None:
    base = fake.openai_base_url if spec.startswith("openai") else fake.anthropic_base_url
    items = read_items(DATA / "items.jsonl")
    extra = [
        RtvItem(
            item_id="wq",
            doc_id="trial_a",
            model="model-C",
            question="q",
            response="yes",
            explanation=f"Allocation was concealed {WRONG_QUOTE}",
        ),
        RtvItem(
            item_id="bad",
            doc_id="trial_a",
            model="model-C",
            question="q",
            response="yes",
            explanation=f"Allocation {ALWAYS_INVALID_JSON}",
        ),
    ]
    idx = build_indexes(load_documents(DATA / "docs"), SMALL)
    coder = make_coder(spec, base_url=base)
    assert isinstance(coder, LLMProvider)
    judge = LLMVerdictJudge(coder, backoff=0.0)
    try:
        res = run([*items, *extra], idx, judge, SMALL.k)
        again = run(items, idx, judge, SMALL.k)
    finally:
        judge.close()
    by_id = {r.item.item_id: r for r in res}
    assert all(r.judge == spec and not r.judge_heuristic for r in res)
    scored = [r for r in res if r.item.model != "model-C"]
    assert all(r.verdict in set(RtvVerdict) for r in scored)
    # The fake quotes the first passage verbatim -> every quote checks out...
    assert all(r.quote_verified for r in scored)
    # ...except when told to quote text that is not in the material.
    assert by_id["wq"].verdict is not None and not by_id["wq"].quote_verified
    assert by_id["bad"].verdict is None and by_id["bad"].unscored_reason
    # Deterministic fake: same request, same verdict.
    assert [r.verdict for r in again] == [r.verdict for r in scored]
    summary = metrics.summarize(res, ROB2_ITEM)
    assert {s.group["model"] for s in summary} == {"model-A", "model-B", "model-C"}
    assert next(s for s in summary if s.group["model"] == "model-C").n_unscored == 1


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (
            NoAnswer("the model refused to answer (stop_reason refusal)"),
            "judge gave no answer: the model refused to answer (stop_reason refusal)",
        ),
        ("not json", "judge answer is not a JSON object"),
    ],
)
def test_a_reply_without_an_answer_is_unscored_saying_why(payload: object, reason: str) -> None:
    from failcodes.rtv.judge import UnscoredAnswerError
    from failcodes.rtv.llm_judge import decision_from_payload

    with pytest.raises(UnscoredAnswerError) as info:
        decision_from_payload(payload, "")
    assert str(info.value) == reason
