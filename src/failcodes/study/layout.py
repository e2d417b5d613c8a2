"""The one layout of a study folder: every path a step writes or reads is named here.

A study folder (``failcodes init NAME``) holds the study file and one folder per step; each
step's output is the next step's input under the same name, so nothing is ever renamed (the
paths, who writes and who reads each: docs/study.md, "The folder").

Writers (the CLI steps, ``failcodes run``, the demo) and the reader (``report.rundir``) take
their paths from :class:`StudyLayout`; no other module spells these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from failcodes.fileio import check_regular_file

#: The study file at the root of a study folder.
STUDY_FILE = "failcodes.toml"

#: Judge run kinds as the CLI names them (``failcodes judge retrieval|reasoning``).
JUDGE_KINDS: tuple[str, ...] = ("retrieval", "reasoning")

#: File names inside ``attribution/<dataset>/`` (what ``failcodes attribute -o`` writes).
#: The LLM judge's response cache in ``judge/`` (beside one folder per data set).
JUDGE_CACHE = "cache.sqlite"
PER_PASSAGE = "per_passage.csv"
PER_TRACE = "per_trace.csv"
ATTRIBUTION_TABLE = "attribution.csv"
ATTRIBUTION_ITEMS = "attribution.jsonl"
#: What ``attribute`` said first (:class:`~failcodes.attribution.AttributeNotes`): the report
#: reads it back, not the disagreements.
ATTRIBUTION_NOTES = "notes.json"

#: Inside a re-code run (``judge/<dataset>/<kind>.v<NNNN>/``): one line per unit brought onto
#: that version (re-coded or migrated); written last, so its presence marks the run complete.
RECODE_ENTRIES = "recode.jsonl"

#: A data set's validated traces: the tool's own Parquet (its footer marker lets the analysis
#: engine read them without the strict checks). A study ingested before it wrote Parquet keeps
#: ``.traces.jsonl``, which is still read (:meth:`StudyLayout.trace_files`).
TRACES_SUFFIX = ".traces.parquet"
JSONL_TRACES_SUFFIX = ".traces.jsonl"
LABELS_SUFFIX = ".labels.jsonl"


def trace_dataset(path: Path) -> str:
    """The data set whose traces ``path`` holds (``data/<dataset>.traces.parquet|jsonl``)."""
    return path.name.removesuffix(TRACES_SUFFIX).removesuffix(JSONL_TRACES_SUFFIX)


def judge_kind(kind: str) -> str:
    """The folder name of a judge kind: ``retrieval`` or ``reasoning`` (``verification``)."""
    value = getattr(kind, "value", kind)
    if value == "verification":
        return "reasoning"
    if value not in JUDGE_KINDS:
        raise ValueError(f"unknown judge kind {kind!r} (one of: {', '.join(JUDGE_KINDS)})")
    return str(value)


class _Under:
    """A path of the layout: ``name`` under its root or under another of its paths."""

    def __init__(self, name: str, parent: str = "root") -> None:
        self.name, self.parent = name, parent

    def __get__(self, layout: StudyLayout, owner: object = None) -> Path:
        path: Path = getattr(layout, self.parent)
        return path / self.name


@dataclass(frozen=True)
class StudyLayout:
    """The paths of one study folder (see the module docstring for the picture)."""

    root: Path

    @classmethod
    def of(cls, root: str | Path) -> StudyLayout:
        """The layout rooted at ``root``."""
        return cls(Path(root))

    # -- the study file and run state ---------------------------------------------------
    study_file = _Under(STUDY_FILE)
    #: ``.failcodes/``: bookkeeping of ``failcodes run`` (not an input of any step).
    state_dir = _Under(".failcodes")
    #: ``.failcodes/run.json``: fingerprints of the finished steps.
    run_state = _Under("run.json", "state_dir")
    #: ``.failcodes/logs/``: what each step printed under ``failcodes run``.
    logs_dir = _Under("logs", "state_dir")

    # -- data ---------------------------------------------------------------------------
    data_dir = _Under("data")

    def traces(self, dataset: str) -> Path:
        """``data/<dataset>.traces.parquet``."""
        return self.data_dir / f"{dataset}{TRACES_SUFFIX}"

    def labels(self, dataset: str) -> Path:
        """``data/<dataset>.labels.jsonl``."""
        return self.data_dir / f"{dataset}{LABELS_SUFFIX}"

    def trace_files(self) -> list[Path]:
        """Every data set's traces (``data/*.traces.parquet``), sorted.

        A data set without a Parquet file (ingested before) has its ``data/*.traces.jsonl``.
        """
        files = {trace_dataset(p): p for p in self.data_dir.glob(f"*{JSONL_TRACES_SUFFIX}")}
        files |= {trace_dataset(p): p for p in self.data_dir.glob(f"*{TRACES_SUFFIX}")}
        return sorted(files.values())

    # -- metrics, disagreements -----------------------------------------------------------
    metrics_dir = _Under("metrics")

    def metrics(self, dataset: str) -> Path:
        """``metrics/<dataset>.json`` (``failcodes metrics --format json`` rows)."""
        return self.metrics_dir / f"{dataset}.json"

    def metric_files(self) -> list[Path]:
        """Every ``metrics/*.json``, sorted."""
        return sorted(self.metrics_dir.glob("*.json"))

    disagreements_dir = _Under("disagreements")

    def disagreements(self, dataset: str) -> Path:
        """``disagreements/<dataset>.jsonl``."""
        return self.disagreements_dir / f"{dataset}.jsonl"

    # -- judge ----------------------------------------------------------------------------
    judge_dir = _Under("judge")

    def judge_run(self, dataset: str, kind: str) -> Path:
        """``judge/<dataset>/<retrieval|reasoning>/``: a judge run directory."""
        return self.judge_dir / dataset / judge_kind(kind)

    def judge_recode_run(self, dataset: str, kind: str, version: int) -> Path:
        """``judge/<dataset>/<kind>.v<NNNN>/``: the run re-coded onto codebook ``version``."""
        return self.judge_dir / dataset / f"{judge_kind(kind)}.v{version:04d}"

    def judge_recode_runs(self, dataset: str, kind: str) -> list[tuple[int, Path]]:
        """The complete re-code runs (``recode.jsonl`` written) of a kind, oldest first."""
        found: list[tuple[int, Path]] = []
        prefix = f"{judge_kind(kind)}.v"
        for path in (self.judge_dir / dataset).glob(f"{prefix}*"):
            digits = path.name.removeprefix(prefix)
            entries = path / RECODE_ENTRIES
            if digits.isdigit() and (entries.exists() or entries.is_symlink()):
                # a FIFO or device there: refused, not taken for "not re-coded yet"
                check_regular_file(entries)
                found.append((int(digits), path))
        return sorted(found)

    def judge_current(self, dataset: str, kind: str) -> Path:
        """The run downstream steps read: the newest complete re-code run, else the judge run."""
        runs = self.judge_recode_runs(dataset, kind)
        return runs[-1][1] if runs else self.judge_run(dataset, kind)

    #: ``judge/cache.sqlite``: the LLM judge's response cache for this study.
    judge_cache = _Under(JUDGE_CACHE, "judge_dir")

    def judge_datasets(self) -> list[str]:
        """Datasets with a ``judge/<dataset>/`` folder, sorted."""
        return sorted(p.name for p in self.judge_dir.glob("*") if p.is_dir())

    # -- attribution ----------------------------------------------------------------------
    attribution_dir = _Under("attribution")

    def attribution(self, dataset: str) -> Path:
        """``attribution/<dataset>/`` (``failcodes attribute -o``)."""
        return self.attribution_dir / dataset

    def per_passage(self, dataset: str) -> Path:
        """``attribution/<dataset>/per_passage.csv`` (Table 8 shape)."""
        return self.attribution(dataset) / PER_PASSAGE

    def per_trace(self, dataset: str) -> Path:
        """``attribution/<dataset>/per_trace.csv`` (Table 9 shape)."""
        return self.attribution(dataset) / PER_TRACE

    def attribution_table(self, dataset: str) -> Path:
        """``attribution/<dataset>/attribution.csv`` (one stage per disagreement)."""
        return self.attribution(dataset) / ATTRIBUTION_TABLE

    def attribution_datasets(self) -> list[str]:
        """Datasets with an ``attribution/<dataset>/`` folder, sorted."""
        return sorted(p.name for p in self.attribution_dir.glob("*") if p.is_dir())

    # -- review -----------------------------------------------------------------------------
    labelstudio_dir = _Under("labelstudio")

    def labelstudio_tasks(self, dataset: str, kind: str) -> Path:
        """``labelstudio/<dataset>/<retrieval|reasoning>.tasks.json``."""
        return self.labelstudio_dir / dataset / f"{judge_kind(kind)}.tasks.json"

    #: ``review/``: human annotations pulled from Label Studio (``review/<name>.jsonl``).
    review_dir = _Under("review")

    def review(self, name: str) -> Path:
        """``review/<name>.jsonl`` (``failcodes labelstudio pull -o``)."""
        return self.review_dir / f"{name}.jsonl"

    def review_files(self) -> list[Path]:
        """Every ``review/*.jsonl`` (human annotations), sorted."""
        return sorted(self.review_dir.glob("*.jsonl"))

    #: ``review/plans/``: review plans (which units humans code; never read as annotations).
    review_plans_dir = _Under("plans", "review_dir")

    def review_plan(self, name: str) -> Path:
        """``review/plans/<name>.json`` (``failcodes review plan``)."""
        return self.review_plans_dir / f"{name}.json"

    # -- statistics, saturation, report -----------------------------------------------------
    agreement_dir = _Under("agreement")

    def agreement(self, name: str) -> Path:
        """``agreement/<name>.json`` (agreement rows)."""
        return self.agreement_dir / f"{name}.json"

    def agreement_files(self) -> list[Path]:
        """Every ``agreement/*.json``, sorted."""
        return sorted(self.agreement_dir.glob("*.json"))

    comparisons_dir = _Under("comparisons")

    def comparisons(self, dataset: str) -> Path:
        """``comparisons/<dataset>.json``."""
        return self.comparisons_dir / f"{dataset}.json"

    def comparison_files(self) -> list[Path]:
        """Every ``comparisons/*.json``, sorted."""
        return sorted(self.comparisons_dir.glob("*.json"))

    #: ``saturation/``: one folder per saturation project.
    saturation_dir = _Under("saturation")
    #: ``report/``: the HTML report, tables and figures.
    report_dir = _Under("report")

    # -- discovery --------------------------------------------------------------------------
    def datasets(self) -> list[str]:
        """Every dataset the folder holds an output of (traces, metrics, judge, attribution)."""
        names = {trace_dataset(p) for p in self.trace_files()}
        names |= {p.stem for p in self.metric_files()}
        names |= set(self.judge_datasets())
        names |= set(self.attribution_datasets())
        return sorted(names)

    def report_inputs(self) -> list[Path]:
        """Every file or folder the report could read; empty for an empty or foreign folder."""
        found: list[Path] = [*self.trace_files(), *self.metric_files()]
        found += [self.judge_dir / d for d in self.judge_datasets()]
        found += [self.attribution(d) for d in self.attribution_datasets()]
        found += [*self.agreement_files(), *self.review_files(), *self.comparison_files()]
        if self.saturation_dir.is_dir():
            found += sorted(p for p in self.saturation_dir.iterdir() if p.is_dir())
        return found
