"""The one small protocol between the engine and its providers.

An LLM provider turns a :class:`ProviderRequest` (system prefix, messages, answer schema)
into a :class:`ProviderReply` (the structured payload, token usage, raw request and
response). A *direct coder* (the offline heuristic) codes a unit itself without prompts.
Providers map their SDK's failures onto :class:`RetryableProviderError` (429, 5xx, timeouts,
connection errors; with the server's retry-after when it sent one) and
:class:`~failcodes.errors.ProviderError` / :class:`~failcodes.errors.ConfigError` for the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from failcodes.annotations import CoderKind
from failcodes.codebook import Part
from failcodes.errors import ProviderError
from failcodes.judge.schema import Answer, NoAnswer
from failcodes.units import Unit


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class ProviderRequest:
    """What the engine asks an LLM provider for."""

    system: str
    messages: tuple[Message, ...]
    schema: dict[str, Any]
    schema_name: str
    max_output_tokens: int


@dataclass(frozen=True)
class TokenUsage:
    """Tokens of one call. ``input_tokens`` counts all prompt tokens, cached ones included."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.output_tokens + other.output_tokens,
        )


@dataclass(frozen=True)
class ProviderReply:
    """A provider's answer.

    ``payload`` is the decoded structured output, or the raw text when it could not be
    decoded (the engine's validation then reports why).
    """

    payload: object
    text: str
    usage: TokenUsage
    raw_request: dict[str, Any]
    raw_response: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


class RetryableProviderError(ProviderError):
    """A transient failure (429, 5xx, timeout, connection): the engine backs off and retries.

    ``retry_after`` is the server's requested wait in seconds, when it gave one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@runtime_checkable
class LLMProvider(Protocol):
    """A provider that answers prompts with structured output."""

    spec: str
    provider: str
    model: str
    coder_kind: CoderKind

    def identity(self) -> dict[str, Any]:
        """Everything about the provider that changes answers (for cache keys), no secrets."""

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Send one request and return the reply (raising the errors described above)."""

    async def aclose(self) -> None:
        """Release the client."""


@dataclass(frozen=True)
class DirectResult:
    """A direct coder's result: an answer, or the reason it cannot code the unit."""

    answer: Answer | None
    reason: str | None = None


@runtime_checkable
class DirectCoder(Protocol):
    """A coder that needs no prompts (the offline heuristic baseline)."""

    spec: str
    provider: str
    model: str
    coder_kind: CoderKind

    def code(self, unit: Unit, part: Part) -> DirectResult:
        """Code one unit under one codebook part."""


#: The reason of a reply whose body nests too deeply to decode (the words of parse_answer's).
TOO_DEEP = "the answer is not valid JSON (nested too deeply)"


def too_deep(raw_request: dict[str, Any]) -> ProviderReply:
    """The reply to a body nested too deeply to decode (the SDK's JSON decoding recursed out).

    A model's runaway answer (a tool input of ``[`` nested 100,000 deep) raised RecursionError,
    a traceback that ended the run: it holds no answer and is sent back as invalid. Its tokens
    are unknown: counted 0.
    """
    return ProviderReply(
        payload=NoAnswer(TOO_DEEP),
        text=f"({TOO_DEEP})",
        usage=TokenUsage(),
        raw_request=raw_request,
        raw_response={"error": TOO_DEEP},
    )


def token_count(value: object) -> int:
    """A token count of a usage block (0 for anything that is no non-negative number).

    A compatible server's usage may lack a field or hold ``null``, a string or a float.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0) if value == value and abs(value) != float("inf") else 0


def parse_retry_after(headers: Any) -> float | None:
    """Read ``retry-after-ms`` / ``retry-after`` (seconds) from response headers, if any."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except (TypeError, ValueError):
            continue
        if seconds >= 0:
            return seconds
    return None
