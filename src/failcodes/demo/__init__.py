"""The offline demo: the bundled real data as a study, plus extra steps (no key, no network).

``failcodes demo [-o reports/demo]`` runs :data:`STEPS` in order. The first step
(:mod:`failcodes.demo.study`) writes the output folder's study file and runs ingest ->
metrics -> disagreements -> judge -> attribute through the same commands as ``failcodes run``
(docs/study.md), so the demo and a user's study take the same path; the later steps add what
a study does not run by itself (codebook table, scale dry run, agreement, saturation, RtV,
SciFact benchmark, Label Studio files, simulated review loop, comparisons) and the report.

Each step gets the shared :class:`DemoContext` (output folder, loaded datasets, results of
earlier steps under ``ctx.results``, the command executor) and returns a
:class:`StepOutput` (lines, DataFrames and files written); the CLI prints it. Steps never
print. To add a step: write ``def my_step(ctx: DemoContext) -> StepOutput`` in the module of
its theme (``study``, ``coding``, ``statistics``, ``benchmarks``, ``saturation``,
``humanloop``, ``pipeline``, ``reporting``; shared pieces in ``_base``), keep it small and
fast, and append ``DemoStep("name", "what it shows", my_step)`` to :data:`STEPS` here; write
files only under :class:`~failcodes.study.layout.StudyLayout` paths.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from failcodes.demo._base import DEFAULT_OUT as DEFAULT_OUT
from failcodes.demo._base import DEMO_BOOTSTRAP as DEMO_BOOTSTRAP
from failcodes.demo._base import DEMO_MAPPINGS as DEMO_MAPPINGS
from failcodes.demo._base import DEMO_SEED as DEMO_SEED
from failcodes.demo._base import Dataset as Dataset
from failcodes.demo._base import DemoContext as DemoContext
from failcodes.demo._base import DemoStep as DemoStep
from failcodes.demo._base import StepOutput as StepOutput
from failcodes.demo.benchmarks import rtv_step, scifact_benchmark_step
from failcodes.demo.coding import codebook_step, labelstudio_step, scale_step
from failcodes.demo.humanloop import review_loop_step
from failcodes.demo.pipeline import compare_step
from failcodes.demo.reporting import report_step
from failcodes.demo.saturation import saturation_step
from failcodes.demo.statistics import agreement_step
from failcodes.demo.study import study_step

#: The demo, in order. Append your step here (see module docstring).
STEPS: list[DemoStep] = [
    DemoStep(
        "study",
        "the bundled data as a study: ingest, metrics, disagreements, offline judge, "
        "attribution (the commands of `failcodes run`)",
        study_step,
    ),
    DemoStep("codebook", "validate the bundled codebook and write its table", codebook_step),
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
        "review plan -> SIMULATED reviewer from SciFact gold -> corrected shares",
        review_loop_step,
    ),
    DemoStep("compare", "Cochran's Q, McNemar and F1/recall tests between systems", compare_step),
    DemoStep("report", "HTML report with paper tables and figures", report_step),
]


def run_demo(
    out_dir: str | Path = DEFAULT_OUT,
    steps: Sequence[DemoStep] | None = None,
) -> Iterator[tuple[DemoStep, StepOutput]]:
    """Run the demo steps in order, yielding each step with its output as it finishes."""
    ctx = DemoContext(out_dir=Path(out_dir))
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    for step in STEPS if steps is None else steps:
        yield step, step.run(ctx)
