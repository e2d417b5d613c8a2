"""No module of src/ uses another module's private (underscore) names (issue 17).

Walks the AST of every module under ``src/failcodes`` and fails on:

- ``from x import _y`` (an underscore name of another module; private *modules* such as
  ``failcodes.judge._sqlite`` may be imported by their own package, see ``_allowed_module``);
- ``x._y`` where ``x`` names an imported module;
- ``obj._y`` where ``_y`` is defined nowhere in the module itself (an attribute or name that
  belongs to another module's object, e.g. ``journal._conn``).

Dunder names and the public API of namedtuples (``_replace``, ``_asdict``, ``_fields``,
``_make``) are not private.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "failcodes"
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


#: (importer, module): a third-party private module one module of failcodes may import.
#: failcodes.engine.core loads DuckDB's C++ extension without the ``duckdb`` package's Python
#: layer (relations, importlib.metadata: 360 M instructions of import), with the package as
#: the fallback (issue 30).
EXTERNAL = {("failcodes.engine", "_duckdb")}


def _allowed_module(importer: str, target: str) -> bool:
    """A private module (``pkg._x``) may be imported from inside its package ``pkg``."""
    if (importer, target) in EXTERNAL:
        return True
    parts = target.split(".")
    private = [i for i, p in enumerate(parts) if _private(p)]
    if not private:
        return True
    package = ".".join(parts[: private[0]])
    return importer == package or importer.startswith(package + ".")


def _defined_names(tree: ast.AST) -> set[str]:
    """Every name the module defines: functions, classes, assignments, attributes of self."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            for arg in (
                [*node.args.args, *node.args.kwonlyargs]
                if not isinstance(node, ast.ClassDef)
                else []
            ):
                names.add(arg.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def violations(path: Path, module: str | None = None) -> list[str]:
    """The private-name uses of ``path`` (module ``module``) that cross a module boundary."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    me = module or _module_name(path)
    modules: set[str] = set()  # local names bound to imported modules
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.add((alias.asname or alias.name).split(".")[0])
                if not _allowed_module(me, alias.name):
                    out.append(f"{path}:{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            base = node.module
            if node.level:
                pkg = me.split(".")[
                    : len(me.split(".")) - node.level + (path.name == "__init__.py")
                ]
                base = ".".join([*pkg, node.module]) if node.module else ".".join(pkg)
            if not _allowed_module(me, base):
                out.append(f"{path}:{node.lineno}: from {base} import ...")
            for alias in node.names:
                if _private(alias.name) and not _allowed_module(me, f"{base}.{alias.name}"):
                    out.append(f"{path}:{node.lineno}: from {base} import {alias.name}")
                elif alias.name[:1].islower():
                    modules.add(alias.asname or alias.name)
    defined = _defined_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        if node.attr in NAMEDTUPLE_API:
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in ("self", "cls"):
            continue
        if (
            isinstance(value, ast.Name)
            and value.id in modules
            and value.id not in defined - {value.id}
        ):
            out.append(f"{path}:{node.lineno}: {value.id}.{node.attr}")
        elif node.attr not in defined:
            out.append(f"{path}:{node.lineno}: .{node.attr} (defined in another module)")
    return out


def test_no_module_uses_another_modules_private_names() -> None:
    found = [v for path in sorted(SRC.rglob("*.py")) for v in violations(path)]
    assert found == [], "\n".join(found)


def test_the_walk_catches_each_form(tmp_path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from failcodes.judge.prompts import _escaping_env\n"
        "from failcodes.judge._sqlite import connect\n"
        "import failcodes.judge.run as run\n"
        "run._engine()\n"
        "def f(journal):\n"
        "    return journal._conn\n"
        "class A:\n"
        "    def __init__(self):\n"
        "        self._own = 1\n"
        "    def g(self, other):\n"
        "        return other._own, self._own, other._replace(), other.__dict__\n"
    )
    found = [v.split(": ", 1)[1] for v in violations(probe, "failcodes.report.probe")]
    assert found == [
        "from failcodes.judge.prompts import _escaping_env",
        "from failcodes.judge._sqlite import ...",  # a private module outside its package
        "run._engine",
        "._conn (defined in another module)",
    ]
    # inside its own package a private module is fine
    inside = [v.split(": ", 1)[1] for v in violations(probe, "failcodes.judge.probe")]
    assert "from failcodes.judge._sqlite import ..." not in inside
