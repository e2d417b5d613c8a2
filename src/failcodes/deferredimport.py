"""Import a module with some of the modules it imports deferred until their class is used.

:func:`defer_while_importing` (stand-ins while ``target`` is imported, the real module on
first use) and :func:`lazy_exports` (a package's public names, each imported when first used,
PEP 562): how they work, docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any


class _Deferred(type):
    """The metaclass of a stand-in class: calling it or reading an attribute uses the real one."""

    _module: str

    def _real(cls) -> Any:
        return getattr(importlib.import_module(cls._module), cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real(), name)


def _stand_in(module: str, name: str) -> types.ModuleType:
    """A module holding only ``name``, a class that imports ``module`` when first used."""
    stand_in = types.ModuleType(module, f"Stands in for {module} until {name} is used.")
    setattr(stand_in, name, _Deferred(name, (), {"_module": module}))
    return stand_in


@contextmanager
def _standing_in(deferred: Mapping[str, str]) -> Iterator[None]:
    """The deferred modules not yet imported are stand-ins until the block ends."""
    stand_ins = {m: _stand_in(m, n) for m, n in deferred.items() if m not in sys.modules}
    sys.modules.update(stand_ins)
    try:
        yield
    finally:
        for module, stand_in in stand_ins.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]
            parent, _, child = module.rpartition(".")
            if getattr(sys.modules.get(parent), child, None) is stand_in:
                delattr(sys.modules[parent], child)


class _Loader:
    """Runs the real loader of a module with the deferred modules standing in."""

    def __init__(self, loader: Any, deferred: Mapping[str, str]) -> None:
        self._loader = loader
        self._deferred = deferred

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: types.ModuleType) -> None:
        with _standing_in(self._deferred):
            self._loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code...: for inspect and pdb
        return getattr(self._loader, name)


class _Finder:
    """A meta path finder that hands ``target`` to :class:`_Loader`."""

    def __init__(self, target: str, deferred: Mapping[str, str]) -> None:
        self.target = target
        self._deferred = dict(deferred)

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != self.target:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, self._deferred)  # type: ignore[assignment]
        return spec


def defer_while_importing(target: str, deferred: Mapping[str, str]) -> None:
    """From now on, import ``target`` with each ``deferred`` module a stand-in.

    ``deferred`` maps a module to the class ``target`` takes from it. Nothing is done if
    ``target`` is imported or hooked already.
    """
    if target in sys.modules:
        return
    if any(isinstance(f, _Finder) and f.target == target for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder(target, deferred))


def lazy_exports(
    namespace: dict[str, Any],
) -> tuple[dict[str, tuple[str, str]], Callable[[str], Any]]:
    """A package's public name -> (module, attribute), and its ``__getattr__`` importing each.

    ``namespace`` is the package's ``globals()``; the names are those its ``if TYPE_CHECKING:``
    block imports, one ``from m import a as name`` a line, which is what mypy and a reader see.
    Read as lines, not parsed: ``ast`` (its import and the parse) was ~40 M instructions of
    every command's start-up, 4% of a labels ingest (issue 30). Any other line in the block
    is an ImportError.
    """
    import re

    package = namespace["__name__"]
    source = namespace["__loader__"].get_data(namespace["__file__"]).decode("utf-8")
    lazy: dict[str, tuple[str, str]] = {}
    for line in source.partition("\nif TYPE_CHECKING:\n")[2].splitlines():
        if not line.startswith(" "):
            break
        found = re.fullmatch(r" +from ([\w.]+) import (\w+) as (\w+)", line)
        if found is None:
            raise ImportError(f"{package}: not 'from MODULE import NAME as NAME': {line!r}")
        lazy[found[3]] = (found[1], found[2])

    def getattr_(name: str) -> Any:
        try:
            module, attr = lazy[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), attr)
        namespace[name] = value
        return value

    return lazy, getattr_
