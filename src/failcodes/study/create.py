"""``failcodes init NAME``: a new study folder with its study file, codebook and folders."""

from __future__ import annotations

import shutil
from pathlib import Path

from failcodes.errors import InputError
from failcodes.fileio import atomic_write_text
from failcodes.study.config import TEMPLATE, parse_study
from failcodes.study.layout import StudyLayout


def bundled_codebook_file() -> Path:
    """The YAML file of the latest bundled codebook (copied into new studies)."""
    from failcodes import codebook

    files = codebook.lineage_files(codebook.bundled_dir(), codebook.DEFAULT_NAME)
    versions = files[codebook.DEFAULT_NAME]
    return versions[max(versions)]


def study_text(name: str, codebook: str) -> str:
    """The example study file for a study called ``name`` (valid as written)."""
    return TEMPLATE.format(name=name, codebook=codebook)


def init_study(root: str | Path, *, name: str | None = None) -> StudyLayout:
    """Create the study folder ``root``; refuse a folder that already holds a study file."""
    layout = StudyLayout.of(root)
    if layout.study_file.exists():
        raise InputError("already a study (it has a study file)", path=layout.study_file)
    if layout.root.exists() and not layout.root.is_dir():
        raise InputError("exists and is not a folder", path=layout.root)
    study_name = name or layout.root.resolve().name
    source = bundled_codebook_file()
    text = study_text(study_name, source.name)
    parse_study(text, layout.study_file)  # a bad name fails here, before anything is written
    for folder in (
        layout.data_dir,
        layout.metrics_dir,
        layout.disagreements_dir,
        layout.judge_dir,
        layout.attribution_dir,
        layout.review_dir,
        layout.report_dir,
    ):
        folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, layout.root / source.name)
    atomic_write_text(layout.study_file, text)
    return layout


__all__ = ["bundled_codebook_file", "init_study", "study_text"]
