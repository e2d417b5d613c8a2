"""The ``--without-claims`` option of ``metrics``, ``disagreements`` and ``compare``.

Apart from :mod:`failcodes.cli.options` because it needs :mod:`failcodes.metrics` (the stats
stack), which commands such as ``judge``, ``ingest`` or ``cache`` should not import at start-up.
"""

from __future__ import annotations

from typing import Annotated

import typer

from failcodes.metrics import WithoutClaimsPolicy

WithoutClaimsOpt = Annotated[
    WithoutClaimsPolicy,
    typer.Option(
        "--without-claims",
        help="Labelled sentences a system has no claim for: count as 'no error flagged' "
        "(default: a labelled error there is a miss, an FN with no claims) or leave out "
        "(reported).",
    ),
]


__all__ = ["WithoutClaimsOpt"]
