"""A local Label Studio server for one researcher: ``failcodes labelstudio serve``.

Label Studio pins ``openai<2``, which conflicts with failcodes' own, so the server lives in its
own environment (``make labelstudio-venv`` writes ``.venv-labelstudio``). This module finds
that environment's ``label-studio``, starts it on 127.0.0.1 with a generated admin and API
key, waits until it answers, and stops it: the steps of ../shared/guides/label-studio.md
(legacy token, no outgoing calls, a free port checked against the server's own log line).

The admin and key are generated once per data folder and kept in
``<data dir>/failcodes-credentials.json`` (mode 0600): Label Studio takes the key only when it
creates its organisation (the first start), so later starts on the same folder must reuse it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from failcodes.errors import ConfigError, InputError, LabelStudioError

#: Where ``make test`` (and the tests) say the server binary is.
BIN_ENV = "FAILCODES_LABEL_STUDIO_BIN"
#: The folder ``make labelstudio-venv`` creates.
LOCAL_VENV = ".venv-labelstudio"
#: The version the tests run and the guide describes.
VERSION = "1.23.2"
CREDENTIALS = "failcodes-credentials.json"
LOG = "failcodes-server.log"
#: The first start on a fresh data folder runs Label Studio's migrations: ~30 s on an idle
#: machine, 2-3 min on a loaded one (154 s measured); later starts take seconds.
START_TIMEOUT_S = 600.0
#: Seconds :meth:`LocalServer.stop` gives the server after SIGTERM before SIGKILL, and then
#: after SIGKILL before it gives up waiting.
STOP_GRACE_S = 20.0
KILL_WAIT_S = 5.0
INSTALL = (
    f"make labelstudio-venv (in a failcodes clone), or: python3 -m venv {LOCAL_VENV} && "
    f"{LOCAL_VENV}/bin/pip install label-studio=={VERSION}"
)


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/failcodes/label-studio`` (``~/.local/share/...`` by default)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "failcodes" / "label-studio"


def find_binary(explicit: Path | None = None, cwd: Path | None = None) -> Path:
    """The ``label-studio`` executable to run.

    ``explicit``, else ``$FAILCODES_LABEL_STUDIO_BIN``, else
    ``.venv-labelstudio/bin/label-studio`` here or in a parent folder, else one on ``PATH``.
    None found is a :class:`ConfigError` saying how to install it.
    """
    named = explicit or (Path(os.environ[BIN_ENV]) if os.environ.get(BIN_ENV) else None)
    if named is not None:
        if not named.is_file():
            source = "--bin" if explicit is not None else f"${BIN_ENV}"
            raise ConfigError(f"{source} {named}: no such file (the label-studio executable)")
        return named
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        local = folder / LOCAL_VENV / "bin" / "label-studio"
        if local.is_file():
            return local
    on_path = shutil.which("label-studio")
    if on_path:
        return Path(on_path)
    raise ConfigError(
        f"no Label Studio server installed; install it in its own environment: {INSTALL}"
    )


@dataclass(frozen=True)
class Credentials:
    """The admin login and the API key of one data folder."""

    email: str
    password: str
    token: str


def credentials(data_dir: Path) -> Credentials:
    """The data folder's credentials, generated (and saved, mode 0600) on its first use."""
    path = data_dir / CREDENTIALS
    if path.exists():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return Credentials(email=raw["email"], password=raw["password"], token=raw["token"])
        except (ValueError, KeyError, TypeError):
            raise InputError(
                "not failcodes' Label Studio credentials (expected a JSON object with email, "
                "password and token); restore it, or give a fresh --data-dir",
                path=path,
            ) from None
    data_dir.mkdir(parents=True, exist_ok=True)
    made = Credentials(
        email="admin@failcodes.local",
        password=secrets.token_urlsafe(16),
        token=secrets.token_hex(20),  # the legacy token: 40 hex characters
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(made.__dict__, out, indent=2)
        out.write("\n")
    return made


def server_env(data_dir: Path, creds: Credentials, base: Mapping[str, str]) -> dict[str, str]:
    """The server's environment (the guide's list).

    ``base`` without Label Studio or Python settings, plus the data folder, the admin, the
    legacy key and no outgoing calls.
    """
    env = {
        k: v
        for k, v in base.items()
        if not k.startswith(("LABEL_STUDIO_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(
        LABEL_STUDIO_BASE_DATA_DIR=str(data_dir),
        LABEL_STUDIO_USERNAME=creds.email,
        LABEL_STUDIO_PASSWORD=creds.password,
        LABEL_STUDIO_USER_TOKEN=creds.token,
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="true",
        SENTRY_DSN="",
        FRONTEND_SENTRY_DSN="",
        COLLECT_ANALYTICS="false",
        LATEST_VERSION_CHECK="false",
        PYTHONUNBUFFERED="1",  # the port line must reach the log before /health answers
    )
    return env


def free_port() -> int:
    """A port nobody listens on at 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_taken(port: int) -> bool:
    """Whether something already listens on 127.0.0.1:``port``."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def healthy(url: str) -> bool:
    """Whether the server at ``url`` answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as resp:
            return b"UP" in resp.read()
    except (urllib.error.URLError, OSError):
        return False


class LocalServer:
    """One ``label-studio start`` process, in its own process session (see the module doc)."""

    def __init__(self, binary: Path, data_dir: Path, port: int) -> None:
        self.binary = binary
        self.data_dir = data_dir
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = data_dir / LOG
        self.creds = credentials(data_dir)
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_start = 0

    def start(self) -> None:
        """Start the server (returns at once; :meth:`wait_ready` waits for it)."""
        if port_taken(self.port):
            raise ConfigError(
                f"port {self.port} is taken on 127.0.0.1 (another server?); give a free one "
                "with --port, or leave --port out to pick one"
            )
        env = server_env(self.data_dir, self.creds, os.environ)
        # this start's part of the log (earlier starts on the folder wrote before it)
        self._log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    str(self.binary),
                    "start",
                    "--no-browser",
                    "--internal-host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                ],
                cwd=self.data_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in the terminal is ours to pass on
            )

    def wait_ready(
        self, timeout: float = START_TIMEOUT_S, tick: Callable[[float], None] | None = None
    ) -> float:
        """Wait until the server answers on its own port; the seconds it took.

        A server that exits, answers on another port (Label Studio silently takes port+1 when
        its port is busy) or is not up within ``timeout`` is a :class:`LabelStudioError`
        naming its log.
        """
        assert self.proc is not None, "start() first"
        began = time.monotonic()
        while not healthy(self.url):
            if self.proc.poll() is not None:
                raise LabelStudioError(
                    f"Label Studio exited with code {self.proc.returncode} before it was "
                    f"ready: {self._last_log_line()} (whole log: {self.log_path})"
                )
            waited = time.monotonic() - began
            if waited > timeout:
                self.stop()
                raise LabelStudioError(
                    f"Label Studio did not answer on {self.url} within {timeout:.0f} s; "
                    f"stopped it (log: {self.log_path})"
                )
            if tick is not None:
                tick(waited)
            time.sleep(0.5)
        line = f"Starting development server at http://127.0.0.1:{self.port}"
        if line not in self._new_log():
            self.stop()
            raise LabelStudioError(
                f"Label Studio did not start on port {self.port} (another server answers "
                f"there?); stopped it (log: {self.log_path})"
            )
        return time.monotonic() - began

    def _new_log(self) -> str:
        with self.log_path.open("rb") as log:
            log.seek(self._log_start)
            return log.read().decode("utf-8", errors="replace")

    def _last_log_line(self) -> str:
        lines = [ln.strip() for ln in self._new_log().splitlines() if ln.strip()]
        return lines[-1][:300] if lines else "(nothing in its log)"

    def wait(self) -> int:
        """Block until the server exits; its exit code."""
        assert self.proc is not None
        return self.proc.wait()

    def stop(self, grace: float = STOP_GRACE_S) -> bool:
        """SIGTERM to the server's process group, SIGKILL if it is not gone in ``grace`` s.

        Label Studio (Django's runserver) has no SIGTERM handler: it goes at once (0.5 s idle,
        1.3-2.9 s at load 8-16 on 2 cores). The whole group is signalled, so anything it started
        goes too. True when it had to be killed; a server still there :data:`KILL_WAIT_S` s
        after SIGKILL is a :class:`LabelStudioError` (never a hang).
        """
        proc = self.proc
        if proc is None or proc.returncode is not None:  # reaped: its pid may be reused
            return False
        try:  # unreaped, the leader's pid is still its group's (a zombie keeps it)
            os.killpg(proc.pid, signal.SIGTERM)  # so the group goes, even if the leader went
        except ProcessLookupError:
            proc.poll()
            return False
        try:
            proc.wait(timeout=grace)
            return False
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            proc.wait(timeout=KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            raise LabelStudioError(
                f"Label Studio (pid {proc.pid}) is still there {grace:.0f} s after SIGTERM "
                f"and {KILL_WAIT_S:.0f} s after SIGKILL; see ps (log: {self.log_path})"
            ) from None
        return True
