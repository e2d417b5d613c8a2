"""YAML inputs cannot expand: aliases refused, size bounded (issue 16: the alias bomb)."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from failcodes import codebook, yamlio
from failcodes.codebook import MAX_CODEBOOK_BYTES
from failcodes.errors import CodebookError, InputError
from failcodes.judge.pricing import load_prices


def billion_laughs() -> str:
    """Nine levels of nine aliases: 9**9 strings once expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_codebook_fails_fast_and_small(tmp_path: Path) -> None:
    path = tmp_path / "bomb.v1.yaml"
    path.write_text(billion_laughs(), encoding="utf-8")
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(CodebookError) as info:
        codebook.load(path)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"alias bomb: {elapsed * 1000:.1f} ms, peak {peak / 1e6:.2f} MB (limits 1 s, 200 MB)")
    assert elapsed < 1.0
    assert peak < 200e6
    assert info.value.rule == "yaml-syntax"
    assert info.value.line == 2  # the first alias (*a) is on line 2
    assert "aliases (*a) are not allowed" in info.value.one_line()


def test_oversized_codebook_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.v1.yaml"
    path.write_text("#" * (MAX_CODEBOOK_BYTES + 1), encoding="utf-8")
    with pytest.raises(CodebookError) as info:
        codebook.load(path)
    assert info.value.rule == "too-large"


def test_anchor_without_alias_still_loads() -> None:
    assert yamlio.safe_load("a: &x 1\nb: 2\n") == {"a": 1, "b": 2}


def test_price_table_alias_refused(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(billion_laughs(), encoding="utf-8")
    with pytest.raises(InputError, match="aliases"):
        load_prices(path)


def test_oversized_yaml_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("#" * (yamlio.MAX_YAML_BYTES + 1), encoding="utf-8")
    with pytest.raises(InputError, match="byte limit"):
        yamlio.read_yaml_text(path)
