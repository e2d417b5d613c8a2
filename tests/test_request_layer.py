"""The use-case layer (issue 27): one typed request per command, the CLI's flags, a study
file's fields and the Python API's arguments at once, each default defined once.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from failcodes.cli.requests import request_command
from failcodes.commands.base import option
from failcodes.commands.judge import JudgeOptions, JudgeRequest
from failcodes.errors import ConfigError
from failcodes.judge.spec import JudgeSpec
from failcodes.units import UnitKind

SRC = Path(__file__).resolve().parent.parent / "src" / "failcodes"


def _names_used(path: Path) -> set[str]:
    """Attribute names, keyword arguments and parameters a module uses (not its text)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif (isinstance(node, ast.keyword) and node.arg) or isinstance(node, ast.arg):
            out.add(node.arg)
    return out


#: Modules that still carry options named like judge options: ``labelstudio push --top-k``
#: and ``rtv --base-url`` are those commands' own options of the same names; a ratchet, the
#: set may only shrink (``saturate`` left it: its flags come from commands/saturate.py's
#: requests, ``saturate recode``'s from JudgeOptions).
OWN_JUDGE_FLAGS: set[str] = set()


def test_no_cli_or_study_module_names_a_judge_option() -> None:
    # A new judge option is a field of JudgeOptions and its use in the engine: the CLI's flag,
    # the study file's field and the study step's request follow from the field. So no module
    # of the CLI or the study names one (``judge`` itself is the [judge] table's name too).
    fields = set(JudgeOptions.model_fields) - {"judge"}
    found = {}
    for package in ("cli", "study"):
        for path in sorted((SRC / package).rglob("*.py")):
            rel = str(path.relative_to(SRC))
            if rel in OWN_JUDGE_FLAGS:
                continue
            used = _names_used(path) & fields
            if used:
                found[rel] = sorted(used)
    assert found == {}


def test_a_new_judge_option_reaches_the_cli_the_study_and_the_plan() -> None:
    # add a field to the judge request, as a new option would be added
    class Wider(JudgeRequest):
        frobs: int = option(3, help="How many frobs per call.", ge=1)

    seen: list[Any] = []
    app = typer.Typer()
    app.command("retrieval")(
        request_command(Wider, seen.append, fixed={"kind": UnitKind.RETRIEVAL})
    )
    app.command("other")(lambda: None)  # a group, as `failcodes judge` is
    runner = CliRunner()
    done = runner.invoke(app, ["retrieval", "--from", "d.jsonl", "--frobs", "5"])
    assert done.exit_code == 0, done.output
    [request] = seen
    assert request.frobs == 5 and request.source == Path("d.jsonl")
    # its help and bound come from the field
    shown = runner.invoke(app, ["retrieval", "--help"], env={"COLUMNS": "200"}).output
    assert "--frobs" in shown and "How many frobs per call." in shown
    bad = runner.invoke(app, ["retrieval", "--from", "d.jsonl", "--frobs", "0"])
    assert bad.exit_code == 2 and "--frobs" in bad.output
    # the printed command line carries it only when it differs from the default
    assert request.argv()[-2:] == ["--frobs", "5"]
    assert "--frobs" not in Wider(source=Path("d.jsonl")).argv()
    # the fingerprint of a study step changes with it
    assert request.fingerprint_text() != Wider(source=Path("d.jsonl")).fingerprint_text()


def test_every_judge_option_set_in_a_study_reaches_its_judge_step(tmp_path: Path) -> None:
    """Each [judge] field, set to a non-default value, is on the judge step's request."""
    from failcodes.study.config import load_study
    from failcodes.study.create import init_study
    from failcodes.study.steps import plan_study

    values = {
        "judge": '["openai:m1", "openai:m2"]',
        "base_url": '"http://127.0.0.1:9/v1"',
        "concurrency": "3",
        "rpm": "60.0",
        "tpm": "1000.0",
        "top_k": "2",
        "prices": '"prices.yaml"',
        "no_cache": "true",
        "max_output_tokens": "512",
        "timeout": "9.5",
        "max_attempts": "2",
        "group_by_claim": "true",
        "batch": "true",
        "batch_size": "7",
        "poll_interval": "0.5",
        "price_as": '"openai:gpt-5-mini"',
        "temperature": "0.7",
    }
    # every option but the cascade, which a panel refuses (checked below), and the budget,
    # which --batch refuses (set alone after)
    assert set(values) == set(JudgeOptions.model_fields) - {"cascade", "budget"}
    layout = init_study(tmp_path / "st")
    template = layout.study_file.read_text(encoding="utf-8")

    def judge_request(values: dict[str, str]) -> JudgeRequest:
        text = template.replace(
            'judge = "offline"', "\n".join(f"{k} = {v}" for k, v in values.items())
        )
        layout.study_file.write_text(text, encoding="utf-8")
        steps = plan_study(load_study(layout.root), layout)
        request = next(s for s in steps if s.name.startswith("judge retrieval")).request
        assert isinstance(request, JudgeRequest)
        return request

    assert judge_request({**values, "batch": "false", "budget": "1.5"}).budget == 1.5
    request = judge_request(values)
    assert [s.name for s in request.judge] == ["openai:m1", "openai:m2"]
    assert (request.concurrency, request.rpm, request.tpm, request.top_k) == (3, 60.0, 1000.0, 2)
    assert (request.no_cache, request.max_output_tokens) == (True, 512)
    assert (request.timeout, request.max_attempts, request.temperature) == (9.5, 2, 0.7)
    assert (request.group_by_claim, request.batch, request.batch_size) == (True, True, 7)
    assert (request.poll_interval, request.price_as) == (0.5, "openai:gpt-5-mini")
    assert request.base_url == "http://127.0.0.1:9/v1"
    assert request.prices == layout.root / "prices.yaml"  # relative to the study folder
    # the study's own paths, never a setting
    assert request.output == layout.judge_run("ragchecker-example", "retrieval")
    assert request.cache == layout.judge_cache and request.dry_run is False


