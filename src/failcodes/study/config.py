"""The study file (``failcodes.toml``): what a study analyses and how, as a pydantic contract.

A study names its data sets (each read by one or more ``failcodes ingest`` adapters), each
system's pipeline (where its evidence came from), the metrics' error mappings, the
disagreements' mapping, the codebook and the judge. ``failcodes init NAME`` writes a
commented example (:data:`TEMPLATE`); docs/study.md documents every field.

Paths in the file are relative to the study folder; ``bundled:NAME/FILE`` names a file of a
data set shipped with failcodes (``failcodes.bundled``). A bad file is one line naming the
file, the line and the field (:func:`load_study`).
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from failcodes import bundled, yamlio
from failcodes.commands.base import args_as_fields
from failcodes.commands.ingest import IngestOptions, IngestRequest
from failcodes.commands.judge import JudgeOptions, JudgeRequest
from failcodes.contract import FrozenModel, first_repeat
from failcodes.errors import FailcodesError, InputError
from failcodes.jsonio import decode_error
from failcodes.mapping import resolve_mapping, resolve_mappings
from failcodes.redact import SECRET_ENV, SECRET_PARAMS
from failcodes.study.layout import JUDGE_CACHE, JUDGE_KINDS, STUDY_FILE
from failcodes.traces import EvidenceSource
from failcodes.verdicts import Verdict

#: ``bundled:NAME/FILE`` -> a file of a data set shipped with failcodes.
BUNDLED_PREFIX = "bundled:"  # failcodes.bundled.PREFIX (not imported: the study file loads light)

_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
#: Names become file names (data/<name>.traces.parquet, ...): a 300-character data set name
#: passed the pattern, ingested and wrote metrics, then died at "file name too long".
_NAME_MAX = 64
StudyName = Annotated[str, Field(pattern=_NAME, max_length=_NAME_MAX)]


#: ``--level`` and ``--without-claims`` of metrics/disagreements (failcodes.metrics.Level,
#: WithoutClaimsPolicy; the default is the project's one rule, DEFAULT_WITHOUT_CLAIMS).
LevelName = Literal["sentence", "claim"]
WithoutClaims = Literal["no_error", "exclude"]
#: failcodes.labelscope.QuestionScope (not imported: the study file loads light)
QuestionScopeName = Literal["auto", "answered", "all"]


def _known_mapping(spec: str) -> str:

    try:
        resolve_mapping(spec)
    except FailcodesError as exc:  # an unknown name or verdict: the file's line and field
        raise ValueError(exc.one_line()) from None
    return spec


class PipelineSpec(FrozenModel):
    """One system's pipeline: which system, and where its evidence came from."""

    system: str = Field(default="*", description="System name as in the traces; '*' = all.")
    evidence: EvidenceSource = Field(
        description="retrieved | provided | none (failcodes.traces.EvidenceSource): given to "
        "`failcodes ingest --evidence`, so every later step sees it on the traces."
    )
    retriever: str | None = Field(default=None, description="Retriever name, if any.")
    verifier: str | None = Field(default=None, description="Verifier model or name.")
    description: str = Field(default="", description="Free text for the report.")
    verdict: Verdict | None = Field(
        default=None,
        description="The verdict a pipeline that asserts its claims (no verifier) gives every "
        "claim, e.g. supported: given to the generic adapter's `--verdict`, so reviewers see "
        "'asserted by the system'.",
    )


def _args_gone(table: str, models: Any) -> Any:
    """A validator refusing the old free ``args`` list, saying which fields to write instead."""

    def refuse(cls: Any, args: list[str] | None) -> None:
        del cls
        if args is None:
            return

        options, request = models()
        raise ValueError(
            f"`args` is no longer read; write its options as fields of {table}: "
            f"{args_as_fields(options, request, args)} (docs/study.md, 'Settings as fields')"
        )

    return classmethod(refuse)


def _ingest_options() -> Any:
    return IngestOptions, IngestRequest


