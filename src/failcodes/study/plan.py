"""The study's work as steps, in order: every step but the report, which ``steps`` adds.

Each step holds the request of the command that performs it. :func:`plan_work` is what the
stale-study check re-plans (:func:`failcodes.study.state.changed_steps`, which ``report``
runs): this module imports no report, so the report's use case can ask it without an import
cycle (commands.report -> study.state -> study.plan).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from failcodes.attribution import Strategy
from failcodes.columnar import ExactReaderNeededError
from failcodes.commands.agree import AgreeRequest
from failcodes.commands.attribute import AttributeRequest
from failcodes.commands.base import Request
from failcodes.commands.ingest import IngestRequest, ingest_options_of
from failcodes.commands.judge import JudgeOptions, JudgeRequest, options_of
from failcodes.commands.labelstudio import ExportRequest
from failcodes.commands.measure import DisagreementsRequest, MetricsRequest
from failcodes.commands.recode import RecodeRequest
from failcodes.errors import InputError
from failcodes.ingest import Output, get_adapter
from failcodes.study.config import BUNDLED_PREFIX, DatasetSpec, StudyFile, resolve_path
from failcodes.study.layout import RECODE_ENTRIES, StudyLayout
from failcodes.study.recode import needs_recode, run_codebook, study_codebook
from failcodes.units import UnitKind


@dataclass(frozen=True)
class Step:
    """One step: a command's request, the files it reads and the files it writes."""

    name: str
    request: Any  # a failcodes.commands request (each has run(note=...) and command_line())
    inputs: tuple[Path, ...] = field(default=())
    outputs: tuple[Path, ...] = field(default=())
    dataset: str | None = None

    def command(self) -> str:
        """The shell command that runs the same request (``failcodes ...``), POSIX-quoted."""
        request: Request = self.request
        return request.command_line()


def _arg_path(value: str, layout: StudyLayout) -> Path:
    """A study-file path as a request's path (``bundled:`` kept: ``ingest`` resolves it)."""
    if value.startswith(BUNDLED_PREFIX):
        return Path(value)
    return resolve_path(value, layout.root)


