"""``labelstudio export`` as a use case: units as Label Studio tasks with the judge's codes.

:class:`ExportRequest` builds the tasks (:func:`iter_review_tasks`, shared with ``labelstudio
push``) and writes them; the study's review step holds one per judged kind.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import SecretStr

from failcodes import codebook as codebooks
from failcodes import jsonio, tableio, traceio
from failcodes.annotations import Annotation
from failcodes.codebook import Codebook
from failcodes.commands.base import Note, Request, ignore_note, option, top_k_option
from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError, InputError, LabelStudioError
from failcodes.fileio import atomic_write_text, check_not_input, write_json_items, write_jsonl
from failcodes.labelstudio import server as ls_server
from failcodes.labelstudio.config import labeling_config
from failcodes.labelstudio.results import (
    SKIPPED,
    ReviewResult,
    annotations_from_export,
    annotator_ids,
    check_user_ids,
    check_users,
)
from failcodes.labelstudio.tasks import JudgeChoice, TaskMaker, predicted, select_judged
from failcodes.units import Unit, UnitKind, build_units, disagreement_traces

if TYPE_CHECKING:  # (numpy: the readers of annotations and disagreements, imported where read)
    from failcodes.annotationio import AnnotationIndex
    from failcodes.unitstream import TaskUnit

UNITS_HELP = (
    "What to review: a disagreements file (exactly the units behind the disagreements, as "
    "`judge --from` builds them), a study folder (the disagreements of its datasets; --dataset "
    "picks one), units JSONL (one failcodes Unit per line) or a traces file (every unit of "
    "every trace)."
)


def codebook_or_bundled(path: Path | None, near: Path | None = None) -> Codebook:
    """The codebook at ``path``; else, when ``near`` is in a study, the study's; else bundled.

    A study's codebook is the one its study file names now (after a bump, the new version:
    its judge runs were re-coded onto it, and reviews must answer it too).
    """
    if path is not None:
        return codebooks.load(path)
    found = study_codebook_of(near) if near is not None else None
    return codebooks.load(found) if found is not None else codebooks.bundled()


def study_codebook_of(path: Path) -> Path | None:
    """The codebook file of the study ``path`` is in (or is), None outside a study."""
    from failcodes.study.layout import STUDY_FILE

    start = path.resolve()
    for folder in (start, *start.parents):
        if (folder / STUDY_FILE).is_file():  # the study's settings (and the judge's) read here
            from failcodes.study.config import load_study, resolve_path

            return resolve_path(load_study(folder).codebook, folder)
    return None


def _study_disagreements(root: Path, dataset: str | None) -> list[Path]:
    """The disagreements files of a study folder (one dataset, or every one written)."""
    from failcodes.study.layout import StudyLayout

    layout = StudyLayout.of(root)
    if not layout.study_file.is_file():
        raise InputError(f"not a study folder (no {layout.study_file.name})", path=root)
    found = sorted(layout.disagreements_dir.glob("*.jsonl"))
    if dataset is not None:
        named = [p for p in found if p == layout.disagreements(dataset)]
        if not named:  # a misspelt name said 'run `failcodes run` first' beside the others
            have = ", ".join(p.stem for p in found)
            hint = f"its data sets with disagreements: {have}" if have else "run `failcodes run`"
            raise InputError(
                f"no disagreements for dataset {dataset!r} (expected "
                f"{layout.disagreements(dataset)}; {hint})",
                path=root,
            )
        found = named
    if not found:
        raise InputError("the study has no disagreements yet (run `failcodes run`)", path=root)
    return found


def _units(
    path: Path, part: UnitKind, top_k: int | None, dataset: str | None = None
) -> Iterator[TaskUnit]:
    """Units to review, built as the judge builds them (see :data:`UnitsArg`).

    A disagreements file's units are streamed (:mod:`failcodes.unitstream`); any other
    source is read here, whole (its errors before anything else is read), each unit of
    ``part`` given once.
    """
    from failcodes.disagreementio import is_disagreements_file, read_disagreements
    from failcodes.unitstream import iter_disagreement_units, units_with_words

    if dataset is not None and not path.is_dir():
        raise ConfigError("--dataset goes with a study folder")
    if path.is_dir():
        sources = _study_disagreements(path, dataset)
        items = [d for p in sources for d in read_disagreements(p)]
        return units_with_words(build_units(disagreement_traces(items), part, top_k=top_k), part)
    if is_disagreements_file(path):
        return iter_disagreement_units(path, part, top_k=top_k)
    tasks = InputError(
        "tasks are built from units: give the disagreements file (or the study folder), "
        "with --judged for the judge's codes; a .tasks.json that `labelstudio export` "
        "wrote is imported in Label Studio itself (project > Import)",
        path=path,
    )
    if path.suffix.lower() in (".jsonl", ".ndjson") and path.is_file():
        head = jsonio.peek_jsonl(path)
        if head is not None and {"id", "kind", "claim", "passages"} <= head.keys():
            return units_with_words(tableio.read_models_jsonl(path, Unit), part)
        if head is not None and "data" in head and "claim_id" not in head:  # tasks, one a line
            raise tasks
    if path.suffix.lower() == ".json":  # e.g. the task file `labelstudio export` wrote
        raise tasks
    return units_with_words(build_units(traceio.read_traces(path), part, top_k=top_k), part)


def rank_gaps_line(units: Path, top_k: int | None, dataset: str | None = None) -> str | None:
    """Claims of ``units`` whose ranks skip within ``top_k`` (fewer than k passages as tasks).

    :class:`~failcodes.attribution.RankGaps`' line, as ``attribute`` and ``judge`` say it;
    None without ``--top-k``, or for units written already (a units JSONL: cut before).
    """
    if top_k is None:
        return None
    # not commands.inputs: it imports the judge package (a disagreements export's start-up)
    from failcodes.attribution import RankGaps
    from failcodes.disagreementio import is_disagreements_file, iter_claim_ranks

    gaps = RankGaps(top_k)
    if units.is_dir() or is_disagreements_file(units):
        for path in _study_disagreements(units, dataset) if units.is_dir() else [units]:
            for claim, ranks in iter_claim_ranks(path):
                gaps.add_ranks(claim, ranks)
        return gaps.line()
    head = jsonio.peek_jsonl(units) if units.suffix.lower() in (".jsonl", ".ndjson") else None
    if head is not None and {"id", "kind", "claim", "passages"} <= head.keys():
        return None  # units written already: cut before, their claims' ranks not kept
    gaps.add_traces(traceio.read_traces(units))
    return gaps.line()


def iter_review_tasks(
    cb: Codebook,
    part: UnitKind,
    units: Path,
    judged: Path | None,
    judge: str | None,
    top_k: int | None,
    plan: Path | None = None,
    dataset: str | None = None,
    unmatched: list[int] | None = None,
) -> Iterator[tuple[bytes, bool]]:
    """The Label Studio tasks of the units (with the judge's codes as predictions), one at a time.

    Each as its JSON text (:meth:`~failcodes.labelstudio.tasks.TaskMaker.task_json`) and
    whether it carries a prediction.

    The units and the judge's codes are not held: an annotations file is read alongside the
    units (:meth:`~failcodes.annotationio.AnnotationIndex.open`: once, where it lists them in
    the units' order, as a judge run does). Raises on the units' first errors, the plan's, the
    annotations' (any line), the judge choice's, the other units', then no task at all,
    possibly after tasks were given: a writer keeps nothing of a failed export
    (:func:`~failcodes.fileio.write_json_items`). ``unmatched`` gets how many units of the
    judge's codes are none of the units (an annotations file under an earlier failcodes'
    ids, no journal beside it to say so).
    """
    from failcodes.annotationio import AnnotationIndex

    stream = _units(units, part, top_k, dataset)
    first = next(stream, None)  # the units' own errors before the annotations are read
    if judged is not None:  # an earlier failcodes' ids
        from failcodes.judge.journal import JOURNAL_NAME, refuse_stale_ids

        # a run folder, or the annotations.jsonl beside a run's journal
        run = judged if judged.is_dir() else judged.parent
        if (run / JOURNAL_NAME).is_file() or judged.is_dir():
            refuse_stale_ids(run, lambda: _units(units, part, top_k, dataset))
    items: Iterator[TaskUnit] = itertools.chain([first] if first is not None else [], stream)
    if plan is not None:
        items = iter(_planned(items, plan, part))
    chosen, check = _judged(judged, cb, judge)
    maker = TaskMaker(cb, part)
    count = matched = 0
    try:
        while True:
            try:
                unit = next(items)
            except StopIteration:
                break
            except Exception:  # a unit's error: every annotation's errors come first
                check()
                raise
            judged_unit = chosen.get(unit.id)
            matched += judged_unit is not None
            yield maker.task_json(unit, judged_unit), predicted(judged_unit)
            count += 1
        check()
        if unmatched is not None and judged is not None:
            unmatched.append(len(chosen) - matched)
    finally:
        if isinstance(chosen, AnnotationIndex):
            chosen.close()
    if not count:
        why = " (closed-book: no passages)" if part is UnitKind.RETRIEVAL else ""
        raise ConfigError(f"{units} holds no {part.value} units{why}")


def _judged(
    judged: Path | None, cb: Codebook, judge: str | None
) -> tuple[dict[str, Annotation] | AnnotationIndex, Callable[[], None]]:
    """The chosen judge's annotations by unit id (a JSONL file: indexed, not held).

    And what checks them all once the tasks are made: the lines of an annotations file
    not read yet, then the judge choice (:meth:`JudgeChoice.check`).
    """
    from failcodes.annotationio import AnnotationIndex

    if judged is None:
        return {}, _nothing
    if judged.is_dir():
        from failcodes.judge.panelrun import run_codes

        return select_judged(run_codes(judged, cb), cb, judge), _nothing
    if judged.suffix.lower() == ".json":  # a task file: "expected a JSON object, got list"
        raise InputError(
            "--judged takes the judge's annotations (a judge run folder, or its "
            "annotations.jsonl), not a .json task or export file",
            path=judged,
        )
    choice = JudgeChoice(cb, judge)
    index = AnnotationIndex.open(judged, keep=choice.offer)
    if not index.lines:  # --judged given: an empty file would silently drop the predictions
        raise InputError("no annotations (expected one JSON object per line)", path=judged)

    def check() -> None:
        index.finish()
        choice.check()

    return index, check


def _nothing() -> None:
    """No check to make."""


def _planned(units: Iterable[TaskUnit], plan_path: Path, part: UnitKind) -> list[TaskUnit]:
    """The plan's units, in plan order; every planned unit must be among ``units``."""
    from failcodes.reviewplan import read_plan

    plan = read_plan(plan_path)
    if plan.part is not part:
        raise InputError(
            f"the plan is for the {plan.part.value} part, not {part.value}", path=plan_path
        )
    wanted = set(plan.all_ids())
    by_id = {u.id: u for u in units if u.id in wanted}
    missing = [uid for uid in plan.all_ids() if uid not in by_id]
    if missing:
        raise InputError(
            f"{len(missing)} planned unit(s) are not among the given units (first: "
            f"{missing[0]}); pass the traces or units the plan's run was judged on",
            path=plan_path,
        )
    return [by_id[uid] for uid in plan.all_ids()]


class ExportResult(FrozenModel):
    """How many tasks were written where."""

    tasks: int
    with_predictions: int
    out: Path
    unmatched: int = 0  # units of --judged that are none of the tasks' units
    #: Said first (and by ``failcodes run``): claims whose ranks skip within ``--top-k``.
    first: tuple[str, ...] = ()

    def said(self) -> list[str]:
        """What ``failcodes run`` says on stderr too."""
        return list(self.first)

    def lines(self) -> list[str]:
        """The result as plain lines (a study step's log)."""
        other = (
            f"; {self.unmatched} unit(s) of --judged are none of these units: another "
            "input's, or an earlier failcodes' unit ids?"
            if self.unmatched
            else ""
        )
        return [
            f"{self.tasks} tasks ({self.with_predictions} with predictions) -> {self.out}{other}"
        ]


class ExportRequest(Request):
    """Write units as Label Studio tasks JSON with the judge's codes as predictions.

    From a disagreements file (or a study), exactly the units behind the disagreements become
    tasks; reviewers see the verifier's own verdict word next to the canonical verdict.
    """

    command: ClassVar[tuple[str, ...]] = ("labelstudio", "export")

    units: Path = option(argument=True, help=UNITS_HELP)
    part: UnitKind = option(
        flags=("-p", "--part"), help="Codebook part: retrieval or verification."
    )
    out: Path = option(flags=("-o", "--out"), help="Label Studio tasks JSON file.")
    codebook: Path | None = option(
        None,
        flags=("--codebook", "-c"),
        help="Codebook YAML file (default: the study's codebook when UNITS is in a study "
        "folder; else the bundled codebook).",
    )
    judged: Path | None = option(
        None,
        help="Judge annotations JSONL, or a judge run folder (a panel's: its consensus): "
        "become pre-selected predictions.",
    )
    judge: str | None = option(None, help="Which judge, if --judged holds several.")
    top_k: int | None = top_k_option()
    plan: Path | None = option(
        None,
        help="A review plan (failcodes review plan): only its units become tasks, in plan order.",
    )
    dataset: str | None = option(None, help="Only this data set of the study (default: all).")

    def run(self, *, note: Note = ignore_note) -> ExportResult:
        """Build the tasks and write them to ``out``."""
        check_not_input([self.out], [self.units, self.codebook, self.judged, self.plan])
        if self.out.suffix.lower() != ".json":  # a JSON list under .csv: Label Studio misreads
            raise ConfigError(
                f"-o {self.out}: the tasks are one JSON document; name the file .json (Label "
                "Studio reads the format from the extension)"
            )
        cb = codebook_or_bundled(self.codebook, near=self.units)
        unmatched: list[int] = []
        tasks = iter_review_tasks(
            cb,
            self.part,
            self.units,
            self.judged,
            self.judge,
            self.top_k,
            self.plan,
            self.dataset,
            # a plan, a data set or --top-k leaves units of the judge's codes out by design
            unmatched
            if self.plan is None and self.dataset is None and self.top_k is None
            else None,
        )
        with_pred = 0

        def counted() -> Iterator[bytes]:
            nonlocal with_pred
            for task, with_prediction in tasks:
                with_pred += with_prediction
                yield task

        # written as they come (a paper-scale task file is ~1 GB of JSON)
        written = write_json_items(self.out, counted())
        skipped = rank_gaps_line(self.units, self.top_k, self.dataset)
        if skipped:  # fewer than k passages of a claim as tasks: its ranks skip
            note(skipped)
        return ExportResult(
            tasks=written,
            with_predictions=with_pred,
            out=self.out,
            unmatched=sum(unmatched),
            first=(skipped,) if skipped else (),
        )


#: The fields ``push``, ``pull``, ``import`` and ``config`` share with ``export``.
_EXPORT: dict[str, Any] = dict(ExportRequest.model_fields)
CODEBOOK_HELP = (
    "Codebook YAML file (default: the study's codebook when the units, or -o, are in a study "
    "folder; else the bundled codebook)."
)
DEFAULT_ANNOTATIONS_OUT = Path("annotations/labelstudio.jsonl")
MAX_PROBLEMS_SHOWN = 20


def _codebook_option() -> Any:
    return option(None, flags=("--codebook", "-c"), help=CODEBOOK_HELP)


def _server_options() -> tuple[Any, Any]:
    url = option(None, help="Label Studio URL (default: $LABEL_STUDIO_URL).")
    token = option(
        None, help="Label Studio API token (default and preferred: $LABEL_STUDIO_API_KEY)."
    )
    return url, token


def _annotator_option() -> Any:
    return option(
        default_factory=list,
        help="Blind double coding: one project per annotator, titled 'PROJECT [NAME]'.",
    )


class LabelingConfigResult(FrozenModel):
    """The labeling config XML, and where it was written (None: for stdout)."""

    xml: str
    out: Path | None = None

    def lines(self) -> list[str]:
        """What the CLI prints after writing it to ``out``."""
        return [f"labeling config -> {self.out}"] if self.out is not None else []


class LabelStudioConfigRequest(Request):
    """Write the labeling config XML for one codebook part."""

    command: ClassVar[tuple[str, ...]] = ("labelstudio", "config")

    part: UnitKind = _EXPORT["part"]
    codebook: Path | None = _codebook_option()
    out: Path | None = option(
        None, flags=("-o", "--out"), help="Write the XML here (default: stdout)."
    )

    def run(self, *, note: Note = ignore_note) -> LabelingConfigResult:
        """Build the XML (written to ``out`` if given)."""
        del note
        check_not_input([self.out], [self.codebook])
        xml = labeling_config(codebook_or_bundled(self.codebook), self.part)
        if self.out is not None:
            atomic_write_text(self.out, xml)
        return LabelingConfigResult(xml=xml, out=self.out)


class PushedProject(FrozenModel):
    """One project a push created or reused, and its tasks."""

    title: str
    id: int
    created: bool
    imported: int
    skipped: int
    #: of the skipped, those showing other than asked (see PushReport.shown_otherwise)
    shown_otherwise: int = 0
    judged: bool = False
    #: (model version pre-selected before, after, tasks showing nothing since): PushReport's
    other_version: tuple[str, str, int] | None = None
    #: this push's judge's model version ('' a blind push)
    version: str = ""


class PushResult(FrozenModel):
    """The projects of one push."""

    projects: list[PushedProject]

    def lines(self) -> list[str]:
        """One line per project, as the CLI prints them."""
        return [
            f"project {p.title!r} (id {p.id}, {'created' if p.created else 'reused'}): "
            f"{p.imported} tasks imported, {p.skipped} already there" + _shown(p) + _switched(p)
            for p in self.projects
        ]


def _shown(p: PushedProject) -> str:
    """What tasks already there show, when it is not what this push asked for."""
    if not p.shown_otherwise:
        return ""
    if p.judged:
        return (
            f"; {p.shown_otherwise} of them hold no judge prediction (pushed without --judged "
            "before): their reviewers see no code pre-selected"
        )
    return (
        f"; {p.shown_otherwise} of them hold the judge's prediction (pushed with --judged "
        "before): their reviewers see its codes pre-selected, not a blind review"
    )


def _switched(p: PushedProject) -> str:
    """Whose codes the project pre-selects, when a push changed it or it is not this push's.

    Label Studio shows one model version's predictions (the project's).
    """
    if p.other_version is None:
        return ""
    was, now, hidden = p.other_version
    text = ""
    if now != p.version:
        text += (
            f"; the project pre-selects the predictions of {now!r}, not this push's {p.version!r} "
            "(no task of it was imported with a prediction): a task already there shows "
            f"{now!r}'s codes, if it holds them"
        )
    if hidden:
        before = f" (it was {was!r})" if was and was != now else ""
        text += (
            f"; Label Studio pre-selects one model version's predictions, now {now!r}{before}: "
            f"{hidden} task(s) already there hold only another judge's and show no code "
            "pre-selected (push them to another --project to keep them judged)"
        )
    return text


class LabelStudioPushRequest(Request):
    """Create or reuse the project(s) and import the tasks not yet there (by unit id)."""

    command: ClassVar[tuple[str, ...]] = ("labelstudio", "push")

    units: Path = _EXPORT["units"]
    part: UnitKind = _EXPORT["part"]
    project: str = option(help="Label Studio project title.")
    codebook: Path | None = _codebook_option()
    judged: Path | None = _EXPORT["judged"]
    judge: str | None = _EXPORT["judge"]
    top_k: int | None = _EXPORT["top_k"]
    annotator: list[str] = _annotator_option()
    url: str | None = _server_options()[0]
    token: SecretStr | None = _server_options()[1]
    plan: Path | None = _EXPORT["plan"]
    dataset: str | None = _EXPORT["dataset"]

    def run(self, *, note: Note = ignore_note) -> PushResult:
        """Build the tasks, then push them (titles checked before any network call)."""
        from failcodes.labelstudio.client import LabelStudioClient, project_titles

        cb = codebook_or_bundled(self.codebook, near=self.units)  # in a study: its codebook
        project_titles(self.project, self.annotator)
        found = iter_review_tasks(
            cb, self.part, self.units, self.judged, self.judge, self.top_k, self.plan, self.dataset
        )
        tasks = [json.loads(task) for task, _ in found]
        skipped = rank_gaps_line(self.units, self.top_k, self.dataset)
        if skipped:  # fewer than k passages of a claim as tasks: its ranks skip
            note(skipped)
        token = self.token.get_secret_value() if self.token is not None else None
        with LabelStudioClient(self.url, token) as client:
            config = labeling_config(cb, self.part)
            report = client.push(tasks, config, self.project, annotators=self.annotator)
        return PushResult(
            projects=[
                PushedProject(
                    title=title,
                    id=pid,
                    created=title in report.created_projects,
                    imported=report.imported[title],
                    skipped=report.skipped[title],
                    shown_otherwise=report.shown_otherwise.get(title, 0),
                    judged=any(task.get("predictions") for task in tasks),
                    other_version=report.other_version.get(title),
                    version=max(
                        (p["model_version"] for t in tasks for p in t.get("predictions", [])),
                        default="",
                    ),
                )
                for title, pid in report.projects.items()
            ]
        )


class ReviewsResult(FrozenModel):
    """Human reviews mapped from Label Studio and written to ``out`` (pull, import)."""

    review: ReviewResult
    out: Path

    def lines(self) -> list[str]:
        """What was written, what was assumed, and what was left (the CLI's stdout)."""
        result = self.review
        lines = []
        if result.pre_selected:
            unrecorded = (
                f"; {result.unrecorded} of them by assumption: their tasks hold predictions and "
                "the export does not record what the reviewer was shown (no 'prediction' field)"
                if result.unrecorded
                else ""
            )
            named = sorted({a.shown_judge for a in result.annotations if a.shown_judge})
            of = f" of {', '.join(named)}" if named else ""  # the judges' model_version
            lines.append(
                f"Assumed: {result.pre_selected} of {len(result.annotations)} annotations were "
                f"made with the judge's codes pre-selected (Label Studio predictions{of}"
                f"{unrecorded})"
                ": a reviewer "
                "who keeps them agrees with the judge more than a blind one may, so human vs "
                "judge agreement and the corrected shares may lean toward the judge (push "
                "without --judged for a blind review)"
            )
        coders = sorted({a.coder for a in result.annotations})
        warned = (
            f"; {len(result.problems)} warning(s) above (each says what was dropped or kept)"
            if result.problems
            else ""
        )
        # a skip read as an annotation, a draft dropped: a reviewer's unsubmitted work unsaid
        skips = sum(1 for a in result.annotations if a.reason == SKIPPED)
        skipped = f"; {skips} of them a skipped task (not a review)" if skips else ""
        n = result.drafts
        drafts = (
            f"; {n} draft{'s' if n > 1 else ''} saved in Label Studio and never submitted: not "
            f"read (submit {'them' if n > 1 else 'it'} to count {'them' if n > 1 else 'it'})"
            if n
            else ""
        )
        # a ground truth set in Label Studio (an adjudicated answer) was one more reviewer,
        # unsaid: beside the reviewers it raises their agreement with each other
        marked = ", ".join(f"{n} by {c}" for c, n in sorted(result.ground_truth.items()))
        truth = (
            f"; marked ground truth in Label Studio: {marked}, each read as its coder's review "
            "(an adjudicator's? name it like a consensus, --user ID=adjudicated, so the report "
            "counts it as the unit's review and leaves it out of reviewer vs reviewer agreement)"
            if marked
            else ""
        )
        # a reviewer's proposed new code (the config's free-text field) is kept in the
        # annotation's `proposal`: `saturate round --reviews` makes it a proposal
        n = sum(1 for a in result.annotations if a.proposal)
        proposed = (
            f"; {n} propose{'s' if n == 1 else ''} a new code (the annotations' `proposal` "
            f"field; `failcodes saturate round NAME --reviews {self.out}` makes "
            f"{'it a proposal' if n == 1 else 'them proposals'} of a codebook round)"
            if n
            else ""
        )
        if result.named_codes:  # a code the review did not give, named as a new one
            proposed += (
                f" ({result.named_codes} of them named as an existing code the annotation did "
                "not give: meant that code? correct the review; see the warnings)"
            )
        lines.append(
            f"{len(result.annotations)} annotations from {len(coders)} coder(s) on "
            f"{result.tasks} tasks -> {self.out}{skipped}{drafts}{truth}{proposed}{warned}"
        )
        return lines


def _check_kept(result: ReviewResult, part: UnitKind, source: str | Path) -> None:
    """Refuse an export with no annotation, or none holding a code of ``part`` (another config).

    Every choice would be dropped as unknown, and each annotation written as scored with no
    code: annotations of nothing, exit 0.
    """
    if not result.annotations:  # an empty annotations file, exit 0
        why = (
            f", but {result.drafts} draft{'s' if result.drafts > 1 else ''} saved in Label "
            "Studio and never submitted: submit them (the drafts are not reviews)"
            if result.drafts
            else " (exported before anyone annotated?)"
        )
        raise InputError(f"no annotations in its {result.tasks} task(s){why}", path=source)
    if any(a.codes or a.code_sets for a in result.annotations):
        return
    unknown = [p for p in result.problems if p.message.startswith("unknown ")]
    if not unknown:
        return
    names = sorted({repr(p.value if p.value is not None else p.dimension) for p in unknown})
    raise InputError(
        f"no annotation holds a code of the codebook's {part.value!r} part (found: "
        f"{', '.join(names[:3])}): exported from a project with another labelling config? "
        "(`failcodes labelstudio config` writes the one to use)",
        path=source,
    )


def _check_nothing_dropped(out: Path, result: ReviewResult, what: str) -> None:
    """Refuse to write over an annotations file holding reviews the new ones lack.

    A task deleted in Label Studio (or deleted and imported again) takes its annotations with
    it; the earlier pull was then their last copy, and pulling into it again lost them at exit
    0. Checked by (unit, coder); a file that is no JSONL is replaced as before.
    """
    if not out.is_file():
        return
    kept = {(a.unit_id, a.coder) for a in result.annotations}
    try:
        earlier = dict.fromkeys(
            (r.get("unit_id"), r.get("coder")) for _, r in jsonio.iter_jsonl(out)
        )
    except InputError:
        return
    lost = [key for key in earlier if key not in kept]
    if lost:
        unit, coder = lost[0]
        raise InputError(
            f"holds {len(lost)} annotation(s) that this {what} does not (first: unit {unit} by "
            f"{coder}; tasks or annotations deleted in Label Studio?): writing would lose them; "
            "write to another file (-o), or move this one away first",
            path=out,
        )


def _written(
    result: ReviewResult, part: UnitKind, source: str | Path, out: Path, what: str, note: Note
) -> ReviewsResult:
    """Check the reviews, write them to ``out``; each problem (at most 20) said to ``note``."""
    _check_kept(result, part, source)
    _check_nothing_dropped(out, result, what)
    write_jsonl(out, result.annotations)
    for problem in result.problems[:MAX_PROBLEMS_SHOWN]:
        note(f"failcodes: warning: {problem}")
    if len(result.problems) > MAX_PROBLEMS_SHOWN:
        more = len(result.problems) - MAX_PROBLEMS_SHOWN
        note(f"failcodes: warning: ... and {more} more problems")
    return ReviewsResult(review=result, out=out)


class LabelStudioPullRequest(Request):
    """Fetch annotations, check every choice against the codebook, write failcodes JSONL."""

    command: ClassVar[tuple[str, ...]] = ("labelstudio", "pull")

    part: UnitKind = _EXPORT["part"]
    project: str = option(help="Label Studio project title.")
    codebook: Path | None = _codebook_option()
    annotator: list[str] = _annotator_option()
    out: Path = option(
        DEFAULT_ANNOTATIONS_OUT, flags=("-o", "--out"), help="Annotations JSONL to write."
    )
    url: str | None = _server_options()[0]
    token: SecretStr | None = _server_options()[1]

    def run(self, *, note: Note = ignore_note) -> ReviewsResult:
        """Pull the project(s) and write the reviews to ``out``."""
        from failcodes.labelstudio.client import LabelStudioClient

        cb = codebook_or_bundled(self.codebook, near=self.out.parent)  # into a study: its own
        token = self.token.get_secret_value() if self.token is not None else None
        with LabelStudioClient(self.url, token) as client:
            result = client.pull(cb, self.part, self.project, annotators=self.annotator)
        source = f"Label Studio project {self.project}"
        return _written(result, self.part, source, self.out, "pull", note)


def _users(given: list[str]) -> dict[int, str]:
    """``--user ID=NAME`` values: each id named once, each name one id's."""
    users: dict[int, str] = {}
    for item in given:
        key, sep, name = item.partition("=")
        if not sep or not key.strip().isdigit() or not name.strip():
            raise ConfigError(f"--user expects ID=NAME with a numeric id, got {item!r}")
        was = users.setdefault(int(key), name.strip())
        if was != name.strip():  # the last name silently won: one reviewer's reviews renamed
            raise ConfigError(f"--user: id {int(key)} named twice ({was!r} and {name.strip()!r})")
        other = next((k for k, v in users.items() if v == name.strip() and k != int(key)), None)
        if other is not None:  # two people as one coder: one review of a unit was dropped
            raise ConfigError(
                f"--user: ids {other} and {int(key)} both named {name.strip()!r} (two Label "
                "Studio users are two reviewers: their reviews of one unit would be one coder's, "
                "and one dropped)"
            )
    return users


def _table_header(path: Path) -> str | None:
    """How the first line of a file that is not a .csv/.tsv reads as a table header, if it does.

    A JSON document starts with ``[`` or ``{``; a first line of two or more comma- or
    tab-separated names (quoted or not) is a CSV or TSV export's header.
    """
    if path.suffix.lower() in (".csv", ".tsv") or not path.is_file():
        return None
    with path.open("rb") as f:
        head = f.read(4096).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    first = head.split("\n", 1)[0].rstrip("\r")
    if not first or first[0] in "[{":
        return None
    for sep, what in ((",", "comma"), ("\t", "tab")):
        names = [n.strip().strip('"') for n in first.split(sep)]
        if len(names) > 1 and all(names):
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            return f"is a header of {len(names)} {what}-separated names: {shown}"
    return None


def _no_tasks(export: Path) -> InputError:
    """An empty export: no empty annotations file, no zero exit."""
    return InputError("no tasks in the export (expected a list of Label Studio tasks)", path=export)


class LabelStudioImportRequest(Request):
    """Map a Label Studio JSON export file (no server needed) to failcodes annotations."""

    command: ClassVar[tuple[str, ...]] = ("labelstudio", "import")

    export: Path = option(argument=True, help="A Label Studio JSON export file.")
    part: UnitKind = _EXPORT["part"]
    codebook: Path | None = _codebook_option()
    project_id: int | None = option(None, help="Fail unless every task is from this project.")
    user: list[str] = option(
        default_factory=list, help="Name a Label Studio user id: ID=email (exports hold ids)."
    )
    out: Path = option(
        DEFAULT_ANNOTATIONS_OUT, flags=("-o", "--out"), help="Annotations JSONL to write."
    )

    def run(self, *, note: Note = ignore_note) -> ReviewsResult:
        """Read the export and write the reviews to ``out``."""
        users = _users(self.user)
        check_not_input([self.out], [self.export, self.codebook])
        cb = codebook_or_bundled(self.codebook, near=self.out.parent)  # into a study: its own
        header = _table_header(self.export)
        if self.export.suffix.lower() in (".csv", ".tsv") or header:  # not 'malformed JSON'
            # (a CSV export saved as .json or .txt was "malformed JSON (Extra data ...); more
            # than one JSON value: a JSONL file?": its quoted first column name is JSON)
            saved = f" saved as {self.export.suffix or 'no suffix'} (its first line {header})"
            raise InputError(
                f"a CSV or TSV export{saved if header else ''} (one row per submitted "
                "annotation: a skipped task is left out, and so is the judge's prediction the "
                "reviewer was shown): export the project as JSON",
                path=self.export,
            )
        source = str(self.export)
        if self.export.is_file() and self.export.stat().st_size > jsonio.MAX_DOCUMENT:
            # read a task at a time (whole, it would take about 4.5 times its size)
            held: set[int] = set()

            def streamed() -> Iterator[Any]:
                for _, task in jsonio.iter_json_list(self.export):
                    held.update(annotator_ids(task))
                    yield task

            result = annotations_from_export(
                streamed(), cb, self.part, users=users, project=self.project_id, source=source
            )
            check_user_ids(held, users, source)
        else:
            tasks = jsonio.read_json(self.export)
            if tasks == []:
                raise _no_tasks(self.export)
            check_users(tasks, users, source)
            result = annotations_from_export(
                tasks, cb, self.part, users=users, project=self.project_id, source=source
            )
        if result.tasks == 0:
            raise _no_tasks(self.export)
        return _written(result, self.part, self.export, self.out, "export", note)


class ServeResult(FrozenModel):
    """How the server stopped: Ctrl-C (``killed``: it took SIGKILL after SIGTERM)."""

    url: str
    killed: bool = False


class LabelStudioServeRequest(Request):
    """Start a local Label Studio server for review; Ctrl-C stops it.

    Runs the server of its own environment (make labelstudio-venv) on 127.0.0.1 with a
    generated admin and API key (kept in the data folder, reused on every later start), waits
    until it answers, and prints the URL and the two lines to export in the shell where you
    run `failcodes labelstudio push/pull`. The first start on a new data folder migrates its
    database (30 s to a few minutes); later starts take seconds.
    """

    command: ClassVar[tuple[str, ...]] = ("labelstudio", "serve")

    port: int | None = option(None, help="Port on 127.0.0.1 (default: a free one).", ge=1, le=65535)
    data_dir: Path | None = option(
        None,
        help="The server's data (projects, reviews, login); default "
        "~/.local/share/failcodes/label-studio. Reviews survive restarts here.",
    )
    binary: Path | None = option(
        None,
        flags=("--bin",),
        help="The label-studio executable (default: $FAILCODES_LABEL_STUDIO_BIN, "
        ".venv-labelstudio/bin/label-studio here or above, or one on PATH).",
    )
    timeout: float = option(600.0, help="Seconds to wait for the server to answer.", ge=1)

    def run(self, *, note: Note = ignore_note, say: Note | None = None) -> ServeResult:
        """Serve until Ctrl-C; the URL and the lines to export go to ``say`` (default: note).

        Raises LabelStudioError when the server exits of itself.
        """
        say = say or note
        exe = ls_server.find_binary(self.binary)
        folder = (self.data_dir or ls_server.default_data_dir()).expanduser().resolve()
        first = not (folder / ls_server.CREDENTIALS).exists()
        local = ls_server.LocalServer(exe, folder, self.port or ls_server.free_port())
        said: list[bool] = []

        def waiting(seconds: float) -> None:  # said once the server is up and busy starting
            if seconds >= 2 and not said:
                said.append(True)
                note(
                    f"starting Label Studio from {exe} (data: {folder})"
                    + (
                        "; a new data folder: the first start migrates its database"
                        if first
                        else ""
                    )
                )

        try:
            local.start()
            took = local.wait_ready(self.timeout, tick=waiting)
            creds = local.creds
            say(f"# Label Studio is ready at {local.url} ({took:.0f} s)")
            say(f"# log in as {creds.email}; password in {folder / ls_server.CREDENTIALS}")
            say("# in the shell where you run failcodes labelstudio push/pull:")
            say(f"export LABEL_STUDIO_URL={local.url}")
            say(f"export LABEL_STUDIO_API_KEY={creds.token}")
            if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
                # started in the background by a shell without job control (`serve &`):
                # SIGINT stays ignored, as that shell asked, so Ctrl-C would not stop it
                note(
                    "# SIGINT is ignored here (started in the background); stop the server "
                    f"with kill {os.getpid()}"
                )
            else:
                note("# Ctrl-C stops the server")
            code = local.wait()
        except KeyboardInterrupt:
            killed = local.stop()
            if killed:
                note(
                    f"Label Studio did not stop within {ls_server.STOP_GRACE_S:.0f} s of "
                    "SIGTERM; killed it (SIGKILL)"
                )
            note("stopped Label Studio")
            return ServeResult(url=local.url, killed=killed)
        finally:
            local.stop()
        raise LabelStudioError(f"Label Studio exited with code {code} (log: {local.log_path})")
