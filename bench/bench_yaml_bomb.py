"""Memory bomb: a 351-byte "billion laughs" codebook must fail fast and small (issue 16).

Nine levels of YAML lists, each repeating the previous anchor nine times, expand to 9**9
(387 million) strings if anything walks the aliases. ``failcodes codebook validate`` used to
pass 4.4 GB RSS and keep growing; it must now exit 2 with one line in well under 1 s and under
200 MB peak RSS. The CLI runs in a child process; wall time and the child's peak RSS
(``ru_maxrss``) are printed, and the time :func:`failcodes.codebook.load` takes in this process
(the part the limit is about: interpreter start-up on a loaded 2-core machine is ~0.5-0.9 s).

Run: python bench/bench_yaml_bomb.py
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from failcodes import codebook  # noqa: E402 - after the path set-up
from failcodes.errors import CodebookError  # noqa: E402

LIMIT_S = 1.0
LIMIT_MB = 200.0


def bomb() -> str:
    """The classic billion-laughs document, padded with a comment to exactly 351 bytes."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "\n".join(lines) + "\n"
    return text + "#" * (351 - len(text.encode()) - 1) + "\n"


def main() -> None:
    """Run ``codebook validate`` on the bomb and print time, peak RSS and the error line."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bomb.v1.yaml"
        path.write_text(bomb(), encoding="utf-8")
        started = time.perf_counter()
        try:
            codebook.load(path)
            message = "loaded (!)"
        except CodebookError as exc:
            message = exc.one_line()
        load_s = time.perf_counter() - started
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "failcodes", "codebook", "validate", str(path)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        wall = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"file: {path.stat().st_size} bytes")
        print(f"exit code: {proc.returncode} (expected 2)")
        print(f"stderr: {proc.stderr.strip()}")
        print(f"codebook.load: {load_s * 1000:.1f} ms (limit {LIMIT_S} s): {message}")
        print(f"CLI wall time: {wall:.3f} s incl. interpreter start-up")
        print(f"peak RSS: {peak_mb:.1f} MB (limit {LIMIT_MB:.0f} MB)")
        ok = (
            proc.returncode == 2
            and len(proc.stderr.strip().splitlines()) == 1
            and load_s < LIMIT_S
            and message != "loaded (!)"
            and peak_mb < LIMIT_MB
        )
        print("PASS" if ok else "FAIL")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
