"""Shared pieces of the demo: its settings, context, step output and step type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from failcodes.csvcells import safe_frame
from failcodes.fileio import AtomicBatch
from failcodes.labels import Label
from failcodes.traces import Trace

DEFAULT_OUT = Path("reports") / "demo"


#: Mappings, resamples and seed the demo reports (seed 001's Table 2 mappings).
DEMO_MAPPINGS: tuple[str, ...] = ("refuted", "refuted+no_evidence", "non_supported")


DEMO_BOOTSTRAP = 1000


DEMO_SEED = 0


@dataclass
class Dataset:
    """A bundled dataset as core models."""

    name: str
    traces: list[Trace]
    labels: list[Label]
    source: str = ""


@dataclass
class DemoContext:
    """State shared by the steps of one demo run."""

    out_dir: Path
    datasets: dict[str, Dataset] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepOutput:
    """What a step reports: text lines, titled tables and the files it wrote."""

    lines: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class DemoStep:
    """One named demo step."""

    name: str
    description: str
    run: Callable[[DemoContext], StepOutput]


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    with AtomicBatch() as batch:
        safe_frame(frame, path).to_csv(batch.stage(path), index=False)
    return path
