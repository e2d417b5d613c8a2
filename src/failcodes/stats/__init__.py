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
- :mod:`~failcodes.stats.tableshape`: the rows, columns and cells of a ratings table that are
  no rating (descriptions, totals, notes, repeated headers, field pairs, missing marks).

Import from the submodules (``from failcodes.stats.agreement import agreements``): the
package imports none of them, so a command that needs one (``metrics``: the bootstrap) loads
neither the others nor krippendorff (issue 30).
"""
