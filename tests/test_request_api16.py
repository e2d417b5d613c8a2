"""The commands a notebook reached only through argv, as typed requests (issue 30).

For each request: ``failcodes.run(Request(...))`` and the CLI give the same output on the same
input (the CLI parses argv into the request and calls the same ``run``), and a bad request is
the CLI's one line, a :class:`failcodes.errors.ConfigError` (a FailcodesError) in Python.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import failcodes as fc
from failcodes.errors import ConfigError
from tests.cli_helpers import run_cli


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    """``failcodes ARGS``' stdout (exit 0 asserted)."""
    code, out, err = run_cli([str(a) for a in args], capsys)
    assert code == 0, err
    return out


def _refused(capsys: pytest.CaptureFixture[str], request: Any, *args: str | Path) -> str:
    """The one line both refuse with: ``request()`` raises it, ``failcodes ARGS`` exits 2."""
    with pytest.raises(ConfigError) as raised:
        request()
    code, out, err = run_cli([str(a) for a in args], capsys)
    assert (code, out) == (2, "")
    assert err == f"failcodes: error: {raised.value}\n"
    return str(raised.value)


def _cache(folder: Path) -> Path:
    from failcodes.judge.cache import ResponseCache

    path = folder / "c.sqlite"
    cache = ResponseCache(path)
    for i, model in enumerate(["m1", "m2", "m2"]):
        cache.put(
            f"k{i}",
            provider="openai",
            model=model,
            template_hash="t",
            codebook_hash="abc",
            payload={},
            usage={},
            raw_request={},
            raw_response={},
        )
    cache.close()
    return path


def test_cache_stats_python_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _cache(tmp_path)
    result = fc.run(fc.CacheStatsRequest(cache=path))
    assert (result.entries, result.by_model) == (3, {"openai:m1": 1, "openai:m2": 2})
    assert json.loads(_cli(capsys, "cache", "stats", "--cache", path, "--json")) == (
        result.model_dump(mode="json")
    )
    assert _cli(capsys, "cache", "stats", "--cache", path).splitlines() == result.lines()


def test_cache_prune_python_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _cache(tmp_path)
    result = fc.run(fc.CachePruneRequest(cache=path, model="openai:m2"))
    assert result.pruned == 2  # the two m2 entries
    out = _cli(capsys, "cache", "prune", "--cache", path, "--all")
    assert out == f"pruned 1 entries from {path}\n"  # m1, the one left
    assert result.lines() == [f"pruned 2 entries from {path}"]


def test_cache_prune_without_a_filter_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _cache(tmp_path)
    said = _refused(
        capsys, lambda: fc.CachePruneRequest(cache=path), "cache", "prune", "--cache", path
    )
    assert said == "say what to prune: --older-than DAYS, --model, --codebook-hash or --all"
    assert fc.run(fc.CacheStatsRequest(cache=path)).entries == 3  # nothing pruned


def test_review_status_python_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_outside_review11 import _half_reviewed_study

    # 50 units drawn (u000..u049), the 25 even ones reviewed: the judge's all-high ones
    _half_reviewed_study(tmp_path, [f"u{i:03d}" for i in range(0, 50, 2)])
    plan = tmp_path / "review" / "plans" / "p.json"
    reviews = tmp_path / "review" / "alice.jsonl"
    notes: list[str] = []
    result = fc.run(fc.ReviewStatusRequest(plan_path=plan, reviews=[reviews]), note=notes.append)
    p = result.progress
    assert (p.estimation_reviewed, p.estimation_planned) == (25, 50)
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(reviews)], capsys)
    assert code == 0
    assert out.splitlines() == result.lines()
    assert err.splitlines() == notes == [f"failcodes: warning: {result.skew}"]


def test_review_status_with_a_reviews_file_twice_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a request's own check (Request._no_file_twice) raised pydantic's ValidationError from
    # Python: the base's wrap validator did not wrap a validator defined after it
    plan, reviews = tmp_path / "p.json", tmp_path / "r.jsonl"
    said = _refused(
        capsys,
        lambda: fc.ReviewStatusRequest(plan_path=plan, reviews=[reviews, reviews]),
        *("review", "status", plan, "-r", reviews, "-r", reviews),
    )
    assert said == f"--reviews: {reviews} is given twice; name each file once"


