"""Credentials in URLs are never printed (issue 16)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from failcodes.redact import redact_text, redact_url


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "cannot reach Label Studio at http://alice:s3cret@127.0.0.1:9/ to list projects",
            "cannot reach Label Studio at http://***@127.0.0.1:9/ to list projects",
        ),
        ("see https://h.example/x?token=abc&page=2.", "see https://h.example/x?token=***&page=2."),
        ("plain http://127.0.0.1:8080/v1 stays", "plain http://127.0.0.1:8080/v1 stays"),
        ("no url here", "no url here"),
    ],
)
def test_redact_text(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_redact_url_keeps_the_endpoint() -> None:
    assert redact_url("https://u:p@ls.example.org:8443/base?api_key=k&x=1") == (
        "https://***@ls.example.org:8443/base?api_key=***&x=1"
    )


def test_label_studio_url_with_credentials_is_not_echoed(tmp_path: Path) -> None:
    url = "http://alice:pa55w0rd-CANARY@127.0.0.1:9"  # nothing listens on port 9
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "failcodes", "labelstudio", "pull", "--part", "retrieval"),
            *("--project", "proj", "--url", url, "--token", "tok-CANARY", "-o", "a.jsonl"),
        ],
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "CANARY" not in proc.stderr + proc.stdout
    assert "http://***@127.0.0.1:9" in proc.stderr
    assert list(tmp_path.iterdir()) == []
