"""The offline demo: a list of named steps over the bundled real data (no key, no network).

``failcodes demo [-o reports/demo]`` runs :data:`STEPS` in order. Each step gets the shared
:class:`DemoContext` (output folder, loaded datasets, results of earlier steps under
``ctx.results``) and returns a :class:`StepOutput` (lines, DataFrames and files written); the
CLI prints it. Steps never print.

To add a step: write ``def _my_step(ctx: DemoContext) -> StepOutput`` in the step module of
its theme (``pipeline``, ``coding``, ``statistics``, ``benchmarks``, ``humanloop``,
``reporting``; shared
pieces in ``_base``, datasets in ``datasets``), keep it small and fast, and append
``DemoStep("name", "what it shows", _my_step)`` to :data:`STEPS` here. Bundled datasets are
loaded by :data:`BUNDLED_DATASETS`; a dataset whose bundled files are absent is skipped (and
said so), so the demo works with whatever is bundled.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from failcodes.demo._base import (
    DEFAULT_OUT,
    DEMO_BOOTSTRAP,
    DEMO_MAPPINGS,
    DEMO_SEED,
    Dataset,
    DemoContext,
    DemoStep,
    StepOutput,
)
from failcodes.demo.benchmarks import rtv_step, scifact_benchmark_step
from failcodes.demo.coding import (
    codebook_step,
    judge_step,
    labelstudio_step,
    saturation_step,
    scale_step,
)
from failcodes.demo.datasets import BUNDLED_DATASETS
from failcodes.demo.humanloop import review_loop_step
from failcodes.demo.pipeline import compare_step, disagreements_step, ingest_step, metrics_step
from failcodes.demo.reporting import report_step
from failcodes.demo.statistics import agreement_step

#: The demo, in order. Append your step here (see module docstring).
STEPS: list[DemoStep] = [
    DemoStep("ingest", "load the bundled datasets and write them as traces + labels", ingest_step),
    DemoStep("metrics", "metrics with bootstrap CIs per system x mapping", metrics_step),
    DemoStep("disagreements", "write the FN/FP table (input of the judge)", disagreements_step),
    DemoStep("codebook", "validate the bundled codebook and write its table", codebook_step),
    DemoStep(
        "judge",
        "offline heuristic-baseline judge codes passages and reasoning; attribution",
        judge_step,
    ),
    DemoStep(
        "scale",
        "dry run of an LLM judge: dedup, grouping, prompt caching, batch, cascade (no calls)",
        scale_step,
    ),
    DemoStep(
        "agreement",
        "inter-annotator agreement (kappa, alpha, AC1/AC2, PABAK) on RAGChecker labels",
        agreement_step,
    ),
    DemoStep(
        "saturation",
        "one codebook saturation round (offline heuristic baseline); review file for a human",
        saturation_step,
    ),
    DemoStep("rtv", "reference retrieve-then-verify (heuristic baseline judge)", rtv_step),
    DemoStep(
        "scifact-benchmark",
        "official SciFact evaluator and evidence P/R@k for the four MultiVerS systems",
        scifact_benchmark_step,
    ),
    DemoStep(
        "labelstudio",
        "Label Studio labeling configs and review tasks for the judged units (no server)",
        labelstudio_step,
    ),
    DemoStep(
        "review-loop",
        "review plan -> SIMULATED reviewer from SciFact gold -> corrected (PPI++) shares",
        review_loop_step,
    ),
    DemoStep("compare", "Cochran's Q, McNemar and F1/recall tests between systems", compare_step),
    DemoStep("report", "HTML report with paper tables and figures", report_step),
]


def run_demo(
    out_dir: str | Path = DEFAULT_OUT, steps: Sequence[DemoStep] | None = None
) -> Iterator[tuple[DemoStep, StepOutput]]:
    """Run the demo steps in order, yielding each step with its output as it finishes."""
    ctx = DemoContext(out_dir=Path(out_dir))
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    for step in STEPS if steps is None else steps:
        yield step, step.run(ctx)


__all__ = [
    "BUNDLED_DATASETS",
    "DEFAULT_OUT",
    "DEMO_BOOTSTRAP",
    "DEMO_MAPPINGS",
    "DEMO_SEED",
    "STEPS",
    "Dataset",
    "DemoContext",
    "DemoStep",
    "StepOutput",
    "run_demo",
]
