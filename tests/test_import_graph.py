"""The import graph of src/ runs one way (issue 17).

Every ``import`` of a ``failcodes`` module anywhere in a module (function-level imports
included) is an arrow. There is no cycle but the CLI's subcommand registration (``cli.main``
imports the subcommand modules, which register on its app), and none of the arrows the issue
names: ``codebook`` -> ``annotations``/``units``, ``stats`` -> ``codebook``/``metrics``/
``mapping``, ``ingest`` -> ``benchmarks``, ``saturation`` -> ``demo``, and a core module
(``stats``, ``disagreements``, ``metrics``, ``mapping``) -> file I/O (``fileio`` and the file
layer's readers and writers). Within the file layer the arrows run one way: ``tableio`` <-
``labelio``/``traceio`` <- ``columnar`` (traces as columns) <- ``disagreementio`` (the
disagreement files), and none of it imports the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src" / "failcodes"

FORBIDDEN = [
    ("failcodes.codebook", "failcodes.annotations"),
    ("failcodes.codebook", "failcodes.units"),
    ("failcodes.stats", "failcodes.codebook"),
    ("failcodes.stats", "failcodes.metrics"),
    ("failcodes.stats", "failcodes.mapping"),
    ("failcodes.ingest", "failcodes.benchmarks"),
    ("failcodes.saturation", "failcodes.demo"),
    ("failcodes.disagreements", "failcodes.fileio"),
    ("failcodes.metrics", "failcodes.fileio"),
    ("failcodes.mapping", "failcodes.fileio"),
    # the file layer's split: tableio <- labelio, traceio <- columnar <- disagreementio (the
    # arrows run one way only)
    ("failcodes.tableio", "failcodes.labelio"),
    ("failcodes.tableio", "failcodes.traceio"),
    ("failcodes.tableio", "failcodes.columnar"),
    ("failcodes.tableio", "failcodes.disagreementio"),
    ("failcodes.labelio", "failcodes.traceio"),
    ("failcodes.labelio", "failcodes.columnar"),
    ("failcodes.labelio", "failcodes.disagreementio"),
    ("failcodes.traceio", "failcodes.labelio"),
    ("failcodes.traceio", "failcodes.columnar"),
    ("failcodes.traceio", "failcodes.disagreementio"),
    ("failcodes.columnar", "failcodes.disagreementio"),
    # the file layer is called by the CLI, never the other way round
    ("failcodes.columnar", "failcodes.cli"),
    ("failcodes.disagreementio", "failcodes.cli"),
]
#: The file layer's reading and writing modules.
FILE_LAYER = (
    "failcodes.tableio",
    "failcodes.labelio",
    "failcodes.traceio",
    "failcodes.columnar",
    "failcodes.disagreementio",
)
# the core does no file I/O, whichever of the I/O modules it would be
FORBIDDEN += [
    (core, io)
    for core in (
        "failcodes.stats",
        "failcodes.disagreements",
        "failcodes.metrics",
        "failcodes.mapping",
    )
    for io in FILE_LAYER
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods else node.module
                    for a in node.names
                ]
            else:
                continue
            for target in targets:
                if target.startswith("failcodes"):
                    found = resolve(target)
                    if found and found != mod:
                        graph[mod].add(found)
    return graph


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_but_the_cli_registration() -> None:
    cycles = [c for c in _cycles(_graph()) if not all(_within(m, "failcodes.cli") for m in c)]
    assert cycles == []


#: Arrows still there, owned elsewhere (a ratchet: the list may only shrink). Empty since
#: stats.tables takes category lists and a codebook hash instead of a Codebook.
KNOWN: set[str] = set()


def test_no_forbidden_arrow() -> None:
    graph = _graph()
    found = {
        f"{src} -> {dst}"
        for src, targets in graph.items()
        for dst in targets
        for a, b in FORBIDDEN
        if _within(src, a) and _within(dst, b)
    }
    assert found <= KNOWN, sorted(found - KNOWN)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_every_forbidden_arrow_names_a_module() -> None:
    """A renamed or split module cannot void its arrows silently (dataio -> columnar, ...)."""
    mods = set(_modules())
    named = {m for pair in FORBIDDEN for m in pair}
    assert sorted(m for m in named if not any(_within(x, m) for x in mods)) == []


# ------------------------------------------------- docs/house/*.json (issue 27, two boards)

# farm-studio draws at most 16 parts and 60 arrows a board, so the house is two whiteboards:
# lower.json (the core: models, IO, ingest, measure, units, codebook, judge, annotations,
# attribution, stats, benchmarks) and upper.json (the use cases, study, review, report, CLI,
# demo and API over the core parts they use). A part named on both boards is the same files.
HOUSE = SRC.parent.parent / "docs" / "house"


def _boards() -> dict[str, dict[str, Any]]:
    import json

    return {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(HOUSE.glob("*.json"))}


def _board_owner(board: dict[str, Any]) -> dict[str, str]:
    """Each module's part on one board (a module on no part of it is left out)."""
    owner: dict[str, str] = {}
    for module, path in _modules().items():
        rel = str(path.relative_to(SRC.parent.parent))
        hits = [
            name
            for name, part in board["parts"].items()
            for entry in part["is"]
            if rel == entry or (entry.endswith("/") and rel.startswith(entry))
        ]
        assert len(hits) <= 1, (rel, hits)  # never on two parts of one board
        if hits:
            owner[module] = hits[0]
    return owner


def _house_owner() -> dict[str, str]:
    """Each module's part over both boards (one part, whichever board names it)."""
    owner: dict[str, str] = {}
    for board in _boards().values():
        for module, part in _board_owner(board).items():
            assert owner.setdefault(module, part) == part, (module, part)
    return owner


def test_house_boards_agree_on_shared_parts() -> None:
    boards = list(_boards().values())
    assert len(boards) == 2
    shared = set(boards[0]["parts"]) & set(boards[1]["parts"])
    assert shared  # the upper board draws the core parts it uses
    for name in shared:
        assert boards[0]["parts"][name]["is"] == boards[1]["parts"][name]["is"], name
    for board in boards:  # a never names two parts of its own board
        assert all(a in board["parts"] and b in board["parts"] for a, b, _ in board["never"])


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = list(graph[start])
    while stack:
        mod = stack.pop()
        if mod not in seen:
            seen.add(mod)
            stack.extend(graph[mod])
    return seen


def test_house_puts_every_source_file_on_one_part() -> None:
    owner = _house_owner()
    assert set(owner) == set(_modules())


def test_house_nevers_hold_through_transitive_imports() -> None:
    # a never is broken by a chain of imports too: Stats -> Codebook through
    # stats.tables -> annotations -> codebook was one (annotation agreement moved out of stats)
    graph = _graph()
    broken = sorted(
        f"{a} -> {b}: {mod} reaches {target}"
        for board in _boards().values()
        for owner in [_board_owner(board)]
        for a, b, _ in board["never"]
        for mod in graph
        if owner.get(mod) == a
        for target in _reachable(graph, mod)
        if owner.get(target) == b
    )
    assert broken == []


def test_the_transitive_check_finds_a_chain() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": set()}
    assert _reachable(graph, "a") == {"b", "c"}
