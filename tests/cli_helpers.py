"""Run the failcodes CLI in-process from a test (the root ``main``: errors exit 2, one line)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from failcodes.cli.main import main


def exit_code(*args: str | Path) -> int:
    """Run ``failcodes ARGS`` in-process; return its exit code."""
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``failcodes ARGS`` in-process; return (exit code, stdout, stderr)."""
    code = exit_code(*args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


#: What every ratings-table test of ``agree`` gives: no bootstrap, JSON out.
AGREE_JSON = ("--bootstrap", "0", "--format", "json")


def ratings_file(folder: Path, text: str, name: str = "r.csv") -> Path:
    """Write a ratings table's CSV ``text`` to ``folder/name``; return the path."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def agree_percent_run(
    path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str, str]:
    """Run ``failcodes agree PATH --stat percent --bootstrap 0 --format json EXTRA``."""
    return run_cli(["agree", str(path), "--stat", "percent", *AGREE_JSON, *extra], capsys)


def agree_percent(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> float:
    """The percent agreement ``agree`` gives for ``path`` (exit 0 asserted)."""
    code, out, err = agree_percent_run(path, capsys, *extra)
    assert code == 0, err
    return float(json.loads(out)[0]["value"])


def agree_refused(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    """The error ``agree`` gives for ``path`` (exit 2, one line, nothing on stdout asserted)."""
    code, out, err = agree_percent_run(path, capsys, *extra)
    assert (code, out) == (2, ""), out
    assert err.count("\n") == 1, err  # one line
    return err


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``; return the path."""
    path.write_text(text, encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: Iterable[Any]) -> Path:
    """Write each of ``rows`` as one JSON line (UTF-8) to ``path``; return the path."""
    return write_text(path, "".join(json.dumps(r) + "\n" for r in rows))


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    """Write ``header`` and ``rows`` as a CSV file (UTF-8) to ``path``; return the path."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def metrics_counts(stdout: str, mapping: str) -> dict[str, tuple[int, int, int, int]]:
    """system -> (TP, FP, FN, TN) of one mapping, from `metrics --format csv`."""
    rows = csv.DictReader(io.StringIO(stdout))
    return {
        r["system"]: (int(r["tp"]), int(r["fp"]), int(r["fn"]), int(r["tn"]))
        for r in rows
        if r["mapping"] == mapping
    }


def small_study(
    root: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    datasets: str,
    judge: str = 'kinds = ["reasoning"]',
) -> Path:
    """``failcodes init ROOT``, then its failcodes.toml: ``datasets`` with init's codebook line.

    The rest is one shape: metrics and disagreements under "refuted" (no bootstrap), the
    offline judge (``judge``'s lines added to its table), no Label Studio. Returns the file.
    """
    import re

    code, _, err = run_cli(["init", str(root)], capsys)
    assert code == 0, err
    study = root / "failcodes.toml"
    [codebook] = re.findall(r"^codebook = .*$", study.read_text(encoding="utf-8"), flags=re.M)
    study.write_text(
        f'name = "{name}"\n{codebook}\n\n{datasets.strip()}\n\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 0\n\n'
        '[disagreements]\nmapping = "refuted"\n\n'
        f'[judge]\njudge = "offline"\n{judge}\n\n[review]\nlabelstudio = false\n',
        encoding="utf-8",
    )
    return study
