"""Reading the inputs of ``judge`` and ``attribute``: traces or disagreements, and a codebook.

A ``--from`` file is JSONL (one trace, or one disagreement carrying its trace under
``trace``), or anything :mod:`failcodes.io` reads when that module is available.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from failcodes.codebook import Codebook
from failcodes.errors import CodebookError, InputError
from failcodes.traces import Trace


def _trace_of(obj: Any, path: Path, line: int) -> Trace:
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object", path=path, line=line)
    body = obj.get("trace", obj) if isinstance(obj.get("trace"), dict) else obj
    try:
        return Trace.model_validate(body)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or None
        raise InputError(err["msg"], path=path, line=line, field=field) from None


def load_traces(path: str | Path) -> list[Trace]:
    """Read traces (or disagreements' traces) from a JSONL file."""
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=p) from None
    traces: list[Trace] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", path=p, line=number) from None
        traces.append(_trace_of(obj, p, number))
    if not traces:
        raise InputError("no traces found", path=p)
    return traces


def load_codebook(path: str | Path) -> Codebook:
    """Read a codebook from YAML or JSON."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text("utf-8"))
    except OSError as exc:
        raise CodebookError(f"cannot read: {exc.strerror}", path=p) from None
    except yaml.YAMLError as exc:
        raise CodebookError(f"invalid YAML: {exc}", path=p) from None
    try:
        return Codebook.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or None
        raise CodebookError(err["msg"], path=p, field=field) from None
