"""``failcodes cache stats|prune``: inspect and trim the judge's response cache.

Thin: the options are :mod:`failcodes.commands.cache`'s requests' fields.
"""

from __future__ import annotations

import inspect
from typing import Annotated

import typer

from failcodes.cli.main import command_group
from failcodes.cli.options import data_console
from failcodes.cli.requests import add_command
from failcodes.commands.cache import CachePruneRequest, CacheStatsRequest

cache_app = command_group("cache")

_JSON = inspect.Parameter(
    "as_json",
    inspect.Parameter.KEYWORD_ONLY,
    default=False,
    annotation=Annotated[bool, typer.Option("--json", help="Print JSON.")],
)


def _stats(request: CacheStatsRequest, as_json: bool) -> None:
    result = request.run()
    out = data_console(soft_wrap=True)
    if as_json:
        out.print_json(result.model_dump_json())
        return
    for line in result.lines():
        out.print(line, highlight=False)


def _prune(request: CachePruneRequest) -> None:
    data_console(soft_wrap=True).print(request.run().lines()[0])


add_command(cache_app, CacheStatsRequest, _stats, extra=[_JSON])
add_command(cache_app, CachePruneRequest, _prune)
