"""``failcodes benchmark``: closed-benchmark evaluators (SciFact, COVID-Fact, HealthVer, atomic).

Thin: the options are :mod:`failcodes.commands.benchmark`'s requests' fields.
"""

from __future__ import annotations

from failcodes.cli.main import command_group
from failcodes.cli.output_format import FORMAT_PARAM, print_result
from failcodes.cli.requests import add_command
from failcodes.commands.benchmark import (
    BenchmarkAtomicRequest,
    BenchmarkCovidfactRequest,
    BenchmarkHealthverRequest,
    BenchmarkScifactRequest,
)

benchmark_app = command_group("benchmark")


for _model in (
    BenchmarkScifactRequest,
    BenchmarkCovidfactRequest,
    BenchmarkHealthverRequest,
    BenchmarkAtomicRequest,
):
    add_command(benchmark_app, _model, print_result, extra=[FORMAT_PARAM])
