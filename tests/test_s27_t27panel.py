"""Session 27, helper t27panel (issue 30): a two-judge panel within 1.2x of one judge."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from failcodes.judge import JudgeJob, JudgeSettings, Limits, RetryPolicy, make_coder, run_judge
from failcodes.judge.journal import Journal
from failcodes.judge.run import read_annotations
from failcodes.units import UnitKind, retrieval_units
from tests.fakeserver.answers import PrefixCache, anthropic_message
from tests.judge_helpers import make_codebook, make_traces

CB = make_codebook()
ONE = JudgeSettings(limits=Limits(concurrency=1), retry=RetryPolicy.no_wait())


class _Messages(BaseHTTPRequestHandler):
    """A Messages API answering each call with the fake's message, as bytes it keeps."""

    sent: dict[str, bytes]
    cache: PrefixCache
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with self.lock:
            n = len(self.sent) + 1
            message = anthropic_message(body, None, self.cache, n)
            # a vendor's key first, a non-ASCII value, the SDK's optional fields absent
            message = {"x_vendor": {"région": "eu", "n": 7}, **message}
            data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
            self.sent[message["id"]] = data
        self.send_response(200)
        # every other call under a text content type: a compatible server's JSON is read
        # as JSON whatever its content type, as the SDK read it into its Message before
        kind = "application/json" if n % 2 else "text/plain; charset=utf-8"
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def messages_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, dict[str, bytes]]]:
    sent: dict[str, bytes] = {}
    handler = type("Handler", (_Messages,), {"sent": sent, "cache": PrefixCache()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-t27panel")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", sent
    finally:
        server.shutdown()
        server.server_close()


def test_an_anthropic_reply_is_journaled_as_the_server_sent_it(
    messages_api: tuple[str, dict[str, bytes]], tmp_path: Path
) -> None:
    # The reply was built into the SDK's Message (a model per content block) and dumped
    # back: the journal kept the dump, its keys in the SDK's order (here 'id' first, the
    # vendor's key last) plus the SDK's optional fields as null (container, diagnostics,
    # stop_details, a tool call's caller and toolset_name, the usage's cache_creation,
    # server_tool_use, service_tier, speed...; checked with main's src: the first call's
    # dump began b'{"id":"msg_fake_1","container":null,...'). It keeps the body as the
    # server sent it, as the OpenAI provider's journal and a batch result do: the value
    # re-encoded as the server encoded it (compact, UTF-8) is the server's bytes, one for one.
    url, sent = messages_api
    units = retrieval_units(make_traces(2))[:4]
    coder = make_coder("anthropic:fake-claude", base_url=url)
    summary = run_judge(
        units, coder, JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "run", settings=ONE)
    )
    assert (summary.calls, summary.scored) == (4, 4)  # 2 of them under text/plain
    journal = Journal(tmp_path / "run")
    try:
        raws = [journal.raw(u.id)[1] for u in units]
    finally:
        journal.close()
    assert len(sent) == 4
    for raw in raws:
        assert raw is not None
        again = json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode()
        assert again == sent[raw["id"]]
        assert list(raw)[:2] == ["x_vendor", "id"]
    # the codes are the tool call's input the server sent, dimension by dimension
    by_id = {a.unit_id: a for a in read_annotations(tmp_path / "run")}
    for unit, raw in zip(units, raws, strict=True):
        (call,) = raw["content"]
        assert by_id[unit.id].codes == {d: v["code"] for d, v in call["input"].items()}
