"""Ingest adapters: turn pipeline outputs and clinician labels into traces and labels.

One module per adapter, each exposing ``ADAPTER`` (see :class:`~failcodes.ingest.base.Adapter`;
the built-ins are :class:`~failcodes.ingest.base.FileAdapter` values).
The registry maps names to modules and imports a module only when its adapter is used; to add
an adapter, add a line to :data:`BUILTIN` (or call :func:`register`).
"""

from __future__ import annotations

import importlib

from failcodes.errors import ConfigError
from failcodes.ingest.base import Adapter as Adapter
from failcodes.ingest.base import AdapterOptions as AdapterOptions
from failcodes.ingest.base import FileAdapter as FileAdapter
from failcodes.ingest.base import IngestResult as IngestResult
from failcodes.ingest.base import Output as Output

#: Built-in adapters: name -> module that defines ``ADAPTER``.
BUILTIN: dict[str, str] = {
    "generic": "failcodes.ingest.generic",
    "generic-labels": "failcodes.ingest.generic",
    "medexpert": "failcodes.ingest.medexpert",
    "medscore": "failcodes.ingest.medscore",
    "ragchecker": "failcodes.ingest.ragchecker",
    "scifact": "failcodes.ingest.scifact_dir",
    "healthver": "failcodes.ingest.healthver",
    "covidfact": "failcodes.ingest.covidfact",
    "atomic": "failcodes.ingest.atomic",
}

_REGISTERED: dict[str, Adapter] = {}


def register(adapter: Adapter) -> None:
    """Make ``adapter`` available under ``adapter.name`` (overrides a built-in of that name)."""
    _REGISTERED[adapter.name] = adapter


def names() -> list[str]:
    """Return every adapter name, sorted."""
    return sorted(set(BUILTIN) | set(_REGISTERED))


def get_adapter(name: str) -> Adapter:
    """Return the adapter called ``name`` or raise :class:`ConfigError` listing the known ones."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    module_name = BUILTIN.get(name)
    if module_name is None:
        raise ConfigError(f"unknown adapter {name!r} (known: {', '.join(names())})")
    module = importlib.import_module(module_name)
    adapters: dict[str, Adapter] = getattr(module, "ADAPTERS", None) or {
        module.ADAPTER.name: module.ADAPTER
    }
    return adapters[name]
