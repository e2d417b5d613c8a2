"""`failcodes codebook ...` through a real subprocess, plus the committed JSON Schema."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
import yaml

from failcodes import codebook
from failcodes.cli.main import main
from failcodes.codebook import CodebookDraft, Leaf

Runner = Callable[..., subprocess.CompletedProcess[str]]

REPO = Path(__file__).resolve().parent.parent
V1_PATH = REPO / "taxonomy" / "medical-fact-check.v1.yaml"


def run_process(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A real `python -m failcodes codebook ...` process."""
    return subprocess.run(
        [sys.executable, "-m", "failcodes", "codebook", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """The same CLI entry point in-process (fast): returns code, stdout and stderr."""

    def invoke(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            main(["codebook", *map(str, args)])
        out = capsys.readouterr()
        code = info.value.code if isinstance(info.value.code, int) else 1
        return subprocess.CompletedProcess(list(args), code, out.out, out.err)

    return invoke


def test_validate_folder_and_one_line_error(tmp_path: Path, run: Runner) -> None:
    folder = tmp_path / "taxonomy"
    folder.mkdir()
    shutil.copy(V1_PATH, folder)
    ok = run("validate", "--format", "json", cwd=tmp_path)  # default: ./taxonomy
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    assert [(c["name"], c["version"], c["subcodes"]) for c in report["codebooks"]] == [
        ("medical-fact-check", 1, 35)
    ]
    bad_text = V1_PATH.read_text(encoding="utf-8").replace("- id: irrelevant", "- id: neutral")
    bad = tmp_path / "bad.yaml"
    bad.write_text(bad_text, encoding="utf-8")
    proc = run_process("validate", bad, cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    second_neutral = [i + 1 for i, ln in enumerate(bad_text.splitlines()) if "- id: neutral" in ln][
        1
    ]
    assert lines[0].startswith(f"failcodes: error: {bad}:{second_neutral}")
    assert "duplicate-id: subcode id 'neutral' is already used" in lines[0]


def test_diff_json_lists_changes_and_migration_map(tmp_path: Path, run: Runner) -> None:
    v1 = codebook.load(V1_PATH)
    v2 = (
        CodebookDraft(v1, "test v2")
        .add_leaf("misreading", Leaf(id="dropped_negation", label="Negation", definition="x"))
        .merge_subcodes(
            ["overconfident", "underconfident"],
            into="miscalibrated",
            label="Miscalibrated",
            definition="Confidence does not fit evidence.",
        )
        .build()
    )
    new = codebook.save(v2, tmp_path)
    proc = run("diff", V1_PATH, new, "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [(c["kind"], c["old"], c["new"]) for c in data["changes"]] == [
        ("merged", ["overconfident", "underconfident"], ["miscalibrated"]),
        ("added", [], ["dropped_negation"]),
    ]
    assert data["migration"]["codes"]["underconfident"] == "miscalibrated"
    assert data["migration"]["to"]["hash"] == v2.hash
    text = run("diff", V1_PATH, new, cwd=tmp_path)
    assert "  overconfident -> miscalibrated" in text.stdout.splitlines()


def test_table_and_schema_outputs(tmp_path: Path, run: Runner) -> None:
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"frequencies": {"grounded": 0.9}, "agreement": {"grounded": 0.8}}))
    out = tmp_path / "out" / "codebook.tex"
    proc = run(
        "table",
        "--format",
        "latex",
        "--part",
        "verification",
        "--stats",
        stats,
        "-o",
        out,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    tex = out.read_text(encoding="utf-8")
    assert "\\texttt{grounded}$^\\dagger$" in tex and "90.0\\% & 0.80 & seed \\\\" in tex
    assert [p.name for p in out.parent.iterdir()] == ["codebook.tex"]  # no temp file left
    schema_out = tmp_path / "codebook.schema.json"
    assert run("schema", "-o", schema_out, cwd=tmp_path).returncode == 0
    committed = (REPO / "taxonomy" / "codebook.schema.json").read_text(encoding="utf-8")
    assert schema_out.read_text(encoding="utf-8") == committed  # regenerate if this fails
    bad_stats = tmp_path / "bad.json"
    bad_stats.write_text(json.dumps({"frequencies": {"groundd": 1}}))
    proc = run("table", "--stats", bad_stats, cwd=tmp_path)
    assert proc.returncode == 2 and "groundd" in proc.stderr


def test_json_schema_accepts_v1_and_rejects_a_typo() -> None:
    schema = codebook.json_schema()
    data = yaml.safe_load(V1_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    data["parts"][0]["dimensions"][0]["subcodes"][0]["defintion"] = "typo"
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(data))
    assert errors and "defintion" in errors[0].message
