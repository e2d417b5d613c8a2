"""Render the prompt examples of docs/judge.md from what the engine really sends.

The engine judges three small units (a retrieval pair, a reasoning trace, two passages of one
claim grouped in one call) with ``openai:example-model`` against the fake server; the server
logs every request body; the section between the markers in docs/judge.md is built from those
bodies. ``tests/test_judge_docs.py`` compares; to rewrite the docs after a prompt change run::

    PYTHONPATH=src python -m tests.judge_examples
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from failcodes import codebook
from failcodes.judge import Grouped, JudgeJob, PerUnit, make_coder, run_judge
from failcodes.traces import Passage
from failcodes.units import Unit, UnitKind, unit_id
from failcodes.verdicts import Verdict

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "judge.md"
CODEBOOK = ROOT / "docs" / "examples" / "judge-example.v1.yaml"
START = "<!-- rendered-examples:start (tests/judge_examples.py writes this part) -->"
END = "<!-- rendered-examples:end -->"
MODEL = "openai:example-model"

CLAIM = "Metformin lowers HbA1c in adults with type 2 diabetes."
P1 = Passage(
    passage_id="pmid-1",
    rank=1,
    text="In a 24-week RCT of 300 adults with type 2 diabetes, metformin lowered HbA1c by 1.1%.",
    source="pubmed",
    title="Metformin monotherapy trial",
)
P2 = Passage(
    passage_id="pmid-2",
    rank=2,
    text="Sulfonylureas <and> insulin are alternatives when metformin is not tolerated.",
    source="pubmed",
)
REASONING = (
    'Passage 1 reports that metformin "lowered HbA1c by 1.1%" in adults with type 2 '
    "diabetes, so metformin lowers HbA1c in all patients."
)


def _retrieval(p: Passage) -> Unit:
    return Unit(
        id=unit_id(UnitKind.RETRIEVAL, CLAIM, (p.text,)),
        kind=UnitKind.RETRIEVAL,
        claim=CLAIM,
        passages=(p,),
    )


def example_units() -> dict[str, tuple[list[Unit], UnitKind, PerUnit | Grouped]]:
    """The three examples: units, kind and mode."""
    reasoning = Unit(
        id=unit_id(UnitKind.VERIFICATION, CLAIM, (P1, P2), REASONING, Verdict.SUPPORTED),
        kind=UnitKind.VERIFICATION,
        claim=CLAIM,
        passages=(P1, P2),
        reasoning=REASONING,
        verdict=Verdict.SUPPORTED,
    )
    return {
        "retrieval": ([_retrieval(P1)], UnitKind.RETRIEVAL, PerUnit()),
        "reasoning": ([reasoning], UnitKind.VERIFICATION, PerUnit()),
        "grouped": ([_retrieval(P1), _retrieval(P2)], UnitKind.RETRIEVAL, Grouped(25)),
    }


def capture_with(fake: Any, workdir: Path) -> dict[str, dict[str, Any]]:
    """Judge each example with a fresh fake-server log; return name -> the request body sent."""
    cb = codebook.load(CODEBOOK)
    bodies: dict[str, dict[str, Any]] = {}
    for name, (units, kind, mode) in example_units().items():
        fake.reset()
        coder = make_coder(MODEL, base_url=fake.openai_base_url)
        run_judge(units, coder, JudgeJob(cb, kind, workdir / name, mode=mode))
        [request] = fake.requests()
        bodies[name] = request["body"]
    return bodies


_TITLES = {
    "retrieval": "Retrieval: one (claim, passage) pair",
    "reasoning": "Reasoning: one verifier trace (its steps)",
    "grouped": "Grouped: the passages of one claim in one call (`--group-by-claim`)",
}


def render_section(bodies: dict[str, dict[str, Any]]) -> str:
    """The Markdown between the markers: system, user message and schema of each request."""
    out = [START, ""]
    for name, body in bodies.items():
        messages = body["messages"]
        system = next(m["content"] for m in messages if m["role"] == "system")
        user = next(m["content"] for m in messages if m["role"] == "user")
        fmt = body["response_format"]["json_schema"]
        out += [
            f"### {_TITLES[name]}",
            "",
            f"System message (the cacheable prefix, identical for every {name} unit):",
            "",
            "````text",
            system,
            "````",
            "",
            "User message:",
            "",
            "````text",
            user,
            "````",
            "",
            f"Answer schema (`response_format.json_schema`, name `{fmt['name']}`, strict):",
            "",
            "````json",
            json.dumps(fmt["schema"], indent=2),
            "````",
            "",
        ]
    out.append(END)
    return "\n".join(out)


def documented_section(text: str) -> str:
    """The section between the markers as it stands in docs/judge.md."""
    start = text.index(START)
    end = text.index(END, start) + len(END)
    return text[start:end]


def main() -> None:  # pragma: no cover - a maintenance script
    """Rewrite the section in docs/judge.md."""
    import os
    import tempfile

    from tests.fakeserver import FakeServer

    os.environ.setdefault("OPENAI_API_KEY", "sk-docs-example")
    with FakeServer() as fake, tempfile.TemporaryDirectory() as tmp:
        section = render_section(capture_with(fake, Path(tmp)))
    text = DOC.read_text(encoding="utf-8")
    DOC.write_text(text.replace(documented_section(text), section), encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    main()
