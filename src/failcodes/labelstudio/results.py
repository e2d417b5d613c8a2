"""Label Studio annotations back to failcodes annotations, checked against the codebook.

Works on the JSON a Label Studio export produces (a list of tasks, each with ``data`` and
``annotations``), whether read from a file or fetched from a server. The server does not
validate choice values, so every choice is checked here: an unknown choice is reported as a
:class:`ReviewProblem` and not kept. Tasks not made by failcodes for this codebook part
(an export from another project) make the whole input fail. Pure: no SDK, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.codebook import Codebook, Dimension, Part
from failcodes.contract import FrozenModel, StrictModel
from failcodes.errors import InputError
from failcodes.labelstudio import config as cfg
from failcodes.spelling import unseen_note
from failcodes.units import UnitKind

#: The reason of an annotation of a task skipped in Label Studio (unscored).
SKIPPED = "skipped in Label Studio"


class ReviewProblem(FrozenModel):
    """Something in a Label Studio annotation that failcodes did not keep."""

    task_id: int | None = Field(description="Label Studio task id.")
    unit_id: str = Field(description="failcodes unit id of the task.")
    coder: str = Field(description="The annotator.")
    dimension: str | None = Field(default=None, description="Dimension (from_name) concerned.")
    value: str | None = Field(default=None, description="The offending value, if any.")
    message: str = Field(description="What is wrong.")

    def __str__(self) -> str:
        where = f"task {self.task_id} (unit {self.unit_id}), coder {self.coder}"
        return f"{where}: {self.message}"


class ReviewResult(StrictModel):
    """Annotations mapped from Label Studio, with everything that was not kept."""

    annotations: list[Annotation] = Field(default_factory=list)
    problems: list[ReviewProblem] = Field(default_factory=list)
    tasks: int = Field(default=0, description="Tasks read.")
    projects: list[int] = Field(default_factory=list, description="Label Studio project ids.")
    pre_selected: int = Field(
        default=0,
        description="Annotations kept that Label Studio made with a prediction shown (its "
        "'prediction' field): the judge's codes were pre-selected for the reviewer.",
    )
    unrecorded: int = Field(
        default=0,
        description="Of pre_selected, annotations without a 'prediction' field on tasks that "
        "hold predictions (an export through the tasks API): counted as made with them shown.",
    )
    drafts: int = Field(
        default=0,
        description="Drafts in the tasks (saved in Label Studio, never submitted): not read.",
    )
    ground_truth: dict[str, int] = Field(
        default_factory=dict,
        description="Kept annotations marked ground truth in Label Studio, per coder.",
    )
    named_codes: int = Field(
        default=0,
        description="Kept annotations whose proposed new code is named as an existing code "
        "the annotation did not give (each said in a problem).",
    )


def _id(value: Any) -> int | None:
    """A Label Studio id (user, task, annotation): an int, or its digits as a string.

    A converted or hand-edited export writes ids as strings ("3"): they were read as no id,
    each annotation a coder of its own ('the annotator is not in the export'), one person's
    two reviews of a unit two reviewers, and ``--user 3=NAME`` refused as naming no id. So
    were ids written as whole floats (``3.0``, ``"3.0"``: an export passed through a data
    frame, whose id column held a gap): alice's two reviews of a unit were alice's and
    'unknown-annotator-1''s, two coders, said as an annotation with no completed_by.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isascii():
        whole, dot, zeros = value.strip().partition(".")
        if whole.isdigit() and (not dot or zeros.strip("0") == ""):
            return int(whole)
    return None


_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no", "")


def _flag(raw: Mapping[str, Any], key: str, task_id: int | None, source: str) -> bool:
    """A true/false field of an annotation, also written as a string (a converted export).

    ``"was_cancelled": "false"`` was true (a non-empty string): every annotation of such an
    export was a skip, no review kept, exit 0. A string that is no yes/no is refused.
    """
    value = raw.get(key)
    if not isinstance(value, str):
        return bool(value) if isinstance(value, bool | int | float) or value is None else True
    word = value.strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise InputError(
        f"task {task_id}: annotation {raw.get('id')} has {key} {value!r} (expected true or false)",
        path=source,
    )