def _refused_run(capsys: pytest.CaptureFixture[str], call: Any, *args: str | Path) -> str:
    """The one line both refuse with: ``call()`` raises it, ``failcodes ARGS`` exits 2."""
    with pytest.raises(fc.FailcodesError) as raised:
        call()
    code, out, err = run_cli([str(a) for a in args], capsys)
    assert (code, out) == (2, "")
    assert err == f"failcodes: error: {raised.value}\n"
    return str(raised.value)


V1 = Path(__file__).resolve().parent.parent / "taxonomy" / "medical-fact-check.v1.yaml"


def _v2(folder: Path) -> Path:
    from failcodes import codebook
    from failcodes.codebook import CodebookDraft, Leaf

    v1 = codebook.load(V1)
    leaf = Leaf(id="dropped_negation", label="Negation", definition="x")
    return codebook.save(CodebookDraft(v1, "v2").add_leaf("misreading", leaf).build(), folder)


def test_codebook_validate_show_diff_python_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = _v2(tmp_path)
    checked = fc.run(fc.CodebookValidateRequest(paths=[V1, new]))
    # v1 has no leaves; v2 adds one
    assert [(c.version, c.leaves) for c in checked.codebooks] == [(1, 0), (2, 1)]
    assert _cli(capsys, "codebook", "validate", V1, new).splitlines() == checked.lines()
    assert _cli(capsys, "codebook", "validate", V1, new, "-f", "json") == (
        checked.json_text() + "\n"
    )
    shown = fc.run(fc.CodebookShowRequest(path=new))
    assert shown.lines()[0] == f"medical-fact-check@2  hash {shown.codebook.hash}"
    assert _cli(capsys, "codebook", "show", new).splitlines() == shown.lines()
    assert _cli(capsys, "codebook", "show", new, "-f", "json") == shown.json_text() + "\n"
    diff = fc.run(fc.CodebookDiffRequest(old=V1, new=new))
    assert [(c.kind.value, c.new) for c in diff.diff.changes] == [("added", ("dropped_negation",))]
    assert _cli(capsys, "codebook", "diff", V1, new).splitlines() == diff.lines()
    assert _cli(capsys, "codebook", "diff", V1, new, "-f", "json") == diff.json_text() + "\n"


def test_codebook_table_and_schema_python_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = fc.CodebookTableRequest(path=V1, fmt="latex", part="retrieval", leaves=False)
    assert request.argv() == [
        *("codebook", "table", str(V1), "--format", "latex", "--part", "retrieval"),
        "--no-leaves",  # was "--leaves/--no-leaves" when False, not typed back
    ]
    table = fc.run(request)
    assert "\\begin{table*}" in table.text and "retrieval" in table.text.lower()
    assert _cli(capsys, *request.argv()) == table.text
    out = tmp_path / "t.tex"
    written = fc.run(request.model_copy(update={"output": out}))
    assert (written.output, out.read_text("utf-8")) == (out, table.text)
    schema = fc.run(fc.CodebookSchemaRequest())
    assert json.loads(schema.text)["title"] == "failcodes codebook"
    assert _cli(capsys, "codebook", "schema") == schema.text


def test_codebook_bad_requests_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = tmp_path / "s.json"
    stats.write_text('{"frequencies": {"no_such_code": 0.5}}', "utf-8")
    said = _refused_run(
        capsys,
        lambda: fc.run(fc.CodebookTableRequest(path=V1, stats=stats)),
        *("codebook", "table", V1, "--stats", stats),
    )
    assert said == "--stats names codes not in medical-fact-check@1: no_such_code"
    missing = tmp_path / "nope.yaml"
    for words, call in (
        (("validate", V1, V1), lambda: fc.CodebookValidateRequest(paths=[V1, V1])),
        (("show", missing), lambda: fc.run(fc.CodebookShowRequest(path=missing))),
        (("diff", missing, V1), lambda: fc.run(fc.CodebookDiffRequest(old=missing, new=V1))),
    ):
        said = _refused_run(capsys, call, "codebook", *words)
        assert str(missing if "show" in words or "diff" in words else V1) in said
    with pytest.raises(
        ConfigError,
        match=r"^outptu: unknown field of CodebookSchemaRequest \(did you mean .output.\?\); ",
    ):
        fc.CodebookSchemaRequest(outptu=tmp_path / "s.json")  # type: ignore[call-arg]


