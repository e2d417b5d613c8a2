"""The steps of a study, in order, as the ``failcodes`` commands that perform them.

:func:`plan_study` turns a study file into a list of :class:`Step`: each is one ordinary CLI
command line (``failcodes ingest ...``, ``failcodes metrics ... -o metrics/X.json``, ...)
whose paths all come from :class:`~failcodes.study.layout.StudyLayout`. ``failcodes run``
executes them in order; typing them one by one (``failcodes run --plan`` prints them) gives
the same files, because they are the same commands.

Order per data set: ingest -> metrics -> disagreements -> judge retrieval -> judge reasoning
(``recode`` instead of judge once the study's codebook is newer than the run's, see
:mod:`failcodes.study.recode`) -> attribute -> Label Studio task files (``labelstudio export``,
one per judged kind); then the report over the whole folder. Once a data set's disagreements
are written, the plan keeps only the judge steps that have something to code (a closed-book
pipeline has no passage for ``judge retrieval``) and drops judge and attribute when there is no
disagreement at all; ``failcodes run`` plans again after every step.

Human review (Label Studio push/pull) needs a person and a server, so it is not a step; what
it pulls into ``review/`` is read by the report.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from failcodes.errors import InputError
from failcodes.study.config import BUNDLED_PREFIX, StudyFile, resolve_path
from failcodes.study.layout import RECODE_ENTRIES, StudyLayout
from failcodes.study.recode import needs_recode, study_codebook


@dataclass(frozen=True)
class Step:
    """One step: a ``failcodes`` command line, the files it reads and the files it writes."""

    name: str
    argv: tuple[str, ...]
    inputs: tuple[Path, ...] = field(default=())
    outputs: tuple[Path, ...] = field(default=())
    dataset: str | None = None

    def command(self) -> str:
        """The shell command (``failcodes ...``), quoted for a POSIX shell."""
        return shlex.join(["failcodes", *self.argv])


def _arg_path(value: str, layout: StudyLayout) -> str:
    """A study-file path as a command argument (``bundled:`` kept: ``ingest`` resolves it)."""
    if value.startswith(BUNDLED_PREFIX):
        return value
    return str(resolve_path(value, layout.root))


def _ingest_steps(study: StudyFile, layout: StudyLayout) -> list[Step]:
    from failcodes.ingest import Output, get_adapter

    steps: list[Step] = []
    for ds in study.datasets:
        writes: dict[Path, str] = {}
        for n, spec in enumerate(ds.ingest, start=1):
            adapter = get_adapter(spec.adapter)
            traces_out = adapter.output is Output.TRACES
            out = layout.traces(ds.name) if traces_out else layout.labels(ds.name)
            outputs = [out]
            argv = ["ingest", spec.adapter, *(_arg_path(p, layout) for p in spec.paths)]
            argv += ["-o", str(out)]
            if spec.labels and adapter.output is Output.TRACES:
                argv += ["--labels-out", str(layout.labels(ds.name))]
                outputs.append(layout.labels(ds.name))
            if traces_out:
                for p in ds.pipelines:
                    source = p.evidence.value
                    argv += ["--evidence", source if p.system == "*" else f"{p.system}={source}"]
            argv += spec.args
            for path in outputs:
                if path in writes:
                    raise InputError(
                        f"data set {ds.name!r}: ingest {n} ({spec.adapter}) and "
                        f"{writes[path]} both write {path.name}",
                        field=f"datasets.{ds.name}.ingest",
                    )
                writes[path] = f"ingest ({spec.adapter})"
            name = f"ingest {ds.name}" + (f" ({n})" if len(ds.ingest) > 1 else "")
            steps.append(
                Step(
                    name,
                    tuple(argv),
                    inputs=tuple(resolve_path(p, layout.root) for p in spec.paths),
                    outputs=tuple(outputs),
                    dataset=ds.name,
                )
            )
        if layout.labels(ds.name) not in writes:
            raise InputError(
                f"data set {ds.name!r}: no ingest writes its labels (add a labels adapter such "
                "as generic-labels, or labels = true on the traces ingest)",
                field=f"datasets.{ds.name}.ingest",
            )
    return steps


def has_traces(study: StudyFile, name: str) -> bool:
    """True if the data set has a traces ingest (a labels-only data set has only ingest)."""
    from failcodes.ingest import Output, get_adapter

    return any(get_adapter(s.adapter).output is Output.TRACES for s in study.dataset(name).ingest)


def judged_kinds(
    disagreements: Path, kinds: Sequence[str], top_k: int | None
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
    from failcodes.codebook import UnitKind
    from failcodes.disagreementio import read_disagreements
    from failcodes.units import build_units, disagreement_traces

    traces = disagreement_traces(read_disagreements(disagreements))
    unit_kind = {"retrieval": UnitKind.RETRIEVAL, "reasoning": UnitKind.VERIFICATION}
    return bool(traces), [k for k in kinds if build_units(traces, unit_kind[k], top_k=top_k)]


def plan_study(study: StudyFile, layout: StudyLayout) -> list[Step]:
    """Every step of the study, in the order they run (see the module docstring)."""
    codebook = str(resolve_path(study.codebook, layout.root))
    newest = study_codebook(study, layout)[1]
    steps = _ingest_steps(study, layout)
    m, d, j = study.metrics, study.disagreements, study.judge
    for ds in study.datasets:
        if not has_traces(study, ds.name):
            continue  # labels only (e.g. for agreement): nothing to measure or judge
        traces, labels = layout.traces(ds.name), layout.labels(ds.name)
        data = ["--traces", str(traces), "--labels", str(labels)]
        maps = [a for mapping in m.mappings for a in ("-m", mapping)]
        steps.append(
            Step(
                f"metrics {ds.name}",
                (
                    "metrics",
                    *data,
                    *maps,
                    "--level",
                    m.level,
                    "--without-claims",
                    m.without_claims,
                    "--bootstrap",
                    str(m.bootstrap),
                    "--seed",
                    str(m.seed),
                    "--format",
                    "json",
                    "-o",
                    str(layout.metrics(ds.name)),
                ),
                inputs=(traces, labels),
                outputs=(layout.metrics(ds.name),),
                dataset=ds.name,
            )
        )
        dis = layout.disagreements(ds.name)
        steps.append(
            Step(
                f"disagreements {ds.name}",
                (
                    "disagreements",
                    *data,
                    "-m",
                    d.mapping,
                    "--level",
                    study.disagreement_level,
                    "--without-claims",
                    study.disagreement_without_claims,
                    "-o",
                    str(dis),
                ),
                inputs=(traces, labels),
                outputs=(dis,),
                dataset=ds.name,
            )
        )
        found = judged_kinds(dis, j.kinds, j.top_k)
        if found is not None and not found[0]:
            continue  # no disagreement with a claim: nothing to judge or attribute
        runs: dict[str, Path] = {}
        # several --judge in [judge].args: a judge panel, whose run writes panel.json (its
        # members' annotations live under panel/), not annotations.jsonl
        panel = any(a == "--judge" or a.startswith("--judge=") for a in j.args)
        for kind in j.kinds if found is None else found[1]:
            if needs_recode(layout, ds.name, kind, newest):
                # the study's codebook is newer than the run's: the run's journal refuses a
                # different codebook, so the run is brought onto it in a re-code run
                run = layout.judge_recode_run(ds.name, kind, newest.version)
                runs[kind] = run
                steps.append(
                    Step(
                        f"recode {kind} {ds.name}",
                        ("recode", str(layout.root), "--dataset", ds.name, "--kind", kind),
                        inputs=(dis, Path(codebook)),
                        outputs=(
                            run / ("panel.json" if panel else "annotations.jsonl"),
                            run / RECODE_ENTRIES,
                        ),
                        dataset=ds.name,
                    )
                )
                continue
            run = layout.judge_run(ds.name, kind)
            runs[kind] = run
            argv = ["judge", kind, "--from", str(dis), "--codebook", codebook, "--judge", j.judge]
            if j.base_url:
                argv += ["--base-url", j.base_url]
            if j.top_k is not None:
                argv += ["--top-k", str(j.top_k)]
            if j.budget is not None:
                argv += ["--budget", str(j.budget)]
            argv += ["--cache", str(layout.judge_cache), "-o", str(run), *j.args]
            steps.append(
                Step(
                    f"judge {kind} {ds.name}",
                    tuple(argv),
                    inputs=(dis, Path(codebook)),
                    outputs=(run / "panel.json",)
                    if panel
                    else (run / "annotations.jsonl", run / "summary.json"),
                    dataset=ds.name,
                )
            )
        argv = ["attribute", "--from", str(dis), "--codebook", codebook]
        for kind, run in runs.items():
            argv += [f"--{kind}", str(run)]
        argv += ["-o", str(layout.attribution(ds.name))]
        steps.append(
            Step(
                f"attribute {ds.name}",
                tuple(argv),
                inputs=(
                    dis,
                    Path(codebook),
                    *(r / ("panel.json" if panel else "annotations.jsonl") for r in runs.values()),
                ),
                outputs=(layout.attribution_table(ds.name),),
                dataset=ds.name,
            )
        )
        if study.review.labelstudio:
            for kind, run in runs.items():
                tasks = layout.labelstudio_tasks(ds.name, kind)
                part = "retrieval" if kind == "retrieval" else "verification"
                # a panel's run folder: the consensus is pre-selected (ties are not)
                judged = run if panel else run / "annotations.jsonl"
                read = run / "panel.json" if panel else judged
                steps.append(
                    Step(
                        f"labelstudio export {kind} {ds.name}",
                        (
                            "labelstudio",
                            "export",
                            str(dis),
                            "-p",
                            part,
                            "--codebook",
                            codebook,
                            "--judged",
                            str(judged),
                            "-o",
                            str(tasks),
                        ),
                        inputs=(dis, Path(codebook), read),
                        outputs=(tasks,),
                        dataset=ds.name,
                    )
                )
    steps.append(
        Step(
            "report",
            # the study's codebook: a study on a codebook that is not bundled (a re-coded
            # version, see failcodes.study.recode) reports under it
            ("report", str(layout.root), "--codebook", codebook, "-o", str(layout.report_dir)),
            inputs=(layout.root,),  # everything the report may read (see study.runner)
            outputs=(layout.report_dir / "index.html",),
        )
    )
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
        found = judged_kinds(layout.disagreements(ds.name), study.judge.kinds, study.judge.top_k)
        if found is None:
            continue
        if not found[0]:
            notes.append(f"{ds.name}: no disagreement with a claim: nothing to judge or attribute")
            continue
        for kind in study.judge.kinds:
            if kind not in found[1]:
                notes.append(f"judge {kind} {ds.name}: not planned, {why[kind]}")
    return notes


__all__ = ["Step", "has_traces", "judged_kinds", "plan_notes", "plan_study"]
