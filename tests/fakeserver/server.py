"""Run the fake server on 127.0.0.1: in a background thread (tests) or as a process (bench).

with FakeServer() as fake:           # thread
    fake.base_url                    # http://127.0.0.1:PORT
    fake.control(faults=[{"kind": "429", "retry_after": 0}])
    fake.stats()["calls"]

python -m tests.fakeserver --latency 1.0    # process; prints "PORT <n>" then serves
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from types import TracebackType
from typing import Any

import uvicorn

from tests.fakeserver.app import FakeState, build_app


def _config(app: Any) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
        http="h11",
        timeout_keep_alive=30,
        backlog=2048,
    )


class FakeServer:
    """The fake OpenAI + Anthropic server in a daemon thread."""

    def __init__(self, *, latency: float = 0.0) -> None:
        self.state = FakeState(latency=latency)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = int(self._sock.getsockname()[1])
        self._server = uvicorn.Server(_config(build_app(self.state)))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for the OpenAI SDK."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for the Anthropic SDK."""
        return self.url

    def start(self) -> FakeServer:
        """Start serving and wait until the server accepts requests."""
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("fake server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def control(self, **body: Any) -> dict[str, Any]:
        """POST /_control (``faults=[...]``, ``latency=s``)."""
        return _post(f"{self.url}/_control", body)

    def reset(self) -> None:
        """POST /_reset."""
        _post(f"{self.url}/_reset", {})

    def requests(self) -> list[dict[str, Any]]:
        """GET /_requests: the last request bodies served, oldest first."""
        with urllib.request.urlopen(f"{self.url}/_requests", timeout=10) as resp:
            result: list[dict[str, Any]] = json.loads(resp.read())
        return result

    def stats(self) -> dict[str, Any]:
        """GET /_stats."""
        with urllib.request.urlopen(f"{self.url}/_stats", timeout=10) as resp:
            result: dict[str, Any] = json.loads(resp.read())
        return result


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        result: dict[str, Any] = json.loads(resp.read())
    return result


def serve_forever(latency: float, port: int = 0) -> None:
    """Serve in this process (for benchmarks): print ``PORT <n>`` once listening."""
    state = FakeState(latency=latency)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(_config(build_app(state))).run(sockets=[sock])
