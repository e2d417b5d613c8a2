"""OpenAI Batch API (``/v1/batches`` over an uploaded JSONL file) for the batch runner.

Each item is a Chat Completions request (the same body as a synchronous call); results are
read from the output file as a stream, line by line. Items of the error file (or lines with
a non-200 status) come back as failed items, which the runner retries.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

from failcodes.errors import ProviderError
from failcodes.judge.providers.batching import BatchItem, BatchStatus, ProviderBatch
from failcodes.judge.providers.openai import KEY_VAR, OpenAIProvider, reply_from_completion
from failcodes.judge.providers.sdkerrors import sdk_errors

ENDPOINT: Final = "/v1/chat/completions"
_ENDED = ("completed", "failed", "expired", "cancelled")


class OpenAIBatch(ProviderBatch[OpenAIProvider]):
    """Batch API of an :class:`OpenAIProvider` (its client, key and base URL)."""

    max_requests = 50_000
    max_bytes = 190 * 1024 * 1024  # the API's limit is 200 MB per input file

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """One line of the batch input file."""
        return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}

    async def submit(self, path: Path, *, metadata: dict[str, str]) -> str:
        """Upload ``path`` and create a batch over it."""
        try:
            with path.open("rb") as fh:
                uploaded = await self._client.files.create(file=(path.name, fh), purpose="batch")
            batch = await self._client.batches.create(
                input_file_id=uploaded.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata=metadata,
            )
        except self.provider.sdk.APIError as exc:
            raise ProviderError(f"{self.provider.spec}: batch submission failed: {exc}") from None
        return str(batch.id)

    async def status(self, batch_id: str) -> BatchStatus:
        """Retrieve the batch (a 429 or 5xx is a :class:`RetryableProviderError`)."""
        url = f"{str(self._client.base_url).rstrip('/')}/batches/{batch_id}"
        auth = f"the server rejected the key in {KEY_VAR} (401); check it, or use --judge offline"
        with sdk_errors(self.provider.sdk, spec=self.provider.spec, auth_message=auth, url=url):
            b = await self._client.batches.retrieve(batch_id)
        counts = b.request_counts
        return BatchStatus(
            batch_id=batch_id,
            ended=b.status in _ENDED,
            state=b.status,
            total=counts.total if counts else 0,
            succeeded=counts.completed if counts else 0,
            failed=counts.failed if counts else 0,
        )

    async def results(self, batch_id: str) -> AsyncIterator[BatchItem]:
        """Stream the output file (then the error file) of an ended batch."""
        b = await self._client.batches.retrieve(batch_id)
        for file_id in (b.output_file_id, b.error_file_id):
            if not file_id:
                continue
            async with self._client.files.with_streaming_response.content(file_id) as resp:
                async for raw in resp.iter_lines():
                    if raw.strip():
                        yield self._item(json.loads(raw))

    def _item(self, line: dict[str, Any]) -> BatchItem:
        custom_id = str(line.get("custom_id"))
        response = line.get("response") or {}
        if line.get("error") or response.get("status_code") != 200:
            error = line.get("error") or (response.get("body") or {}).get("error") or {}
            message = error.get("message") if isinstance(error, dict) else str(error)
            return BatchItem(
                custom_id, None, f"HTTP {response.get('status_code')}: {message or 'failed'}"
            )
        return BatchItem(custom_id, reply_from_completion(response["body"], {}))
