"""Fixtures for the saturation tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.codebook import Codebook
from failcodes.saturation import ProjectConfig, ProjectStore, init_project
from failcodes.units import Unit, UnitKind
from tests.saturation.satfixtures import make_pool, small_codebook


@pytest.fixture
def codebook() -> Codebook:
    return small_codebook()


@pytest.fixture
def pool() -> list[Unit]:
    return make_pool()


@pytest.fixture
def project(tmp_path: Path, codebook: Codebook, pool: list[Unit]) -> ProjectStore:
    config = ProjectConfig(
        name="demo", kind=UnitKind.RETRIEVAL, batch_size=5, seed=7, codebook_name="testbook"
    )
    return init_project(tmp_path / "proj", config, codebook, pool)
