"""The panel branch of ``failcodes judge``: ``--judge`` given more than once.

Thin: builds the members, runs :func:`failcodes.judge.panelrun.run_panel` (or its estimate)
and prints each member's summary, the panel's cost and its agreement table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from failcodes.errors import ConfigError
from failcodes.judge import (
    Cascade,
    JudgeJob,
    PricingOnlyCoder,
    make_coder,
    summary_lines,
)
from failcodes.judge.unitjudge import Coder

if TYPE_CHECKING:  # the panel pulls in the statistics (numpy, scipy): imported on use
    from failcodes.judge.panelrun import Member, PanelReport
from failcodes.units import Unit


def panel_members(
    specs: list[str],
    *,
    base_url: str | None,
    timeout: float,
    temperature: float | None,
    dry_run: bool = False,
) -> list[Member]:
    """One member per ``--judge`` (a repeated spec is one model sampled several times).

    A dry run needs no key: a member without one is priced, never called.
    """
    from failcodes.judge.panelrun import Member, member_names

    members = []
    for name, spec in zip(member_names(specs), specs, strict=True):
        coder: Coder
        try:
            coder = make_coder(spec, base_url=base_url, timeout=timeout, temperature=temperature)
        except ConfigError:
            if not dry_run:
                raise
            coder = PricingOnlyCoder(spec, base_url)
        members.append(Member(name, coder, temperature))
    return members


def agreement_lines(report: PanelReport) -> list[str]:
    """The panel's agreement per dimension (and how many units it splits on)."""
    lines = [
        f"panel of {len(report.members)}: {', '.join(report.members)}; cost ${report.cost_usd:.4f} "
        f"(every member); splits on {len(report.split_units)} of {len(report.units)} units",
        "inter-judge agreement per dimension (fleiss / krippendorff / gwet_ac1):",
    ]
    rows: dict[str, dict[str, float | None]] = {}
    for r in report.agreement:
        if r.code is None:
            rows.setdefault(r.dimension, {})[r.statistic] = r.value
    for dim, stats in rows.items():
        cells = " / ".join("–" if v is None else f"{v:.3f}" for v in stats.values())
        lines.append(f"  {dim}: {cells}")
    for q in report.quotes:
        share = q.share_verified
        lines.append(
            f"quotes verified ({q.coder}): {q.verified} of {q.dimensions_coded} dimensions"
            + ("" if share is None else f" ({share:.1%})")
        )
    return lines


def panel_command(
    units: list[Unit],
    specs: list[str],
    job: JudgeJob,
    *,
    base_url: str | None,
    timeout: float,
    temperature: float | None,
    dry_run: bool,
    json_out: bool,
    out: Console,
) -> None:
    """Run (or estimate) the panel and print what it did."""
    from failcodes.judge.panelrun import estimate_panel, run_panel

    if isinstance(job.mode, Cascade):
        raise ConfigError("--cascade cannot be combined with a panel (several --judge)")
    members = panel_members(
        specs, base_url=base_url, timeout=timeout, temperature=temperature, dry_run=dry_run
    )
    if dry_run:
        estimates = estimate_panel(units, members, job)
        known = [e.cost_usd for e in estimates if e.cost_usd is not None]
        if json_out:
            out.print_json(data=[e.model_dump(mode="json") for e in estimates])
            return
        for member, est in zip(members, estimates, strict=True):
            out.print(f"[{member.name}]", highlight=False)
            for line in est.lines():
                out.print(f"  {line}", highlight=False)
        total = f"${sum(known):.4f}" if len(known) == len(estimates) else "unknown"
        out.print(f"panel estimated cost (every member): {total}", highlight=False)
        return
    report, summaries = run_panel(units, members, job)
    if json_out:
        out.print_json(report.model_dump_json())
        return
    for member, summary in zip(members, summaries, strict=True):
        out.print(f"[{member.name}]", highlight=False)
        for line in summary_lines(summary):
            out.print(f"  {line}", highlight=False)
    for line in agreement_lines(report):
        out.print(line, highlight=False)
    out.print(f"panel: {job.run_dir / 'panel.json'}", highlight=False)
