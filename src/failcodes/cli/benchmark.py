"""``failcodes benchmark``: closed-benchmark evaluators (SciFact, COVID-Fact, HealthVer, atomic).

Thin: the options are :mod:`failcodes.commands.benchmark`'s requests' fields.
"""

from __future__ import annotations

from typing import Any

import typer

from failcodes.cli.main import command_group
from failcodes.cli.output_format import FORMAT_PARAM, OutputFormat, require_format
from failcodes.cli.requests import request_command
from failcodes.commands.base import Request
from failcodes.commands.benchmark import (
    BenchmarkAtomicRequest,
    BenchmarkCovidfactRequest,
    BenchmarkHealthverRequest,
    BenchmarkScifactRequest,
)

benchmark_app = command_group("benchmark")


def _printed(request: Request, fmt: OutputFormat) -> None:
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="benchmark")
    runner: Any = request
    result = runner.run()
    typer.echo(result.json_text() if fmt is OutputFormat.JSON else "\n".join(result.lines()))


_COMMANDS: tuple[tuple[str, type[Request]], ...] = (
    ("scifact", BenchmarkScifactRequest),
    ("covidfact", BenchmarkCovidfactRequest),
    ("healthver", BenchmarkHealthverRequest),
    ("atomic", BenchmarkAtomicRequest),
)
for _name, _model in _COMMANDS:
    _cmd: Any = request_command(_model, _printed, extra=[FORMAT_PARAM])
    benchmark_app.command(_name)(_cmd)
