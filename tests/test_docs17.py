"""Docs run as written by a second researcher (session 17): what the tool got wrong.

docs/judge.md's first block judged the demo's disagreements with `openai:gpt-5-mini`; run on a
compatible server (the fake one here) the judge has no price, and its summary said "cost:
unknown" beside "run total: 117 units, $0.0000", the report's run box "Cost $0.0000".
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from failcodes.annotations import CoderKind
from failcodes.judge.summary import RunSummary, summary_lines
from failcodes.units import UnitKind
from tests.cli_helpers import run_cli
from tests.fakeserver import FakeServer
from tests.judge_helpers import fresh_fake


def test_an_unpriced_runs_total_is_not_zero_dollars() -> None:
    """An LLM judge with no price counts $0 per unit: its run total is unknown, not $0.0000."""
    summary = RunSummary(
        judge="openai:gpt-5-mini",
        coder_kind=CoderKind.LLM,
        kind=UnitKind.VERIFICATION,
        units=117,
        already_done=0,
        base_url="http://127.0.0.1:1/v1",
        judged=117,
        price_known=False,
        journal_units=117,
    )
    [line] = [x for x in summary_lines(summary) if x.startswith("tokens:")]
    assert line.endswith(
        "cost: unknown (no price for model; a non-vendor base URL: --price-as KEY); "
        "run total: 117 units, cost unknown"
    )
    assert "$" not in line
    priced = summary.model_copy(update={"price_known": True, "journal_cost_usd": 0.25})
    assert summary_lines(priced)[3].endswith("run total: 117 units, $0.2500")


def test_a_panel_of_unpriced_judges_says_its_cost_is_unknown(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A study judged on a compatible server with no price: run box 'Cost $0.0000', and the
    panel's line 'panel of 2: ...; cost $0.0000 (every member)' (its members' summaries)."""
    from failcodes.study.create import init_study

    fake = fresh_fake(fake_server, monkeypatch, "sk-docs17")
    layout = init_study(tmp_path / "st")
    text = layout.study_file.read_text(encoding="utf-8")
    text = text.replace(
        'judge = "offline"',
        f'judge = ["openai:gpt-5-mini", "openai:gpt-5-nano"]\nbase_url = "{fake.openai_base_url}"',
    )
    layout.study_file.write_text(text, encoding="utf-8")
    code, _, err = run_cli(["run", str(layout.root)], capsys)
    assert code == 0, err
    html = (layout.report_dir / "index.html").read_text(encoding="utf-8")
    assert "<td>Cost</td><td>$0.0000</td>" not in html
    assert (
        "<td>Cost</td><td>unknown: no price for openai:gpt-5-mini, openai:gpt-5-nano (judge "
        "with --prices FILE or --price-as KEY to price it)</td>"
    ) in html
    [log] = (layout.root / ".failcodes" / "logs").glob("judge_retrieval_*.log")
    [line] = [x for x in log.read_text(encoding="utf-8").splitlines() if x.startswith("panel of")]
    assert line.startswith(
        "panel of 2: openai:gpt-5-mini, openai:gpt-5-nano; cost unknown (no price for "
        "openai:gpt-5-mini, openai:gpt-5-nano); splits on "
    )


REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^\s*(`{3,})(\S*)")


def _command_lines(text: str) -> list[str]:
    """Every `failcodes ...` command of a page's shell blocks (continuations joined)."""
    found: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        i += 1
        if not m:
            continue
        body: list[str] = []
        while i < len(lines) and not lines[i].strip().startswith(m.group(1)):
            body.append(lines[i])
            i += 1
        i += 1
        if m.group(2) not in ("", "bash", "console", "sh", "shell"):
            continue
        for line in "\n".join(body).replace("\\\n", " ").split("\n"):
            for part in re.split(r"\s*(?:\||&&|;)\s*", line.strip().split(" #")[0]):
                if part.startswith("failcodes "):
                    found.append(part)
    return found


def _unknown(command: str, root: Any) -> str | None:
    """What of ``command`` (its command words, its options) the CLI does not have."""
    words = shlex.split(command.replace("[", " ").replace("]", " "))[1:]
    cur, path = root, ["failcodes"]
    while hasattr(cur, "commands") and words and not words[0].startswith("-"):
        if words[0] == "...":
            return None
        if words[0] not in cur.commands:
            return f"no command '{' '.join([*path, words[0]])}'"
        path.append(words[0])
        cur = cur.commands[words.pop(0)]
    if hasattr(cur, "commands"):
        return None
    known = {"--help"} | {o for p in cur.params for o in (*p.opts, *p.secondary_opts)}
    for word in words:
        if re.match(r"^--?[a-zA-Z]", word) and word.split("=")[0] not in known:
            return f"'{' '.join(path)}' has no option {word.split('=')[0]}"
    return None


def test_every_command_in_the_docs_names_a_command_and_options_the_cli_has() -> None:
    """docs/codebook.md showed `failcodes judge verification ...` (the command is `reasoning`).

    A reader who types a page's shell block gets 'No such command'; so every `failcodes`
    line of every page's shell blocks must name a registered command and its options.
    """
    import typer

    from failcodes.cli.main import app, register_commands

    register_commands()
    root = typer.main.get_command(app)
    assert _unknown("failcodes judge verification ... --codebook x.yaml", root) == (
        "no command 'failcodes judge verification'"
    )
    assert _unknown("failcodes cache prune --older-than 30 --oldest", root) == (
        "'failcodes cache prune' has no option --oldest"
    )
    bad = [
        f"{page.relative_to(REPO)}: {cmd}: {why}"
        for page in DOCS
        for cmd in _command_lines(page.read_text(encoding="utf-8"))
        if (why := _unknown(cmd, root)) is not None
    ]
    assert not bad, "\n".join(bad)


def test_the_consensus_column_line_shown_in_statistics_md_is_the_one_agree_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/statistics.md showed a first line without the `--raters` value that keeps a rater."""
    text = (REPO / "docs" / "statistics.md").read_text(encoding="utf-8")
    [shown] = [x for x in text.splitlines() if x.startswith("Assumed: raters (3): label_0")]
    table = tmp_path / "ratings.csv"
    table.write_text(
        "item_id,label_0,label_1,label_2,majority_label\n"
        "1,a,a,b,a\n2,b,b,b,b\n3,a,b,b,b\n4,a,a,a,a\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(["agree", str(table), "--stat", "fleiss", "--bootstrap", "0"], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == shown


def test_a_transposed_table_is_refused_though_the_values_rule_set_questions_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/statistics.md: `reader,Q1,...` over three readers is refused asking to transpose it.

    92333d8 counted the rater columns after the values rule: Q1 and Q4 (every reader gave 1,
    a value no other question holds) were set aside as covariates, the four questions left
    were read as four raters of the 3 readers: Fleiss -0.250, exit 0. Transposed (units
    Q1..Q6, raters r1..r3) by hand: P_i 1, 1, 1/3, 1, 1, 1/3 -> mean 14/18; category shares
    6/18, 8/18, 4/18 -> p_e 116/324; kappa (14/18 - 116/324) / (1 - 116/324) = 136/208 = 0.654.
    """
    table = tmp_path / "readers.csv"
    table.write_text(
        "reader,Q1,Q2,Q3,Q4,Q5,Q6\nr1,1,2,3,1,2,3\nr2,1,2,3,1,2,2\nr3,1,2,2,1,2,3\n",
        encoding="utf-8",
    )
    out = tmp_path / "agreement.json"
    code, _, err = run_cli(["agree", str(table), "--bootstrap", "0", "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert err.strip() == (
        f"failcodes: error: {table}:1: 6 rater columns (Q1, Q2, Q3, ...) for 3 rows: is the "
        "table one row per rater and one column per unit? agreement needs one row per unit: "
        "transpose it (to read it as given, name the raters with --raters)"
    )
    transposed = tmp_path / "questions.csv"
    transposed.write_text(
        "question,r1,r2,r3\nQ1,1,1,1\nQ2,2,2,2\nQ3,3,3,2\nQ4,1,1,1\nQ5,2,2,2\nQ6,3,2,3\n",
        encoding="utf-8",
    )
    args = ["agree", str(transposed), "--stat", "fleiss", "--bootstrap", "0", "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    [row] = json.loads(out.read_text(encoding="utf-8"))
    assert row["value"] == pytest.approx(136 / 208, abs=1e-12)
