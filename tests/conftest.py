"""Shared test fixtures. Network access is blocked except to loopback addresses."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# one Label Studio server for the whole session: imported into a test module, the fixture
# was that module's own, and each of three modules started (and migrated) a server of its own
from tests.labelstudio_server import labelstudio_server  # noqa: F401  (session fixture)

# property tests check values, not speed: on a loaded machine (2 cores, ~8 processes) a
# generated example took over hypothesis's 200 ms default deadline and
# test_metrics::test_metric_invariants failed once, passing alone (session 26)
settings.register_profile("failcodes", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("failcodes")

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
SRC = REPO / "src"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: Any) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX path
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise RuntimeError(f"tests may not open network connections (tried {address!r})")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise RuntimeError(f"tests may not open network connections (tried {address!r})")
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]

# Subprocesses (CLI tests) import the package from this checkout's src/.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]
)
# No real key may ever be used by the suite.
for _var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LABEL_STUDIO_API_KEY"):
    os.environ.pop(_var, None)


#: Small published reference tables copied into the repository (see their SOURCE.md files).
TEST_DATA = Path(__file__).resolve().parent / "data"


def reference_data(*parts: str) -> Path:
    """Path into tests/data (always present: the published-value tests need no ../shared)."""
    return TEST_DATA.joinpath(*parts)


def shared_data(*parts: str) -> Path:
    """Path into ../shared/data; skips the test when that folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    return path


@pytest.fixture
def shared() -> Any:
    """The :func:`shared_data` helper as a fixture."""
    return shared_data


@pytest.fixture
def agree(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``agree(*args) -> (exit code, stdout, stderr)`` of ``failcodes agree ARGS`` in-process
    (what was printed before it is dropped)."""
    from tests.cli_helpers import run_cli

    def _run(*args: str | Path) -> tuple[int, str, str]:
        capsys.readouterr()
        return run_cli(["agree", *map(str, args)], capsys)

    return _run


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run the test inside a temp dir so default output paths land there."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.fixture(scope="module")
def fake_server() -> Iterator[Any]:
    """One fake LLM server per test module (reset per test by judge_helpers.fresh_fake)."""
    from tests.fakeserver import FakeServer

    with FakeServer() as fake:
        yield fake
