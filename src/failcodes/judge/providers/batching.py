"""The batch protocol between the batch runner and a provider's batch API.

A :class:`BatchBackend` submits a list of (custom id, request body) pairs as one provider
batch, reports its status, and streams its results back one item at a time (never the whole
file in memory). OpenAI (Files + Batch API) and Anthropic (Message Batches) implement it in
:mod:`.openai_batch` and :mod:`.anthropic_batch` (built by :func:`.factory.batch_backend`);
this protocol imports neither, so the modules import one way only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from failcodes.judge.providers.base import ProviderReply, ProviderRequest
from failcodes.redact import redact_text


@dataclass(frozen=True)
class BatchStatus:
    """Where a provider batch stands. ``ended`` covers completed, failed, expired, cancelled."""

    batch_id: str
    ended: bool
    state: str
    total: int = 0
    succeeded: int = 0
    failed: int = 0


@dataclass(frozen=True)
class BatchItem:
    """One result of a batch: a reply, or the error that made the item fail."""

    custom_id: str
    reply: ProviderReply | None
    error: str | None = None

    def __post_init__(self) -> None:
        # a provider's error text can echo the key (it is kept in the batch ledger and the
        # unscored annotation's reason): masked here, where every backend's items pass
        if self.error is not None:
            object.__setattr__(self, "error", redact_text(self.error))


@runtime_checkable
class BatchBackend(Protocol):
    """A provider's batch API."""

    #: Most requests one batch may hold, and most bytes of its payload.
    max_requests: int
    max_bytes: int

    def body(self, request: ProviderRequest) -> dict[str, Any]:
        """The request body of one item (same as a synchronous call)."""

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The item as the batch payload wants it (its serialised size counts to max_bytes)."""

    async def submit(self, path: Path, *, metadata: dict[str, str]) -> str:
        """Create a batch from the JSONL file ``path`` (one :meth:`line` each); return its id."""

    async def status(self, batch_id: str) -> BatchStatus:
        """Retrieve a batch's status."""

    def results(self, batch_id: str) -> AsyncIterator[BatchItem]:
        """Stream an ended batch's results, one item at a time."""


class BatchProvider(Protocol):
    """What a batch backend uses of its provider: SDK client and module, spec, request body."""

    client: Any
    sdk: Any
    spec: str

    def build(self, request: ProviderRequest) -> dict[str, Any]:
        """The body of one synchronous request."""


_P = TypeVar("_P", bound=BatchProvider)


class ProviderBatch(Generic[_P]):
    """The base of a batch backend: its provider's client (key, base URL) and request body."""

    def __init__(self, provider: _P) -> None:
        self.provider = provider
        self._client = provider.client

    def body(self, request: ProviderRequest) -> dict[str, Any]:
        """The request body of one item (the same as a synchronous call's)."""
        return self.provider.build(request)
