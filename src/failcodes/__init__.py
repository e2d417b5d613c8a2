"""failcodes: find out why a medical fact-checking pipeline disagrees with clinicians.

The curated public API: the core contracts (pydantic models) and the functions of the whole
loop, from reading traces to the report's tables. Everything else lives in submodules.

    import failcodes as fc

    traces, labels = fc.load_scifact(fc.scifact_dir())
    report = fc.compute_metrics(traces, labels, ["refuted"], bootstrap=500, seed=0)
    items = fc.find_disagreements(traces, labels, "refuted")
    units = fc.retrieval_units(fc.disagreement_traces(items))
    job = fc.JudgeJob(fc.bundled_codebook(), fc.UnitKind.RETRIEVAL, run_dir="run")
    fc.run_judge(units, fc.make_coder("offline"), job)
    attributed = fc.attribute(items, fc.read_annotations("run"), fc.bundled_codebook())

The commands as use cases, with the same typed requests the CLI and a study run (no
subprocess, no command line; docs/architecture.md)::

    fc.run_study("my-study")                      # failcodes run my-study
    result = fc.run(fc.JudgeRequest(kind=fc.UnitKind.RETRIEVAL, source="d.jsonl",
                                    judge=["openai:gpt-5-mini"], dry_run=True))
    print(result.estimate.cost_usd)               # failcodes judge retrieval --dry-run ...

Names are imported on first use (``import failcodes`` stays cheap for the CLI).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from failcodes.annotations import Annotation, CoderKind, Status, Usage
    from failcodes.api import run
    from failcodes.attribution import (
        attribute,
        attribution_summary,
        attribution_table,
        per_passage_codes,
        per_trace_steps,
    )
    from failcodes.bundled import path as bundled_data
    from failcodes.codebook import Codebook, CodebookRef, Dimension, Leaf, Part, Subcode
    from failcodes.codebook import bundled as bundled_codebook
    from failcodes.codebook import load as load_codebook
    from failcodes.commands.agree import AgreeRequest
    from failcodes.commands.attribute import AttributeRequest
    from failcodes.commands.benchmark import (
        BenchmarkAtomicRequest,
        BenchmarkCovidfactRequest,
        BenchmarkHealthverRequest,
        BenchmarkScifactRequest,
    )
    from failcodes.commands.cache import CachePruneRequest, CacheStatsRequest
    from failcodes.commands.codebook import (
        CodebookDiffRequest,
        CodebookSchemaRequest,
        CodebookShowRequest,
        CodebookTableRequest,
        CodebookValidateRequest,
    )
    from failcodes.commands.compare import CompareRequest
    from failcodes.commands.ingest import IngestRequest
    from failcodes.commands.judge import JudgeRequest
    from failcodes.commands.labelstudio import (
        ExportRequest,
        LabelStudioConfigRequest,
        LabelStudioImportRequest,
        LabelStudioPullRequest,
        LabelStudioPushRequest,
        LabelStudioServeRequest,
    )
    from failcodes.commands.measure import DisagreementsRequest, MetricsRequest
    from failcodes.commands.recode import RecodeRequest
    from failcodes.commands.report import ReportRequest
    from failcodes.commands.reviewplan import ReviewPlanRequest, ReviewStatusRequest
    from failcodes.commands.rtv import RtvRequest
    from failcodes.commands.saturate import (
        SaturateInitRequest,
        SaturateRecodeRequest,
        SaturateRoundRequest,
    )
    from failcodes.demo import run_demo
    from failcodes.disagreements import find_disagreements
    from failcodes.errors import FailcodesError, InputError
    from failcodes.ingest.scifact import bundled_dir as scifact_dir
    from failcodes.ingest.scifact import load as load_scifact
    from failcodes.judge import JudgeJob, estimate_run, make_coder, read_annotations, run_judge
    from failcodes.judge.modes import Batch, Cascade, Grouped, PerUnit
    from failcodes.judge.panelrun import run_panel
    from failcodes.labelio import read_labels
    from failcodes.labels import Label
    from failcodes.metrics import compute_metrics
    from failcodes.ratingsio import read_ratings_frame
    from failcodes.report.render import render_table
    from failcodes.report.tables import code_shares, percent_table
    from failcodes.reviewplan import draw_plan
    from failcodes.stats.ppi import ppi_mean
    from failcodes.stats.tables import agreement_table, ratings_from_frame
    from failcodes.study import init_study, load_study
    from failcodes.study.runner import run_study
    from failcodes.traceio import read_traces
    from failcodes.traces import Passage, Trace
    from failcodes.units import (
        Provenance,
        Unit,
        UnitKind,
        disagreement_traces,
        retrieval_units,
        verification_units,
    )
    from failcodes.verdicts import Verdict

__version__ = "0.1.0"

#: Public name -> (module, attribute), imported on first use: ``import failcodes`` (which
#: every CLI call pays) imports none of pydantic, numpy or the models (``failcodes --help``
#: and ``version`` stay fast; issue 30).
_LAZY: dict[str, tuple[str, str]] = {
    # the core contracts
    "Annotation": ("failcodes.annotations", "Annotation"),
    "CoderKind": ("failcodes.annotations", "CoderKind"),
    "Status": ("failcodes.annotations", "Status"),
    "Usage": ("failcodes.annotations", "Usage"),
    "Codebook": ("failcodes.codebook", "Codebook"),
    "CodebookRef": ("failcodes.codebook", "CodebookRef"),
    "Dimension": ("failcodes.codebook", "Dimension"),
    "Leaf": ("failcodes.codebook", "Leaf"),
    "Part": ("failcodes.codebook", "Part"),
    "Subcode": ("failcodes.codebook", "Subcode"),
    "FailcodesError": ("failcodes.errors", "FailcodesError"),
    "InputError": ("failcodes.errors", "InputError"),
    "Label": ("failcodes.labels", "Label"),
    "Passage": ("failcodes.traces", "Passage"),
    "Trace": ("failcodes.traces", "Trace"),
    "Provenance": ("failcodes.units", "Provenance"),
    "Unit": ("failcodes.units", "Unit"),
    "UnitKind": ("failcodes.units", "UnitKind"),
    "Verdict": ("failcodes.verdicts", "Verdict"),
    # reading data
    "read_traces": ("failcodes.traceio", "read_traces"),
    "read_labels": ("failcodes.labelio", "read_labels"),
    "read_ratings_frame": ("failcodes.ratingsio", "read_ratings_frame"),
    "load_scifact": ("failcodes.ingest.scifact", "load"),
    "scifact_dir": ("failcodes.ingest.scifact", "bundled_dir"),
    "bundled_data": ("failcodes.bundled", "path"),
    "load_codebook": ("failcodes.codebook", "load"),
    "bundled_codebook": ("failcodes.codebook", "bundled"),
    # metrics and disagreements
    "compute_metrics": ("failcodes.metrics", "compute_metrics"),
    "find_disagreements": ("failcodes.disagreements", "find_disagreements"),
    # judging
    "disagreement_traces": ("failcodes.units", "disagreement_traces"),
    "retrieval_units": ("failcodes.units", "retrieval_units"),
    "verification_units": ("failcodes.units", "verification_units"),
    "make_coder": ("failcodes.judge", "make_coder"),
    "JudgeJob": ("failcodes.judge", "JudgeJob"),
    "run_judge": ("failcodes.judge", "run_judge"),
    "estimate_run": ("failcodes.judge", "estimate_run"),
    "read_annotations": ("failcodes.judge", "read_annotations"),
    "PerUnit": ("failcodes.judge.modes", "PerUnit"),
    "Grouped": ("failcodes.judge.modes", "Grouped"),
    "Batch": ("failcodes.judge.modes", "Batch"),
    "Cascade": ("failcodes.judge.modes", "Cascade"),
    # attribution, agreement, report tables
    "attribute": ("failcodes.attribution", "attribute"),
    "attribution_summary": ("failcodes.attribution", "attribution_summary"),
    "attribution_table": ("failcodes.attribution", "attribution_table"),
    "per_passage_codes": ("failcodes.attribution", "per_passage_codes"),
    "per_trace_steps": ("failcodes.attribution", "per_trace_steps"),
    "agreement_table": ("failcodes.stats.tables", "agreement_table"),
    "ratings_from_frame": ("failcodes.stats.tables", "ratings_from_frame"),
    "code_shares": ("failcodes.report.tables", "code_shares"),
    "percent_table": ("failcodes.report.tables", "percent_table"),
    "render_table": ("failcodes.report.render", "render_table"),
    "run_demo": ("failcodes.demo", "run_demo"),
    # the commands as use cases: typed requests (the CLI's and a study's), run in process
    "run": ("failcodes.api", "run"),
    "run_study": ("failcodes.study.runner", "run_study"),
    "IngestRequest": ("failcodes.commands.ingest", "IngestRequest"),
    "MetricsRequest": ("failcodes.commands.measure", "MetricsRequest"),
    "DisagreementsRequest": ("failcodes.commands.measure", "DisagreementsRequest"),
    "JudgeRequest": ("failcodes.commands.judge", "JudgeRequest"),
    "AttributeRequest": ("failcodes.commands.attribute", "AttributeRequest"),
    "ExportRequest": ("failcodes.commands.labelstudio", "ExportRequest"),
    "RecodeRequest": ("failcodes.commands.recode", "RecodeRequest"),
    "ReportRequest": ("failcodes.commands.report", "ReportRequest"),
    "CompareRequest": ("failcodes.commands.compare", "CompareRequest"),
    "AgreeRequest": ("failcodes.commands.agree", "AgreeRequest"),
    "ReviewPlanRequest": ("failcodes.commands.reviewplan", "ReviewPlanRequest"),
    "ReviewStatusRequest": ("failcodes.commands.reviewplan", "ReviewStatusRequest"),
    "CacheStatsRequest": ("failcodes.commands.cache", "CacheStatsRequest"),
    "CachePruneRequest": ("failcodes.commands.cache", "CachePruneRequest"),
    "SaturateInitRequest": ("failcodes.commands.saturate", "SaturateInitRequest"),
    "SaturateRoundRequest": ("failcodes.commands.saturate", "SaturateRoundRequest"),
    "SaturateRecodeRequest": ("failcodes.commands.saturate", "SaturateRecodeRequest"),
    "CodebookDiffRequest": ("failcodes.commands.codebook", "CodebookDiffRequest"),
    "CodebookSchemaRequest": ("failcodes.commands.codebook", "CodebookSchemaRequest"),
    "CodebookShowRequest": ("failcodes.commands.codebook", "CodebookShowRequest"),
    "CodebookTableRequest": ("failcodes.commands.codebook", "CodebookTableRequest"),
    "CodebookValidateRequest": ("failcodes.commands.codebook", "CodebookValidateRequest"),
    "BenchmarkAtomicRequest": ("failcodes.commands.benchmark", "BenchmarkAtomicRequest"),
    "BenchmarkCovidfactRequest": ("failcodes.commands.benchmark", "BenchmarkCovidfactRequest"),
    "BenchmarkHealthverRequest": ("failcodes.commands.benchmark", "BenchmarkHealthverRequest"),
    "BenchmarkScifactRequest": ("failcodes.commands.benchmark", "BenchmarkScifactRequest"),
    "RtvRequest": ("failcodes.commands.rtv", "RtvRequest"),
    "LabelStudioImportRequest": ("failcodes.commands.labelstudio", "LabelStudioImportRequest"),
    "LabelStudioConfigRequest": ("failcodes.commands.labelstudio", "LabelStudioConfigRequest"),
    "LabelStudioPullRequest": ("failcodes.commands.labelstudio", "LabelStudioPullRequest"),
    "LabelStudioPushRequest": ("failcodes.commands.labelstudio", "LabelStudioPushRequest"),
    "LabelStudioServeRequest": ("failcodes.commands.labelstudio", "LabelStudioServeRequest"),
    # a study folder, a judge panel, human review
    "init_study": ("failcodes.study", "init_study"),
    "load_study": ("failcodes.study", "load_study"),
    "run_panel": ("failcodes.judge.panelrun", "run_panel"),
    "draw_plan": ("failcodes.reviewplan", "draw_plan"),
    "ppi_mean": ("failcodes.stats.ppi", "ppi_mean"),
}


def __getattr__(name: str) -> Any:
    """Import a public function on first use."""
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'failcodes' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AgreeRequest",
    "Annotation",
    "AttributeRequest",
    "Batch",
    "BenchmarkAtomicRequest",
    "BenchmarkCovidfactRequest",
    "BenchmarkHealthverRequest",
    "BenchmarkScifactRequest",
    "CachePruneRequest",
    "CacheStatsRequest",
    "Cascade",
    "Codebook",
    "CodebookDiffRequest",
    "CodebookRef",
    "CodebookSchemaRequest",
    "CodebookShowRequest",
    "CodebookTableRequest",
    "CodebookValidateRequest",
    "CoderKind",
    "CompareRequest",
    "Dimension",
    "DisagreementsRequest",
    "ExportRequest",
    "FailcodesError",
    "Grouped",
    "IngestRequest",
    "InputError",
    "JudgeJob",
    "JudgeRequest",
    "Label",
    "LabelStudioConfigRequest",
    "LabelStudioImportRequest",
    "LabelStudioPullRequest",
    "LabelStudioPushRequest",
    "LabelStudioServeRequest",
    "Leaf",
    "MetricsRequest",
    "Part",
    "Passage",
    "PerUnit",
    "Provenance",
    "RecodeRequest",
    "ReportRequest",
    "ReviewPlanRequest",
    "ReviewStatusRequest",
    "RtvRequest",
    "SaturateInitRequest",
    "SaturateRecodeRequest",
    "SaturateRoundRequest",
    "Status",
    "Subcode",
    "Trace",
    "Unit",
    "UnitKind",
    "Usage",
    "Verdict",
    "__version__",
    "agreement_table",
    "attribute",
    "attribution_summary",
    "attribution_table",
    "bundled_codebook",
    "bundled_data",
    "code_shares",
    "compute_metrics",
    "disagreement_traces",
    "draw_plan",
    "estimate_run",
    "find_disagreements",
    "init_study",
    "load_codebook",
    "load_scifact",
    "load_study",
    "make_coder",
    "per_passage_codes",
    "per_trace_steps",
    "percent_table",
    "ppi_mean",
    "ratings_from_frame",
    "read_annotations",
    "read_labels",
    "read_ratings_frame",
    "read_traces",
    "render_table",
    "retrieval_units",
    "run",
    "run_demo",
    "run_judge",
    "run_panel",
    "run_study",
    "scifact_dir",
    "verification_units",
]
