"""Issue 30: each subcommand's --help imports no heavy library (session 26, t26start)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from failcodes.cli.main import COMMAND_SUMMARIES

#: Not needed to print a command's help (CPU-s to import on this machine, load ~3: numpy
#: ~0.1-0.18, pandas ~0.4-0.7, pyarrow ~0.3, duckdb ~0.2; the SDKs ~0.3 each). pydantic stays:
#: typer 0.29 builds a pydantic TypeAdapter for every option it parses (typer._adapters).
HEAVY = ("numpy", "pandas", "pyarrow", "duckdb", "_duckdb", "anthropic", "openai", "scipy")


def _loaded(argv: list[str]) -> tuple[set[str], str]:
    """The modules ``failcodes ARGV`` imported (through the console entry point), and stdout."""
    code = (
        "import json, sys\n"
        f"sys.argv = ['failcodes', *{argv!r}]\n"
        "from failcodes.cli.start import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout.write('\\n@@' + json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    out, _, modules = proc.stdout.rpartition("\n@@")
    return set(json.loads(modules)), out


#: A group's commands (each builds its own options from its request model).
NESTED = [
    ["judge", "retrieval"],
    ["judge", "reasoning"],
    *[["labelstudio", c] for c in ("config", "export", "push", "pull", "import", "serve")],
    ["codebook", "validate"],
    ["saturate", "round"],
    ["saturate", "recode"],
    ["review", "plan"],
    ["cache", "stats"],
    ["benchmark", "scifact"],
]


@pytest.mark.parametrize("argv", [[n] for n in sorted(COMMAND_SUMMARIES)] + NESTED, ids=" ".join)
def test_every_subcommand_help_imports_no_heavy_library(argv: list[str]) -> None:
    # demo --help imported pandas (cli/demo.py, and every demo step through failcodes.demo),
    # rtv --help numpy (rtv/metrics.py, rtv/semantic.py at module level), metrics --help and
    # disagreements --help numpy (commands.measure imported failcodes.metrics for the option
    # words, now in failcodes.measurenames; cli/metrics and cli/disagreements its tables'
    # names), compare --help numpy (commands/compare.py at module level), attribute --help
    # numpy (attribution.py and disagreements.py at module level), labelstudio --help and its
    # commands' numpy (commands/labelstudio.py imported the annotation, disagreement and unit
    # stream readers, which import the engine's columns, at module level): issue 30
    loaded, out = _loaded([*argv, "--help"])
    assert f"failcodes {' '.join(argv)}" in out  # (the help was printed)
    assert [m for m in HEAVY if m in loaded] == [], argv


def test_the_demo_help_shows_the_demo_packages_default_folder() -> None:
    # cli/demo.py writes the default out (importing failcodes.demo imports every step: pandas)
    from failcodes.cli import demo as cli_demo
    from failcodes.demo import DEFAULT_OUT

    assert cli_demo.DEFAULT_OUT == DEFAULT_OUT == Path("reports/demo")
    loaded, out = _loaded(["demo", "--help"])
    assert "[default: reports/demo]" in out
    assert "failcodes.demo" not in loaded
