"""Batch endpoints of the fake server: OpenAI Files + Batch API and Anthropic Message Batches.

OpenAI: ``POST /v1/files`` (multipart JSONL upload), ``POST /v1/batches``, ``GET
/v1/batches/{id}``, ``GET /v1/files/{id}/content``. Anthropic: ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``.

A batch is ``in_progress`` until ``batch_delay`` seconds have passed since it was created;
the first retrieve after that processes every request through the same answer functions as
the synchronous endpoints (so prompt caching and the markers of :mod:`answers` apply) and
writes the results to a temporary file, streamed back on download. ``batch_fail_items`` (set
through ``/_control``) makes the next N processed items fail with a server error, so clients
can be tested retrying failed items. Batch tokens are counted apart (``usage_batch``) so a
benchmark can price them at the batch discount.
"""

from __future__ import annotations

import atexit
import email.parser
import email.policy
import json
import shutil
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.fakeserver.answers import (
    ANTHROPIC_ANSWER_FAULTS,
    DEEP,
    PrefixCache,
    anthropic_message,
    openai_completion,
)

#: A key as a provider's error text may echo it (``errored_key``): an ``sk-`` word.
ECHOED = "sk-ant-api03-ECHOED0f3c9a7e51b2"


def _scratch_folder() -> Path:
    """A temporary folder for batch payloads, removed when the process ends.

    (Each test process used to leave one ``fakebatch-*`` folder in the temporary directory:
    839 of them after a few hundred test runs.)
    """
    folder = Path(tempfile.mkdtemp(prefix="fakebatch-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@dataclass
class BatchState:
    """Files and batches of one fake server (payloads live in a temporary folder)."""

    folder: Path = field(default_factory=_scratch_folder)
    delay: float = 0.0
    fail_items: int = 0
    #: Odd results of the next Anthropic batch items, one each: ``errored``, ``expired``,
    #: ``canceled``, ``errored_bare`` (an error with no inner error), ``errored_key`` (an error
    #: echoing an API key, :data:`ECHOED`), ``unknown_result`` (a
    #: result type the SDK does not know), or an answer fault of
    #: :data:`~tests.fakeserver.answers.ANTHROPIC_ANSWER_FAULTS` (a succeeded message).
    item_faults: deque[str] = field(default_factory=deque)
    #: The next N retrieves of an Anthropic batch answer 529 overloaded_error.
    retrieve_overloaded: int = 0
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    usage: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    counter: int = 0

    def next_id(self, prefix: str) -> str:
        """A new object id."""
        self.counter += 1
        return f"{prefix}_fake{self.counter:06d}"

    def reset(self) -> None:
        """Forget batches, files and counters (files on disk are removed when the process ends)."""
        self.files.clear()
        self.batches.clear()
        self.usage.clear()
        self.calls.clear()
        self.fail_items = 0
        self.item_faults.clear()
        self.retrieve_overloaded = 0


def _count(usage: Counter[str], provider: str, out: dict[str, Any]) -> None:
    u = Counter(out.get("usage") or {})  # an odd answer may have none
    if provider == "anthropic":
        read, write = u["cache_read_input_tokens"], u["cache_creation_input_tokens"]
        usage["input_tokens"] += u["input_tokens"] + read + write
        usage["cached_tokens"] += read
        usage["cache_write_tokens"] += write
        usage["output_tokens"] += u["output_tokens"]
    else:
        usage["input_tokens"] += u["prompt_tokens"]
        usage["cached_tokens"] += u["prompt_tokens_details"]["cached_tokens"]
        usage["output_tokens"] += u["completion_tokens"]


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _process(bs: BatchState, cache: PrefixCache, batch: dict[str, Any]) -> None:
    """Answer every request of ``batch`` into a results file (streaming, line by line)."""
    provider = batch["provider"]
    out_path = bs.folder / f"{batch['id']}.results.jsonl"
    ok = failed = 0
    counts: Counter[str] = Counter()
    with out_path.open("w", encoding="utf-8") as out:
        for item in _lines(Path(batch["input_path"])):
            bs.counter += 1
            custom_id = item["custom_id"]
            fail = bs.fail_items > 0
            if fail:
                bs.fail_items -= 1
            if provider == "openai":
                if fail:
                    line = {
                        "id": f"batch_req_{bs.counter}",
                        "custom_id": custom_id,
                        "response": {
                            "status_code": 500,
                            "request_id": f"req_{bs.counter}",
                            "body": {"error": {"message": "server error (fake)"}},
                        },
                        "error": None,
                    }
                else:
                    body = openai_completion(item["body"], None, cache, bs.counter)
                    _count(bs.usage, provider, body)
                    line = {
                        "id": f"batch_req_{bs.counter}",
                        "custom_id": custom_id,
                        "response": {
                            "status_code": 200,
                            "request_id": f"req_{bs.counter}",
                            "body": body,
                        },
                        "error": None,
                    }
            else:
                odd = bs.item_faults.popleft() if bs.item_faults and not fail else None
                result = _anthropic_result(bs, cache, item["params"], "errored" if fail else odd)
                fail = result["type"] != "succeeded"
                counts[result["type"]] += 1
                line = {"custom_id": custom_id, "result": result}
            cache.flush()  # items run one after another: the next one reads the cache
            ok += int(not fail)
            failed += int(fail)
            text = json.dumps(line).replace(f'"{DEEP}"', "[" * 100_000 + "]" * 100_000)
            out.write(text + "\n")
    batch["ok"], batch["failed"], batch["counts"] = ok, failed, dict(counts)
    batch["result_path"] = str(out_path)
    batch["ended_at"] = time.time()
    if provider == "openai":
        file_id = bs.next_id("file")
        bs.files[file_id] = {"path": str(out_path), "filename": "output.jsonl"}
        batch["output_file_id"] = file_id


def _anthropic_result(
    bs: BatchState, cache: PrefixCache, params: dict[str, Any], odd: str | None
) -> dict[str, Any]:
    """One Anthropic batch result: succeeded (an answer fault applied), or ``odd``."""
    if odd in ("errored", "errored_bare", "errored_key"):
        text = "server error (fake)" if odd != "errored_key" else f"invalid x-api-key: {ECHOED}"
        inner = {"type": "api_error", "message": text}
        error = {"type": "error", "error": inner} if odd != "errored_bare" else {"type": "error"}
        return {"type": "errored", "error": error}
    if odd in ("expired", "canceled"):
        return {"type": odd}
    if odd == "unknown_result":
        return {"type": "postponed", "until": "tomorrow"}
    fault = odd if odd in ANTHROPIC_ANSWER_FAULTS else None
    message = anthropic_message(params, fault, cache, bs.counter)
    _count(bs.usage, "anthropic", message)
    return {"type": "succeeded", "message": message}


def _openai_view(b: dict[str, Any]) -> dict[str, Any]:
    done = "ended_at" in b
    return {
        "id": b["id"],
        "object": "batch",
        "endpoint": b["endpoint"],
        "errors": None,
        "input_file_id": b["input_file_id"],
        "completion_window": "24h",
        "status": "completed" if done else "in_progress",
        "output_file_id": b.get("output_file_id"),
        "error_file_id": None,
        "created_at": int(b["created_at"]),
        "completed_at": int(b["ended_at"]) if done else None,
        "request_counts": {
            "total": b["total"],
            "completed": b.get("ok", 0),
            "failed": b.get("failed", 0),
        },
        "metadata": b.get("metadata"),
    }


def _anthropic_view(b: dict[str, Any], base: str) -> dict[str, Any]:
    done = "ended_at" in b
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(b["created_at"]))
    return {
        "id": b["id"],
        "type": "message_batch",
        "processing_status": "ended" if done else "in_progress",
        "request_counts": {
            "processing": 0 if done else b["total"],
            "succeeded": b.get("ok", 0),
            "errored": b.get("counts", {}).get("errored", 0),
            "canceled": b.get("counts", {}).get("canceled", 0),
            "expired": b.get("counts", {}).get("expired", 0),
        },
        "created_at": iso,
        "expires_at": iso,
        "ended_at": iso if done else None,
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": f"{base}/v1/messages/batches/{b['id']}/results" if done else None,
    }


def batch_routes(bs: BatchState, cache: Callable[[], PrefixCache]) -> list[Route]:
    """The Starlette routes of the batch endpoints, sharing the prompt cache with the sync ones."""

    def _maybe_process(b: dict[str, Any]) -> None:
        if "ended_at" not in b and time.time() - b["created_at"] >= bs.delay:
            _process(bs, cache(), b)

    async def upload(request: Request) -> Response:
        bs.calls["files.create"] += 1
        fields = _multipart(request.headers["content-type"], await request.body())
        filename, data = fields["file"]
        file_id = bs.next_id("file")
        path = bs.folder / f"{file_id}.jsonl"
        path.write_bytes(data)
        size = len(data)
        bs.files[file_id] = {"path": str(path), "filename": filename or "input.jsonl"}
        return JSONResponse(
            {
                "id": file_id,
                "object": "file",
                "bytes": size,
                "created_at": int(time.time()),
                "filename": filename or "input.jsonl",
                "purpose": fields.get("purpose", ("", b"batch"))[1].decode(),
                "status": "processed",
            }
        )

    async def file_content(request: Request) -> Response:
        bs.calls["files.content"] += 1
        f = bs.files.get(request.path_params["file_id"])
        if f is None:
            return JSONResponse({"error": {"message": "no such file"}}, status_code=404)
        return StreamingResponse(_stream(Path(f["path"])), media_type="application/octet-stream")

    async def openai_create(request: Request) -> Response:
        bs.calls["batches.create"] += 1
        body = json.loads(await request.body())
        f = bs.files.get(body["input_file_id"])
        if f is None:
            return JSONResponse({"error": {"message": "no such file"}}, status_code=404)
        total = sum(1 for _ in _lines(Path(f["path"])))
        batch_id = bs.next_id("batch")
        bs.batches[batch_id] = {
            "id": batch_id,
            "provider": "openai",
            "endpoint": body["endpoint"],
            "input_file_id": body["input_file_id"],
            "input_path": f["path"],
            "created_at": time.time(),
            "total": total,
            "metadata": body.get("metadata"),
        }
        return JSONResponse(_openai_view(bs.batches[batch_id]))

    async def openai_retrieve(request: Request) -> Response:
        bs.calls["batches.retrieve"] += 1
        b = bs.batches.get(request.path_params["batch_id"])
        if b is None or b["provider"] != "openai":
            return JSONResponse({"error": {"message": "no such batch"}}, status_code=404)
        _maybe_process(b)
        return JSONResponse(_openai_view(b))

    async def anthropic_create(request: Request) -> Response:
        bs.calls["messages.batches.create"] += 1
        batch_id = bs.next_id("msgbatch")
        path = bs.folder / f"{batch_id}.requests.jsonl"
        total = 0
        with path.open("w", encoding="utf-8") as fh:
            for req in json.loads(await request.body())["requests"]:
                fh.write(json.dumps(req) + "\n")
                total += 1
        bs.batches[batch_id] = {
            "id": batch_id,
            "provider": "anthropic",
            "input_path": str(path),
            "created_at": time.time(),
            "total": total,
        }
        return JSONResponse(_anthropic_view(bs.batches[batch_id], _base(request)))

    async def anthropic_retrieve(request: Request) -> Response:
        bs.calls["messages.batches.retrieve"] += 1
        b = bs.batches.get(request.path_params["batch_id"])
        if b is None or b["provider"] != "anthropic":
            return _not_found_anthropic()
        if bs.retrieve_overloaded > 0:
            bs.retrieve_overloaded -= 1
            error = {"type": "overloaded_error", "message": "Overloaded (fake)"}
            return JSONResponse({"type": "error", "error": error}, status_code=529)
        _maybe_process(b)
        return JSONResponse(_anthropic_view(b, _base(request)))

    async def anthropic_results(request: Request) -> Response:
        bs.calls["messages.batches.results"] += 1
        b = bs.batches.get(request.path_params["batch_id"])
        if b is None or "result_path" not in b:
            return _not_found_anthropic()
        return StreamingResponse(_stream(Path(b["result_path"])), media_type="application/binary")

    return [
        Route("/v1/files", upload, methods=["POST"]),
        Route("/v1/files/{file_id}/content", file_content, methods=["GET"]),
        Route("/v1/batches", openai_create, methods=["POST"]),
        Route("/v1/batches/{batch_id}", openai_retrieve, methods=["GET"]),
        Route("/v1/messages/batches", anthropic_create, methods=["POST"]),
        Route("/v1/messages/batches/{batch_id}", anthropic_retrieve, methods=["GET"]),
        Route("/v1/messages/batches/{batch_id}/results", anthropic_results, methods=["GET"]),
    ]


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Parse a multipart/form-data body (stdlib only): name -> (filename, bytes)."""
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    out: dict[str, tuple[str | None, bytes]] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        out[str(name)] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return out


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _not_found_anthropic() -> Response:
    body = {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}
    return JSONResponse(body, status_code=404)


def _stream(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 16):
            yield chunk
