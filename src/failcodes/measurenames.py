"""The words ``metrics``, ``compare`` and ``disagreements`` accept: the unit, the no-claim rule.

Kept apart from :mod:`failcodes.metrics` (numpy, the bootstrap, the trace columns), which
re-exports them: the CLI builds its options from these, so ``metrics --help`` loads no numpy.
"""

from __future__ import annotations

from enum import StrEnum


class Level(StrEnum):
    """The unit metrics are computed over."""

    SENTENCE = "sentence"
    CLAIM = "claim"


class WithoutClaimsPolicy(StrEnum):
    """What sentence-level metrics do with a labelled sentence a system has no claim for."""

    EXCLUDE = "exclude"  # leave it out, and count/list it in the result
    NO_ERROR = "no_error"  # count it as "system flags no error" (default)


#: The one rule for labelled sentences a system made no claim for, shared by ``metrics``,
#: ``compare``, ``disagreements`` and the report: the system flagged no error there (a miss
#: when the clinicians found one), so recall does not depend on how many sentences a system
#: dropped. ``exclude`` stays an explicit option (issue 14).
DEFAULT_WITHOUT_CLAIMS = WithoutClaimsPolicy.NO_ERROR

WITHOUT_CLAIMS_RULE = {
    WithoutClaimsPolicy.NO_ERROR: "labelled sentences a system made no claim for count as "
    '"no error flagged" (a miss where the clinicians found an error)',
    WithoutClaimsPolicy.EXCLUDE: "labelled sentences a system made no claim for are left out "
    "of that system's sentence-level metrics",
}