def _judge_options() -> Any:
    return JudgeOptions, JudgeRequest


class IngestSpec(IngestOptions):
    """One ingest into the data set's traces or labels: the adapter, its inputs, its options.

    The options are :class:`failcodes.commands.ingest.IngestOptions`' fields (``map``,
    ``alias``, ``system``, ``option``, ...); the outputs and ``--evidence`` come from the study.
    """

    adapter: str = Field(description="Ingest adapter (failcodes ingest --help lists them).")
    paths: Annotated[list[str], Field(min_length=1)] = Field(
        description="Input files, relative to the study folder, or bundled:NAME/FILE."
    )
    labels: bool = Field(
        default=False,
        strict=True,
        description="Also write the adapter's reference labels (ingest --labels-out).",
    )
    args: list[str] | None = Field(default=None, exclude=True, description="Gone: see fields.")

    _args = field_validator("args")(_args_gone("this [[datasets.ingest]]", _ingest_options))

    @field_validator("adapter")
    @classmethod
    def _known_adapter(cls, name: str) -> str:
        # refused at load with the file's line, not by the plan (a line naming no file)
        from failcodes.ingest import names

        if name not in names():
            raise ValueError(f"unknown adapter {name!r} (known: {', '.join(names())})")
        return name

    @field_validator("paths")
    @classmethod
    def _each_once(cls, paths: list[str]) -> list[str]:
        # refused at load with the file's line (the ingest request refuses it too, later)
        twice = first_repeat(paths)
        if twice is not None:
            raise ValueError(f"{twice!r} is given twice; name each file once")
        return paths

    @model_validator(mode="after")
    def _options_fit(self) -> IngestSpec:
        try:
            self.check_adapter(self.adapter)
        except FailcodesError as exc:
            raise ValueError(exc.one_line()) from None
        return self


class DatasetSpec(FrozenModel):
    """A data set: how it is ingested and which pipelines produced its traces."""

    name: StudyName = Field(description="Name used in every path.")
    description: str = ""
    ingest: Annotated[list[IngestSpec], Field(min_length=1)] = Field(
        description="Ingest calls; a traces adapter writes data/<name>.traces.parquet, a labels "
        "adapter data/<name>.labels.jsonl."
    )
    pipelines: list[PipelineSpec] = Field(
        default_factory=list, description="Each system's pipeline ('*' for all systems)."
    )
    attribution: Literal["auto", "gold-evidence", "codebook"] = Field(
        default="auto",
        description="How `attribute` assigns this data set's disagreements (its --strategy; "
        "docs/attribution.md): auto (gold flags when the traces carry them), gold-evidence, "
        "codebook (the judge's codes decide).",
    )

    @field_validator("name")
    @classmethod
    def _not_the_cache(cls, name: str) -> str:
        # judge/<name>/ holds the data set's judge runs beside judge/cache.sqlite (and its
        # -wal, -shm, -journal files): a data set named so loaded, then every judge step died
        if name.lower().startswith(JUDGE_CACHE):
            raise ValueError(
                f"{name!r} is the name of the judge's response cache (judge/{JUDGE_CACHE}), "
                "where the data set's judge runs would go; name the data set otherwise"
            )
        return name


class MetricsSpec(FrozenModel):
    """``failcodes metrics`` settings."""

    mappings: Annotated[list[str], Field(min_length=1)] = ["refuted"]  # noqa: RUF012 - pydantic copies defaults
    level: LevelName = "sentence"
    # le: failcodes.stats.bootstrap.MAX_RESAMPLES (not imported: the study file loads light)
    # strict: TOML has types, and pydantic turned true into 1 resample, "1000" into 1000
    bootstrap: Annotated[int, Field(ge=0, le=1_000_000, strict=True)] = 1000
    seed: Annotated[int, Field(ge=0, strict=True)] = 0
    without_claims: WithoutClaims = "no_error"
    question_scope: QuestionScopeName = Field(
        default="auto",
        description="Shared labels: which labelled sentences count for a system "
        "(docs/statistics.md, labels per system).",
    )

    @field_validator("mappings")
    @classmethod
    def _known_mappings(cls, mappings: list[str]) -> list[str]:

        known = [_known_mapping(m) for m in mappings]
        try:  # two spellings of one mapping: the same rows twice
            resolve_mappings(known)
        except FailcodesError as exc:
            raise ValueError(exc.one_line()) from None
        return known