def _coder(completed_by: Any, users: Mapping[int, str]) -> str | None:
    """Email or username of the annotator (exports hold an id or a user object); None if none."""
    if isinstance(completed_by, dict):
        for key in ("email", "username"):
            if completed_by.get(key):
                return str(completed_by[key])
        completed_by = completed_by.get("id")
    uid = _id(completed_by)
    if uid is not None:
        return users.get(uid, f"label-studio-user-{uid}")
    if isinstance(completed_by, str) and completed_by.strip():  # a name or email as the coder
        return completed_by.strip()
    return None


def annotator_ids(task: Any) -> set[int]:
    """The Label Studio user ids a task's annotations hold (those naming no email or username)."""
    held: set[int] = set()
    for raw in (task.get("annotations") or []) if isinstance(task, dict) else []:
        by = raw.get("completed_by") if isinstance(raw, dict) else None
        if isinstance(by, dict) and not (by.get("email") or by.get("username")):
            by = by.get("id")
        if (uid := _id(by)) is not None:
            held.add(uid)
    return held


def check_users(tasks: Any, users: Mapping[int, str], source: str) -> None:
    """Refuse a ``--user ID=NAME`` whose id no annotation of the export holds, beside one unnamed.

    The name went unused and the reviews were written as label-studio-user-N, exit 0 (a typo,
    or the ids of another server). A roster naming every annotator of the export, and others
    (the team's, given to each blind project's export), is taken.
    """
    if not isinstance(tasks, list):  # no export: annotations_from_export says so (this said
        return  # 'no annotation ... by user id 3 (the ids it holds: none ...)')
    if any(isinstance(t, dict) and "data" not in t and cfg.UNIT_ID in t for t in tasks):
        return  # JSON-MIN rows (their ids under 'annotator'): check_task refuses the export
    held: set[int] = set()
    for task in tasks:
        held |= annotator_ids(task)
    check_user_ids(held, users, source)


def check_user_ids(held: set[int], users: Mapping[int, str], source: str) -> None:
    """:func:`check_users` of an export whose annotations hold the user ids ``held``."""
    if held and held <= set(users):  # each annotator named: none written label-studio-user-N
        return
    for uid, name in users.items():
        if uid not in held:
            ids = ", ".join(map(str, sorted(held))) or "none: it names its annotators itself"
            raise InputError(
                f"--user {uid}={name}: no annotation in the export is by user id {uid} (the ids "
                f"it holds: {ids})",
                path=source,
            )


def check_blind(
    tasks: list[Any], annotator: str, users: Mapping[int, str], owners: dict[str, str], source: str
) -> None:
    """Refuse a blind project (one per annotator) holding another coder's annotation.

    ``owners`` maps each coder to the project first seen holding their annotations (filled
    across a pull's projects). A reviewer's annotation in another's project was written
    beside their own (one unit annotated twice by one coder), and agree stopped on it naming
    neither coder, project nor task.
    """
    owner = annotator if annotator in users.values() else None
    for task in tasks:
        for raw in task.get("annotations") or [] if isinstance(task, dict) else []:
            coder = _coder(raw.get("completed_by"), users) if isinstance(raw, dict) else None
            if coder is None:
                continue
            owner = owner or coder
            also = owners.setdefault(coder, source)
            if coder != owner or also != source:
                not_by = f", not by {owner}" if coder != owner else ""
                seen = f" (their reviews are also in {also})" if also != source else ""
                raise InputError(
                    f"task {task.get('id')} holds an annotation by {coder}{not_by}{seen}: a "
                    "blind project holds one annotator's reviews; delete it in Label Studio "
                    "(or take the coder out of the project) and pull again",
                    path=source,
                )


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    # a time without an offset (a hand-edited export, another exporter) is Label Studio's UTC:
    # compared with an offset one to keep the latest annotation it stopped the import with a
    # traceback ("can't compare offset-naive and offset-aware datetimes")
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


_Order = tuple[datetime | None, int | None]


def _order(raw: Mapping[str, Any]) -> _Order:
    """An annotation's time (updated, else created) and Label Studio id, each if given."""
    stamp = _parse_time(raw.get("updated_at")) or _parse_time(raw.get("created_at"))
    return stamp, _id(raw.get("id"))


