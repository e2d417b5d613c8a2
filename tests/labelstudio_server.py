"""A real Label Studio server for the tests, started once per session.

The server lives in its own virtual environment (it pins openai<2): ``make test`` creates
``.venv-labelstudio`` and sets ``FAILCODES_LABEL_STUDIO_BIN``. Without it the tests skip
locally, but fail when ``CI`` is set: CI must really run them. Steps follow
../shared/guides/label-studio.md (legacy token, no outgoing calls, 127.0.0.1 only).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN_ENV = "FAILCODES_LABEL_STUDIO_BIN"
START_TIMEOUT_S = 300.0  # first start on a fresh data dir runs migrations (~28 s idle)


def _binary() -> Path | None:
    explicit = os.environ.get(BIN_ENV)
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            pytest.fail(f"{BIN_ENV}={explicit} does not exist")
        return path
    local = REPO / ".venv-labelstudio" / "bin" / "label-studio"
    return local if local.is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _data_root() -> str | None:
    """Prefer RAM (/dev/shm): SQLite commits are the server's main cost per annotation."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return None
    # Containers often mount a 64 MB /dev/shm: use it only with room to spare.
    return str(shm) if shutil.disk_usage(shm).free >= 1 << 30 else None


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as resp:
            return b"UP" in resp.read()
    except (urllib.error.URLError, OSError):
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=20)


@pytest.fixture(scope="session")
def labelstudio_server() -> Iterator[tuple[str, str]]:
    """Start Label Studio on 127.0.0.1 (free port, temp data dir); yield (url, token)."""
    binary = _binary()
    if binary is None:
        reason = (
            f"no Label Studio server: set {BIN_ENV} or run `make labelstudio-venv` "
            "(creates .venv-labelstudio)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the real-server tests")
        pytest.skip(reason)
    data = Path(tempfile.mkdtemp(prefix="failcodes-ls-", dir=_data_root()))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    token = secrets.token_hex(20)  # a throwaway token for this throwaway server
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LABEL_STUDIO_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(
        LABEL_STUDIO_BASE_DATA_DIR=str(data),
        LABEL_STUDIO_USERNAME="admin@failcodes.test",
        LABEL_STUDIO_PASSWORD=secrets.token_hex(12),
        LABEL_STUDIO_USER_TOKEN=token,
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="true",
        SENTRY_DSN="",
        FRONTEND_SENTRY_DSN="",
        COLLECT_ANALYTICS="false",
        LATEST_VERSION_CHECK="false",
        PYTHONUNBUFFERED="1",  # the port line must reach the log before /health answers
    )
    log_path = data / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                str(binary),
                "start",
                "--no-browser",
                "--internal-host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=data,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(url):
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"Label Studio exited with {proc.returncode}:\n{tail}")
            if time.monotonic() > deadline:
                pytest.fail(f"Label Studio did not answer on {url} in {START_TIMEOUT_S:.0f} s")
            time.sleep(0.5)
        # A busy port is silently replaced by port+1: make sure we talk to our own server.
        if f"Starting development server at http://127.0.0.1:{port}" not in log_path.read_text(
            errors="replace"
        ):
            pytest.fail(f"Label Studio did not start on port {port}; see {log_path}")
        yield url, token
    finally:
        _stop(proc)
        shutil.rmtree(data, ignore_errors=True)