ATOMIC = Path(__file__).parent / "data" / "atomic" / "facts.jsonl"
RTV = Path(__file__).parent / "data" / "rtv"


def test_benchmark_python_and_cli(capsys: pytest.CaptureFixture[str]) -> None:
    atomic = fc.run(fc.BenchmarkAtomicRequest(path=ATOMIC))
    row = next(r for r in atomic.tables[0].rows if r["system"] == "sysA")
    assert row["balanced_accuracy"] == pytest.approx(0.7)  # (0.6 + 0.8) / 2, test_atomic.py
    assert _cli(capsys, "benchmark", "atomic", ATOMIC).splitlines() == atomic.lines()
    assert _cli(capsys, "benchmark", "atomic", ATOMIC, "--format", "json") == (
        atomic.json_text() + "\n"
    )
    scifact = fc.run(fc.BenchmarkScifactRequest(k="1"))
    assert scifact.data is not None
    fever = next(r for r in scifact.data["evidence"] if r["system"] == "multivers-fever")
    assert fever["n_no_retrieval"] == 279  # tests/test_benchmark_cli.py counts it by hand
    assert _cli(capsys, "benchmark", "scifact", "--k", "1").splitlines() == scifact.lines()


def test_benchmark_bad_cut_off_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    said = _refused(
        capsys,
        lambda: fc.BenchmarkScifactRequest(k="1,0"),
        *("benchmark", "scifact", "--k", "1,0"),
    )
    assert said == "--k: 0 is out of range; each value is 1 to 1000"


def test_rtv_python_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = fc.RtvRequest(
        items=RTV / "items.jsonl",
        docs=RTV / "docs",
        out=tmp_path / "py",
        k=2,
        chunk_size=200,
        overlap=50,
    )
    result = fc.run(request)
    assert result.run.judge_heuristic is True  # offline: the heuristic baseline
    assert [r.k for r in result.run.k_sensitivity] == [1, 1, 3, 3, 5, 5]
    cli_out = tmp_path / "cli"
    argv = request.model_copy(update={"out": cli_out}).argv()
    printed = _cli(capsys, *argv).splitlines()
    assert printed[:-1] == result.lines()[:-1]  # all but "wrote <its own folder>"
    assert printed[-1] == result.lines()[-1].replace(str(tmp_path / "py"), str(cli_out))
    assert (cli_out / "metrics.json").read_text() == (tmp_path / "py" / "metrics.json").read_text()


def test_rtv_bad_overlap_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    said = _refused(
        capsys,
        lambda: fc.RtvRequest(items=RTV / "items.jsonl", docs=RTV / "docs", overlap=800),
        *("rtv", RTV / "items.jsonl", "--docs", RTV / "docs", "--overlap", "800"),
    )
    assert said == "--overlap 800: at most half of --chunk-size 1400 (700)"


def _ls_inputs(folder: Path) -> tuple[Path, Path]:
    """The toy codebook and 4 retrieval units of tests/labelstudio_helpers.py."""
    from failcodes import codebook as codebooks
    from tests.labelstudio_helpers import retrieval_unit, toy_codebook

    cb = toy_codebook()
    path = folder / codebooks.file_name(cb.name, cb.version)
    path.write_text(codebooks.dump(cb), encoding="utf-8")
    units = folder / "units.jsonl"
    units.write_text("".join(retrieval_unit(i).model_dump_json() + "\n" for i in range(4)))
    return path, units


def test_labelstudio_config_python_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cb, _ = _ls_inputs(tmp_path)
    result = fc.run(fc.LabelStudioConfigRequest(part="retrieval", codebook=cb))
    assert '<Choices name="entity"' in result.xml and result.lines() == []
    assert _cli(capsys, "labelstudio", "config", "-p", "retrieval", "-c", cb) == result.xml
    out = tmp_path / "cfg.xml"
    written = fc.run(fc.LabelStudioConfigRequest(part="retrieval", codebook=cb, out=out))
    assert out.read_text("utf-8") == result.xml
    args = ("labelstudio", "config", "-p", "retrieval", "-c", cb, "-o", tmp_path / "c2.xml")
    assert _cli(capsys, *args).splitlines() == [f"labeling config -> {tmp_path / 'c2.xml'}"]
    assert written.lines() == [f"labeling config -> {out}"]


