"""Headless Chromium helpers for tests that look at a rendered page (Debian's chromium)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]

# Counts images that failed to load and tables wider than the page, into a data attribute
# that --dump-dom then shows.
_PROBE = """
<script>
window.addEventListener('load', function () {
  var imgs = Array.from(document.images);
  var broken = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; }).length;
  var page = document.querySelector('main') || document.body;
  var wide = Array.from(document.querySelectorAll('table')).filter(function (t) {
    var box = t.closest('section') || page;
    return t.getBoundingClientRect().width > box.getBoundingClientRect().width + 1;
  }).length;
  document.body.setAttribute('data-probe',
    'images=' + imgs.length + ';broken=' + broken + ';wide=' + wide);
});
</script>
"""


def chromium() -> str:
    """Path of Debian's chromium; skip locally when absent, fail in CI where it must exist."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs it)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    return exe


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def probe_page(html_file: Path, width: int = 1280) -> dict[str, int]:
    """Load a copy of the page with a probe script; return images/broken/wide counts."""
    page = html_file.read_text(encoding="utf-8")
    probe_copy = html_file.with_name(".probe." + html_file.name)
    probe_copy.write_text(page.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    try:
        res = _run([f"--window-size={width},2000", "--dump-dom", probe_copy.as_uri()])
    finally:
        probe_copy.unlink()
    marker = 'data-probe="'
    start = res.stdout.find(marker)
    assert start >= 0, f"probe did not run: {res.stderr[-2000:]}"
    value = res.stdout[start + len(marker) : res.stdout.index('"', start + len(marker))]
    return {k: int(v) for k, v in (kv.split("=") for kv in value.split(";"))}


def screenshot(html_file: Path, out_png: Path, width: int = 1280, height: int = 2400) -> Path:
    """Take a screenshot of the page."""
    res = _run([f"--window-size={width},{height}", f"--screenshot={out_png}", html_file.as_uri()])
    assert out_png.exists(), res.stderr[-2000:]
    return out_png


# Each table's rendered width beside the room its section gives it (content box), and the
# page's own width: what "fits a 1,400-pixel page" means, measured.
_WIDTHS = """
<script>
window.addEventListener('load', function () {
  var out = [];
  Array.from(document.querySelectorAll('table.fc-table')).forEach(function (t) {
    var sec = t.closest('section');
    var style = getComputedStyle(sec);
    var room = sec.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    out.push(Math.round(t.getBoundingClientRect().width) + '/' + Math.round(room));
  });
  out.push('page/' + document.documentElement.scrollWidth);
  document.body.setAttribute('data-widths', out.join(','));
});
</script>
"""


def table_widths(html_file: Path, width: int = 1400) -> tuple[list[tuple[int, int]], int]:
    """``([(table width, room in its section), ...], page scroll width)`` in CSS pixels."""
    page = html_file.read_text(encoding="utf-8")
    probe_copy = html_file.with_name(".widths." + html_file.name)
    probe_copy.write_text(page.replace("</body>", _WIDTHS + "</body>"), encoding="utf-8")
    try:
        res = _run([f"--window-size={width},2000", "--dump-dom", probe_copy.as_uri()])
    finally:
        probe_copy.unlink()
    marker = 'data-widths="'
    start = res.stdout.find(marker)
    assert start >= 0, f"probe did not run: {res.stderr[-2000:]}"
    value = res.stdout[start + len(marker) : res.stdout.index('"', start + len(marker))]
    pairs = [tuple(int(x) for x in item.split("/")) for item in value.split(",")[:-1]]
    return [(a, b) for a, b in pairs], int(value.split(",")[-1].split("/")[1])
