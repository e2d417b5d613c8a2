"""``failcodes benchmark``: closed-benchmark evaluators (SciFact, COVID-Fact, HealthVer, atomic).

Thin: the options are :mod:`failcodes.commands.benchmark`'s requests' fields.
"""

from __future__ import annotations

from typing import Any

from failcodes.cli.main import command_group
from failcodes.cli.output_format import FORMAT_PARAM, print_result
from failcodes.cli.requests import request_command
from failcodes.commands.base import Request
from failcodes.commands.benchmark import (
    BenchmarkAtomicRequest,
    BenchmarkCovidfactRequest,
    BenchmarkHealthverRequest,
    BenchmarkScifactRequest,
)

benchmark_app = command_group("benchmark")


_COMMANDS: tuple[tuple[str, type[Request]], ...] = (
    ("scifact", BenchmarkScifactRequest),
    ("covidfact", BenchmarkCovidfactRequest),
    ("healthver", BenchmarkHealthverRequest),
    ("atomic", BenchmarkAtomicRequest),
)
for _name, _model in _COMMANDS:
    _cmd: Any = request_command(_model, print_result, extra=[FORMAT_PARAM])
    benchmark_app.command(_name)(_cmd)
