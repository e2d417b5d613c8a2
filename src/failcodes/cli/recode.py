"""``failcodes recode STUDY``: bring a study's judge runs onto the study's codebook version.

Re-codes through the study's judge (study file ``[judge]``) only the units the migration
map cannot carry, migrates the others without a call, into ``judge/<dataset>/<kind>.v<N>/``
(see :mod:`failcodes.study.recode`). ``failcodes run`` plans this step by itself when the
study's codebook is newer than a judge run's. ``--status`` shows each run's versions.

``[judge].args`` are read by the ``failcodes judge`` command's own option parser, so the
re-code runs the way the judge step ran: the run mode (``--group-by-claim``, ``--batch``,
``--batch-size``, ``--poll-interval``, ``--cascade``), a panel (extra ``--judge``: each member
re-codes its own units), ``--temperature``, ``--timeout``, rate limits, ``--max-output-tokens``,
``--prices``/``--price-as`` and ``--no-cache``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from failcodes.cli.main import app
from failcodes.cli.options import DatasetOpt
from failcodes.errors import InputError
from failcodes.study.layout import JUDGE_KINDS, StudyLayout


def judge_args(study_file: Path, judge: str, args: list[str]) -> dict[str, Any]:
    """``[judge].args`` (with ``--judge JUDGE`` first) parsed as ``failcodes judge`` parses them.

    A bad or unknown option is one :class:`InputError` line naming the study file.
    """
    from failcodes.cli.judge import judge_app

    # both kinds take the same options
    judge_cmd = typer.main.get_command(judge_app).commands["retrieval"]  # type: ignore[attr-defined]
    argv = ["--from", "-", "--codebook", "-", "--judge", judge, *args]
    try:
        with judge_cmd.make_context("judge", argv) as ctx:
            return dict(ctx.params)
    except typer.TyperException as exc:  # click's usage errors (typer's vendored click)
        fmt = getattr(exc, "format_message", None)
        message = fmt() if callable(fmt) else str(exc)
        raise InputError(f"[judge] args: {message}", path=study_file, field="judge.args") from None


@app.command("recode")
def recode(
    study_dir: Annotated[str, typer.Argument(help="The study folder.", metavar="STUDY")],
    dataset: DatasetOpt = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="Only this judge kind: retrieval | reasoning.")
    ] = None,
    status: Annotated[
        bool, typer.Option("--status", help="Show the codebook version of every judged unit.")
    ] = False,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", min=1, help="Calls in flight (default: \\[judge].args, else 8)."
        ),
    ] = None,
    max_attempts: Annotated[
        int | None,
        typer.Option("--max-attempts", min=1, help="Default: \\[judge].args, else 6."),
    ] = None,
) -> None:
    """Re-code what a codebook bump touched in the study's judge runs; migrate the rest."""
    from failcodes.cli.judge import ScaleFlags
    from failcodes.errors import ConfigError
    from failcodes.judge import (
        JudgeSettings,
        Limits,
        PricingOnlyCoder,
        RetryPolicy,
        load_prices,
        make_coder,
        parse_spec,
    )
    from failcodes.judge.panelrun import Member, member_names
    from failcodes.saturation.recode import judge_with_engine
    from failcodes.study.config import load_study
    from failcodes.study.recode import (
        PanelSeat,
        judged,
        plan_kind,
        recode_kind,
        recode_panel,
        recode_status,
    )

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
    opts = judge_args(layout.study_file, study.judge.judge, study.judge.args)
    specs: list[str] = list(opts["judge"])
    for spec in specs:
        parse_spec(spec)
    flags = ScaleFlags(
        opts["group_by_claim"],
        opts["batch"],
        opts["cascade"],
        opts["batch_size"],
        opts["poll_interval"],
    )
    if len(specs) > 1 and flags.cascade is not None:
        raise ConfigError("--cascade cannot be combined with a panel (several --judge)")
    prices = load_prices(opts["prices"])
    price = None
    if opts["price_as"] is not None:
        price = prices.lookup(opts["price_as"])
        if price is None:
            raise ConfigError(f"--price-as {opts['price_as']}: no such entry in the price table")
    settings = JudgeSettings(
        limits=Limits(
            concurrency=concurrency or opts["concurrency"],
            requests_per_minute=opts["rpm"],
            tokens_per_minute=opts["tpm"],
        ),
        retry=RetryPolicy(max_attempts=max_attempts or opts["max_attempts"]),
        max_output_tokens=opts["max_output_tokens"],
        budget_usd=study.judge.budget,
        price=price,
    )
    seen: set[str] = set()
    engines = []
    for spec in specs:
        heuristic = parse_spec(spec)[0] == "offline"
        repeat = spec in seen  # a repeated panel member samples again: no cache (as judge)
        seen.add(spec)
        engines.append(
            judge_with_engine(
                spec,
                base_url=study.judge.base_url,
                cache_path=None if heuristic or repeat or opts["no_cache"] else layout.judge_cache,
                settings=settings,
                make_mode=lambda: flags.mode(dry_run=False),
                timeout=opts["timeout"],
                temperature=opts["temperature"],
                prices=prices,
            )
        )
    who = " + ".join(
        spec + (" (offline: heuristic baseline)" if parse_spec(spec)[0] == "offline" else "")
        for spec in specs
    )
    how = "".join(
        [
            f", cascade ({flags.cascade} first)" if flags.cascade else "",
            ", batch" if flags.batch else "",
            ", grouped by claim" if flags.group_by_claim else "",
        ]
    )
    if not todo:
        out.print("no judge run to re-code")
    for d, k in todo:
        if len(specs) == 1:
            result = recode_kind(plan_kind(study, layout, d, k), engines[0], coder_name=specs[0])
        else:
            names = member_names(specs)
            # members name the panel in panel.json; their calls go through the engines above,
            # so they hold no client (an offline judge has none anyway)
            members = [
                Member(
                    name,
                    make_coder(spec)
                    if parse_spec(spec)[0] == "offline"
                    else PricingOnlyCoder(spec, study.judge.base_url),
                    opts["temperature"],
                )
                for name, spec in zip(names, specs, strict=True)
            ]
            works = [
                plan_kind(study, layout, d, k, member=PanelSeat(i, name))
                for i, name in enumerate(names, 1)
            ]
            result = recode_panel(works, engines, members)
        if result.run_dir is None:
            out.print(f"{d}/{k}: nothing to re-code: every unit is on v{result.version}")
            continue
        panel = f" (panel of {len(specs)}: per member)" if len(specs) > 1 else ""
        out.print(
            f"{d}/{k}: v{result.version}: {result.recoded} unit(s) re-coded by {who}{how}"
            f"{panel}, {result.migrated} migrated without a call -> "
            f"{result.run_dir.relative_to(layout.root)}"
        )
