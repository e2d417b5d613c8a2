"""The CLI imports only the subcommand being run, and everything for --help."""

from __future__ import annotations

import subprocess
import sys

from failcodes.cli.main import _register_only


def test_register_only_the_named_subcommand() -> None:
    assert _register_only(["ingest", "generic", "x.jsonl", "-o", "y.jsonl"]) is True
    assert _register_only(["schema", "trace"]) is True
    assert _register_only(["--help"]) is False  # no subcommand: import all
    assert _register_only([]) is False
    assert _register_only(["no-such-command"]) is False
    assert _register_only(["main"]) is False


def test_help_still_lists_every_subcommand() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "failcodes", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for name in ("ingest", "schema", "metrics", "version"):
        assert f" {name} " in proc.stdout, name
