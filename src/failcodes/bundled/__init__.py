"""Small, permissively licensed data sets shipped with failcodes (for the demo and tests).

Each lives in its own folder with a SOURCE.md (origin, commit, license, attribution):
``medexpert-sample`` (MIT), ``ragchecker`` (Apache-2.0), ``scifact`` (CC BY 4.0 / MIT /
Apache-2.0, see its SOURCE.md).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from failcodes.errors import ConfigError


def names() -> list[str]:
    """Return the names of the bundled data sets (folders with a SOURCE.md)."""
    root = resources.files(__name__)
    return sorted(
        entry.name
        for entry in root.iterdir()
        if entry.is_dir() and entry.joinpath("SOURCE.md").is_file()
    )


def path(name: str, *parts: str) -> Path:
    """Return the path of bundled data set ``name`` (or of a file inside it).

    Raises :class:`ConfigError` naming the available data sets or files when it is missing.
    """
    if name not in names():
        raise ConfigError(f"no bundled data set {name!r} (available: {', '.join(names())})")
    base = Path(str(resources.files(__name__).joinpath(name)))
    target = base.joinpath(*parts)
    if not target.exists():
        have = ", ".join(sorted(p.name for p in base.iterdir()))
        raise ConfigError(f"bundled data set {name!r} has no {'/'.join(parts)!r} (has: {have})")
    return target


#: ``bundled:NAME/FILE`` -> a file of a data set shipped with failcodes.
PREFIX = "bundled:"


def resolve(value: str, base: Path) -> Path:
    """A path as a study file names it: ``bundled:NAME/FILE`` or relative to ``base``."""
    if value.startswith(PREFIX):
        name, _, rest = value.removeprefix(PREFIX).partition("/")
        return path(name, *[p for p in rest.split("/") if p])
    given = Path(value).expanduser()
    return given if given.is_absolute() else base / given


def bundled_or_path(given: Path) -> Path:
    """``given`` itself, or the bundled file it names when written ``bundled:NAME/FILE``."""
    text = str(given)
    return resolve(text, Path()) if text.startswith(PREFIX) else given
