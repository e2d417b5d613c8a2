"""A real Label Studio server for the tests, started once per session.

The server lives in its own virtual environment (it pins openai<2): ``make test`` creates
``.venv-labelstudio`` and sets ``FAILCODES_LABEL_STUDIO_BIN``. Without it the tests skip
locally, but fail when ``CI`` is set: CI must really run them. Steps follow
../shared/guides/label-studio.md (legacy token, no outgoing calls, 127.0.0.1 only).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from failcodes.errors import LabelStudioError
from failcodes.labelstudio.server import BIN_ENV, LocalServer, free_port

REPO = Path(__file__).resolve().parent.parent
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


def _data_root() -> str | None:
    """Prefer RAM (/dev/shm): SQLite commits are the server's main cost per annotation."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return None
    # Containers often mount a 64 MB /dev/shm: use it only with room to spare.
    return str(shm) if shutil.disk_usage(shm).free >= 1 << 30 else None


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
    # the server of `failcodes labelstudio serve`: its environment (a throwaway admin and
    # token in ``data``), its check that it answers on its own port, its bounded group stop
    local = LocalServer(binary, data, free_port())
    try:
        local.start()
        try:
            local.wait_ready(START_TIMEOUT_S)
        except LabelStudioError as exc:  # the log goes with the data folder: show its end
            pytest.fail(f"{exc}:\n{local.log_path.read_text(errors='replace')[-2000:]}")
        yield local.url, local.creds.token
    finally:
        local.stop()
        shutil.rmtree(data, ignore_errors=True)
