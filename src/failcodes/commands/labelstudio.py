"""``labelstudio export`` as a use case: units as Label Studio tasks with the judge's codes.

:class:`ExportRequest` builds the tasks (:func:`iter_review_tasks`, shared with ``labelstudio
push``) and writes them; the study's review step holds one per judged kind.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from failcodes import codebook as codebooks
from failcodes import jsonio, tableio, traceio
from failcodes.annotationio import AnnotationIndex
from failcodes.annotations import Annotation
from failcodes.codebook import Codebook
from failcodes.commands.base import Note, Request, ignore_note, option, top_k_option
from failcodes.errors import ConfigError, InputError
from failcodes.labelstudio.tasks import JudgeChoice, TaskMaker, predicted, select_judged
from failcodes.units import Unit, UnitKind, build_units
from failcodes.unitstream import TaskUnit, iter_disagreement_units, units_with_words

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
    from failcodes.errors import InputError
    from failcodes.study.layout import StudyLayout

    layout = StudyLayout.of(root)
    if not layout.study_file.is_file():
        raise InputError(f"not a study folder (no {layout.study_file.name})", path=root)
    found = sorted(layout.disagreements_dir.glob("*.jsonl"))
    if dataset is not None:
        found = [p for p in found if p == layout.disagreements(dataset)]
        if not found:
            raise InputError(
                f"no disagreements for dataset {dataset!r} (expected "
                f"{layout.disagreements(dataset)}; run `failcodes run` first)",
                path=root,
            )
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
    from failcodes.units import disagreement_traces

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
    from failcodes.errors import InputError
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


@dataclass
class ExportResult:
    """How many tasks were written where."""

    tasks: int
    with_predictions: int
    out: Path
    unmatched: int = 0  # units of --judged that are none of the tasks' units

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
        from failcodes.fileio import check_not_input, write_json_items

        del note
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
        return ExportResult(written, with_pred, self.out, sum(unmatched))
