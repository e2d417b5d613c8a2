"""``failcodes review plan|status``: draw the units humans review, and follow the review.

``plan`` draws a seeded (optionally stratified) uniform sample from a judged run's coded table
and writes ``RUN_DIR/review/plans/NAME.json``; ``failcodes labelstudio push --plan`` sends
exactly those units to Label Studio, and the pulled reviews (``RUN_DIR/review/*.jsonl``) are
matched back to the plan by ``status`` and by the report's corrected tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from failcodes.cli.main import command_group
from failcodes.cli.requests import request_command
from failcodes.commands.reviewplan import ReviewPlanRequest

review_app = command_group(
    "review", "Human review sampling plans: draw the units to review, follow the review."
)


def _plan(request: ReviewPlanRequest) -> None:
    for line in request.run().lines():
        typer.echo(line)


_plan_cmd: Any = request_command(ReviewPlanRequest, _plan)
review_app.command("plan")(_plan_cmd)


@review_app.command("status")
def status_cmd(
    plan_path: Annotated[Path, typer.Argument(help="A plan file (RUN_DIR/review/plans/*.json).")],
    reviews: Annotated[
        list[Path],
        typer.Option("--reviews", "-r", help="Pulled human annotations JSONL (repeatable)."),
    ],
) -> None:
    """Match pulled human reviews back to a plan: how much of each sample is reviewed."""
    from failcodes.annotations import Annotation
    from failcodes.reviewplan import human_codes, match_reviews, read_plan
    from failcodes.tableio import read_models_jsonl

    plan = read_plan(plan_path)
    anns = [a for p in reviews for a in read_models_jsonl(p, Annotation)]
    progress = match_reviews(plan, human_codes(anns, plan.part))
    typer.echo(
        f"plan {plan.name!r} ({plan.part.value}): estimation sample "
        f"{progress.estimation_reviewed}/{progress.estimation_planned} reviewed, targeted "
        f"{progress.targeted_reviewed}/{progress.targeted_planned}; "
        f"{progress.outside_plan} reviewed unit(s) outside the plan (not used)"
    )