def _later(was: _Order, new: _Order) -> tuple[bool, str]:
    """Whether ``new`` is the later of one coder's two annotations, and the rule that said so.

    Times decide when both have one. An annotation without a time got the import's clock as
    its time and so won over every timed one (a hand-edited or trimmed export); then Label
    Studio's annotation ids (given in creation order) decide, else the order in the export.
    """
    old_id, new_id = was[1], new[1]
    if was[0] is not None and new[0] is not None:
        if new[0] != was[0]:
            return new[0] > was[0], "the latest"
        # one time on both (an export trimmed to seconds): the one listed last was kept as
        # "the latest", though the ids say which was made later
        if old_id is not None and new_id is not None:
            return new_id > old_id, "the one with the higher annotation id (one time on both)"
        return True, "the one listed last in the export (one time on both, no id)"
    if old_id is not None and new_id is not None:
        return new_id > old_id, "the one with the higher annotation id (no time on one)"
    return True, "the one listed last in the export (no time and no id on one)"


def _seconds(lead: Any) -> float | None:
    """Label Studio's lead time in seconds: a number, or one written as a string."""
    if isinstance(lead, str):
        try:
            lead = float(lead)
        except ValueError:
            return None
    if isinstance(lead, bool) or not isinstance(lead, int | float) or lead != lead:
        return None
    return float(lead)


def _text(item: Mapping[str, Any]) -> str | None:
    texts = item.get("value", {}).get("text", [])
    if isinstance(texts, str):
        texts = [texts]
    joined = "\n".join(str(t) for t in texts if str(t).strip())
    return joined or None


def _other_codebook(made: Any, codebook: Codebook) -> str:
    """Why a task's codebook is not ``codebook``: another version or edit of it, or another."""
    name, _, rest = str(made).partition("@")
    version = rest.partition("+")[0]
    if name != codebook.name or not version.isdigit():
        return "the export is from another project"
    if int(version) == codebook.version:  # the file edited without a version bump
        return (
            "the same name and version, another content hash (the codebook file was edited "
            "since the tasks were made): import with the codebook file they were made with (-c)"
        )
    if int(version) > codebook.version:
        return (
            f"the tasks were made under version {version} of this codebook, a newer one: "
            "import with that version's codebook file (-c)"
        )
    # a study bumped since the push: its reviews are the older version's, which the report
    # carries forward where the migration map allows (docs/study.md); this read was "another
    # project"
    return (
        f"the tasks were made under version {version} of this codebook, an older one: import "
        "with that version's codebook file (-c); a study's report carries reviews made under "
        "an older version to the current one where its migration map allows (docs/study.md)"
    )


def check_task(
    task: Any, index: int, codebook: Codebook, kind: UnitKind, *, source: str
) -> tuple[str, int | None]:
    """Check one exported task belongs to this codebook part; return (unit id, task id)."""
    ref = str(codebook.ref())
    if isinstance(task, dict) and "data" not in task and cfg.UNIT_ID in task:
        raise InputError(
            f"task {index + 1} is a JSON-MIN row (one row per submitted annotation: a skipped "
            "task is left out, and so is the judge's prediction the reviewer was shown): "
            "export the project as JSON instead",
            path=source,
        )
    if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
        raise InputError(f"task {index + 1} is not a Label Studio task object", path=source)
    data = task["data"]
    unit = data.get(cfg.UNIT_ID)
    task_id = _id(task.get("id"))
    if not isinstance(unit, str) or not unit:
        raise InputError(
            f"task {task_id or index + 1} has no {cfg.UNIT_ID}: this export is not from a "
            "failcodes project",
            path=source,
        )
    if data.get(cfg.CODEBOOK) != ref:
        raise InputError(
            f"task {task_id or index + 1} was made for codebook {data.get(cfg.CODEBOOK)}, "
            f"not {ref}: {_other_codebook(data.get(cfg.CODEBOOK), codebook)}",
            path=source,
        )
    if data.get(cfg.UNIT_KIND) != kind.value:
        raise InputError(
            f"task {task_id or index + 1} holds a {data.get(cfg.UNIT_KIND)} unit, not "
            f"{kind.value}: the export is from another project",
            path=source,
        )
    return unit, task_id


