"""``failcodes init NAME``: a new study folder with its study file, codebook and folders."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from failcodes import codebook
from failcodes.errors import ConfigError, InputError
from failcodes.fileio import atomic_write_text
from failcodes.study.config import TEMPLATE, parse_study
from failcodes.study.layout import StudyLayout


def bundled_codebook_file(version: int | None = None) -> Path:
    """The YAML file of a bundled codebook version (copied into new studies).

    ``None``: :data:`failcodes.codebook.DEFAULT_VERSION`. A version failcodes does not ship
    is a :class:`~failcodes.errors.ConfigError` naming the versions it does.
    """
    files = codebook.lineage_files(codebook.bundled_dir(), codebook.DEFAULT_NAME)
    versions = files[codebook.DEFAULT_NAME]
    wanted = codebook.DEFAULT_VERSION if version is None else version
    if wanted not in versions:
        have = ", ".join(str(v) for v in sorted(versions))
        raise ConfigError(
            f"--codebook-version {wanted}: failcodes ships {codebook.DEFAULT_NAME} versions {have}"
        )
    return versions[wanted]


def init_study(
    root: str | Path, *, name: str | None = None, codebook_version: int | None = None
) -> StudyLayout:
    """Create the study folder ``root``; refuse a folder that already holds a study file.

    The study gets a copy of the bundled codebook, version ``codebook_version`` (default:
    :data:`failcodes.codebook.DEFAULT_VERSION`).
    """
    layout = StudyLayout.of(root)
    if layout.study_file.exists():
        raise InputError("already a study (it has a study file)", path=layout.study_file)
    if layout.root.exists() and not layout.root.is_dir():
        raise InputError("exists and is not a folder", path=layout.root)
    if name is not None and not name.strip():  # --name "" (an unset variable)
        raise ConfigError("--name is empty; give the study's name (or leave --name out)")
    study_name = name or layout.root.resolve().name
    source = bundled_codebook_file(codebook_version)
    text = TEMPLATE.format(name=study_name, codebook=source.name)  # valid as written
    try:
        parse_study(text, layout.study_file)  # a bad name fails here, before anything is written
    except InputError:  # it named the study file, which does not exist yet
        given = f"--name {name!r}" if name else f"the folder's name {study_name!r}"
        raise ConfigError(
            f"{given} is no study name: letters, digits, '.', '_' and '-', starting with a "
            "letter or digit"
            + (", at most 64 of them" if len(study_name) > 64 else "")
            + ("" if name else " (give one with --name)")
        ) from None
    folders = (
        layout.data_dir,
        layout.metrics_dir,
        layout.disagreements_dir,
        layout.judge_dir,
        layout.attribution_dir,
        layout.review_dir,
        layout.report_dir,
    )
    # everything that would fail is refused before anything is written (no half a study)
    for folder in folders:
        if folder.exists() and not folder.is_dir():
            raise InputError("a file where the study keeps a folder; move it away", path=folder)
        if folder.is_symlink() and not folder.exists():  # mkdir fails on it, half-way
            raise InputError(
                "a link to nothing where the study keeps a folder; remove it or make its target",
                path=folder,
            )
    codebook = layout.root / source.name
    if codebook.exists() and (
        not codebook.is_file() or codebook.read_bytes() != source.read_bytes()
    ):  # a file of the user's own under the codebook's name was overwritten
        raise InputError(
            "exists and is not the bundled codebook; init would overwrite it: move it away",
            path=codebook,
        )
    _create(layout, folders, source, codebook, text)
    return layout


def _create(
    layout: StudyLayout, folders: tuple[Path, ...], source: Path, codebook: Path, text: str
) -> None:
    """Write the study; on any failure remove what this call made (no half a study is left).

    A failure (a full disk, a folder made read-only, a name taken in between) left the
    folders made before it, empty.
    """
    made: list[Path] = []
    try:
        for folder in (layout.root, *folders):
            missing = [p for p in (folder, *folder.parents) if not p.exists()]
            folder.mkdir(parents=True, exist_ok=True)
            made += reversed(missing)  # parents first: removed last
        if not codebook.exists():
            made.append(codebook)
        shutil.copyfile(source, codebook)
        atomic_write_text(layout.study_file, text)
    except BaseException:
        for path in reversed(made):
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()  # only if still empty
                else:
                    path.unlink()
        raise