class DisagreementsSpec(FrozenModel):
    """``failcodes disagreements`` settings (the mapping the judge and attribution study)."""

    mapping: str = "refuted"
    level: LevelName | None = Field(default=None, description="Default: [metrics] level.")

    _mapping = field_validator("mapping")(_known_mapping)
    without_claims: WithoutClaims | None = Field(
        default=None, description="Default: [metrics] without_claims."
    )
    question_scope: QuestionScopeName | None = Field(
        default=None, description="Default: [metrics] question_scope."
    )


class StudyJudge(JudgeOptions):
    """The study's ``[judge]``: which kinds to judge, and how the judge is called.

    The settings are :class:`failcodes.commands.judge.JudgeOptions`' fields (``judge``,
    ``concurrency``, ``batch``, ``temperature``, ...); the input, run folder and cache come
    from the study, and a dry run is not a study step.
    """

    kinds: list[str] = Field(default_factory=lambda: list(JUDGE_KINDS))
    args: list[str] | None = Field(default=None, exclude=True, description="Gone: see fields.")

    _args = field_validator("args")(_args_gone("[judge]", _judge_options))

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, kinds: list[str]) -> list[str]:
        for kind in kinds:
            if kind not in JUDGE_KINDS:
                raise ValueError(f"{kind!r} is not one of: {', '.join(JUDGE_KINDS)}")
        twice = first_repeat(kinds)
        if twice is not None:  # two judge steps wrote one run folder
            raise ValueError(f"{twice!r} is named twice")
        return kinds


class ReviewSpec(FrozenModel):
    """Human review: Label Studio task files for the judged units."""

    labelstudio: bool = Field(
        default=True, strict=True, description="Write Label Studio task files."
    )


class AgreementSpec(FrozenModel):
    """An agreement step: ``failcodes agree PATH ... -o agreement/<name>.json``.

    A ratings table (one row per unit, one column per rater; or long with ``long``) or an
    annotation file; the report reads what it writes. A study may hold only these.
    """

    name: StudyName = Field(description="Name of agreement/<name>.json.")
    path: str = Field(description="The ratings table or annotations, relative to the study.")
    raters: list[str] | None = Field(
        default=None, description="Rater columns (default: found by `agree`, named on its log)."
    )
    statistics: Annotated[list[str], Field(min_length=1)] = Field(
        default_factory=lambda: ["all"],
        description="Statistics (failcodes agree --stat), or ['all'].",
    )
    by: str | None = Field(default=None, description="Column to group units by.")
    long: list[str] | None = Field(
        default=None, description="A long table's [rater column, rating column]."
    )
    unit_column: str | None = None
    level: str = "nominal"
    weights: str = "none"
    categories: list[str] | None = Field(default=None, description="Categories in rank order.")
    sets: str | None = Field(
        default=None,
        description="Cells join co-occurring codes with this separator (agree --sets), or 'none'.",
    )
    bootstrap: Annotated[int, Field(ge=0, le=1_000_000, strict=True)] = 2000
    seed: Annotated[int, Field(ge=0, strict=True)] = 0

    @field_validator("statistics")
    @classmethod
    def _known_statistics(cls, stats: list[str]) -> list[str]:
        from failcodes.commands.agree import AgreeRequest

        try:  # the command's own check: an unknown name, one given twice, 'all' with others
            AgreeRequest(file=Path(), stat=stats).statistics()
        except FailcodesError as exc:
            raise ValueError(exc.one_line().replace("--stat", "statistics:")) from None
        return stats


