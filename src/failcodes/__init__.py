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
    fc.plan_run("my-study").lines()               # failcodes run my-study --plan
    result = fc.run(fc.JudgeRequest(kind=fc.UnitKind.RETRIEVAL, source="d.jsonl",
                                    judge=["openai:gpt-5-mini"], dry_run=True))
    print(result.estimate.cost_usd)               # failcodes judge retrieval --dry-run ...

Names are imported on first use (``import failcodes`` stays cheap for the CLI).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcodes.deferredimport import lazy_exports

if TYPE_CHECKING:
    from failcodes.annotations import Annotation as Annotation
    from failcodes.annotations import CoderKind as CoderKind
    from failcodes.annotations import Status as Status
    from failcodes.annotations import Usage as Usage
    from failcodes.api import run as run
    from failcodes.attribution import attribute as attribute
    from failcodes.attribution import attribution_summary as attribution_summary
    from failcodes.attribution import attribution_table as attribution_table
    from failcodes.attribution import per_passage_codes as per_passage_codes
    from failcodes.attribution import per_trace_steps as per_trace_steps
    from failcodes.bundled import path as bundled_data
    from failcodes.codebook import Codebook as Codebook
    from failcodes.codebook import CodebookRef as CodebookRef
    from failcodes.codebook import Dimension as Dimension
    from failcodes.codebook import Leaf as Leaf
    from failcodes.codebook import Part as Part
    from failcodes.codebook import Subcode as Subcode
    from failcodes.codebook import bundled as bundled_codebook
    from failcodes.codebook import load as load_codebook
    from failcodes.commands.agree import AgreeRequest as AgreeRequest
    from failcodes.commands.attribute import AttributeRequest as AttributeRequest
    from failcodes.commands.benchmark import BenchmarkAtomicRequest as BenchmarkAtomicRequest
    from failcodes.commands.benchmark import BenchmarkCovidfactRequest as BenchmarkCovidfactRequest
    from failcodes.commands.benchmark import BenchmarkHealthverRequest as BenchmarkHealthverRequest
    from failcodes.commands.benchmark import BenchmarkScifactRequest as BenchmarkScifactRequest
    from failcodes.commands.cache import CachePruneRequest as CachePruneRequest
    from failcodes.commands.cache import CacheStatsRequest as CacheStatsRequest
    from failcodes.commands.codebook import CodebookDiffRequest as CodebookDiffRequest
    from failcodes.commands.codebook import CodebookSchemaRequest as CodebookSchemaRequest
    from failcodes.commands.codebook import CodebookShowRequest as CodebookShowRequest
    from failcodes.commands.codebook import CodebookTableRequest as CodebookTableRequest
    from failcodes.commands.codebook import CodebookValidateRequest as CodebookValidateRequest
    from failcodes.commands.compare import CompareRequest as CompareRequest
    from failcodes.commands.ingest import IngestRequest as IngestRequest
    from failcodes.commands.judge import JudgeRequest as JudgeRequest
    from failcodes.commands.labelstudio import ExportRequest as ExportRequest
    from failcodes.commands.labelstudio import LabelStudioConfigRequest as LabelStudioConfigRequest
    from failcodes.commands.labelstudio import LabelStudioImportRequest as LabelStudioImportRequest
    from failcodes.commands.labelstudio import LabelStudioPullRequest as LabelStudioPullRequest
    from failcodes.commands.labelstudio import LabelStudioPushRequest as LabelStudioPushRequest
    from failcodes.commands.labelstudio import LabelStudioServeRequest as LabelStudioServeRequest
    from failcodes.commands.measure import DisagreementsRequest as DisagreementsRequest
    from failcodes.commands.measure import MetricsRequest as MetricsRequest
    from failcodes.commands.recode import RecodeRequest as RecodeRequest
    from failcodes.commands.report import ReportRequest as ReportRequest
    from failcodes.commands.reviewplan import ReviewPlanRequest as ReviewPlanRequest
    from failcodes.commands.reviewplan import ReviewStatusRequest as ReviewStatusRequest
    from failcodes.commands.rtv import RtvRequest as RtvRequest
    from failcodes.commands.saturate import SaturateInitRequest as SaturateInitRequest
    from failcodes.commands.saturate import SaturateRecodeRequest as SaturateRecodeRequest
    from failcodes.commands.saturate import SaturateRoundRequest as SaturateRoundRequest
    from failcodes.demo import run_demo as run_demo
    from failcodes.disagreements import find_disagreements as find_disagreements
    from failcodes.errors import FailcodesError as FailcodesError
    from failcodes.errors import InputError as InputError
    from failcodes.ingest.scifact import bundled_dir as scifact_dir
    from failcodes.ingest.scifact import load as load_scifact
    from failcodes.judge import JudgeJob as JudgeJob
    from failcodes.judge import estimate_run as estimate_run
    from failcodes.judge import make_coder as make_coder
    from failcodes.judge import read_annotations as read_annotations
    from failcodes.judge import run_judge as run_judge
    from failcodes.judge.modes import Batch as Batch
    from failcodes.judge.modes import Cascade as Cascade
    from failcodes.judge.modes import Grouped as Grouped
    from failcodes.judge.modes import PerUnit as PerUnit
    from failcodes.judge.panelrun import run_panel as run_panel
    from failcodes.labelio import read_labels as read_labels
    from failcodes.labels import Label as Label
    from failcodes.metrics import compute_metrics as compute_metrics
    from failcodes.ratingsio import read_ratings_frame as read_ratings_frame
    from failcodes.report.render import render_table as render_table
    from failcodes.report.tables import code_shares as code_shares
    from failcodes.report.tables import percent_table as percent_table
    from failcodes.reviewplan import draw_plan as draw_plan
    from failcodes.stats.ppi import ppi_mean as ppi_mean
    from failcodes.stats.tables import agreement_table as agreement_table
    from failcodes.stats.tables import ratings_from_frame as ratings_from_frame
    from failcodes.study import init_study as init_study
    from failcodes.study import load_study as load_study
    from failcodes.study.runner import plan_run as plan_run
    from failcodes.study.runner import run_study as run_study
    from failcodes.traceio import read_traces as read_traces
    from failcodes.traces import Passage as Passage
    from failcodes.traces import Trace as Trace
    from failcodes.units import Provenance as Provenance
    from failcodes.units import Unit as Unit
    from failcodes.units import UnitKind as UnitKind
    from failcodes.units import disagreement_traces as disagreement_traces
    from failcodes.units import retrieval_units as retrieval_units
    from failcodes.units import verification_units as verification_units
    from failcodes.verdicts import Verdict as Verdict

__version__ = "0.1.0"

#: Public name -> (module, attribute), imported on first use: ``import failcodes`` (which
#: every CLI call pays) imports none of pydantic, numpy or the models (``failcodes --help``
#: and ``version`` stay fast; issue 30).
_LAZY, __getattr__ = lazy_exports(globals())


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = sorted([*_LAZY, "__version__"])
if TYPE_CHECKING:  # public too: the names imported under another name (mypy reads this)
    __all__ += ["bundled_codebook", "bundled_data", "load_codebook", "load_scifact", "scifact_dir"]