def annotations_from_export(
    tasks: Any,
    codebook: Codebook,
    kind: UnitKind,
    *,
    users: Mapping[int, str] | None = None,
    project: int | None = None,
    source: str = "Label Studio export",
) -> ReviewResult:
    """Map exported Label Studio tasks to failcodes annotations.

    ``tasks``: a list (each task checked before any is read), or an iterator of tasks read
    one at a time (an export too large to hold: each checked as it comes). ``users`` maps
    Label Studio user ids to names (exports hold ids only); ``project``, if given, must be
    the project every task belongs to. Raises :class:`InputError` when the tasks are not
    failcodes tasks of this codebook part and project.
    """
    if not isinstance(tasks, list | Iterator):
        raise InputError("not a Label Studio JSON export (expected a list of tasks)", path=source)
    users = users or {}
    part = cfg.check_label_studio_ids(codebook, kind)
    dims = {d.id: d for d in part.dimensions}
    ref = codebook.ref()
    checked = None
    if isinstance(tasks, list):
        checked = [check_task(t, i, codebook, kind, source=source) for i, t in enumerate(tasks)]
    result = ReviewResult()
    projects: set[int] = set()
    # one annotation per unit and coder, also across tasks: a task file imported twice into
    # Label Studio holds each unit in two tasks, and both annotations were written (the
    # agreement and the report then stopped on "annotated unit ... twice", naming no file)
    kept: dict[tuple[str, str], tuple[int | None, Annotation, _Order]] = {}
    # kept annotations made with the judge's codes shown: the prediction's model_version
    shown: dict[tuple[str, str], str | None] = {}
    unrecorded: set[tuple[str, str]] = set()  # of them, those the export does not record
    marked: set[tuple[str, str]] = set()  # kept annotations marked ground truth
    for index, task in enumerate(tasks):
        unit, task_id = (
            checked[index]
            if checked is not None
            else check_task(task, index, codebook, kind, source=source)
        )
        result.tasks += 1
        given = task.get("project")
        task_project = given if _id(given) is None else _id(given)
        if project is not None and task_project is not None and task_project != project:
            raise InputError(
                f"task {task_id} belongs to Label Studio project {task_project}, not {project}",
                path=source,
            )
        if isinstance(task_project, int):
            projects.add(task_project)
        result.drafts += sum(1 for d in task.get("drafts") or [] if isinstance(d, dict))
        for place, raw in enumerate(task.get("annotations") or [], start=1):
            if not isinstance(raw, dict):
                continue
            made = raw.get("parent_prediction") is not None and raw.get("lead_time") is None
            # a prediction (model_version, which no annotation has) listed among a hand-merged
            # export's annotations was a human coder agreeing with the judge on every unit
            listed = "model_version" in raw and raw.get("completed_by") is None
            if made or listed:
                # Label Studio's "Create Annotations From Predictions" (Data Manager) turns the
                # judge's codes into annotations of whoever clicked, never opened in the editor
                # (no lead time): read as reviews, they agreed with the judge on every unit
                result.problems.append(
                    ReviewProblem(
                        task_id=task_id,
                        unit_id=unit,
                        coder=_coder(raw.get("completed_by"), users) or "unknown-annotator",
                        message="the judge's prediction made into an annotation in Label Studio "
                        "(parent_prediction, no lead time: never reviewed in the editor); not kept"
                        if made
                        else f"a prediction (model_version {raw['model_version']!r}, no "
                        "completed_by) listed among the annotations: the judge's codes, not a "
                        "review; not kept",
                    )
                )
                continue
            cancelled = _flag(raw, "was_cancelled", task_id, source)
            ann, problems = _one_annotation(
                raw, unit, (task_id, place, cancelled), kind, ref, dims, users
            )
            result.problems.extend(problems)
            key = (unit, ann.coder)
            order = _order(raw)
            if key in kept:
                other, before, was = kept[key]
                where = "" if other == task_id else f" (also in task {other}: imported twice?)"
                later, rule = _later(was, order)
                chosen, dropped = (ann, before) if later else (before, ann)
                # a later skip kept over a review with codes: the unit lost its review unsaid
                lost = (
                    ": a skip, over a review with codes (the unit has no review by this coder)"
                    if chosen.reason == SKIPPED and dropped.status is Status.SCORED
                    else ""
                )
                result.problems.append(
                    ReviewProblem(
                        task_id=task_id,
                        unit_id=unit,
                        coder=ann.coder,
                        message=f"several annotations by the same coder{where}; kept {rule}" + lost,
                    )
                )
                if not later:
                    continue
            kept[key] = (task_id, ann, order)
            (marked.add if _flag(raw, "ground_truth", task_id, source) else marked.discard)(key)
            # the prediction the reviewer saw, {} when none; no field at all (the tasks API
            # leaves it out) on a task holding predictions was read as a blind review
            unknown = "prediction" not in raw and bool(task.get("predictions"))
            seen = [raw["prediction"]] if raw.get("prediction") else unknown and task["predictions"]
            shown.pop(key, None)
            if seen:  # whose codes: one model_version (a task's several: not known)
                versions = {p.get("model_version") for p in seen if isinstance(p, dict)}
                version = versions.pop() if len(versions) == 1 else None
                shown[key] = version if isinstance(version, str) and version else None
            (unrecorded.add if unknown else unrecorded.discard)(key)
    result.annotations.extend(
        ann.model_copy(update={"judge_shown": True, "shown_judge": shown[key]})
        if key in shown
        else ann
        for key, (_, ann, _) in kept.items()
    )
    _say_named_codes(result, part, {key: task for key, (task, _, _) in kept.items()})
    result.pre_selected = len(shown)
    result.unrecorded = len(unrecorded)
    for _, coder in sorted(marked):
        result.ground_truth[coder] = result.ground_truth.get(coder, 0) + 1
    result.projects = sorted(projects)
    return result