def _slug(text: str) -> str:
    """A file-name-safe form of an input's name (a part file says where it came from)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:40] or "input"


def _part(layout: StudyLayout, ds: str, n: int, spec_path: str, what: str, merged: bool) -> Path:
    """``data/<ds>.parts/<n>-<first input>.<what>.jsonl``: one ingest's share of a data set.

    Not ``merged`` (one ingest writes the data set's ``what``): the data set's own file.
    """
    if not merged:
        return layout.traces(ds) if what == "traces" else layout.labels(ds)
    stem = Path(spec_path.removeprefix(BUNDLED_PREFIX)).name.split(".")[0]
    # a traces part's record of the rows its ingest left out (a system without a verdict on
    # every row) is beside it (dropped.beside), which the merge carries on
    return layout.data_dir / f"{ds}.parts" / f"{n}-{_slug(stem)}.{what}.jsonl"


def _verdicts(ds: Any) -> list[str]:
    """The pipelines' declared verdicts (``verdict = "supported"``) as ``--verdict`` values."""
    return [
        p.verdict.value if p.system == "*" else f"{p.system}={p.verdict.value}"
        for p in ds.pipelines
        if p.verdict is not None
    ]


def _ingest_steps(study: StudyFile, layout: StudyLayout) -> list[Step]:
    """The ingest steps; several ingests into one data set write parts, then a merge.

    One traces ingest writes ``data/<ds>.traces.parquet`` (the tool's own Parquet, with the
    pipelines' evidence: the analysis engine reads it without the strict checks) and one
    labels writer ``data/<ds>.labels.jsonl``. Two or more write each its part as JSONL
    (``data/<ds>.parts/``), and a merge step reads the parts with the generic adapter (the
    trace and label formats themselves) into the data set's file: a (system, claim_id), or a
    label target, found in two parts is refused naming both files and lines; the evidence
    declarations apply to the merged traces.
    """
    steps: list[Step] = []
    for ds in study.datasets:
        specs = list(enumerate(ds.ingest, start=1))
        outputs = {
            n: get_adapter(spec.adapter).output is Output.TRACES for n, spec in specs
        }  # True: a traces adapter
        trace_writers = [n for n, t in outputs.items() if t]
        label_writers = [n for n, spec in specs if not outputs[n] or (spec.labels and outputs[n])]
        if not label_writers:
            raise InputError(
                f"data set {ds.name!r}: no ingest writes its labels (add a labels adapter such "
                "as generic-labels, or labels = true on the traces ingest)",
                field=f"datasets.{ds.name}.ingest",
            )
        evidence = [
            p.evidence.value if p.system == "*" else f"{p.system}={p.evidence.value}"
            for p in ds.pipelines
        ]
        verdicts = _verdicts(ds)
        if verdicts and not any(spec.adapter == "generic" for n, spec in specs if outputs[n]):
            raise InputError(
                f"data set {ds.name!r}: a pipeline declares verdict = ... (an asserting "
                "pipeline), which the generic adapter applies; this data set's traces come "
                "from another adapter",
                field=f"datasets.{ds.name}.pipelines",
            )
        merged_traces = len(trace_writers) > 1
        merged_labels = len(label_writers) > 1
        trace_parts: list[Path] = []
        label_parts: list[Path] = []
        for n, spec in specs:
            traces_out = outputs[n]
            first = spec.paths[0]
            if traces_out:
                out = _part(layout, ds.name, n, first, "traces", merged_traces)
                trace_parts.append(out)
            else:
                out = _part(layout, ds.name, n, first, "labels", merged_labels)
                label_parts.append(out)
            written = [out]
            labels_out = None
            if spec.labels and traces_out:
                labels_out = _part(layout, ds.name, n, first, "labels", merged_labels)
                label_parts.append(labels_out)
                written.append(labels_out)
            options = ingest_options_of(spec)
            if spec.passages is not None:
                options["passages"] = _arg_path(str(spec.passages), layout)
            if traces_out and spec.adapter == "generic" and verdicts:
                declared = list(options.get("verdict") or [])
                options["verdict"] = [*declared, *verdicts]
            request = IngestRequest(
                adapter=spec.adapter,
                paths=[_arg_path(p, layout) for p in spec.paths],
                out=out,
                labels_out=labels_out,
                evidence=evidence if traces_out else [],
                part=traces_out and merged_traces,
                **options,
            )
            name = f"ingest {ds.name}" + (f" ({n})" if len(ds.ingest) > 1 else "")
            steps.append(
                Step(
                    name,
                    request,
                    inputs=tuple(resolve_path(p, layout.root) for p in spec.paths),
                    outputs=tuple(written),
                    dataset=ds.name,
                )
            )
        merges: list[tuple[str, list[Path], IngestRequest]] = []
        if merged_traces:
            request = IngestRequest(
                adapter="generic", paths=trace_parts, out=layout.traces(ds.name), evidence=evidence
            )
            merges.append(("traces", trace_parts, request))
        if merged_labels:
            # one file per system, each with the shared labels of its sentences: a sentence
            # labelled alike in several parts is one label (labelled otherwise: refused)
            request = IngestRequest(
                adapter="generic-labels",
                paths=label_parts,
                out=layout.labels(ds.name),
                option=["duplicates=same"],
            )
            merges.append(("labels", label_parts, request))
        for what, parts, request in merges:
            steps.append(
                Step(
                    f"merge {what} {ds.name}",
                    request,
                    inputs=tuple(parts),
                    outputs=(request.out,),
                    dataset=ds.name,
                )
            )
    return steps


def _agreement_steps(study: StudyFile, layout: StudyLayout) -> list[Step]:
    """One ``agree PATH ... -o agreement/<name>.json`` per ``[[agreements]]`` entry."""
    steps = []
    for spec in study.agreements:
        source = _arg_path(spec.path, layout)
        codebook = _cited_codebook(source, study, layout)
        request = AgreeRequest(
            file=source,
            stat=list(spec.statistics),
            raters=",".join(spec.raters) if spec.raters else None,
            by=spec.by,
            long=",".join(spec.long) if spec.long else None,
            unit_column=spec.unit_column,
            level=spec.level,
            weights=spec.weights,
            categories=",".join(spec.categories) if spec.categories else None,
            sets=spec.sets,
            bootstrap=spec.bootstrap,
            seed=spec.seed,
            out=layout.agreement(spec.name),
            codebook=codebook,
        )
        steps.append(
            Step(
                f"agree {spec.name}",
                request,
                inputs=(source,) if codebook is None else (source, codebook),
                outputs=(layout.agreement(spec.name),),
            )
        )
    return steps


def _cited_codebook(source: Path, study: StudyFile, layout: StudyLayout) -> Path | None:
    """The study's codebook file an annotation file cites, where no bundled codebook is it.

    `agree` takes an annotation file's code lists from ``--codebook``, else from the bundled
    codebook it cites, else from the codes observed; a study's own codebook was never given,
    so AC1 and Brennan-Prediger counted the codes used (2 of chunking's 4 codes: 0.250 where
    the study's codebook gives 0.500) and the first line asked for a ``--codebook`` that
    ``[[agreements]]`` cannot take. The study file's codebook, or its ``<name>.v<N>.yaml``
    sibling the annotations cite (an earlier version), when its name, version and hash match;
    for a judge panel's run folder, the codebook its members' annotations cite.
    """
    from failcodes import codebook as cbm
    from failcodes.codebook import CodebookRef
    from failcodes.errors import FailcodesError
    from failcodes.jsonio import peek_jsonl

    if source.is_dir():  # a judge panel's run folder: its members' annotations
        ref = run_codebook(source)
        if ref is None:
            return None
    else:
        head = peek_jsonl(source) if source.suffix.lower() in (".jsonl", ".ndjson") else None
        try:
            ref = CodebookRef.model_validate((head or {}).get("codebook"))
        except ValueError:  # not an annotation file (a ratings table): agree reads it as one
            return None
    own = resolve_path(study.codebook, layout.root)
    try:
        if cbm.bundled_for(ref) is not None:
            return None  # agree finds it itself (and says so)
        if own.is_file() and cbm.load(own).ref() == ref:
            return own
        cited = cbm.cited_in(own.parent, ref)
    except FailcodesError:  # a broken codebook file: the judge steps name it
        return None
    return None if cited is None else own.parent / cbm.file_name(ref.name, ref.version)


def has_traces(study: StudyFile, name: str) -> bool:
    """True if the data set has a traces ingest (a labels-only data set has only ingest)."""
    return any(get_adapter(s.adapter).output is Output.TRACES for s in study.dataset(name).ingest)


def judged_kinds(
    disagreements: Path, kinds: Sequence[str], judge: JudgeOptions
) -> tuple[bool, list[str]] | None:
    """Whether ``disagreements`` holds claims to attribute, and the judge kinds with units.

    None while the file is not written. A closed-book pipeline has no passage to code (no
    ``judge retrieval``; its disagreements are still attributed), a verifier without
    reasoning no reasoning to code; a data set without disagreements (or whose disagreements
    carry no claim) has nothing to judge or attribute. The same rule as ``failcodes judge``
    and ``attribute``, which refuse to work on nothing.
    """
    if not disagreements.is_file():
        return None
    found = _first_units(disagreements, judge)
    return found[0], [k for k in kinds if found[1][k]]


#: What :func:`_first_units` found per file state: ``failcodes run`` plans again after every
#: step, and a plan read the whole disagreements file strictly and built every unit of both
#: kinds (~20 CPU-s and 1 GB at paper scale) to learn whether one existed (issue 30).
_FIRST_UNITS: dict[tuple[Path, int, int, int, int | None], tuple[bool, dict[str, bool]]] = {}


def _first_units(disagreements: Path, judge: JudgeOptions) -> tuple[bool, dict[str, bool]]:
    """Whether the file holds a claim, and whether it holds a unit of each judge kind.

    Read a claim at a time until every answer is known (usually the first line), remembered
    for the file as it is (path, inode, size and modification time). A file the fast reader
    cannot vouch for is read whole by the exact reader, as the judge reads it.
    """
    from failcodes.disagreementio import claim_trace_of, iter_disagreement_claims

    stat = disagreements.stat()
    key = (disagreements.resolve(), stat.st_ino, stat.st_size, stat.st_mtime_ns, judge.passage_cut)
    if key in _FIRST_UNITS:
        return _FIRST_UNITS[key]
    claims, has = False, {"retrieval": False, "reasoning": False}
    try:
        for rec, c in iter_disagreement_claims(disagreements):
            trace = claim_trace_of(rec, c)
            claims = True
            has["retrieval"] = has["retrieval"] or any(
                judge.judges_passage(p.rank) for p in trace.evidence_passages
            )
            has["reasoning"] = has["reasoning"] or bool(trace.reasoning and trace.reasoning.strip())
            if all(has.values()):
                break
    except ExactReaderNeededError:
        from failcodes.disagreementio import read_disagreements
        from failcodes.units import disagreement_traces

        traces = disagreement_traces(read_disagreements(disagreements))
        claims = bool(traces)
        has = {
            "retrieval": bool(judge.units(traces, UnitKind.RETRIEVAL)),
            "reasoning": bool(judge.units(traces, UnitKind.VERIFICATION)),
        }
    _FIRST_UNITS[key] = (claims, has)
    return claims, has


def _judge_request(
    study: StudyFile, layout: StudyLayout, kind: str, dis: Path, codebook: Path, run: Path
) -> JudgeRequest:
    """The judge step's request: the study's ``[judge]`` settings on its paths."""
    options = {  # a path is relative to the study folder, as every path there
        name: _arg_path(str(value), layout) if isinstance(value, Path) else value
        for name, value in options_of(study.judge).items()
    }
    return JudgeRequest(
        kind=UnitKind.RETRIEVAL if kind == "retrieval" else UnitKind.VERIFICATION,
        source=dis,
        codebook=codebook,
        cache=layout.judge_cache,
        output=run,
        **options,
    )


def _measure_steps(study: StudyFile, layout: StudyLayout, name: str) -> list[Step]:
    """The metrics and disagreements steps of data set ``name``."""
    traces, labels = layout.traces(name), layout.labels(name)
    m, d = study.metrics, study.disagreements
    metrics = MetricsRequest(
        traces=[traces],
        labels=labels,
        mapping=list(m.mappings),
        level=m.level,
        without_claims=m.without_claims,
        question_scope=m.question_scope,
        bootstrap=m.bootstrap,
        seed=m.seed,
        out=layout.metrics(name),
        out_format="json",
    )
    disagreements = DisagreementsRequest(
        traces=[traces],
        labels=labels,
        mapping=[d.mapping],
        level=study.disagreement_level,
        without_claims=study.disagreement_without_claims,
        question_scope=study.disagreement_question_scope,
        out=layout.disagreements(name),
    )
    return [
        Step(
            f"metrics {name}",
            metrics,
            inputs=(traces, labels),
            outputs=(layout.metrics(name),),
            dataset=name,
        ),
        Step(
            f"disagreements {name}",
            disagreements,
            inputs=(traces, labels),
            outputs=(layout.disagreements(name),),
            dataset=name,
        ),
    ]


def _judge_steps(
    study: StudyFile, layout: StudyLayout, name: str, kinds: Sequence[str]
) -> tuple[list[Step], dict[str, Path]]:
    """The judge (or re-code) step of each kind, and each kind's run folder."""
    codebook = resolve_path(study.codebook, layout.root)
    newest = study_codebook(study, layout)[1]
    dis = layout.disagreements(name)
    # several judges in [judge]: a judge panel, whose run writes panel.json (its members'
    # annotations live under panel/), not annotations.jsonl
    panel = study.judge.panel
    steps: list[Step] = []
    runs: dict[str, Path] = {}
    for kind in kinds:
        if needs_recode(layout, name, kind, newest):
            # the study's codebook is newer than the run's: the run's journal refuses a
            # different codebook, so the run is brought onto it in a re-code run. Its units
            # and judge come from the study file's [judge] (top_k, judge, mode), which its
            # request does not carry: an input, so a changed top_k re-codes (skipped, the run
            # kept the earlier input's units: 'dimensions coded 5' for 4 passages)
            run = runs[kind] = layout.judge_recode_run(name, kind, newest.version)
            recode = RecodeRequest(study=layout.root, dataset=name, kind=kind)
            outputs = (run / ("panel.json" if panel else "annotations.jsonl"), run / RECODE_ENTRIES)
            steps.append(
                Step(
                    f"recode {kind} {name}",
                    recode,
                    inputs=(dis, codebook, layout.study_file),
                    outputs=outputs,
                    dataset=name,
                )
            )
            continue
        run = runs[kind] = layout.judge_run(name, kind)
        steps.append(
            Step(
                f"judge {kind} {name}",
                _judge_request(study, layout, kind, dis, codebook, run),
                inputs=(dis, codebook),
                outputs=(run / "panel.json",)
                if panel
                else (run / "annotations.jsonl", run / "summary.json"),
                dataset=name,
            )
        )
    return steps, runs


def _review_steps(
    study: StudyFile, layout: StudyLayout, ds: DatasetSpec, runs: dict[str, Path]
) -> list[Step]:
    """Attribution of the data set's disagreements, then its Label Studio task files."""
    name = ds.name
    codebook = resolve_path(study.codebook, layout.root)
    dis = layout.disagreements(name)
    panel = study.judge.panel
    attribute = study.judge.cut(
        AttributeRequest(
            source=dis,
            codebook=codebook,
            retrieval=runs.get("retrieval"),
            reasoning=runs.get("reasoning"),
            strategy=Strategy(ds.attribution),
            output=layout.attribution(name),
        )
    )
    steps = [
        Step(
            f"attribute {name}",
            attribute,
            inputs=(
                dis,
                codebook,
                *(r / ("panel.json" if panel else "annotations.jsonl") for r in runs.values()),
            ),
            outputs=(layout.attribution_table(name),),
            dataset=name,
        )
    ]
    if not study.review.labelstudio:
        return steps
    for kind, run in runs.items():
        tasks = layout.labelstudio_tasks(name, kind)
        # a panel's run folder: the consensus is pre-selected (ties are not)
        judged = run if panel else run / "annotations.jsonl"
        export = study.judge.cut(
            ExportRequest(
                units=dis,
                part=UnitKind.RETRIEVAL if kind == "retrieval" else UnitKind.VERIFICATION,
                codebook=codebook,
                judged=judged,
                out=tasks,
            )
        )
        read = run / "panel.json" if panel else judged
        steps.append(
            Step(
                f"labelstudio export {kind} {name}",
                export,
                inputs=(dis, codebook, read),
                outputs=(tasks,),
                dataset=name,
            )
        )
    return steps


def plan_work(study: StudyFile, layout: StudyLayout) -> list[Step]:
    """Every step of the study but the report, in the order they run (see ``steps``)."""
    steps = _ingest_steps(study, layout)
    steps += _agreement_steps(study, layout)
    for ds in study.datasets:
        if not has_traces(study, ds.name):
            continue  # labels only (e.g. for agreement): nothing to measure or judge
        steps += _measure_steps(study, layout, ds.name)
        found = judged_kinds(layout.disagreements(ds.name), study.judge.kinds, study.judge)
        if found is not None and not found[0]:
            continue  # no disagreement with a claim: nothing to judge or attribute
        judging, runs = _judge_steps(
            study, layout, ds.name, study.judge.kinds if found is None else found[1]
        )
        steps += judging
        steps += _review_steps(study, layout, ds, runs)
    return steps


def plan_notes(study: StudyFile, layout: StudyLayout) -> list[str]:
    """Why steps of the study are not planned (judge kinds with nothing to code, ...)."""
    why = {
        "retrieval": "the disagreements carry no passage (closed-book, or no text given)",
        "reasoning": "the verifier wrote no reasoning",
    }
    notes: list[str] = []
    for ds in study.datasets:
        if not has_traces(study, ds.name):
            notes.append(f"{ds.name}: labels only, nothing to measure or judge")
            continue
        found = judged_kinds(layout.disagreements(ds.name), study.judge.kinds, study.judge)
        if found is None:
            continue
        if not found[0]:
            notes.append(f"{ds.name}: no disagreement with a claim: nothing to judge or attribute")
            continue
        for kind in study.judge.kinds:
            if kind not in found[1]:
                notes.append(f"judge {kind} {ds.name}: not planned, {why[kind]}")
    return notes
