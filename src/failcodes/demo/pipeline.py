"""Demo step: system comparisons (Cochran's Q, McNemar, paired recall/F1 tests)."""

from __future__ import annotations

import json

import pandas as pd

from failcodes.demo._base import DEMO_BOOTSTRAP, DEMO_SEED, DemoContext, StepOutput
from failcodes.fileio import AtomicBatch
from failcodes.study.layout import StudyLayout

#: What the demo compares: the systems' hits on the labelled errors under 'refuted'.
DEMO_COMPARE_METRICS = "recall,f1"


def compare_step(ctx: DemoContext) -> StepOutput:
    """Seed 001 appendix A.9 on the demo systems: Cochran's Q, Holm-adjusted McNemar, F1.

    Runs ``failcodes compare --traces data/<ds>.traces.parquet --labels data/<ds>.labels.jsonl
    -m refuted --metrics recall,f1 --resamples 1000 --seed 0 --format json`` and writes its
    object (what was assumed, each test's unit) to ``comparisons/<ds>.json``, as a user would.
    """
    from failcodes.commands.compare import CompareRequest
    from failcodes.errors import InputError
    from failcodes.report.rundir import p_text

    out = StepOutput()
    layout = StudyLayout.of(ctx.out_dir)
    for name, ds in ctx.datasets.items():
        if not ds.traces:
            out.lines.append(f"{name}: no system comparison (no traces given)")
            continue
        request = CompareRequest(
            traces=[layout.traces(name)],
            labels=layout.labels(name),
            mapping=["refuted"],
            metrics=DEMO_COMPARE_METRICS,
            resamples=DEMO_BOOTSTRAP,
            seed=DEMO_SEED,
        )
        try:
            result = request.run()
        except InputError as exc:
            out.lines.append(f"{name}: no system comparison ({exc})")
            continue
        dest = layout.comparisons(name)
        with AtomicBatch() as batch:
            batch.stage(dest).write_text(
                json.dumps(result.payload(), indent=2) + "\n", encoding="utf-8"
            )
        out.files.append(dest)
        if result.assumed:  # compare's first line
            out.lines.append(f"{name}: {result.assumed}")
        out.tables.append(
            (
                f"{name}: Cochran's Q and pairwise McNemar on the labelled errors (recall), "
                f"paired permutation tests of recall and F1 ({DEMO_BOOTSTRAP} permutations), "
                "Holm-adjusted",
                pd.DataFrame(
                    [
                        {
                            "test": r["test"],
                            "comparison": r["comparison"],
                            "unit": r["unit"],
                            "n": r["n"],
                            "statistic": None
                            if r["statistic"] is None
                            else round(r["statistic"], 3),
                            "p": p_text(r["p_value"]),
                            "p (Holm)": p_text(r["p_holm"]),
                        }
                        for r in result.rows()
                    ]
                ),
            )
        )
    return out
