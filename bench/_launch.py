"""Measure a command from outside: its CPU seconds, wall seconds and its own peak RSS.

Through a small launcher process (this file run as a script). A child started from a large
process (a bench driver that read a Parquet file with DuckDB, or planned a study) lives in
the parent's memory until it executes the command, and Linux keeps that high-water mark in
the child's ``ru_maxrss`` across ``exec``: every later step of the bench would print the
driver's peak as its own (bench_engine printed 1,876 MB for a 115 MB ``metrics`` run once
its driver had compared two Parquet files). The launcher is a bare ``python -S``, so the
command's peak is its own. Stdlib only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any


def measured(
    cmd: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stdout: IO[Any] | int | None = subprocess.DEVNULL,
    stderr: IO[Any] | int | None = subprocess.PIPE,
) -> tuple[float, float, float, int, bytes]:
    """(CPU s, wall s, peak RSS MB, exit code, stderr bytes) of ``cmd`` run through the launcher.

    CPU is user + system of the command and all its threads (``wait4``); wall includes the
    launcher's start (a few milliseconds).
    """
    fd, name = tempfile.mkstemp(suffix=".usage.json")
    os.close(fd)
    usage_file = Path(name)
    launcher = [sys.executable, "-S", str(Path(__file__).resolve()), name, "--", *cmd]
    try:
        start = time.perf_counter()
        done = subprocess.run(launcher, env=env, cwd=cwd, stdout=stdout, stderr=stderr)
        wall = time.perf_counter() - start
        text = usage_file.read_text()
        usage = json.loads(text) if text else {"cpu_s": 0.0, "peak_mb": 0.0}
    finally:
        usage_file.unlink(missing_ok=True)
    err = done.stderr if isinstance(done.stderr, bytes) else b""
    LAST.clear()
    LAST.update(usage)
    return usage["cpu_s"], wall, usage["peak_mb"], done.returncode, err


#: The last :func:`measured` command's usage as the launcher wrote it: ``cpu_s``, ``peak_mb``
#: and ``sys_s`` (its system CPU seconds: page-cache work a shared machine's load swings).
LAST: dict[str, float] = {}


def _launch(out: str, cmd: list[str]) -> int:
    """The launcher: run ``cmd`` (its streams inherited), write its CPU and peak RSS to ``out``."""
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    rec = {
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "sys_s": usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
    }
    Path(out).write_text(json.dumps(rec))
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        raise SystemExit("usage: python -S _launch.py USAGE_JSON -- CMD ...")
    raise SystemExit(_launch(sys.argv[1], sys.argv[3:]))