def test_labelstudio_import_python_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_labelstudio_tasks import exported

    cb, _ = _ls_inputs(tmp_path)
    export = tmp_path / "export.json"
    export.write_text(json.dumps(exported()))
    notes: list[str] = []
    py_out, cli_out = tmp_path / "py.jsonl", tmp_path / "cli.jsonl"
    request = fc.LabelStudioImportRequest(
        export=export, part="retrieval", codebook=cb, user=["3=alice@example.org"], out=py_out
    )
    result = fc.run(request, note=notes.append)
    # exported(): 4 annotations by 3 coders on 2 tasks, 3 problems (test_labelstudio_tasks)
    assert (len(result.review.annotations), result.review.tasks, len(notes)) == (4, 2, 3)
    argv = request.model_copy(update={"out": cli_out}).argv()
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert out.splitlines() == [line.replace(str(py_out), str(cli_out)) for line in result.lines()]
    assert err.splitlines() == notes
    assert _undated(cli_out) == _undated(py_out)


def _undated(path: Path) -> list[dict[str, Any]]:
    """The annotations of ``path`` without their time of writing."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.endswith("_at")} for r in rows]


def test_labelstudio_import_bad_user_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "export.json"
    export.write_text("[]")
    said = _refused_run(
        capsys,
        lambda: fc.run(
            fc.LabelStudioImportRequest(export=export, part="retrieval", user=["alice"])
        ),
        *("labelstudio", "import", export, "-p", "retrieval", "--user", "alice"),
    )
    assert said == "--user expects ID=NAME with a numeric id, got 'alice'"
    assert not (tmp_path / "annotations").exists()


class _FakeClient:
    """A Label Studio client answering push and pull without a server."""

    def __init__(self, url: str | None = None, token: str | None = None, **_: Any) -> None:
        self.token = token or os.environ.get("LABEL_STUDIO_API_KEY")  # as the real client

    def __enter__(self) -> _FakeClient:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def push(self, tasks: list[Any], config: str, project: str, annotators: list[str]) -> Any:
        from failcodes.labelstudio.client import PushReport

        assert self.token == "s3cret"  # the SecretStr reaches the client as its value
        return PushReport({project: 7}, [project], {project: len(tasks)}, {project: 0})

    def pull(self, cb: Any, part: Any, project: str, annotators: list[str]) -> Any:
        from failcodes.labelstudio.results import annotations_from_export
        from tests.test_labelstudio_tasks import exported

        return annotations_from_export(exported(), cb, part, users={3: "alice@example.org"})


def test_labelstudio_push_and_pull_python_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from failcodes.labelstudio import client

    monkeypatch.setattr(client, "LabelStudioClient", _FakeClient)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "s3cret")
    cb, units = _ls_inputs(tmp_path)
    push = fc.LabelStudioPushRequest(
        units=units, part="retrieval", project="review", codebook=cb, token="s3cret"
    )
    pushed = fc.run(push)
    assert pushed.lines() == ["project 'review' (id 7, created): 4 tasks imported, 0 already there"]
    assert "s3cret" not in " ".join(push.argv()) + repr(push)
    argv = [w for w in push.argv() if w not in ("--token", "**********")]  # the environment's
    assert _cli(capsys, *argv).splitlines() == pushed.lines()
    pull = fc.LabelStudioPullRequest(
        part="retrieval", project="review", codebook=cb, out=tmp_path / "py.jsonl"
    )
    notes: list[str] = []
    pulled = fc.run(pull, note=notes.append)
    assert len(pulled.review.annotations) == 4
    cli_out = tmp_path / "cli.jsonl"
    code, out, err = run_cli(pull.model_copy(update={"out": cli_out}).argv(), capsys)
    assert code == 0, err
    assert out.splitlines() == [
        line.replace(str(tmp_path / "py.jsonl"), str(cli_out)) for line in pulled.lines()
    ]
    assert err.splitlines() == notes


def test_labelstudio_serve_without_a_server_binary_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-label-studio"
    said = _refused_run(
        capsys,
        lambda: fc.run(fc.LabelStudioServeRequest(binary=missing, data_dir=tmp_path / "d")),
        *("labelstudio", "serve", "--bin", missing, "--data-dir", tmp_path / "d"),
    )
    assert str(missing) in said
    assert not (tmp_path / "d").exists()
