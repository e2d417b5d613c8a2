"""File edges of the Label Studio round trip: write configs, tasks and results atomically.

Every writer goes through :mod:`failcodes.fileio` (a temp file in the target folder, then
``os.replace``), so a failure never leaves a half-written output. Reading goes through
:mod:`failcodes.dataio` (``read_models_jsonl``, ``read_json``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from failcodes.fileio import atomic_write_text

#: Kept under its old name (the demo uses it); same function as fileio.atomic_write_text.
write_text_atomic = atomic_write_text


def write_json_atomic(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as indented UTF-8 JSON, atomically."""
    return atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def write_models_jsonl(path: str | Path, models: Iterable[BaseModel]) -> Path:
    """Write pydantic models one JSON object per line, atomically."""
    return atomic_write_text(path, "".join(m.model_dump_json() + "\n" for m in models))
