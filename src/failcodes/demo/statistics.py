"""Demo step: inter-annotator agreement on bundled human labels."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from failcodes.demo._base import DEMO_BOOTSTRAP, DEMO_SEED, DemoContext, StepOutput
from failcodes.fileio import AtomicBatch
from failcodes.hashing import file_sha256
from failcodes.study.layout import StudyLayout


def agreement_step(ctx: DemoContext) -> StepOutput:
    """Inter-annotator agreement on RAGChecker's meta-evaluation labels (bundled)."""
    from failcodes import bundled
    from failcodes.errors import ConfigError
    from failcodes.ratingsio import read_ratings_frame
    from failcodes.stats.tables import agreement_table, ratings_from_frame

    out = StepOutput()
    try:
        path = bundled.path("ragchecker", "meta_eval_human_labels.csv")
    except ConfigError:
        out.lines.append("ragchecker meta-evaluation labels: not bundled, skipped")
        return out
    frame = read_ratings_frame(path)
    digests = {str(path): file_sha256(path)}
    rows: list[dict[str, Any]] = []
    for dim, part in frame.groupby("dimension", sort=False):
        table = ratings_from_frame(
            part, unit_column="instance_id", raters=["annotator_1", "annotator_2"], source=path
        )
        results = agreement_table(
            table,
            ["percent", "cohen", "gwet_ac1", "pabak"],
            n_bootstrap=DEMO_BOOTSTRAP,
            seed=DEMO_SEED,
        ) + agreement_table(
            table,
            ["cohen", "krippendorff", "gwet_ac2"],
            level="ordinal",
            weights="quadratic",
            n_bootstrap=DEMO_BOOTSTRAP,
            seed=DEMO_SEED,
        )
        for res in results:  # what they were computed from: the report checks it
            rows.append({"dimension": dim, **res.model_dump(), "sha256": digests})
    dest = StudyLayout.of(ctx.out_dir).agreement("ragchecker_meta_eval")
    with AtomicBatch() as batch:
        batch.stage(dest).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    out.files.append(dest)
    out.lines.append(
        "RAGChecker meta-evaluation: 280 instances x 2 annotators, preference on -2..2; "
        f"95% bootstrap CIs over instances ({DEMO_BOOTSTRAP} resamples, seed {DEMO_SEED})"
    )
    table_df = pd.DataFrame(
        [
            {
                "dimension": r["dimension"],
                "statistic": r["statistic"]
                + (f" ({r['level']})" if r["statistic"] == "krippendorff" else ""),
                "weights": r["weights"],
                "value": None if r["value"] is None else round(r["value"], 3),
                "95% CI": "-"
                if r["ci_low"] is None
                else f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]",
                "units": r["n_units"],
            }
            for r in rows
        ]
    )
    out.tables.append(("agreement between the two human annotators", table_df))
    ctx.results["agreement"] = rows
    return out