def _say_named_codes(
    result: ReviewResult, part: Part, tasks: Mapping[tuple[str, str], int | None]
) -> None:
    """A problem for each kept proposal named as an existing code the annotation did not give.

    The import counted it as a new code proposed, unsaid that it names a code the review (read
    by the corrected shares and the agreement) did not choose: only ``saturate round`` said it.
    """
    if not any(a.proposal for a in result.annotations):
        return
    from failcodes.saturation.proposers import names_a_code  # (jinja2: only with proposals)

    for ann in result.annotations:
        note = names_a_code(part, ann)
        if note is not None:
            result.named_codes += 1
            result.problems.append(
                ReviewProblem(
                    task_id=tasks.get((ann.unit_id, ann.coder)),
                    unit_id=ann.unit_id,
                    coder=ann.coder,
                    message=f"proposal {ann.proposal!r}: {note}",
                )
            )


def _editor(raw: Mapping[str, Any], users: Mapping[int, str]) -> tuple[str, float] | None:
    """Who last updated an annotation when not its annotator, and how many seconds after.

    Label Studio keeps one result per annotation: a manager's or an admin's edit of dave's
    annotation replaced his codes, and the export still named him (``completed_by``), the
    editor under ``updated_by``: read as dave's review, unsaid. An annotation made on someone's
    behalf (through the API) names its maker there from the start: not an edit.
    """

    def user_id(value: Any) -> int | None:
        return _id(value.get("id") if isinstance(value, dict) else value)

    by, upd = user_id(raw.get("completed_by")), user_id(raw.get("updated_by"))
    if by is None or upd is None or by == upd:
        return None
    made, changed = _parse_time(raw.get("created_at")), _parse_time(raw.get("updated_at"))
    if made is None or changed is None or (changed - made).total_seconds() < 1:
        return None
    return users.get(upd, f"label-studio-user-{upd}"), (changed - made).total_seconds()


