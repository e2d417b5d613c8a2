"""Closed-benchmark evaluators: SciFact official metrics, evidence P/R@k, atomic fact-checks."""
