"""The one estimate family: a value, or an explicit statement that it is undefined and why.

:class:`Estimate` is the base of every reported statistic: detection metrics
(:mod:`failcodes.metrics`) use it as is, agreement coefficients
(:class:`failcodes.stats.agreement.AgreementResult`) extend it with their interval, standard
errors and counts. NaN never stands for "undefined": ``value`` is None exactly when
``undefined_reason`` says why.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from failcodes.contract import FrozenModel


class Estimate(FrozenModel):
    """A value, or an explicit statement that it is undefined and why."""

    value: float | None = Field(description="The value; None exactly when undefined.")
    undefined_reason: str | None = Field(default=None, description="Why the value is undefined.")

    @model_validator(mode="after")
    def _one_of(self) -> Estimate:
        if (self.value is None) == (self.undefined_reason is None):
            raise ValueError("an Estimate has either a value or an undefined_reason")
        return self

    @property
    def defined(self) -> bool:
        """True if the estimate has a value."""
        return self.value is not None
