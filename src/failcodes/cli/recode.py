"""``failcodes recode STUDY``: bring a study's judge runs onto the study's codebook version.

Thin: the options are :class:`failcodes.commands.recode.RecodeRequest`'s fields; the judge's
settings are the study's ``[judge]`` table. ``failcodes run`` plans this step by itself when
the study's codebook is newer than a judge run's. ``--status`` shows each run's versions.
"""

from __future__ import annotations

from rich.console import Console

from failcodes.cli.main import app
from failcodes.cli.requests import add_command
from failcodes.commands.recode import RecodeRequest


def _handle(request: RecodeRequest) -> None:
    out = Console(highlight=False, markup=False, soft_wrap=True)
    for line in request.run().lines():
        out.print(line)


add_command(app, RecodeRequest, _handle)
