"""``failcodes labelstudio serve``: a researcher's local Label Studio server (issue 28).

The server test starts the real Label Studio 1.23.2 of ``.venv-labelstudio`` through the
command, as a researcher would: it reads the printed URL and key, uses them with the SDK, stops
the server with Ctrl-C (SIGINT), starts it again on the same data folder (the same key, the
project still there) and stops it with SIGTERM.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from failcodes.errors import ConfigError, InputError
from failcodes.labelstudio import server as ls_server
from failcodes.labelstudio.client import LabelStudioClient
from tests.labelstudio_server import _binary
from tests.test_cli_ingest import assert_one_line_error, run


def test_credentials_are_made_once_private_and_reused(tmp_path: Path) -> None:
    made = ls_server.credentials(tmp_path / "ls")
    path = tmp_path / "ls" / ls_server.CREDENTIALS
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(made.token) == 40 and int(made.token, 16) >= 0  # the legacy token: 40 hex
    assert ls_server.credentials(tmp_path / "ls") == made  # the organisation keeps the first
    path.write_text("{}")
    with pytest.raises(InputError, match="not failcodes' Label Studio credentials"):
        ls_server.credentials(tmp_path / "ls")


def test_the_server_environment_is_the_guides(tmp_path: Path) -> None:
    creds = ls_server.Credentials("a@b.c", "pw", "f" * 40)
    env = ls_server.server_env(
        tmp_path, creds, {"PATH": "/bin", "LABEL_STUDIO_URL": "x", "VIRTUAL_ENV": "/v"}
    )
    assert env["PATH"] == "/bin" and "LABEL_STUDIO_URL" not in env and "VIRTUAL_ENV" not in env
    assert env["LABEL_STUDIO_USER_TOKEN"] == "f" * 40
    assert env["LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN"] == "true"
    assert (env["COLLECT_ANALYTICS"], env["LATEST_VERSION_CHECK"], env["SENTRY_DSN"]) == (
        "false",
        "false",
        "",
    )


def test_no_server_installed_says_how_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(ls_server.BIN_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match=r"pip install label-studio==1\.23\.2"):
        ls_server.find_binary(cwd=tmp_path)
    proc = run("labelstudio", "serve", "--bin", tmp_path / "nope", cwd=tmp_path)
    assert_one_line_error(proc, f"--bin {tmp_path / 'nope'}: no such file")


def test_a_taken_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        fake = tmp_path / "label-studio"
        fake.write_text("#!/bin/sh\nexit 3\n")
        fake.chmod(0o755)
        proc = run("labelstudio", "serve", "--bin", fake, "--port", port,
                   "--data-dir", tmp_path / "d", cwd=tmp_path)  # fmt: skip
    assert_one_line_error(proc, f"port {port} is taken on 127.0.0.1")


def test_a_server_that_exits_at_once_is_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "label-studio"
    fake.write_text("#!/bin/sh\necho 'django.db.utils.OperationalError: disk I/O error'\nexit 3\n")
    fake.chmod(0o755)
    proc = run("labelstudio", "serve", "--bin", fake, "--data-dir", tmp_path / "d", cwd=tmp_path)
    assert_one_line_error(
        proc,
        "Label Studio exited with code 3 before it was ready: django.db.utils.OperationalError: "
        "disk I/O error (whole log: ",
    )


def _serve(
    binary: Path, data: Path, cwd: Path, *, sigint_ignored: bool = False
) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """Start `failcodes labelstudio serve`; the exported lines once it says it is ready.

    ``sigint_ignored``: the SIGINT disposition `serve` starts with, set here rather than
    inherited from whatever started pytest. A terminal's foreground job has the default (Ctrl-C
    stops it); a background job of a shell without job control (`pytest ... &` in a script)
    has SIGINT ignored, and Python keeps it so: the Ctrl-C stop then waited out its timeout.
    """
    before = signal.signal(
        signal.SIGINT, signal.SIG_IGN if sigint_ignored else signal.default_int_handler
    )  # exec keeps an ignored signal and resets a handled one to the default
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "failcodes", "labelstudio", "serve", "--bin", str(binary),
             "--data-dir", str(data)],
            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, before)
    exported: dict[str, str] = {}
    assert proc.stdout is not None
    deadline = time.monotonic() + ls_server.START_TIMEOUT_S
    for line in proc.stdout:
        if line.startswith("export "):
            key, _, value = line.removeprefix("export ").strip().partition("=")
            exported[key] = value
        if "LABEL_STUDIO_API_KEY" in exported or time.monotonic() > deadline:
            break
    assert set(exported) == {"LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY"}, proc.stderr
    return proc, exported


#: How long `serve` may take to exit after SIGINT/SIGTERM: its own bound (SIGTERM to the
#: server's group, STOP_GRACE_S, SIGKILL, KILL_WAIT_S) and 30 s for two interpreters to exit
#: on a loaded machine. Measured: 0.45 s idle, 1.3-2.9 s at load 8-16 (busy loops) on the 2 cores.
STOP_TIMEOUT_S = ls_server.STOP_GRACE_S + ls_server.KILL_WAIT_S + 30


def _stop(proc: subprocess.Popen[str], sig: signal.Signals) -> str:
    """Send ``sig`` to `serve` and wait for it; its stderr.

    If `serve` is still there after :data:`STOP_TIMEOUT_S`, it and its server are killed here
    (never left running for the tests after this one) and the test fails.
    """
    proc.send_signal(sig)
    try:
        return proc.communicate(timeout=STOP_TIMEOUT_S)[1]
    except subprocess.TimeoutExpired:
        import psutil

        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(proc.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
        proc.kill()
        proc.communicate()
        pytest.fail(f"labelstudio serve did not stop within {STOP_TIMEOUT_S:.0f} s of {sig.name}")


def _fake_server(tmp_path: Path, script: str) -> ls_server.LocalServer:
    fake = tmp_path / "label-studio"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    local = ls_server.LocalServer(fake, tmp_path / "d", ls_server.free_port())
    local.start()
    time.sleep(0.5)  # let the script reach its trap
    return local


def test_stop_ends_a_server_that_goes_on_sigterm(tmp_path: Path) -> None:
    local = _fake_server(tmp_path, "exec sleep 60\n")
    assert local.stop() is False  # went on SIGTERM: nothing to say
    assert local.proc is not None and local.proc.returncode == -signal.SIGTERM


def test_stop_kills_a_server_group_that_ignores_sigterm_within_its_bound(tmp_path: Path) -> None:
    # the script and the sleeps it starts ignore SIGTERM: only SIGKILL to the group ends them
    local = _fake_server(tmp_path, "trap '' TERM\nwhile :; do sleep 1; done\n")
    began = time.monotonic()
    assert local.stop(grace=1.0) is True  # serve says it killed it
    took = time.monotonic() - began
    assert local.proc is not None and local.proc.returncode == -signal.SIGKILL
    assert 1.0 <= took < 1.0 + ls_server.KILL_WAIT_S
    assert local.stop() is False  # reaped: never signals a pid that may be reused


CONFIG = '<View><Text name="t" value="$t"/></View>'


def _answers(url: str) -> bool:
    return ls_server.healthy(url)


@pytest.mark.labelstudio
def test_serve_starts_a_server_the_printed_lines_reach_and_ctrl_c_stops(tmp_path: Path) -> None:
    binary = _binary()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("no Label Studio server; CI must run the real-server tests")
        pytest.skip("no Label Studio server (make labelstudio-venv)")
    data = tmp_path / "ls-data"
    proc, env = _serve(binary, data, tmp_path)
    try:
        url, key = env["LABEL_STUDIO_URL"], env["LABEL_STUDIO_API_KEY"]
        assert url.startswith("http://127.0.0.1:")
        saved = json.loads((data / ls_server.CREDENTIALS).read_text())
        assert key == saved["token"]
        with LabelStudioClient(url, key) as client:  # the printed key is accepted
            assert client.whoami() == saved["email"]
            pid, created = client.ensure_project("issue 28 review", CONFIG)
            assert created
    finally:
        err = _stop(proc, signal.SIGINT)  # Ctrl-C
    assert proc.returncode == 0, err
    assert err.strip().splitlines()[-1] == "stopped Label Studio"
    assert not _answers(url)  # the server went with it
    # again on the same folder: the same key, the project kept (reviews survive restarts);
    # started as `serve &` in a script would be (SIGINT ignored), so it says how to stop it
    proc, env = _serve(binary, data, tmp_path, sigint_ignored=True)
    try:
        assert env["LABEL_STUDIO_API_KEY"] == key
        with LabelStudioClient(env["LABEL_STUDIO_URL"], key) as client:
            assert client.find_project("issue 28 review") == pid
    finally:
        err = _stop(proc, signal.SIGTERM)  # as `kill` would
    assert proc.returncode == 0, err
    assert (
        f"# SIGINT is ignored here (started in the background); stop the server with "
        f"kill {proc.pid}"
    ) in err.splitlines()
    assert not _answers(env["LABEL_STUDIO_URL"])
