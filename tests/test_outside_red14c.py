"""Session 14 outside checker (readers and the run's integrity): the attacks that found a fault.

Each test failed before its fix (issue 30).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.judge_helpers import make_traces, write_codebook, write_traces

KEY = "sk-test-SECRET-0f3c9a7e51"


class _EchoKey(BaseHTTPRequestHandler):
    """A server answering every call HTTP 400 with the caller's key in the message."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        key = self.headers.get("authorization", "").removeprefix("Bearer ")
        body = json.dumps(
            {"error": {"message": f"Incorrect API key provided: {key}.", "type": "x"}}
        ).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoKey)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _judge_args(tmp_path: Path, judge: str, base_url: str) -> list[str]:
    traces = write_traces(tmp_path / "traces.jsonl", make_traces(1))
    cb = write_codebook(tmp_path / "cb.yaml")
    return [
        *("judge", "retrieval", "--from", str(traces), "--codebook", str(cb)),
        *("--judge", judge, "--base-url", base_url, "--no-cache", "--max-attempts", "1"),
        *("--concurrency", "1", "-o", str(tmp_path / "run")),
    ]


def _files_holding(folder: Path, text: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_a_server_error_echoing_the_key_is_printed_without_it(
    tmp_path, capsys, monkeypatch, echo_server
) -> None:
    # the server's 400 said "Incorrect API key provided: sk-test-SECRET-..." and the error
    # line printed the key in full (a study's log writes the same line to disk)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    code, _, err = run_cli(_judge_args(tmp_path, "openai:m", echo_server), capsys)
    assert code == 2
    assert err.splitlines()[-1] == (
        f"failcodes: error: openai:m: HTTP 400 from {echo_server}/chat/completions: "
        "Error code: 400 - Incorrect API key provided: ***."
    )
    assert KEY not in err
    assert _files_holding(tmp_path, KEY) == []


@pytest.mark.parametrize("with_env", [True, False])
def test_a_key_given_as_the_model_name_is_refused(
    tmp_path, capsys, monkeypatch, echo_server, with_env
) -> None:
    # --judge openai:sk-... (the key typed where the model goes) judged with the key as the
    # model's name, written to journal.sqlite, summary.json and every annotation's coder
    if with_env:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
    else:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = run_cli(_judge_args(tmp_path, f"openai:{KEY}", echo_server), capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        "failcodes: error: --judge: the model name is an API key; name the model "
        "(openai:gpt-5-mini) and give the key in the environment (OPENAI_API_KEY or "
        "ANTHROPIC_API_KEY)"
    ]
    assert KEY not in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cb.yaml", "traces.jsonl"]
