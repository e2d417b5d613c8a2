"""An RtV verdict judge backed by a failcodes.judge LLM provider (Anthropic, OpenAI, compatible).

The provider receives a constrained prompt (seed 000's verification step: item, question,
model output, explanation, retrieved passages) and a JSON schema; the answer is
``{"codes": {"verdict": supported | contradicted | not found | out of scope}, "quote": ...,
"rationale": ...}`` (the ``codes`` wrapper matches the structured-output shape the judge
providers and the test fake server use). An answer that cannot be mapped to a verdict raises
:class:`~failcodes.rtv.judge.UnscoredAnswerError` (recorded as unscored, never defaulted);
transient provider failures are retried with back-off by the judge's one retry loop
(:func:`failcodes.judge.retry.complete_with_retry`, asynchronous sleeps).
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Sequence
from typing import Any

from failcodes.judge.limits import RetryPolicy
from failcodes.judge.providers.base import LLMProvider, Message, ProviderRequest
from failcodes.judge.retry import complete_with_retry
from failcodes.judge.schema import NoAnswer
from failcodes.rtv.items import RtvItem
from failcodes.rtv.judge import JudgeDecision, RtvVerdict, UnscoredAnswerError, parse_verdict
from failcodes.rtv.retrieval import RetrievedChunk

SYSTEM_PROMPT = """You verify whether a model's answer about a source document is grounded in \
that document. You receive the document id, a question, the model's answer and explanation, \
and passages retrieved from the document. Use only the passages.
Return exactly one verdict:
- supported: a passage explicitly supports the answer and explanation;
- contradicted: a passage explicitly contradicts them;
- not found: the passages neither support nor contradict them;
- out of scope: the answer makes no claim the document could settle.
Give a verbatim quote copied from one passage that grounds your verdict (empty for not found \
or out of scope) and a one-sentence rationale."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "codes": {
            "type": "object",
            "properties": {"verdict": {"type": "string", "enum": [v.value for v in RtvVerdict]}},
            "required": ["verdict"],
            "additionalProperties": False,
        },
        "quote": {"type": "string"},
        "rationale": {"type": "string"},
    },
    "required": ["codes", "quote", "rationale"],
    "additionalProperties": False,
}


def render_item(item: RtvItem, passages: Sequence[RetrievedChunk]) -> str:
    """The user message: item fields, then the passages in rank order."""
    parts = [
        f"Document: {html.escape(item.doc_id, quote=False)}",
        f"Question: {html.escape(item.question, quote=False)}",
        f"Model answer: {html.escape(item.response, quote=False)}",
        f"Model explanation: {html.escape(item.explanation or '', quote=False)}",
        "Retrieved passages:",
    ]
    for p in passages:
        parts.append(
            f'<passage rank="{p.rank}" id="{p.chunk.chunk_id}">\n'
            f"{html.escape(p.chunk.text, quote=False)}\n</passage>"
        )
    return "\n".join(parts)


def decision_from_payload(payload: object, text: str) -> JudgeDecision:
    """Map a provider payload onto a decision, or raise UnscoredAnswerError."""
    if isinstance(payload, NoAnswer):  # a refusal, a cut-off answer, no tool call: say which
        raise UnscoredAnswerError(f"judge gave no answer: {payload}")
    if not isinstance(payload, dict):
        raise UnscoredAnswerError("judge answer is not a JSON object")
    codes = payload.get("codes")
    raw = codes.get("verdict") if isinstance(codes, dict) else payload.get("verdict")
    if not isinstance(raw, str):
        raise UnscoredAnswerError("judge answer has no verdict")
    return JudgeDecision(
        verdict=parse_verdict(raw),
        quote=str(payload.get("quote") or ""),
        rationale=str(payload.get("rationale") or ""),
        raw=text,
    )


class LLMVerdictJudge:
    """Verify items with an LLM provider from :func:`failcodes.judge.make_coder`.

    Calls run one at a time on a private event loop; call :meth:`close` when done.
    """

    heuristic = False

    def __init__(
        self,
        provider: LLMProvider,
        *,
        max_output_tokens: int = 1024,
        attempts: int = 4,
        backoff: float = 1.0,
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be >= 1")
        self.provider = provider
        self.name = provider.spec
        self.max_output_tokens = max_output_tokens
        self.attempts = attempts
        self.backoff = backoff
        self.retry = RetryPolicy(max_attempts=attempts, initial_wait=backoff, max_wait=30.0)
        self._loop = asyncio.new_event_loop()

    def judge(self, item: RtvItem, passages: Sequence[RetrievedChunk]) -> JudgeDecision:
        """Ask the provider for one item's verdict, quote and rationale."""
        request = ProviderRequest(
            system=SYSTEM_PROMPT,
            messages=(Message(role="user", content=render_item(item, passages)),),
            schema=SCHEMA,
            schema_name="rtv_verdict",
            max_output_tokens=self.max_output_tokens,
        )
        reply, _attempts = self._loop.run_until_complete(
            complete_with_retry(self.provider, request, self.retry)
        )
        return decision_from_payload(reply.payload, reply.text)

    def close(self) -> None:
        """Release the provider's client and the event loop."""
        self._loop.run_until_complete(self.provider.aclose())
        self._loop.close()
