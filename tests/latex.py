"""Compile LaTeX tables with Debian's pdflatex (texlive-latex-base + -recommended, for booktabs).

``.ci/run`` installs them; locally a test skips when pdflatex is absent and fails in CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

_DOCUMENT = (
    "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
    "\\input{%s}\n\\end{document}\n"
)
_OVERFULL = re.compile(r"Overfull \\hbox \(([0-9.]+)pt too wide\)")


def pdflatex() -> str:
    """Path of pdflatex; skip locally when absent, fail in CI where it must exist."""
    exe = shutil.which("pdflatex")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is required in CI (.ci/run installs texlive-latex-*)")
        pytest.skip("pdflatex not installed (apt-get install texlive-latex-recommended)")
    return exe


def compile_table(table: Path, workdir: Path) -> list[float]:
    """Compile ``table`` (a .tex fragment) in a one-column article; the overfull widths (pt).

    A table wider than the page's text width is an ``Overfull \\hbox`` in LaTeX's log. An
    error (a table that does not compile) fails the test with the log's tail.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    doc = workdir / f"{table.stem}-doc.tex"
    doc.write_text(_DOCUMENT % table.resolve().as_posix(), encoding="utf-8")
    res = subprocess.run(
        [pdflatex(), "-interaction=nonstopmode", "-halt-on-error", doc.name],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    log = (workdir / f"{doc.stem}.log").read_text(encoding="utf-8", errors="replace")
    assert res.returncode == 0, f"{table.name} does not compile:\n{log[-2000:]}"
    return [float(m) for m in _OVERFULL.findall(log)]
