"""``failcodes recode STUDY``: bring a study's judge runs onto the study's codebook version.

Re-codes through the study's judge (study file ``[judge]``) only the units the migration
map cannot carry, migrates the others without a call, into ``judge/<dataset>/<kind>.v<N>/``
(see :mod:`failcodes.study.recode`). ``failcodes run`` plans this step by itself when the
study's codebook is newer than a judge run's. ``--status`` shows each run's versions.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from failcodes.cli.main import app
from failcodes.errors import InputError
from failcodes.study.layout import JUDGE_KINDS, StudyLayout


@app.command("recode")
def recode(
    study_dir: Annotated[str, typer.Argument(help="The study folder.", metavar="STUDY")],
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="Only this data set (default: all).")
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="Only this judge kind: retrieval | reasoning.")
    ] = None,
    status: Annotated[
        bool, typer.Option("--status", help="Show the codebook version of every judged unit.")
    ] = False,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Calls in flight.")] = 8,
    max_attempts: Annotated[int, typer.Option("--max-attempts", min=1)] = 6,
) -> None:
    """Re-code what a codebook bump touched in the study's judge runs; migrate the rest."""
    from failcodes.judge import JudgeSettings, Limits, RetryPolicy, parse_spec
    from failcodes.saturation.recode import judge_with_engine
    from failcodes.study.config import load_study
    from failcodes.study.recode import judged, plan_kind, recode_kind, recode_status

    layout = StudyLayout.of(study_dir)
    study = load_study(layout.root)
    if kind is not None and kind not in JUDGE_KINDS:
        raise InputError(f"--kind {kind!r}: expected one of {', '.join(JUDGE_KINDS)}")
    names = [ds.name for ds in study.datasets]
    if dataset is not None and dataset not in names:
        raise InputError(
            f"--dataset {dataset!r}: not a data set of the study (have: {', '.join(names)})",
            path=layout.study_file,
        )
    out = Console(highlight=False, markup=False, soft_wrap=True)
    if status:
        for row in recode_status(study, layout):
            versions = ", ".join(f"v{v}: {n}" for v, n in row.versions.items()) or "no units"
            state = "all on" if row.stale == 0 else f"{row.stale} unit(s) NOT on"
            out.print(
                f"{row.dataset}/{row.kind}: {versions} ({state} study v{row.study_version}); "
                f"re-coded {row.recoded}, migrated {row.migrated}; "
                f"read from {row.run_dir.relative_to(layout.root)}"
            )
        return
    todo = [
        (d, k)
        for d, k in judged(study, layout)
        if (dataset is None or d == dataset) and (kind is None or k == kind)
    ]
    spec = study.judge.judge
    heuristic = parse_spec(spec)[0] == "offline"
    settings = JudgeSettings(
        limits=Limits(concurrency=concurrency),
        retry=RetryPolicy(max_attempts=max_attempts),
        budget_usd=study.judge.budget,
    )
    engine = judge_with_engine(
        spec,
        base_url=study.judge.base_url,
        cache_path=None if heuristic else layout.judge_cache,
        settings=settings,
    )
    label = " (offline: heuristic baseline)" if heuristic else ""
    if not todo:
        out.print("no judge run to re-code")
    for d, k in todo:
        work = plan_kind(study, layout, d, k)
        result = recode_kind(work, engine, coder_name=spec)
        if result.run_dir is None:
            out.print(f"{d}/{k}: nothing to re-code: every unit is on v{result.version}")
            continue
        out.print(
            f"{d}/{k}: v{result.version}: {result.recoded} unit(s) re-coded by {spec}{label}, "
            f"{result.migrated} migrated without a call -> "
            f"{result.run_dir.relative_to(layout.root)}"
        )
