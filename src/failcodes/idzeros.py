"""The leading zeros of the whole numbers inside an id: ``s007`` and ``s7`` written one way.

One file writes ``s007`` or ``claim-01`` where another writes ``s7`` or ``claim-1``: the same
unit, sentence or claim, compared exactly, became two. :func:`without_leading_zeros` writes
both alike so such a pair can be named (labels refuse it, ``agree`` says it).

Only whole numbers: a group of digits right after ``<digit>.`` is the fraction of a decimal
or a dotted version's later part (``v1.01``), where ``01`` and ``1`` are not one number
(1.01 and 1.1 differ; Perl versions read 1.01 < 1.1), so its zeros are kept. A version
scheme that reads ``1.01`` as ``1.1`` (PEP 440) is then compared exactly, as every id was
before zeros were folded: nothing is merged or refused as the same that may not be.
"""

from __future__ import annotations

import re

#: Leading zeros of a whole number inside an id (``s007``, ``claim-01``, ``007``), kept for a
#: lone ``0`` and after ``<digit>.`` (``v1.01``: a fraction or a version's later part).
LEADING_ZEROS = re.compile(r"(?<![0-9])(?<![0-9]\.)0+(?=[0-9])")


def without_leading_zeros(text: str) -> str:
    """``text`` with the leading zeros of its whole numbers taken off (see the module)."""
    return LEADING_ZEROS.sub("", text)
