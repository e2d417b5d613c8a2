"""``failcodes metrics`` writing rows runs without typer and says what typer's CLI says."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from failcodes.cli.direct import parse


def _run(argv: list[str], *, typer_cli: bool = False) -> tuple[int, str, str, set[str]]:
    """Exit code, stdout, stderr and the modules loaded of ``failcodes ARGV`` in a fresh process.

    ``typer_cli``: through failcodes.cli.main (the typer CLI) instead of the entry point.
    """
    entry = (
        "from failcodes.cli.main import main\nmain()\n"
        if typer_cli
        else "import runpy\nrunpy.run_module('failcodes', run_name='__main__')\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        listed = Path(folder) / "modules"
        code = (
            "import atexit, sys\n"
            f"atexit.register(lambda: open({str(listed)!r}, 'w').write(' '.join(sys.modules)))\n"
            f"sys.argv = ['failcodes', *{argv!r}]\n" + entry
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        loaded = set(listed.read_text().split())
    return proc.returncode, proc.stdout, proc.stderr, loaded


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    verdicts = ["refuted", "supported", "refuted", "supported"]
    rows = [
        {"system": "s", "question_id": "q", "sentence_id": f"q:s{i}", "claim_id": f"q:s{i}:c0"}
        | {"claim": "c", "sentence": "t", "verdict": verdict}
        for i, verdict in enumerate(verdicts)
    ]
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    errors = [True, True, False, False]
    flags = [{"sentence_id": f"q:s{i}", "has_error": e} for i, e in enumerate(errors)]
    labels.write_text("".join(json.dumps(f) + "\n" for f in flags), encoding="utf-8")
    return traces, labels


def test_rows_are_written_without_typer_as_typer_writes_them(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    traces, labels = files
    argv = ["metrics", "--traces", str(traces), f"--labels={labels}", "-m", "refuted"]
    code, out, err, loaded = _run([*argv, "--format", "json"])
    assert (code, err) == (0, "")
    assert not {"typer", "click", "failcodes.cli.main"} & loaded
    # by hand: s0 refuted/error TP, s1 supported/error FN, s2 refuted/no error FP, s3 TN
    rows = json.loads(out)
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [(1, 1, 1, 1)]
    assert rows[0]["precision"] == 0.5
    assert _run([*argv, "--format", "json"], typer_cli=True)[:3] == (code, out, err)
    # -o: the same lines printed and the same file as typer's CLI writes
    fast, slow = tmp_path / "fast.csv", tmp_path / "slow.csv"
    code, out, err, loaded = _run([*argv, "--bootstrap", "20", "-o", str(fast)])
    assert (code, err) == (0, "")
    assert "typer" not in loaded
    assert out.splitlines()[-1] == f"wrote 1 metric rows -> {fast}"
    typer_run = _run([*argv, "--bootstrap", "20", "-o", str(slow)], typer_cli=True)
    assert typer_run[:3] == (0, out.replace(str(fast), str(slow)), "")
    assert fast.read_bytes() == slow.read_bytes()


@pytest.mark.parametrize(
    "extra",
    [
        ["--bootstrap", "-1"],  # typer's range check
        ["--bootstrap", "1e3"],  # not a whole number to typer
        ["--confidence", "2"],  # typer's range check
        ["--level", "Sentence"],  # typer's choice
        ["--labels", "other.jsonl"],  # an option that takes one, given twice
        ["--no-such-flag", "1"],
        ["-o", ""],  # an empty output path
    ],
)
def test_a_command_line_typer_refuses_is_refused_as_typer_says(
    files: tuple[Path, Path], extra: list[str]
) -> None:
    traces, labels = files
    argv = ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"]
    code, out, err, _ = _run([*argv, *extra])
    assert code == 2
    assert err.startswith("failcodes: error: ") and err.count("\n") == 1, err
    assert (code, out, err) == _run([*argv, *extra], typer_cli=True)[:3]


def test_an_error_of_the_run_is_one_line_without_typer(files: tuple[Path, Path]) -> None:
    traces, labels = files
    missing = labels.with_name("missing.jsonl")
    argv = ["metrics", "--traces", str(traces), "--labels", str(missing), "--format", "csv"]
    code, out, err, loaded = _run(argv)
    assert "typer" not in loaded
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {missing}") and err.count("\n") == 1, err
    assert (code, out, err) == _run(argv, typer_cli=True)[:3]


def test_tables_are_drawn_by_typers_command(files: tuple[Path, Path]) -> None:
    traces, labels = files
    code, out, _, loaded = _run(["metrics", "--traces", str(traces), "--labels", str(labels)])
    assert code == 0
    assert "typer" in loaded
    assert "TP" in out


def test_the_parser_leaves_every_unusual_form_to_typer() -> None:
    flags = {
        "--traces": ("traces", Path, True),
        "--bootstrap": ("bootstrap", int, False),
        "--verdicts": ("verdicts", None, False),
    }
    assert parse(flags, ["--traces", "a", "--traces=b", "--bootstrap", "5", "--verdicts"]) == {
        "traces": [Path("a"), Path("b")],
        "bootstrap": 5,
        "verdicts": True,
    }
    for argv in (
        ["--traces"],  # no value
        ["--traces", "-x"],  # a value like an option
        ["--traces="],  # empty
        ["--bootstrap", "1", "--bootstrap", "1"],  # takes one, given twice
        ["--verdicts=1"],
        ["--verdicts", "--verdicts"],
        ["--", "--traces", "a"],
        ["-h"],
        ["a"],  # a positional argument
    ):
        assert parse(flags, argv) is None, argv


def test_ingest_runs_without_typer_as_typers_command(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    """``ingest ADAPTER PATH... -o OUT``: the same lines, exit code and files as typer's
    CLI, without importing typer (issue 30: ~100 M of a study's ~1,150 M labels ingest)."""
    traces, labels = files
    for adapter, given, out in (
        ("generic-labels", labels, "l.jsonl"),
        ("generic", traces, "t.parquet"),
    ):
        fast, slow = tmp_path / f"fast.{out}", tmp_path / f"slow.{out}"
        argv = ["ingest", adapter, str(given), "-o"]
        extra = ["--system", "s"] if adapter == "generic" else []
        code, stdout, err, loaded = _run([*argv, str(fast), *extra])
        assert code == 0, err
        assert not {"typer", "click", "failcodes.cli.main"} & loaded
        typer_run = _run([*argv, str(slow), *extra], typer_cli=True)
        assert typer_run[:3] == (0, stdout.replace(str(fast), str(slow)), err)
        assert fast.read_bytes() == slow.read_bytes()
    assert stdout.splitlines()[-1].startswith("wrote 4 traces -> ")


@pytest.mark.parametrize(
    "argv",
    [
        ["ingest", "generic-labels", "-o", "OUT"],  # no input: typer's missing argument
        ["ingest", "generic-labels", "IN", "-o", "OUT", "--no-such-flag", "1"],
        ["ingest", "generic", "IN", "-o", "OUT", "--system", "a", "--system", "b"],
        ["ingest", "generic-labels", "IN", "-o", ""],  # an empty output path
        ["ingest", "no-such-adapter", "IN", "-o", "OUT"],  # refused by the run: one line
    ],
)
def test_an_ingest_command_line_refused_is_refused_as_typer_says(
    files: tuple[Path, Path], tmp_path: Path, argv: list[str]
) -> None:
    _, labels = files
    names = {"IN": str(labels), "OUT": str(tmp_path / "out.jsonl")}
    argv = [names.get(a, a) for a in argv]
    code, out, err, _ = _run(argv)
    assert code == 2
    assert err.startswith("failcodes: error: ") and err.count("\n") == 1, err
    assert (code, out, err) == _run(argv, typer_cli=True)[:3]
    assert not (tmp_path / "out.jsonl").exists()


def test_the_parser_reads_positional_arguments_where_asked() -> None:
    flags = {"-o": ("out", Path, False), "--raw-csv": ("raw_csv", None, False)}
    words: list[str] = []
    argv = ["generic", "a.jsonl", "-o", "x.jsonl", "b.jsonl", "--raw-csv"]
    assert parse(flags, argv, words) == {"out": Path("x.jsonl"), "raw_csv": True}
    assert words == ["generic", "a.jsonl", "b.jsonl"]
    for argv in (["generic", "-"], ["generic", "--", "a"], ["generic", "a", "-o"]):
        assert parse(flags, argv, []) is None, argv
