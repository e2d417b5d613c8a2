"""``failcodes review plan|status``: draw the units humans review, and follow the review.

``plan`` draws a seeded (optionally stratified) uniform sample from a judged run's coded table
and writes ``RUN_DIR/review/plans/NAME.json``; ``failcodes labelstudio push --plan`` sends
exactly those units to Label Studio, and the pulled reviews (``RUN_DIR/review/*.jsonl``) are
matched back to the plan by ``status`` and by the report's corrected tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from failcodes.cli.main import command_group
from failcodes.cli.requests import request_command
from failcodes.commands.reviewplan import ReviewPlanRequest

if TYPE_CHECKING:
    from failcodes.reviewplan import ReviewPlan

review_app = command_group("review")


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
    from failcodes.reviewplan import human_codes, match_reviews, people_only, read_plan
    from failcodes.tableio import read_models_jsonl

    plan = read_plan(plan_path)
    anns = []
    found_in: dict[str, list[Annotation]] = {}
    for path in reviews:  # a judge's annotations given here counted as reviewed ("12/12")
        found = read_models_jsonl(path, Annotation)
        people_only(path, found)
        anns.extend(found)
        found_in.setdefault(str(path), []).extend(found)
    stale, target = 0, ""
    folder = plan_path.parent
    if (folder.name, folder.parent.name) == ("plans", "review"):  # in a study: as the report
        anns, stale, target = _usable(folder.parent.parent, found_in)
    progress = match_reviews(plan, human_codes(anns, plan.part))
    # reviews of the other part matched nothing, unsaid: "0/12 reviewed; 0 outside the plan"
    other = sorted({a.unit_kind.value for a in anns if a.unit_kind is not plan.part})
    unmatched = sum(a.unit_kind is not plan.part for a in anns)
    typer.echo(
        f"plan {plan.name!r} ({plan.part.value}): estimation sample "
        f"{progress.estimation_reviewed}/{progress.estimation_planned} reviewed, targeted "
        f"{progress.targeted_reviewed}/{progress.targeted_planned}; "
        f"{progress.outside_plan} reviewed unit(s) outside the plan (not used)"
        + (
            f"; {unmatched} review(s) of {' and '.join(other)} units not matched (the plan "
            f"draws {plan.part.value} units)"
            if unmatched
            else ""
        )
        + (
            f"; {stale} review(s) made under another codebook version than the study's "
            f"({target}) left out, as the report leaves them (stale: `failcodes report` says "
            "why)"
            if stale
            else ""
        )
    )
    _say_skew(plan_path, plan, set(human_codes(anns, plan.part)))


def _usable(root: Path, files: dict[str, list[Any]]) -> tuple[list[Any], int, str]:
    """The reviews the report uses, how many are stale, and the study codebook's version.

    The reviews are brought to the study's codebook (:func:`study_codebook`) as the report
    brings them.
    Reviews made under a version the study's lineage cannot carry were counted as reviewed
    ('12/12') where the report left every one out.
    """
    from failcodes.report.rundir import study_codebook
    from failcodes.reviewversions import bring_reviews
    from failcodes.study.layout import StudyLayout
    from failcodes.study.recode import lineage

    cb = study_codebook(root)
    books = lineage(root / f"{cb.name}.yaml", cb, StudyLayout.of(root))
    versions = bring_reviews(files, cb, books)
    return versions.reviews, versions.stale, f"{cb.name} v{cb.version}"


def _say_skew(plan_path: Path, plan: ReviewPlan, reviewed: set[str]) -> None:
    """Warn, mid-review, when the reviews so far are not a random part of the drawn units.

    The report counts drawn units not reviewed as not drawn (missing at random); a reviewer
    working down a list sorted by the judge's code learned it only from the report's caption.
    """
    from failcodes.csvcells import read_frame
    from failcodes.report.corrected import review_skew
    from failcodes.reviewplan import plan_source

    folder = plan_path.parent
    if (folder.name, folder.parent.name) != ("plans", "review"):  # not STUDY/review/plans/
        return
    source = plan_source(plan, folder.parent.parent, plan_path)
    if not source.is_file() or not plan.estimation_ids() - reviewed:
        return
    skew = review_skew(read_frame(source), plan, reviewed)
    if skew is not None:
        typer.echo(f"failcodes: warning: {skew}", err=True)
