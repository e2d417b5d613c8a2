"""The CLI imports only the subcommand being run, and everything for --help."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from failcodes.cli.main import COMMAND_SUMMARIES, _register_only, app, register_commands


def test_register_only_the_named_subcommand() -> None:
    assert _register_only(["ingest", "generic", "x.jsonl", "-o", "y.jsonl"]) is True
    assert _register_only(["schema", "trace"]) is True
    assert _register_only(["--help"]) is False  # no subcommand: import all
    assert _register_only([]) is False
    assert _register_only(["no-such-command"]) is False
    assert _register_only(["main"]) is False


def test_help_still_lists_every_subcommand() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "failcodes", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for name in ("ingest", "schema", "metrics", "version"):
        assert f" {name} " in proc.stdout, name


def _imported_after(argv: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from failcodes.cli.main import main\n"
        f"sys.argv = ['failcodes', *{argv!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return set(proc.stdout.split())


def test_help_pays_for_no_optional_heavyweights() -> None:
    # scipy.stats (~0.3-1.5 s) is imported where a p-value or quantile is computed, bm25s
    # (and numba, which ppi-python's dev install brings) where an index is built: never by --help.
    for argv in (["--help"], ["metrics", "--help"]):
        loaded = _imported_after(argv)
        assert "scipy.stats" not in loaded, argv
        assert "bm25s" not in loaded, argv
        assert "numba" not in loaded, argv


def test_metrics_imports_no_judge_nor_codebook() -> None:
    # cli/options (every subcommand imports it) imported the judge package for the cache's
    # default path and the codebook for --part: ~0.3 CPU-s of the metrics command's start-up
    loaded = _imported_after(["metrics", "--help"])
    assert "failcodes.judge" not in loaded
    assert "failcodes.codebook" not in loaded
    assert "jinja2" not in loaded


def test_judge_help_loads_no_template_engine() -> None:
    # the judge's prompts module imported jinja2 (~0.1 CPU-s) at module level; it is
    # imported where a template is rendered
    for argv in (["judge", "--help"], ["judge", "retrieval", "--help"]):
        assert "jinja2" not in _imported_after(argv), argv


def test_metrics_on_the_tools_own_parquet_imports_no_pyarrow(tmp_path: Path) -> None:
    # the engine reads the tool's own Parquet with DuckDB; pyarrow (~0.1 CPU-s of start-up)
    # was imported only to read the footer's marker and compare the columns (issue 30)
    traces, own, labels = tmp_path / "t.jsonl", tmp_path / "own.parquet", tmp_path / "l.jsonl"
    rows = [
        {"system": "s", "question_id": "q", "sentence_id": f"q:s{i}", "claim_id": f"q:s{i}:c0"}
        | {"claim": "c", "sentence": "t", "verdict": verdict}
        for i, verdict in enumerate(["refuted", "supported"])
    ]
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    flags = [
        {"sentence_id": "q:s0", "has_error": True},
        {"sentence_id": "q:s1", "has_error": False},
    ]
    labels.write_text("".join(json.dumps(f) + "\n" for f in flags), encoding="utf-8")
    ingest = [sys.executable, "-m", "failcodes", "ingest", "generic", str(traces), "-o", str(own)]
    subprocess.run(ingest, capture_output=True, timeout=120, check=True)
    out = tmp_path / "m.json"
    argv = ["metrics", "--traces", str(own), "--labels", str(labels), "-m", "refuted"]
    loaded = _imported_after([*argv, "--bootstrap", "10", "-o", str(out)])
    # 1 TP (q:s0 refuted, flagged) and 1 TN (q:s1 supported, not flagged): the engine's count
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out.read_text())] == [
        (1, 0, 0, 1)
    ]
    assert "_duckdb" in loaded  # (the engine took the file)
    assert "pyarrow" not in loaded
    # DuckDB's C++ extension alone: the package's Python layer (relations, expressions,
    # importlib.metadata for its version) is 360 M instructions of import the queries never
    # use (failcodes.engine.core; issue 30)
    assert not {"duckdb", "importlib.metadata"} & loaded


def test_metrics_on_a_foreign_parquet_in_a_fresh_process(tmp_path: Path) -> None:
    # a Parquet file another tool wrote is scanned and its rows inserted as Arrow arrays,
    # which only the duckdb package sets up (failcodes.engine.register_arrow): with the
    # engine on DuckDB's extension alone a fresh process failed "Python Arrow objects cannot
    # be scanned" (bench_engine's foreign Parquet pair)
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {"system": "s", "question_id": "q", "sentence_id": f"q:s{i}", "claim_id": f"q:s{i}:c0"}
        | {"claim": "c", "sentence": "t", "verdict": verdict}
        for i, verdict in enumerate(["refuted", "supported", "refuted"])
    ]
    traces, labels, out = tmp_path / "t.parquet", tmp_path / "l.jsonl", tmp_path / "m.json"
    pq.write_table(pa.Table.from_pylist(rows), traces)
    flags = [{"sentence_id": f"q:s{i}", "has_error": e} for i, e in enumerate([True, True, False])]
    labels.write_text("".join(json.dumps(f) + "\n" for f in flags), encoding="utf-8")
    argv = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    loaded = _imported_after([*argv, "-o", str(out)])
    # q:s0 refuted + error: TP; q:s1 supported + error: FN; q:s2 refuted, no error: FP
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out.read_text())] == [
        (1, 1, 1, 0)
    ]
    assert "duckdb" in loaded
    # the same rows as JSONL: inserted as numpy arrays, which the extension scans alone
    lines = tmp_path / "t.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv[2] = str(lines)
    loaded = _imported_after([*argv, "-o", str(out)])
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out.read_text())] == [
        (1, 1, 1, 0)
    ]
    assert "_duckdb" in loaded
    assert "duckdb" not in loaded


def _blas_threads(preset: dict[str, str]) -> str:
    code = (
        "import os\n"
        "from failcodes.cli.main import main\n"
        "try:\n"
        "    main(['version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | preset
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    return proc.stdout.split()[-1]


def test_numpy_blas_runs_on_one_thread_unless_the_user_says() -> None:
    # idle OpenBLAS threads spin between the bootstrap's small products: 19-23 CPU-s for
    # metrics at 10x paper scale on 2 busy cores, 5.5-6.6 on one thread (same output)
    assert _blas_threads({}) == "1"
    assert _blas_threads({"OPENBLAS_NUM_THREADS": "3"}) == "3"


def _pydantic_plugin_loaded(tmp_path: Path, preset: dict[str, str]) -> bool:
    """Whether ``failcodes metrics --help`` loads a pydantic plugin an installed package offers."""
    tmp_path.mkdir()
    (tmp_path / "fakeplugin.py").write_text(
        "import os\n"
        "open(os.environ['PLUGIN_MARK'], 'w').close()\n"
        "class _Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\n"
        "plugin = _Plugin()\n",
        encoding="utf-8",
    )
    info = tmp_path / "fakeplugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nfake = fakeplugin:plugin\n")
    mark = tmp_path / "loaded"
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env |= {"PYTHONPATH": path, "PLUGIN_MARK": str(mark)} | preset
    argv = [sys.executable, "-m", "failcodes", "metrics", "--help"]
    subprocess.run(argv, capture_output=True, timeout=120, env=env, check=True)
    return mark.exists()


def test_cli_looks_for_no_pydantic_plugin_unless_the_user_says(tmp_path: Path) -> None:
    # pydantic reads the entry points of every installed package (importlib.metadata, ~150
    # files in the dev venv) at the first model to find its plugins: 35 M of the 1,254 M
    # instructions of `ingest generic-labels` on a 2 MB file (issue 30)
    assert not _pydantic_plugin_loaded(tmp_path / "a", {})
    assert _pydantic_plugin_loaded(tmp_path / "b", {"PYDANTIC_DISABLE_PLUGINS": ""})


def _entry_run(argv: list[str]) -> tuple[str, set[str]]:
    """What ``python -m failcodes ARGV`` prints, and the modules it imported."""
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['failcodes', *{argv!r}]\n"
        "try:\n"
        "    runpy.run_module('failcodes', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout.flush()\n"
        "sys.stderr.write('\\n'.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return proc.stdout, set(proc.stderr.split())


def test_version_builds_no_cli() -> None:
    # typer (and pydantic, which typer's parameter coercion imports) cost `version` ~600 M
    # instructions of its 660 M; the entry point answers it before the CLI is built
    from failcodes import __version__

    printed, loaded = _entry_run(["version"])
    assert printed == f"{__version__}\n"
    assert not {"typer", "pydantic", "rich", "failcodes.cli.main"} & loaded


def test_version_imports_no_subcommand() -> None:
    # `failcodes version` is defined in cli/main: it imported every subcommand (~0.9 s)
    assert _register_only(["version"]) is True
    loaded = _imported_after(["version"])
    assert not {m for m in loaded if m.startswith("failcodes.cli.") and m != "failcodes.cli.main"}


def _help(*argv: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "failcodes", *argv, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "COLUMNS": "400"},
    )
    return proc.stdout


def test_help_paragraphs_are_reflowed_and_brackets_kept() -> None:
    # agree's docstring breaks "per dimension: percent, Fleiss," / "Krippendorff nominal" over
    # two source lines; on a wide terminal the paragraph is one line, not two ragged ones
    assert "per dimension: percent, Fleiss, Krippendorff nominal, AC1" in _help("agree")
    # "[judge]" in an option's help (built from a request's field) is text, not rich markup
    assert "(default: the study's [judge] setting)" in _help("recode")


def _live_summaries() -> dict[str, str]:
    """The first help paragraph of every registered command and group (imports them all)."""
    register_commands()
    docs: dict[str, object] = {}
    for info in app.registered_commands:
        docs[str(info.name)] = info.help or (inspect.getdoc(info.callback) if info.callback else "")
    for group in app.registered_groups:
        sub = group.typer_instance
        docs[str(group.name)] = group.help or (sub.info.help if sub is not None else "")
    return {
        name: " ".join(inspect.cleandoc(str(doc or "")).split("\n\n")[0].split())
        for name, doc in docs.items()
    }


def test_the_listed_summaries_are_the_commands_own() -> None:
    # `failcodes --help` lists COMMAND_SUMMARIES without importing the commands; every
    # command and group must be there, with the first paragraph of its own help
    live = _live_summaries()
    live.pop("version")  # defined in cli/main itself, always registered
    assert live == COMMAND_SUMMARIES


def test_top_level_help_imports_no_command_module() -> None:
    loaded = _imported_after(["--help"])
    assert not {m for m in loaded if m.startswith("failcodes.cli.") and m != "failcodes.cli.main"}
    assert "pandas" not in loaded
    listed = _help()
    # in the order of the workflow, as COMMAND_SUMMARIES has them
    places = [listed.index(f" {name} ") for name in COMMAND_SUMMARIES]
    assert places == sorted(places)


def test_import_failcodes_loads_no_model_pydantic_or_numpy() -> None:
    # `import failcodes` (paid by every CLI call) imported the pydantic models, numpy and the
    # column code eagerly: `failcodes --help` cost ~40x `python -c pass` (issue 30)
    for argv in (["--help"], ["version"]):
        loaded = _imported_after(argv)
        assert "numpy" not in loaded, argv
        assert "failcodes.annotations" not in loaded, argv
        assert "failcodes.codebook" not in loaded, argv
    assert "pydantic" not in _imported_after(["--help"])


def test_public_names_still_resolve_on_first_use() -> None:
    import failcodes

    # the public names are the submodules' own objects, imported when first touched
    from failcodes.annotations import Annotation
    from failcodes.units import UnitKind

    assert failcodes.Annotation is Annotation
    assert failcodes.UnitKind is UnitKind
    assert sorted(failcodes.__all__) == sorted([*failcodes._LAZY, "__version__"]), (
        "every public name is importable lazily"
    )


#: Each takes most of a small command's start-up (CPU-s to import, 2 cores at load ~5):
#: numpy 0.18, pandas 0.7, pyarrow.parquet 0.33, duckdb 0.23; `python -c pass` is 0.01.
HEAVY = ("numpy", "pandas", "pyarrow", "duckdb", "_duckdb")


def test_help_version_and_small_ingests_import_no_heavy_library(tmp_path: Path) -> None:
    # `ingest generic-labels` of a 2 MB file cost 15-21x its JSON parse, nearly all start-up:
    # numpy (~0.18 CPU-s) came with six modules that import it at module level (labels,
    # labelscope, mapping, labelio, ingest/repeats, and tracecols through them). Each now
    # imports it where an array is made, which reading and writing labels never does.
    labels, out = tmp_path / "l.jsonl", tmp_path / "out.jsonl"
    lines = [
        {"sentence_id": "q1:s0", "has_error": True},
        {"sentence_id": "q1:s1", "question_id": "q1", "has_error": False, "annotator": "dr-b"},
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    # a small trace file: its (system, claim_id) keys are checked in a set, not in numpy
    traces, traces_out = tmp_path / "t.jsonl", tmp_path / "t-out.jsonl"
    rows = [
        {"system": "s", "claim_id": f"q1:s{i}", "claim": "X is Y.", "verdict": verdict}
        for i, verdict in enumerate(["refuted", "supported"])
    ]
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for argv in (
        ["--help"],
        ["version"],
        ["ingest", "--help"],
        ["schema", "trace", "--help"],  # the models are imported when printed
        ["schema", "label"],
        ["agree", "--help"],  # its choices come from stats.names, not the numpy modules
        ["ingest", "generic-labels", str(labels), "-o", str(out)],
        ["ingest", "generic", str(traces), "-o", str(traces_out)],
    ):
        loaded = _imported_after(argv)
        assert not [m for m in HEAVY if m in loaded], argv
    # the labels as given, absent fields left out (the command ran, not only its import)
    assert [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()] == lines
    written = [json.loads(x) for x in traces_out.read_text(encoding="utf-8").splitlines()]
    assert [(t["claim_id"], t["verdict"]) for t in written] == [
        ("q1:s0", "refuted"),
        ("q1:s1", "supported"),
    ]


def test_help_imports_neither_markdown_nor_pretty_tracebacks() -> None:
    # typer.rich_utils imported rich.markdown (markdown_it, pygments) and rich.traceback
    # (rich.pretty, attrs), which the "rich" markup mode and the disabled pretty exceptions
    # never call: 672 -> 457 M instructions for `failcodes --help` (issue 30)
    unused = {"rich.markdown", "markdown_it", "pygments", "rich.traceback", "rich.pretty", "attr"}
    # (a bare group's help is drawn through typer's error path)
    for argv in (["--help"], ["judge", "--help"], ["agree", "--help"], ["judge"]):
        loaded = _imported_after(argv)
        assert "typer.rich_utils" in loaded, argv  # (the help or error was drawn by typer)
        assert not unused & loaded, (argv, unused & loaded)


def _drawn(width: int, argv: list[str], *first: str) -> str:
    """What ``failcodes ARGV`` prints at ``width`` in colour, after importing ``first``."""
    code = (
        "import sys\n"
        f"for name in {list(first)!r}:\n"
        "    __import__(name)\n"
        "from failcodes.cli.main import main\n"
        "sys.argv[0] = 'failcodes'\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    env = {**os.environ, "COLUMNS": str(width), "FORCE_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    return proc.stdout + proc.stderr


def test_help_is_the_same_as_drawn_with_the_real_modules() -> None:
    # with rich.markdown and rich.traceback imported first, typer.rich_utils takes the real
    # classes: the help (colours included; a bare group's help too) must not change
    for width, argv, shown in (
        (200, ["--help"], "│ judge "),
        (40, ["--help"], "│ judge "),
        (200, ["agree", "--help"], "Usage: failcodes agree"),
        (40, ["judge"], "│ retrieval "),
    ):
        lean = _drawn(width, argv)
        assert shown in re.sub("\x1b\\[[0-9;]*m", "", lean), (argv, lean)
        assert lean == _drawn(width, argv, "rich.markdown", "rich.traceback"), (width, argv)


def test_the_stand_ins_use_the_real_classes_when_called() -> None:
    # a typer that did render markdown or a pretty traceback gets rich's own objects
    code = (
        "import sys\n"
        "import failcodes.cli.main\n"
        "from typer import rich_utils\n"
        "assert 'rich.markdown' not in sys.modules and 'rich.traceback' not in sys.modules\n"
        "text = rich_utils._make_rich_text(text='**bold**', markup_mode='markdown')\n"
        "try:\n"
        "    1 / 0\n"
        "except ZeroDivisionError as exc:\n"
        "    tb = rich_utils.Traceback.from_exception(type(exc), exc, exc.__traceback__)\n"
        "import rich.markdown, rich.traceback\n"
        "print(type(text) is rich.markdown.Markdown, type(tb) is rich.traceback.Traceback)\n"
        "print(sys.modules['rich.markdown'].__file__.endswith('markdown.py'))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.split() == ["True", "True", "True"]


def test_run_help_imports_no_study_step() -> None:
    # cli/run imported the study runner at module level, and through the steps every command
    # (numpy, the codebook, the judge): `run --help` 2,088 -> 839 M instructions (issue 30)
    loaded = _imported_after(["run", "--help"])
    assert "failcodes.cli.run" in loaded
    assert not {"failcodes.study.steps", "failcodes.study.runner", "numpy"} & loaded


def test_building_a_model_imports_no_package_metadata(tmp_path: Path) -> None:
    # pydantic's plugin loader imported importlib.metadata (email, zipfile, csv...) for the
    # entry_points it calls only to look for plugins, which the CLI turns off: 41 M of the
    # 1,205 M instructions of `ingest generic-labels` on bench_study's 1x labels (issue 30).
    # With the search on (the test above), the stand-in calls the real entry_points.
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"sentence_id": "q:s0", "has_error": true}\n', encoding="utf-8")
    argv = ["ingest", "generic-labels", str(labels), "-o", str(tmp_path / "out.jsonl")]
    loaded = _imported_after(argv)
    assert "pydantic.plugin._loader" in loaded  # (a model was built)
    assert "importlib.metadata" not in loaded
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8").count("\n") == 1


def test_start_up_objects_are_frozen_and_collection_resumes(tmp_path: Path) -> None:
    # the garbage collector is paused while the CLI and the command's modules are imported
    # (it found nothing to free there: 1,165 -> 1,101 M instructions for `ingest
    # generic-labels` of bench_study's 1x labels, 461 -> 420 M for `--help`; issue 30), then
    # runs again, the start-up's objects frozen, before the command does its work
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"sentence_id": "q:s0", "has_error": true}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('gc', gc.isenabled(), gc.get_freeze_count() > 1000))\n"
        f"sys.argv = ['failcodes', 'ingest', 'generic-labels', {str(labels)!r}, '-o', "
        f"{str(out)!r}]\n"
        "from failcodes.cli.start import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.splitlines()[-1] == "gc True True"
    assert out.read_text(encoding="utf-8").count("\n") == 1
