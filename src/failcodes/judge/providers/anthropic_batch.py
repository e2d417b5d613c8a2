"""Anthropic Message Batches (``/v1/messages/batches``) for the batch runner.

Each item is a Messages request (the same body as a synchronous call, with the cached system
block); results are streamed by the SDK's JSONL decoder, one item at a time. Errored,
cancelled and expired items (and a result type this SDK does not know) come back as failed
items, which the runner retries, then records unscored with the reason.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from failcodes.errors import ProviderError
from failcodes.judge.providers.anthropic import AnthropicProvider, reply_from_message
from failcodes.judge.providers.batching import BatchItem, BatchStatus, ProviderBatch


class AnthropicBatch(ProviderBatch[AnthropicProvider]):
    """Message Batches of an :class:`AnthropicProvider` (its client, key and base URL)."""

    max_requests = 100_000
    max_bytes = 250 * 1024 * 1024  # the API's limit is 256 MB per batch

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """One request of the batch."""
        return {"custom_id": custom_id, "params": body}

    async def submit(self, path: Path, *, metadata: dict[str, str]) -> str:
        """Create a message batch from the requests in ``path``."""
        del metadata  # Message Batches take no metadata
        with path.open(encoding="utf-8") as fh:
            requests = [json.loads(line) for line in fh if line.strip()]
        try:
            batch = await self._client.messages.batches.create(requests=requests)
        except self.provider.sdk.APIError as exc:
            raise ProviderError(f"{self.provider.spec}: batch submission failed: {exc}") from None
        return str(batch.id)

    async def status(self, batch_id: str) -> BatchStatus:
        """Retrieve the batch."""
        b = await self._client.messages.batches.retrieve(batch_id)
        c = b.request_counts
        return BatchStatus(
            batch_id=batch_id,
            ended=b.processing_status == "ended",
            state=b.processing_status,
            total=c.processing + c.succeeded + c.errored + c.canceled + c.expired,
            succeeded=c.succeeded,
            failed=c.errored + c.canceled + c.expired,
        )

    async def results(self, batch_id: str) -> AsyncIterator[BatchItem]:
        """Stream the results of an ended batch."""
        decoder = await self._client.messages.batches.results(batch_id)
        async for entry in decoder:
            result = entry.result
            kind = getattr(result, "type", None)
            if kind == "succeeded":
                yield BatchItem(entry.custom_id, reply_from_message(result.message, None, {}))
            else:  # errored, canceled, expired, or a type this SDK does not know
                yield BatchItem(entry.custom_id, None, _failure(result))


def _failure(result: Any) -> str:
    """Why a batch item failed: ``TYPE: MESSAGE`` of an errored item's error, else its type.

    An errored item's error may lack the inner error (it raised AttributeError, a traceback).
    """
    body = result.model_dump(mode="json", warnings=False) if hasattr(result, "model_dump") else {}
    kind = str(body.get("type") or "unknown result")
    outer = body.get("error")
    inner = outer.get("error") if isinstance(outer, dict) else None
    error = inner if isinstance(inner, dict) else outer if isinstance(outer, dict) else None
    if kind != "errored" or error is None:
        return kind
    return f"{error.get('type') or 'error'}: {error.get('message') or 'no message'}"
