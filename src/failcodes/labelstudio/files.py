"""File edges of the Label Studio round trip: read units, annotations, exports; write atomically.

Every writer goes through a temp file in the target folder and ``os.replace``, so a failure
never leaves a half-written output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from failcodes.errors import InputError
from failcodes.fileio import atomic_write_text

M = TypeVar("M", bound=BaseModel)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` via a temp file in the same folder; return the path."""
    return atomic_write_text(path, text)


def write_json_atomic(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as indented UTF-8 JSON, atomically."""
    return write_text_atomic(path, json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def write_models_jsonl(path: str | Path, models: Iterable[BaseModel]) -> Path:
    """Write pydantic models one JSON object per line, atomically."""
    text = "".join(m.model_dump_json() + "\n" for m in models)
    return write_text_atomic(path, text)


def read_json(path: str | Path) -> Any:
    """Read a JSON file (a Label Studio export); errors name the file and line."""
    src = Path(path)
    try:
        text = src.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", path=src) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=src, line=exc.lineno) from None