class _RepeatedNameError(ValueError):
    """A name used twice; ``loc`` is the repeat's field (its line in the study file)."""

    def __init__(self, message: str, loc: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.loc = loc


def _one_name_each(what: str, table: str, names: list[str]) -> None:
    """Refuse a name used twice, in any case, at the second one (``table[i].name``).

    Each names files (``data/full.*``, ``data/Full.*``): one file on macOS and Windows, where
    the second data set's ingest replaced the first's.
    """
    folded = first_repeat(n.casefold() for n in names)
    if folded is None:
        return
    first, second = [(i, n) for i, n in enumerate(names) if n.casefold() == folded][:2]
    case = f" ({first[1]!r} differs only in case: one file name on macOS and Windows)"
    raise _RepeatedNameError(
        f"{what} name {second[1]!r} is used twice{case if first[1] != second[1] else ''}",
        (table, second[0], "name"),
    )


class StudyFile(FrozenModel):
    """The contract of ``failcodes.toml``."""

    name: StudyName
    description: str = ""
    codebook: str = Field(description="Codebook YAML, relative to the study folder.")
    datasets: list[DatasetSpec] = Field(default_factory=list)
    agreements: list[AgreementSpec] = Field(
        default_factory=list, description="Agreement steps (ratings tables, annotation files)."
    )
    metrics: MetricsSpec = MetricsSpec()
    disagreements: DisagreementsSpec = DisagreementsSpec()
    judge: StudyJudge = StudyJudge()
    review: ReviewSpec = ReviewSpec()

    @field_validator("datasets", "agreements")
    @classmethod
    def _unique_names(cls, specs: list[Any], info: ValidationInfo) -> list[Any]:
        what = "data set" if info.field_name == "datasets" else "agreement"
        _one_name_each(what, str(info.field_name), [spec.name for spec in specs])
        return specs

    @model_validator(mode="after")
    def _something_to_study(self) -> StudyFile:
        if not self.datasets and not self.agreements:
            raise ValueError(
                "a study needs a [[datasets]] (pipeline outputs and labels) or an "
                "[[agreements]] (a ratings table)"
            )
        return self

    @property
    def disagreement_level(self) -> LevelName:
        """The disagreements' level: their own setting, else the metrics' (one unit of analysis)."""
        return self.disagreements.level or self.metrics.level

    @property
    def disagreement_without_claims(self) -> WithoutClaims:
        """The disagreements' rule for sentences without claims, else the metrics' rule."""
        return self.disagreements.without_claims or self.metrics.without_claims

    @property
    def disagreement_question_scope(self) -> QuestionScopeName:
        """The disagreements' question scope, else the metrics' (the errors they counted)."""
        return self.disagreements.question_scope or self.metrics.question_scope

    def dataset(self, name: str) -> DatasetSpec:
        """The data set called ``name``."""
        for ds in self.datasets:
            if ds.name == name:
                return ds
        raise InputError(f"the study has no data set {name!r}")


def resolve_path(value: str, base: Path) -> Path:
    """A path of the study file: ``bundled:NAME/FILE`` or relative to ``base``."""
    return bundled.resolve(value, base)


def _field(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


#: A table's header line (``[judge]``, ``[[datasets.ingest]]``), not an array's line.
_HEADER = re.compile(r"^\s*\[\[?\s*[\w.\-]+\s*\]\]?\s*(#.*)?$")


def _line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """Best-effort 1-based line of the field ``loc`` (array-of-tables aware)."""
    lines = text.splitlines()
    start, table = 0, ""
    i = 0
    while i < len(loc):
        part = loc[i]
        nxt = loc[i + 1] if i + 1 < len(loc) else None
        if isinstance(part, str) and isinstance(nxt, int):
            header = re.compile(rf"^\s*\[\[\s*{re.escape(table + part)}\s*\]\]")
            hits = [n for n in range(start, len(lines)) if header.match(lines[n])]
            if nxt < len(hits):
                start, table = hits[nxt], f"{table}{part}."
                i += 2
                continue
            break
        if isinstance(part, str):
            key = re.compile(rf"^\s*{re.escape(part)}\s*=")
            header = re.compile(rf"^\s*\[\s*{re.escape(table + part)}\s*\]")
            # a key of the table begun at ``start`` is above the next table's header: the
            # top-level 'name' missing was the line of a [[datasets]] table's name
            heads = (n for n in range(start, len(lines)) if _HEADER.match(lines[n]))
            ends = next((n for n in heads if n > start or not table), len(lines))
            n = next((n for n in range(start, ends) if key.match(lines[n])), None)
            if n is None:
                n = next((n for n in range(start, len(lines)) if header.match(lines[n])), None)
            if n is None:
                return start + 1 if start else None
            if not (isinstance(nxt, str) and lines[n].lstrip().startswith("[")):
                return n + 1
            start, table = n, f"{table}{part}."  # a [table]: its key comes after it
        i += 1
    return start + 1 if start else None


def _value_at(raw: Any, loc: tuple[int | str, ...]) -> Any:
    """The raw TOML value at ``loc`` (None if there is none)."""
    for part in loc:
        try:
            raw = raw[part]
        except (KeyError, IndexError, TypeError):
            return None
    return raw


def pipeline_entry(
    study: StudyFile, text: str, dataset: str, system: str
) -> tuple[str, int | None]:
    """The field and line of data set ``dataset``'s ``[[datasets.pipelines]]`` naming ``system``.

    ``('datasets[0].pipelines[1].system', 26)``: a step refusing the system (its ingests do
    not give it: an ingest removed, its pipeline entry left) names the study file's entry
    (``--evidence`` was the study's words, not the user's). ``('', None)`` when none names it.
    """
    for i, ds in enumerate(study.datasets):
        if ds.name != dataset:
            continue
        for j, pipe in enumerate(ds.pipelines):
            if pipe.system == system:
                loc: tuple[int | str, ...] = ("datasets", i, "pipelines", j, "system")
                return _field(loc), _line_of(text, loc)
    return "", None


def parse_study(text: str, path: Path) -> StudyFile:
    """Validate the text of a study file; errors name the file, line and field."""
    try:
        raw: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise InputError(
            f"not valid TOML: {message}", path=path, line=int(match.group(1)) if match else None
        ) from None
    except RecursionError:  # arrays or inline tables nested ~1000 deep
        raise InputError("not valid TOML: nested too deeply", path=path) from None
    except ValueError:  # tomllib's int() of an integer over Python's 4300-digit limit
        long = re.search(rf"[0-9][0-9_]{{{sys.get_int_max_str_digits()},}}", text)
        line = text.count("\n", 0, long.start()) + 1 if long else None
        message = yamlio.too_long(long.group() if long else "")
        raise InputError(f"not valid TOML: {message}", path=path, line=line) from None
    try:
        return StudyFile.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors()
        # a misspelt key (unknown field) also explains the "missing" one: name it first
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = tuple(err["loc"])
        repeated = err.get("ctx", {}).get("error")
        if isinstance(repeated, _RepeatedNameError):  # the repeat's own line
            loc = repeated.loc
        if loc and isinstance(loc[-1], int) and not isinstance(_value_at(raw, loc[:-1]), list):
            loc = loc[:-1]  # a single value read as a list of one (judge = "x"): no [0]
        more = len(exc.errors()) - 1
        message = err["msg"].removeprefix("Value error, ") + (
            f" (and {more} more problem(s))" if more else ""
        )
        if err["type"] == "missing":
            message = "missing required field" + (f" (and {more} more problem(s))" if more else "")
        elif err["type"] == "extra_forbidden":
            message = "unknown field" + (f" (and {more} more problem(s))" if more else "")
            if str(loc[-1]).lower().replace("-", "_").endswith(SECRET_PARAMS):  # api_key = "sk-"
                message += f"; keys are read from the environment alone ({', '.join(SECRET_ENV)})"
        raise InputError(
            message, path=path, line=_line_of(text, loc), field=_field(loc) or None
        ) from None


def load_study(root: str | Path) -> StudyFile:
    """Read ``root/failcodes.toml`` (or a study file given directly)."""
    path = Path(root)
    if path.is_dir():
        path = path / STUDY_FILE
    if not path.is_file():
        raise InputError(
            f"no study file (expected {STUDY_FILE}; create a study with `failcodes init NAME`)",
            path=path,
        )
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows Notepad) is tolerated
    except UnicodeDecodeError as exc:
        raise decode_error(path, exc) from None
    return parse_study(text, path)


def field_error(root: str | Path, loc: tuple[int | str, ...], message: str) -> InputError:
    """An :class:`InputError` naming the study file, the line of the field ``loc`` and it."""
    path = Path(root)
    if path.is_dir():
        path = path / STUDY_FILE
    text = path.read_text(encoding="utf-8-sig")
    return InputError(
        message,
        path=path,
        line=_line_of(text, loc[:-1] if isinstance(loc[-1], int) else loc),
        field=_field(loc),
    )


def check_input_paths(config: StudyFile, root: str | Path, *, inputs: bool = True) -> None:
    """Refuse a study whose ingest inputs or codebook do not exist, naming the field.

    ``failcodes run`` calls it before any step writes anything (the ingest step would find a
    missing file only after the run had taken its lock and written its state); ``inputs=False``
    checks the codebook alone (``run --plan`` reads it; the data may come later).
    """
    path = Path(root)
    base = path if path.is_dir() else path.parent
    if path.is_dir():
        path = path / STUDY_FILE
    from failcodes.ingest import get_adapter  # lazy: the study file loads light

    wanted: list[tuple[tuple[int | str, ...], str]] = [(("codebook",), config.codebook)]
    files_only: set[tuple[int | str, ...]] = {("codebook",)}
    for i, agreement in enumerate(config.agreements):
        wanted.append((("agreements", i, "path"), agreement.path))
    for i, ds in enumerate(config.datasets):
        for j, spec in enumerate(ds.ingest):
            locs = [("datasets", i, "ingest", j, "paths", k) for k in range(len(spec.paths))]
            wanted += list(zip(locs, spec.paths, strict=True))
            if not getattr(get_adapter(spec.adapter), "reads_folders", False):
                files_only.update(locs)
    if not inputs:  # a plan: the codebook, and the data shipped with failcodes
        wanted = [w for w in wanted if w[0] == ("codebook",) or w[1].startswith(BUNDLED_PREFIX)]
    for loc, value in wanted:
        try:
            target = resolve_path(value, base)
        except FailcodesError as exc:  # "no bundled data set 'x'" named no file, no field
            raise field_error(path, loc, f"{value!r}: {exc.one_line()}") from None
        folder = loc in files_only and target.is_dir()
        if folder or not (target.is_file() or target.is_dir()):
            what = "broken link" if target.is_symlink() else "no such file or folder"
            if target.exists():
                what = "not a regular file (a FIFO, socket or device)"
            if folder:  # found by its step (after the lock and the state), or "Is a directory"
                what = (
                    "a folder, expected the codebook's YAML file"
                    if loc == ("codebook",)
                    else "a folder; the adapter reads files"
                )
            text = path.read_text(encoding="utf-8-sig")
            raise InputError(
                f"{value!r}: {what} ({target})",
                path=path,
                line=_line_of(text, loc[:-1] if isinstance(loc[-1], int) else loc),
                field=_field(loc),
            )


#: What ``failcodes init NAME`` writes (``{name}`` and ``{codebook}`` filled in): the file
#: ``study/template.toml`` beside this module.
TEMPLATE = (resources.files("failcodes.study") / "template.toml").read_text(encoding="utf-8")
