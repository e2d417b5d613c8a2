"""Anthropic Message Batches (``/v1/messages/batches``) for the batch runner.

Each item is a Messages request (the same body as a synchronous call, with the cached system
block); results are streamed by the SDK's JSONL decoder, one item at a time. Errored,
cancelled and expired items (and a result type this SDK does not know) come back as failed
items, which the runner retries, then records unscored with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from failcodes.errors import ProviderError
from failcodes.judge.providers.anthropic import KEY_VAR, AnthropicProvider, reply_from_body
from failcodes.judge.providers.base import too_deep
from failcodes.judge.providers.batching import BatchItem, BatchStatus, ProviderBatch
from failcodes.judge.providers.sdkerrors import sdk_errors

AUTH = f"Anthropic rejected the key in {KEY_VAR} (401); check it, or use --judge offline"


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

    def _url(self, batch_id: str) -> str:
        return f"{str(self._client.base_url).rstrip('/')}/v1/messages/batches/{batch_id}"

    async def status(self, batch_id: str) -> BatchStatus:
        """Retrieve the batch (a 429, 5xx or 529 is a :class:`RetryableProviderError`)."""
        with sdk_errors(
            self.provider.sdk, spec=self.provider.spec, auth_message=AUTH, url=self._url(batch_id)
        ):
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
        """Stream the results of an ended batch, one line at a time.

        The lines are decoded here, not by the SDK's decoder: a line nested too deeply to
        decode (a runaway answer) raised RecursionError out of it, ending the stream and the
        run; now that item is an answer sent back as invalid, and the stream goes on.
        """
        with sdk_errors(
            self.provider.sdk, spec=self.provider.spec, auth_message=AUTH, url=self._url(batch_id)
        ):
            decoder = await self._client.messages.batches.results(batch_id)
        try:
            async for line in decoder.http_response.aiter_lines():
                if line.strip():
                    item = _item(line)
                    if item is not None:
                        yield item
        finally:
            await decoder.close()


_CUSTOM_ID = re.compile(r'"custom_id"\s*:\s*"([^"\\]+)"')


def _item(line: str) -> BatchItem | None:
    """One result line as a batch item (None: a line naming no item, left unanswered)."""
    try:
        entry = json.loads(line)
    except (RecursionError, ValueError) as exc:
        found = _CUSTOM_ID.search(line[:4096])
        if found is None:
            return None
        if isinstance(exc, RecursionError):
            return BatchItem(found.group(1), too_deep({}))
        return BatchItem(found.group(1), None, "a result line that is not JSON")
    if not isinstance(entry, dict) or not isinstance(entry.get("custom_id"), str):
        return None
    result = entry.get("result")
    result = result if isinstance(result, dict) else {}
    message = result.get("message")
    if result.get("type") == "succeeded" and isinstance(message, dict):
        return BatchItem(entry["custom_id"], reply_from_body(message, None, {}))
    # errored, canceled, expired, or a type this client does not know
    return BatchItem(entry["custom_id"], None, _failure(result))


def _failure(result: dict[str, Any]) -> str:
    """Why a batch item failed: ``TYPE: MESSAGE`` of an errored item's error, else its type.

    An errored item's error may lack the inner error (it raised AttributeError, a traceback).
    """
    kind = str(result.get("type") or "unknown result")
    outer = result.get("error")
    inner = outer.get("error") if isinstance(outer, dict) else None
    error = inner if isinstance(inner, dict) else outer if isinstance(outer, dict) else None
    if kind != "errored" or error is None:
        return kind
    return f"{error.get('type') or 'error'}: {error.get('message') or 'no message'}"