def test_defaults_are_defined_once_on_the_request() -> None:
    from failcodes.judge.limits import Limits, RetryPolicy
    from failcodes.judge.settings import JudgeSettings

    request = JudgeRequest(source=Path("d.jsonl"))
    settings = request.settings()
    # the engine's own defaults: 8 calls in flight, 6 attempts, 1,024 output tokens
    assert settings.limits.concurrency == Limits().concurrency == 8
    assert settings.retry.max_attempts == RetryPolicy().max_attempts == 6
    assert settings.max_output_tokens == JudgeSettings().max_output_tokens == 1024
    # the CLI shows the request's defaults; its modules state none of them
    for name in ("judge.py", "recode.py", "run.py"):
        source = (SRC / "cli" / name).read_text("utf-8")
        assert "1024" not in source and "= 8" not in source and "= 6" not in source, name


@pytest.mark.parametrize(
    ("text", "vendor", "model", "base_url", "heuristic"),
    [
        ("offline", "offline", "heuristic-v6", None, True),
        ("anthropic:claude-x", "anthropic", "claude-x", None, False),
        ("OpenAI:gpt-5-mini", "openai", "gpt-5-mini", None, False),
        # a compatible server named with the judge
        (
            "openai:qwen3@http://127.0.0.1:8000/v1",
            "openai",
            "qwen3",
            "http://127.0.0.1:8000/v1",
            False,
        ),
        # a Vertex-style model id keeps its "@" (what follows is no URL)
        (
            "anthropic:claude-3-5-sonnet@20240620",
            "anthropic",
            "claude-3-5-sonnet@20240620",
            None,
            False,
        ),
    ],
)
def test_a_judge_is_parsed_once(
    text: str, vendor: str, model: str, base_url: str | None, heuristic: bool
) -> None:
    spec = JudgeSpec.of(text)
    assert (spec.vendor, spec.model, spec.base_url, spec.heuristic) == (
        vendor,
        model,
        base_url,
        heuristic,
    )
    assert spec.endpoint("http://other/v1") == (base_url or "http://other/v1")


def test_an_unknown_judge_is_one_error() -> None:
    with pytest.raises(ConfigError, match="unknown judge 'gpt-5'"):
        JudgeSpec.of("gpt-5")
    with pytest.raises(ConfigError, match="is not an http"):
        JudgeSpec.of("openai:m@http://")


def test_a_panel_with_a_cascade_is_refused_when_the_request_is_built() -> None:
    from failcodes.commands.base import build

    with pytest.raises(ConfigError, match="--cascade cannot be combined with a panel"):
        build(
            JudgeRequest,
            {"source": "d.jsonl", "judge": ["offline", "offline"], "cascade": "offline"},
        )


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_nothing_below_the_cli_runs_a_command_line() -> None:
    # the study, the use cases, the demo and the Python API run requests in process: none
    # imports the CLI (typer's parser) or starts a `python -m failcodes` child
    found = []
    for package in ("study", "commands", "demo"):
        for path in sorted((SRC / package).rglob("*.py")):
            bad = {m for m in _imports(path) if m.startswith("failcodes.cli") or m == "subprocess"}
            if bad:
                found.append((str(path.relative_to(SRC)), sorted(bad)))
    api = SRC / "api.py"
    found += [("api.py", sorted(m for m in _imports(api) if "cli" in m or m == "subprocess"))]
    assert found == [("api.py", [])]


def test_no_cli_function_is_longer_than_60_lines() -> None:
    # the CLI parses and prints; a use case's body lives in failcodes/commands/
    long = []
    for path in sorted((SRC / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 60:
                    long.append(f"{path.name}:{node.name} ({lines} lines)")
    assert long == []