def _one_annotation(
    raw: Mapping[str, Any],
    unit: str,
    where: tuple[int | None, int, bool],
    kind: UnitKind,
    ref: Any,
    dims: Mapping[str, Dimension],
    users: Mapping[int, str],
) -> tuple[Annotation, list[ReviewProblem]]:
    task_id, place, cancelled = where
    coder = _coder(raw.get("completed_by"), users)
    # no annotator (a trimmed or hand-made export): every such annotation was one coder
    # 'unknown-annotator', and a unit's second was dropped as the same coder's (a real review
    # lost). Each is a coder of its own, named by Label Studio's annotation id (else its task
    # and place): the multi-rater statistics need no names; a pair cannot be followed
    ann_id = _order(raw)[1]
    named = coder is not None
    if coder is None:
        coder = (
            f"unknown-annotator-{ann_id}"
            if ann_id is not None
            else f"unknown-annotator-task{task_id if task_id is not None else '?'}-{place}"
        )
    problems: list[ReviewProblem] = []

    def problem(message: str, dimension: str | None = None, value: str | None = None) -> None:
        problems.append(
            ReviewProblem(
                task_id=task_id,
                unit_id=unit,
                coder=coder,
                dimension=dimension,
                value=value,
                message=message,
            )
        )

    if not named:
        problem(
            "no completed_by (the annotator is not in the export): kept as a coder of its own, "
            f"named by its {'annotation id' if ann_id is not None else 'task and place'}; "
            "agreement per coder pair cannot follow this annotator to other units"
        )
    edited = _editor(raw, users)
    if edited is not None:
        editor, after = edited
        problem(
            f"last updated by {editor}, not by its annotator, {after:.0f} s after it was made: "
            f"its codes are as {editor} left them (a correction by a manager or an admin?), "
            f"read as {coder}'s review"
        )
    codes: dict[str, str] = {}
    code_sets: dict[str, list[str]] = {}
    chosen_by_dim: dict[str, set[str]] = {}
    conflicting: set[str] = set()
    comment: str | None = None
    proposal: str | None = None
    for item in raw.get("result") or []:
        if not isinstance(item, dict):
            problem("result item is not an object")
            continue
        name = str(item.get("from_name"))
        if name == cfg.COMMENT:
            comment = _text(item)
            continue
        if name == cfg.OTHER:
            proposal = _text(item)
            continue
        dim = dims.get(name)
        if dim is None:
            problem(f"unknown dimension {name!r}; not kept", dimension=name)
            continue
        choices = item.get("value", {}).get("choices", [])
        multi = dim.multi_label
        if not isinstance(choices, list) or not choices or (len(choices) != 1 and not multi):
            expected = "at least one choice" if multi else "exactly one choice"
            problem(f"expected {expected} in {name!r}, got {choices!r}; not kept", dimension=name)
            continue
        unknown = [str(c) for c in choices if str(c) not in dim.code_ids()]
        if unknown:
            problem(
                f"unknown choice {unknown[0]!r} in dimension {name!r} (valid: "
                f"{', '.join(dim.code_ids())}){unseen_note(unknown[0])}; not kept",
                dimension=name,
                value=unknown[0],
            )
            continue
        chosen = {str(c) for c in choices}
        # a dimension given twice in one annotation (a region's choice beside the task's,
        # or a hand-edited export): the later silently replaced the earlier, exit 0
        if name in conflicting or chosen_by_dim.setdefault(name, chosen) != chosen:
            if name not in conflicting:
                problem(
                    f"two different choices in {name!r} ({', '.join(sorted(chosen_by_dim[name]))}"
                    f" and {', '.join(sorted(chosen))}); not kept",
                    dimension=name,
                )
            conflicting.add(name)
            codes.pop(name, None)
            code_sets.pop(name, None)
            continue
        if multi and len(chosen) > 1 and dim.high_quality_code in chosen:
            problem(
                f"{dim.high_quality_code!r} (high quality) combined with other codes in "
                f"{name!r}; not kept",
                dimension=name,
                value=dim.high_quality_code,
            )
            continue
        ordered = [c for c in dim.code_ids() if c in chosen]
        codes[name] = ordered[0]
        if multi:
            code_sets[name] = ordered
    if not cancelled:
        for dim_id in dims:
            if dim_id not in codes and not any(p.dimension == dim_id for p in problems):
                problem(f"no code for dimension {dim_id!r}", dimension=dim_id)
    # submitted with no choice at all (an empty result): nothing was reviewed. Kept as scored
    # with no codes it counted as reviewed in `review status`, and as "no passage high
    # quality" (-> retrieval) in the corrected attribution
    empty = not cancelled and not codes
    lead = raw.get("lead_time")
    created = _parse_time(raw.get("updated_at")) or _parse_time(raw.get("created_at"))
    extra: dict[str, Any] = {}
    if created is not None:
        extra["created_at"] = created
    ann = Annotation(
        unit_id=unit,
        unit_kind=kind,
        codebook=ref,
        coder=coder,
        coder_kind=CoderKind.HUMAN,
        status=Status.UNSCORED if cancelled or empty else Status.SCORED,
        reason=SKIPPED
        if cancelled
        else "submitted with no code in Label Studio"
        if empty
        else None,
        codes={} if cancelled else codes,
        code_sets={} if cancelled else code_sets,
        rationale=comment,
        proposal=proposal,
        lead_time_s=_seconds(lead),
        **extra,
    )
    return ann, problems
