"""Run the failcodes CLI in-process from a test (the root ``main``: errors exit 2, one line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.cli.main import main


def exit_code(*args: str | Path) -> int:
    """Run ``failcodes ARGS`` in-process; return its exit code."""
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``failcodes ARGS`` in-process; return (exit code, stdout, stderr)."""
    code = exit_code(*args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err
