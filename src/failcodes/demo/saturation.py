"""Demo step: one codebook saturation round with the offline baseline.

The bundled data's disagreements become retrieval units; one round is coded by the ``offline``
judge and proposed by the ``offline`` proposer (both heuristic baselines). Nothing is decided
for the reviewer: the step writes the review file for a human and reports its path.
Re-running the demo reuses the project it created.
"""

from __future__ import annotations

from failcodes import codebook as codebook_module
from failcodes.demo._base import DemoContext, StepOutput
from failcodes.saturation.judging import JudgeCoder
from failcodes.saturation.models import ProjectConfig, ProposalStatus
from failcodes.saturation.proposers import OfflineProposer
from failcodes.saturation.rounds import current_round, init_project, run_round
from failcodes.saturation.store import ProjectStore
from failcodes.study.layout import StudyLayout
from failcodes.units import UnitKind, build_units, disagreement_traces

DEMO_BATCH = 40
DEMO_PROJECT = "demo-retrieval"


def saturation_step(ctx: DemoContext) -> StepOutput:
    """Run (or reuse) one offline saturation round on the demo's disagreements."""
    out = StepOutput()
    found = ctx.results.get("disagreements", {})
    traces = [t for items in found.values() for t in disagreement_traces(items)]
    units = build_units(traces, UnitKind.RETRIEVAL)
    if not units:
        out.lines.append("no retrieval units from the disagreements: saturation skipped")
        return out
    root = StudyLayout.of(ctx.out_dir).saturation_dir / DEMO_PROJECT
    if (root / "project.json").exists():
        store = ProjectStore.open(root)
    else:
        cb = codebook_module.bundled()
        config = ProjectConfig(
            name=DEMO_PROJECT,
            kind=UnitKind.RETRIEVAL,
            batch_size=DEMO_BATCH,
            seed=0,
            stratify_by_system=True,
            codebook_name=cb.name,
            created_by="failcodes demo",
        )
        store = init_project(root, config, cb, units)
    record = current_round(store)
    if record is None:
        record = run_round(store, JudgeCoder("offline"), OfflineProposer())
    proposals = store.proposals(record.number)
    n_open = sum(1 for p in proposals if p.status is ProposalStatus.OPEN)
    out.lines.append(
        f"pool: {len(store.pool())} retrieval units from the disagreements; round "
        f"{record.number} coded {len(record.unit_ids)} (stratified by system) with the offline "
        "judge (heuristic baseline)"
    )
    out.lines.append(
        f"offline proposer (heuristic baseline): {len(proposals)} proposal(s), {n_open} after "
        "deduplication; nothing was accepted on your behalf"
    )
    for p in proposals:
        if p.status is ProposalStatus.OPEN:
            out.lines.append(f"  {p.id}: {p.name} ({len(p.example_unit_ids)} example units)")
    review = store.review_path(record.number)
    if n_open == 0:
        out.lines.append(f"nothing to review: round {record.number} closed with no new pattern")
        out.files.append(store.config_path)
        return out
    out.lines.append(f"review file for a human: {review}")
    out.lines.append(
        f"decide with `failcodes saturate review {DEMO_PROJECT} --dir {root} --file {review}` "
        f"or `--interactive`"
    )
    out.files += [store.config_path, review]
    return out
