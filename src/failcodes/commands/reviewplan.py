"""``review plan`` as a use case: draw the units humans review from a judged run.

:class:`ReviewPlanRequest` draws a seeded (optionally stratified) uniform sample from a judged
run's coded table and writes ``RUN_DIR/review/plans/NAME.json`` (:class:`ReviewPlanResult`);
``failcodes labelstudio push --plan`` sends exactly those units to Label Studio.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from failcodes.codebook import UnitKind
from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.contract import FrozenModel
from failcodes.csvcells import read_frame
from failcodes.errors import InputError
from failcodes.hashing import file_sha256
from failcodes.study.layout import StudyLayout

if TYPE_CHECKING:  # numpy and pandas: not for `failcodes review --help`
    from failcodes.reviewplan import PlanProgress


def _table(layout: StudyLayout, dataset: str, part: UnitKind) -> Path:
    """The coded table of ``part`` (the study layout's per_passage.csv / per_trace.csv)."""
    if part is UnitKind.RETRIEVAL:
        return layout.per_passage(dataset)
    return layout.per_trace(dataset)


def _coded_table(run_dir: Path, dataset: str | None, part: UnitKind) -> tuple[str, Path]:
    if not run_dir.is_dir():
        raise InputError("not a run directory", path=run_dir)
    layout = StudyLayout.of(run_dir)
    found = [d for d in layout.attribution_datasets() if _table(layout, d, part).is_file()]
    name = _table(layout, "x", part).name
    if dataset is None:
        if len(found) != 1:
            listed = ", ".join(found) or "none"
            raise InputError(
                f"pass --dataset: {len(found)} data sets have a {part.value} coded table "
                f"({name}: {listed})",
                path=layout.attribution_dir,
            )
        dataset = found[0]
    path = _table(layout, dataset, part)
    if not path.is_file():
        raise InputError(
            f"no {part.value} coded table for data set {dataset!r} (have: "
            f"{', '.join(found) or 'none'})",
            path=path,
        )
    return dataset, path


def _panel_splits(layout: StudyLayout, dataset: str, part: UnitKind) -> list[str]:
    """Units a judge panel split on (``judge/<dataset>/<kind>/panel.json``), ties first."""
    from failcodes.judge.panelrun import read_panel

    run_dir = layout.judge_run(dataset, part.value)
    try:
        report = read_panel(run_dir)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise InputError(f"not a panel report: {exc}", path=run_dir / "panel.json") from None
    if report is None:
        raise InputError(
            "--panel-splits needs a judge panel run (failcodes judge ... --judge A --judge B); "
            "this run has no panel.json",
            path=run_dir,
        )
    return list(report.split_units)


def _targeted(path: Path) -> list[str]:
    """Unit ids, one per line (or JSONL objects with a ``unit_id``)."""
    from failcodes.jsonio import parse_json, read_text

    ids: list[str] = []
    text = read_text(path)
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            obj = parse_json(line, path=path, line=number)
            uid = obj.get("unit_id") if isinstance(obj, dict) else None
            if not isinstance(uid, str) or not uid:
                raise InputError(
                    "expected a unit_id string", path=path, line=number, field="unit_id"
                )
            ids.append(uid)
        else:
            ids.append(line)
    if not ids:  # --targeted given: an empty file is a mistake, not "no targeted units"
        raise InputError("no unit ids (expected one per line, or JSONL with unit_id)", path=path)
    return ids


def _refuse_reviewed_plan(layout: StudyLayout, name: str) -> None:
    """Refuse to replace the plan ``name`` when some of its units are already reviewed.

    A stale plan (its coded table changed since: a re-code) is replaced freely: its reviews
    no longer count, and the report's guidance is to redraw it under its name.
    """
    from failcodes.annotations import Annotation
    from failcodes.reviewplan import plan_source, read_plan, stale_reason
    from failcodes.tableio import read_models_jsonl

    path = layout.review_plan(name)
    if not path.exists():
        return
    old = read_plan(path)
    source = plan_source(old, layout.root, path)
    if not source.is_file() or stale_reason(old, file_sha256(source)) is not None:
        return
    planned = set(old.all_ids())
    reviewed = {
        a.unit_id
        for review in layout.review_files()
        for a in read_models_jsonl(review, Annotation)
        if a.unit_id in planned
    }
    if reviewed:
        raise InputError(
            f"plan {name!r} exists and {len(reviewed)} of its {len(planned)} units are "
            f"reviewed ({layout.review_dir}); a new draw would leave those reviews outside "
            "the plan: give another --name, or --force to replace it",
            path=path,
        )


class ReviewPlanResult(FrozenModel):
    """The plan drawn, where it was written, and the panel splits left out (not scored)."""

    plan: Any
    out: Path
    dropped: int = 0

    def lines(self) -> list[str]:
        """What the plan holds: its estimation sample, its strata, its targeted units."""
        plan = self.plan
        population = sum(s.population for s in plan.strata)
        lines = [
            f"plan {plan.name!r}: {len(plan.estimation_ids())} of {population} {plan.part.value} "
            f"units in the estimation sample ({len(plan.strata)} strata), "
            f"{len(plan.targeted_ids())} targeted -> {self.out}"
        ]
        if self.dropped:
            lines.append(
                f"  {self.dropped} panel-split unit(s) are not scored in the coded table: left out"
            )
        lines += [
            f"  {s.key}: {s.sampled}/{s.population} (inclusion probability "
            f"{s.inclusion_probability:.4f})"
            for s in plan.strata
        ]
        return lines


class ReviewPlanRequest(Request):
    """Draw a seeded review sample from a judged run and write RUN_DIR/review/plans/NAME.json."""

    command: ClassVar[tuple[str, ...]] = ("review", "plan")

    run_dir: Path = option(argument=True, help="Study folder (attribution/<dataset>/ tables).")
    part: UnitKind = option(
        flags=("-p", "--part"), help="Codebook part: retrieval or verification."
    )
    size: int = option(flags=("-n", "--size"), help="Estimation sample size.", ge=2)
    seed: int = option(0, help="Random seed of the draw.")
    dataset: str | None = option(None, help="Data set folder under attribution/.")
    stratify: list[str] = option(
        default_factory=list,
        help="Stratify by 'system' (retriever/verifier) and/or 'code' (the judge's code).",
    )
    code_dimension: str | None = option(
        None,
        help="With --stratify code: the dimension whose judge code stratifies (default: whether "
        "the judge found every dimension high quality).",
    )
    targeted: Path | None = option(
        None,
        help="Extra units to review, kept out of the estimates (one unit id per line, or JSONL "
        "with unit_id), e.g. where two judges disagree.",
    )
    panel_splits: bool = option(
        False,
        help="Add the units the judge panel split on (its panel.json) as the targeted sample, "
        "kept out of the estimates.",
    )
    name: str | None = option(None, help="Plan name (default: DATASET.PART).")
    force: bool = option(
        False,
        help="Replace a plan of that name whose units are already reviewed (the reviews stay, "
        "matched to the new draw).",
    )

    def run(self, *, note: Note = ignore_note) -> ReviewPlanResult:
        """Draw the plan and write it under the study's review/plans/."""
        del note

        from failcodes.fileio import atomic_write_text
        from failcodes.reviewplan import StratifyBy, draw_plan, plans_dir

        run_dir, part, size, seed = self.run_dir, self.part, self.size, self.seed
        dataset, stratify, code_dimension = self.dataset, self.stratify, self.code_dimension
        targeted, panel_splits, name, force = (
            self.targeted,
            self.panel_splits,
            self.name,
            self.force,
        )

        by: list[StratifyBy] = []
        for item in stratify:
            try:
                by.append(StratifyBy(item))
            except ValueError:
                raise InputError(
                    f"--stratify expects 'system' or 'code', got {item!r}", field="stratify"
                ) from None
        if code_dimension is not None and StratifyBy.CODE not in by:
            raise InputError("--code-dimension needs --stratify code", field="code_dimension")
        if name is not None and not name.strip():  # an unset shell variable: not the default
            raise InputError("--name '': an empty plan name; name the plan or leave --name out")
        dataset, table = _coded_table(run_dir, dataset, part)
        plan_name = name or f"{dataset}.{part.value}"
        if not plan_name.replace(".", "").replace("-", "").replace("_", "").isalnum():
            raise InputError(f"plan name {plan_name!r}: use letters, digits, '.', '-', '_'")
        if not force:
            _refuse_reviewed_plan(StudyLayout.of(run_dir), plan_name)
        try:
            coded = read_frame(table)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the coded table: {exc}", path=table) from None
        extra = _targeted(targeted) if targeted is not None else []
        dropped = 0
        if panel_splits:
            scored = (
                {
                    str(u)
                    for u, status in zip(coded["unit_id"], coded["status"], strict=True)
                    if status == "scored"
                }
                if {"unit_id", "status"} <= set(coded.columns)
                else set()
            )
            splits = _panel_splits(StudyLayout.of(run_dir), dataset, part)
            extra += [u for u in splits if u in scored]
            dropped = len(splits) - sum(1 for u in splits if u in scored)
        try:
            plan = draw_plan(
                coded,
                part,
                name=plan_name,
                size=size,
                seed=seed,
                source=str(table.relative_to(run_dir)),
                source_sha256=file_sha256(table),
                stratify=by,
                code_dimension=code_dimension,
                targeted=extra,
            )
        except InputError as exc:
            if exc.path is None:
                raise InputError(exc.reason, path=table, field=exc.field) from None
            raise
        out = plans_dir(run_dir) / f"{plan_name}.json"
        atomic_write_text(out, plan.model_dump_json(indent=2) + "\n")
        return ReviewPlanResult(plan=plan, out=out, dropped=dropped)


class ReviewStatusResult(FrozenModel):
    """How much of a plan's samples is reviewed (``review status``)."""

    plan: str
    part: UnitKind
    progress: PlanProgress
    #: reviews of the other part (the plan draws ``part`` units): matched nothing
    other_part: tuple[str, ...] = ()
    unmatched: int = 0
    #: reviews made under a codebook version the study's cannot carry, left out
    stale: int = 0
    target: str = ""
    #: the reviews so far are not a random part of the drawn units (a warning)
    skew: str | None = None
    #: the plan is not its seed's draw (written by hand): its shares are shown uncorrected
    picked: str | None = None
    #: reviews proposing a new code (free text): no estimate reads them, saturate does
    proposals: int = 0
    #: reviewed units outside the plan that are no unit of its data at all (another study's?)
    foreign: int = 0
    #: strata with unreviewed drawn units and fewer than 2 reviewed ('key r/n'): the report
    #: gives their cells no corrected share yet
    thin: tuple[str, ...] = ()
    #: drawn units not reviewed whose reviews are all unscored (skipped, not assessable)
    no_code: int = 0
    #: why the plan no longer fits its coded table (re-judged or re-coded since the draw),
    #: with the redraw: the report shows its part uncorrected, using none of these reviews
    stale_plan: str | None = None

    def lines(self) -> list[str]:
        """The status line as the CLI prints it."""
        p = self.progress
        line = (
            f"plan {self.plan!r} ({self.part.value}): estimation sample "
            f"{p.estimation_reviewed}/{p.estimation_planned} reviewed"
            + (
                f" ({self.no_code} of the others answered with no code: skipped or not "
                "assessable, counted as not drawn, as the report counts them)"
                if self.no_code
                else ""
            )
            + ", targeted "
            f"{p.targeted_reviewed}/{p.targeted_planned}; "
            f"{p.outside_plan} reviewed unit(s) outside the plan (not used"
            + (f"; {self.foreign} of them no unit of the plan's data" if self.foreign else "")
            + ")"
        )
        if self.stale_plan:  # '10/10 reviewed' where the report used none of them, unsaid
            line += f"; {self.stale_plan}"
        if self.thin:
            line += (
                "; strata with fewer than 2 reviewed (the report gives no corrected share for "
                f"cells holding their units until 2 are): {', '.join(self.thin)}"
            )
        if self.unmatched:
            line += (
                f"; {self.unmatched} review(s) of {' and '.join(self.other_part)} units not "
                f"matched (the plan draws {self.part.value} units)"
            )
        if self.stale:
            line += (
                f"; {self.stale} review(s) made under another codebook version than the "
                f"study's ({self.target}) left out, as the report leaves them (stale: "
                "`failcodes report` says why)"
            )
        if self.proposals:
            line += (
                f"; {self.proposals} review(s) propose a new code (free text, in no estimate: "
                "`failcodes saturate round NAME --reviews FILE` makes them proposals)"
            )
        return [line]


class ReviewStatusRequest(Request):
    """Match pulled human reviews back to a plan: how much of each sample is reviewed."""

    command: ClassVar[tuple[str, ...]] = ("review", "status")

    plan_path: Path = option(argument=True, help="A plan file (RUN_DIR/review/plans/*.json).")
    reviews: list[Path] = option(
        flags=("--reviews", "-r"), help="Pulled human annotations JSONL (repeatable)."
    )

    def run(self, *, note: Note = ignore_note) -> ReviewStatusResult:
        """Read the plan and the reviews; the skew warning (if any) goes to ``note`` too."""
        from failcodes.annotations import Annotation
        from failcodes.report.rundir import hand_picked
        from failcodes.reviewplan import (
            PlanProgress,
            Sample,
            human_codes,
            match_reviews,
            one_spelling,
            people_only,
            read_plan,
        )
        from failcodes.tableio import read_models_jsonl

        ReviewStatusResult.model_rebuild(_types_namespace={"PlanProgress": PlanProgress})
        plan = read_plan(self.plan_path)
        anns = []
        found_in: dict[str, list[Annotation]] = {}
        for path in self.reviews:  # a judge's annotations given here counted as reviewed
            found = read_models_jsonl(path, Annotation)
            people_only(path, found)
            anns.extend(found)
            found_in.setdefault(str(path), []).extend(found)
        one_spelling({Path(name): found for name, found in found_in.items()})
        stale, target = 0, ""
        folder = self.plan_path.parent
        in_study = (folder.name, folder.parent.name) == ("plans", "review")
        if in_study:  # in a study: as the report
            anns, stale, target = _usable(folder.parent.parent, found_in, plan.part)
        codes = human_codes(anns, plan.part)
        drawn: dict[str, list[str]] = {}
        for unit in plan.units:
            if unit.sample is Sample.ESTIMATION and unit.stratum is not None:
                drawn.setdefault(unit.stratum, []).append(unit.unit_id)
        # 3/12 reviewed, with one stratum 0/4: the report's cells of it got no estimate, unsaid
        # (said once the review has begun: '0/12 reviewed' says it before)
        begun = any(u in codes for ids in drawn.values() for u in ids)
        thin = []
        for stratum in plan.strata if begun else ():
            done = sum(u in codes for u in drawn.get(stratum.key, ()))
            if done < 2 and done < stratum.population:
                thin.append(f"{stratum.key} {done}/{stratum.sampled}")
        stale_plan = _stale_plan(self.plan_path, plan) if in_study else None
        skew = _skew(self.plan_path, plan, set(codes)) if in_study and not stale_plan else None
        if skew is not None:
            note(f"failcodes: warning: {skew}")
        picked = hand_picked(folder.parent.parent, self.plan_path, plan) if in_study else None
        if picked is not None:  # said by the report only: 14/14 reviewed, no word
            note(f"failcodes: warning: {picked}")
        return ReviewStatusResult(
            plan=plan.name,
            part=plan.part,
            progress=match_reviews(plan, codes),
            # reviews of the other part matched nothing, unsaid: "0/12 reviewed"
            other_part=tuple(
                sorted({a.unit_kind.value for a in anns if a.unit_kind is not plan.part})
            ),
            unmatched=sum(a.unit_kind is not plan.part for a in anns),
            stale=stale,
            target=target,
            stale_plan=stale_plan,
            skew=skew,
            picked=picked,
            proposals=sum(1 for found in found_in.values() for a in found if a.proposal),
            foreign=len(codes.keys() - plan.unit_strata.keys() - plan.targeted_ids()),
            thin=tuple(thin),
            # '35/40 reviewed' read as 5 to go where the reviewer had skipped them
            no_code=len(
                {a.unit_id for a in anns if a.unit_kind is plan.part}
                & plan.estimation_ids() - codes.keys()
            ),
        )


def _usable(root: Path, files: dict[str, list[Any]], part: UnitKind) -> tuple[list[Any], int, str]:
    """The reviews the report uses, how many are stale, and the study codebook's version.

    The reviews are brought to the study's codebook (:func:`study_codebook`) as the report
    brings them.
    Reviews made under a version the study's lineage cannot carry were counted as reviewed
    ('12/12') where the report left every one out.
    """
    from failcodes.report.rundir import study_codebook
    from failcodes.reviewplan import known_dimensions
    from failcodes.reviewversions import bring_reviews
    from failcodes.study.recode import lineage

    cb = study_codebook(root)
    for name, found in files.items():  # 'Scope' for scope: the report refuses it too
        known_dimensions(Path(name), found, cb, part)
    books = lineage(root / f"{cb.name}.yaml", cb, StudyLayout.of(root))
    versions = bring_reviews(files, cb, books)
    return versions.reviews, versions.stale, f"{cb.name} v{cb.version}"


def _stale_plan(plan_path: Path, plan: Any) -> str | None:
    """Why the plan no longer fits its coded table, with the redraw (None when it does).

    A plan whose coded table was re-judged after the draw read '10/10 reviewed' at exit 0,
    where the report shows its part uncorrected and uses none of the reviews.
    """
    from failcodes.reviewplan import plan_source, redraw_command, stale_reason

    root = plan_path.parent.parent.parent  # STUDY/review/plans
    source = plan_source(plan, root, plan_path)
    if not source.is_file():
        return None
    why = stale_reason(plan, file_sha256(source))
    if why is None:
        return None
    return f"{why} (the report uses none of these reviews); redraw it with: " + redraw_command(
        plan, str(root)
    )


def _skew(plan_path: Path, plan: Any, reviewed: set[str]) -> str | None:
    """Whether, mid-review, the reviews so far are not a random part of the drawn units.

    The report counts drawn units not reviewed as not drawn (missing at random); a reviewer
    working down a list sorted by the judge's code learned it only from the report's caption.
    """
    from failcodes.report.corrected import judge_doubts, review_skew
    from failcodes.reviewplan import plan_source

    root = plan_path.parent.parent.parent  # STUDY/review/plans
    source = plan_source(plan, root, plan_path)
    if not source.is_file() or not plan.estimation_ids() - reviewed:
        return None
    return review_skew(read_frame(source), plan, reviewed, judge_doubts(root, plan))
