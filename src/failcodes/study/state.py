"""A study's run state: which steps ``failcodes run`` finished, with what (``.failcodes/run.json``).

A step is finished when its outputs exist and ``.failcodes/run.json`` records the fingerprint
it ran with: its request (every field) and the SHA-256 of every input file. A folder input (the
report's) is fingerprinted over every file under it except ``report/``, ``.failcodes/`` and
SQLite files. :func:`changed_steps` (the steps whose settings or inputs changed since they ran)
is what ``report`` says first: it re-plans the work without the report step
(:func:`failcodes.study.plan.plan_work`), so the report's use case imports it without a cycle.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from failcodes import bundled
from failcodes.fileio import atomic_write_text, check_regular_file
from failcodes.hashing import file_sha256
from failcodes.study.config import load_study
from failcodes.study.layout import StudyLayout
from failcodes.study.plan import Step, plan_work

_SKIP_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal", ".lock")


def _folder_files(folder: Path, layout: StudyLayout) -> Iterator[Path]:
    skip = {layout.report_dir.resolve(), layout.state_dir.resolve()}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.endswith(_SKIP_SUFFIXES):
            continue
        resolved = path.resolve()
        if any(resolved.is_relative_to(s) for s in skip) or path.name.startswith("."):
            continue
        yield path


#: Each input's SHA-256 by the file as it is (path, inode, size, modification time): a run
#: fingerprints a step before and after it runs, and the same files feed several steps (the
#: disagreements five, the report all of them: 4 GB hashed per check at paper scale).
_DIGESTS: dict[tuple[Path, int, int, int], str] = {}


def _file_digest(path: Path) -> str:
    try:
        stat = path.stat()
    except OSError:
        return "missing"
    if not path.is_file():
        return "missing"
    key = (path.resolve(), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None:
        digest = _DIGESTS[key] = file_sha256(path)
    return digest


def fingerprint(step: Step, layout: StudyLayout) -> str:
    """SHA-256 over the step's request and the contents of its inputs.

    Paths count as they are inside the study folder: ``failcodes run .`` and ``failcodes run
    /abs/path/to/study`` (or ``run st`` from its parent) are the same run. Written as given,
    the folder's spelling made every step pending again from another working directory (10
    of 10 steps re-run, the judge's resumed from its journal).
    """
    root = str(layout.root)
    text = step.request.fingerprint_text()
    if root != ".":
        quoted = json.dumps(root, ensure_ascii=False)[1:-1]
        text = text.replace(f'"{quoted}/', '"').replace(f'"{quoted}"', '"."')
    # a bundled file as the study file names it (bundled:NAME/FILE): where failcodes is
    # installed (another venv, clone or Python) made its ingest "changed" with the same bytes
    shipped = str(resources.files(bundled)) + "/"
    h = hashlib.sha256(text.encode("utf-8"))
    for path in step.inputs:
        files = list(_folder_files(path, layout)) if path.is_dir() else [path]
        for f in files:
            shown = str(f)
            if root != "." and shown.startswith(root + "/"):
                shown = shown[len(root) + 1 :]
            elif shown.startswith(shipped):
                shown = bundled.PREFIX + shown.removeprefix(shipped)
            h.update(f"\0{shown}\0{_file_digest(f)}".encode())
    return h.hexdigest()


def load_state(layout: StudyLayout, part: str = "steps") -> dict[str, Any]:
    """``{step name: fingerprint}`` of the finished steps (empty when none or unreadable).

    ``part="outputs"``: ``{step name: {file: SHA-256}}`` of the files each step wrote. A FIFO
    or device there is refused in one line (a FIFO hung ``run`` without a word).
    """
    state = layout.run_state
    if state.is_symlink() or state.exists():
        check_regular_file(state)
    try:
        data = json.loads(layout.run_state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    steps = data.get(part) if isinstance(data, dict) else None
    return {str(k): v for k, v in steps.items()} if isinstance(steps, dict) else {}


def save_state(layout: StudyLayout, state: dict[str, Any], outputs: dict[str, Any]) -> None:
    """Write the finished steps' fingerprints and their files' digests, in one atomic step."""
    data = {"steps": state, "outputs": outputs}
    atomic_write_text(layout.run_state, json.dumps(data, indent=2) + "\n")


def written(step: Step, layout: StudyLayout, since_ns: int) -> dict[str, str]:
    """SHA-256 of the files ``step`` wrote, by their path in the study.

    Its outputs, and the files beside them changed from ``since_ns`` on (attribute's tables
    beside attribution.csv); none of ``report/`` or ``.failcodes/``.
    """
    skip = (layout.report_dir.resolve(), layout.state_dir.resolve())
    files = set(step.outputs)
    for folder in {p.parent for p in step.outputs if p.parent.is_dir()}:
        files.update(
            f for f in folder.iterdir() if f.is_file() and f.stat().st_mtime_ns >= since_ns
        )
    return {
        f.relative_to(layout.root).as_posix(): _file_digest(f)
        for f in sorted(files)
        if f.is_file()
        and not (f.name.startswith(".") or f.name.endswith(_SKIP_SUFFIXES))
        and not any(f.resolve().is_relative_to(s) for s in skip)
    }


def edited(step: str, layout: StudyLayout, *, gone: bool = False) -> list[str]:
    """The files ``step`` wrote that changed since (by hand?); there now, not as written.

    ``gone=True``: those not there now (deleted since).
    """
    recorded: dict[str, str] = load_state(layout, "outputs").get(step) or {}
    now = {name: _file_digest(layout.root / name) for name in recorded}
    return [
        name
        for name, digest in now.items()
        if digest != recorded[name] and (digest == "missing") is gone
    ]


def is_finished(step: Step, layout: StudyLayout, state: dict[str, str]) -> bool:
    """True if the step's outputs exist as it wrote them and it ran with today's fingerprint.

    An output edited or deleted since (:func:`edited`) is written again.
    """
    if not all(p.exists() for p in step.outputs):
        return False
    return (
        state.get(step.name) == fingerprint(step, layout)
        and not edited(step.name, layout)
        and not edited(step.name, layout, gone=True)
    )


def pending_steps(steps: Sequence[Step], layout: StudyLayout) -> list[Step]:
    """The steps that would run now (an estimate: a rerun step can make later ones pending)."""
    state = load_state(layout)
    return [s for s in steps if not is_finished(s, layout, state)]


def changed_steps(layout: StudyLayout, gone: list[str] | None = None) -> list[Step]:
    """The steps ``failcodes run`` finished whose request or inputs changed since (no report).

    ``failcodes report`` alone reads the outputs of the last run: a label corrected in an input
    since was in none of its numbers, said nowhere. Also the steps begun and not finished
    (failed or stopped: a step leaves the state as it starts) whose outputs are there, an
    earlier run's or half written: a judge refused after its model changed in the study file
    left the earlier model's codes, reported without a word. Empty outside a run study.
    ``gone`` takes the files a planned finished step wrote that are not there now, ``FILE
    (step NAME)``: deleted, the report showed the study without them at exit 0 (an attribution
    summary's `all` row summed one data set of two).
    """
    state = load_state(layout)
    if not state:
        return []
    steps = plan_work(load_study(layout.root), layout)
    out = []
    for s in steps:
        if s.name in state:
            if gone is not None:
                gone.extend(f"{f} (step {s.name})" for f in edited(s.name, layout, gone=True))
            if state[s.name] != fingerprint(s, layout):
                out.append(s)
        elif any(p.exists() for p in s.outputs):  # never finished with them: no hashing
            out.append(s)
    return out
