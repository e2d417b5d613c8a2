"""Agreement and significance statistics: a pure numeric core plus table adapters.

- :mod:`~failcodes.stats.estimate`: the one estimate family (value or undefined reason).
- :mod:`~failcodes.stats.agreement`: percent agreement, Cohen's kappa (weighted), Fleiss'
  kappa, Krippendorff's alpha, Gwet's AC1/AC2, Brennan-Prediger, PABAK, with analytic SEs
  and vectorised bootstrap CIs (arrays in, :class:`AgreementResult` out).
- :mod:`~failcodes.stats.bootstrap`: the one bootstrap module (units, clusters, jackknife,
  BCa, interval warnings) as matrix products.
- :mod:`~failcodes.stats.classification`: Cochran's Q, McNemar, paired F1/recall tests (Holm).
- :mod:`~failcodes.stats.ppi`: prediction-powered inference (PPI, PPI++, stratified) for
  shares corrected with a human review sample.
- :mod:`~failcodes.stats.tests`: the test result model, Holm, Mann-Whitney, Spearman.
- :mod:`~failcodes.stats.tables`: ratings files, DataFrames, annotation runs and traces +
  labels adapted to the core.

Submodules keep their names (``failcodes.stats.agreement`` is the module; its one-statistic
function is ``failcodes.stats.agreement.agreement``).
"""

from failcodes.stats.agreement import (
    STATISTICS,
    AgreementResult,
    agreements,
    brennan_prediger,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
    pabak,
    percent_agreement,
)
from failcodes.stats.classification import (
    cochrans_q,
    compare_systems,
    mcnemar,
    paired_metric_tests,
    pairwise_mcnemar,
)
from failcodes.stats.estimate import Estimate
from failcodes.stats.ppi import ShareEstimates, Stratum, ppi_mean, share_estimates
from failcodes.stats.tests import TestResult, holm, mann_whitney, spearman

__all__ = [
    "STATISTICS",
    "AgreementResult",
    "Estimate",
    "ShareEstimates",
    "Stratum",
    "TestResult",
    "agreements",
    "brennan_prediger",
    "cochrans_q",
    "cohen_kappa",
    "compare_systems",
    "conger_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "gwet_ac2",
    "holm",
    "krippendorff_alpha",
    "mann_whitney",
    "mcnemar",
    "pabak",
    "paired_metric_tests",
    "pairwise_mcnemar",
    "percent_agreement",
    "ppi_mean",
    "share_estimates",
    "spearman",
]
