"""Demo step: system comparisons (Cochran's Q, McNemar, paired recall/F1 tests)."""

from __future__ import annotations

import json

import pandas as pd

from failcodes.demo._base import DEMO_BOOTSTRAP, DEMO_SEED, DemoContext, StepOutput
from failcodes.fileio import AtomicBatch
from failcodes.hashing import file_sha256
from failcodes.study.layout import StudyLayout


def compare_step(ctx: DemoContext) -> StepOutput:
    """Seed 001 appendix A.9 on the demo systems: Cochran's Q, Holm-adjusted McNemar, F1."""
    from failcodes.errors import StatisticsError
    from failcodes.outcomes import paired_outcomes_from_traces
    from failcodes.stats.classification import compare_against_truth

    out = StepOutput()
    for name, ds in ctx.datasets.items():
        try:
            paired = paired_outcomes_from_traces(ds.traces, ds.labels, "refuted")
        except StatisticsError as exc:
            out.lines.append(f"{name}: no system comparison ({exc})")
            continue
        results = compare_against_truth(
            paired.truth,
            paired.predictions,
            paired.systems,
            metrics=("recall", "f1"),
            n_resamples=DEMO_BOOTSTRAP,
            seed=DEMO_SEED,
            clusters=paired.questions,
        )
        rows = [r.model_dump() for r in results]
        layout = StudyLayout.of(ctx.out_dir)
        read = [layout.traces(name), layout.labels(name)]  # what ds.traces, ds.labels were
        digests = {str(path): file_sha256(path) for path in read if path.is_file()}
        dest = layout.comparisons(name)
        with AtomicBatch() as batch:
            batch.stage(dest).write_text(
                json.dumps({"systems": paired.systems, "sha256": digests, "tests": rows}, indent=2)
                + "\n",
                encoding="utf-8",
            )
        out.files.append(dest)
        out.tables.append(
            (
                f"{name}: Cochran's Q and pairwise McNemar on the labelled errors (recall), "
                f"paired permutation tests of recall and F1 ({DEMO_BOOTSTRAP} permutations), "
                "Holm-adjusted",
                pd.DataFrame(
                    [
                        {
                            "test": r.test,
                            "comparison": r.comparison,
                            "statistic": None if r.statistic is None else round(r.statistic, 3),
                            "p": None if r.p_value is None else round(r.p_value, 4),
                            "p (Holm)": None if r.p_holm is None else round(r.p_holm, 4),
                        }
                        for r in results
                    ]
                ),
            )
        )
    return out
