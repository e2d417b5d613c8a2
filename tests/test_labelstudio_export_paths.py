"""``labelstudio export`` of a disagreements file: the streamed path gives the model path's tasks.

The export streams the units from the disagreement reader's records (no model built), reads
each judged unit's annotation as a msgspec view and writes each task's JSON from a template
(issue 30). The model path builds every unit (``build_units``), validates every annotation
(pydantic), and the standard library writes ``build_tasks``' list. Both must give the same
bytes on a shape the other fixtures do not use: multi-label code sets, ``not_assessable``, a
code not in the codebook, an unscored answer, a judged unit that is not among the units,
units not judged, an empty passage title, shared passages, a closed-book system, verdict
words the pipelines wrote their own way and claims with non-ASCII, U+2028 and quotes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from failcodes import codebook as codebooks
from failcodes.annotations import (
    NOT_ASSESSABLE,
    Annotation,
    CoderKind,
    DimensionEvidence,
    Status,
)
from failcodes.disagreementio import read_disagreements
from failcodes.disagreements import find_disagreements
from failcodes.fileio import write_json
from failcodes.labels import Label
from failcodes.labelstudio.tasks import build_tasks, select_judged
from failcodes.tableio import read_models_jsonl
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.units import Unit, UnitKind, build_units, disagreement_traces
from failcodes.verdicts import ASSERTED, Verdict
from tests.judge_helpers import make_codebook, write_disagreements
from tests.test_cli_labelstudio import run  # noqa: F401  (in-process CLI fixture)

CB = make_codebook(multi_label=("scope", "inference"))
JUDGE = "openai:gpt-test"
#: how each system wrote the refuted and the supported verdict
WORDS = {"bm25": ("FALSE", "Supported "), "dense": ("refuted", "supported"), "cb": (ASSERTED,) * 2}


def _traces() -> list[Trace]:
    """3 systems x 3 sentences x 2 claims. Passage 0 of a claim is shared by bm25 and dense;
    passage 1 has an empty title (shown as none); ``cb`` is closed-book (its passages are
    citations: no retrieval unit); sentence 2's claim 1 has no reasoning."""
    out = []
    for system, (refuted, supported) in WORDS.items():
        for s in range(3):
            for c in range(2):
                verdict = Verdict.REFUTED if (s + c) % 2 else Verdict.SUPPORTED
                passages = (
                    Passage(passage_id=f"p{s}{c}", rank=1, text=f"Shared {s}.{c}", title="T"),
                    Passage(passage_id=f"{system}{s}{c}", rank=2, text=f"{system} {s}.{c}"),
                )
                out.append(
                    Trace(
                        system=system,
                        question_id="q",
                        sentence_id=f"q:s{s}",
                        claim_id=f"c{s}.{c}",
                        claim=f'Claim {s}.{c} \u00e9\u2028 "quoted"',
                        verdict=verdict,
                        raw_verdict=refuted if verdict is Verdict.REFUTED else supported,
                        reasoning=None if (s, c) == (2, 1) else f"Because {s}.{c}.",
                        passages=passages,
                        evidence_source=EvidenceSource.NONE if system == "cb" else None,
                    )
                )
    return out


def _annotation(unit: Unit, **fields: Any) -> Annotation:
    base: dict[str, Any] = {
        "unit_id": unit.id,
        "unit_kind": unit.kind,
        "codebook": CB.ref(),
        "coder": JUDGE,
        "coder_kind": CoderKind.LLM,
    }
    return Annotation(**(base | fields))


def _judged(units: list[Unit]) -> list[Annotation]:
    """Units 0-2 judged (multi-label + not_assessable + doubt; an unknown code; unscored),
    an annotation of a unit not among them, the rest unjudged; unit 0 judged twice (the
    last wins)."""
    part = CB.part(units[0].kind)
    dims = [d.id for d in part.dimensions]
    multi = "scope" if units[0].kind is UnitKind.RETRIEVAL else "inference"
    lows = [s.id for s in part.dimension(multi).subcodes if not s.high_quality]
    first = {d: part.dimension(d).subcodes[0].id for d in dims}
    unassessed = next(d for d in dims[2:] if d != multi)
    doubt = DimensionEvidence(
        rationale="hard to say", quote="not there", quote_found=False, uncertain=True
    )
    ghost = units[0].model_copy(update={"id": "0123456789abcdef"})
    return [
        _annotation(units[0], codes=first),  # replaced by the next one
        _annotation(
            units[0],
            codes=first | {multi: lows[0], unassessed: NOT_ASSESSABLE},
            code_sets={multi: lows},
            evidence={multi: doubt, dims[0]: DimensionEvidence(rationale="fine", quote="x")},
        ),
        _annotation(units[1], codes=first | {dims[1]: "made_up"}, rationale="r", quote="q"),
        _annotation(units[2], status=Status.UNSCORED, reason="no JSON in answer"),
        _annotation(ghost, codes=first),
    ]


def _exports(tmp_path: Path, runner: Any, kind: UnitKind) -> tuple[list[Any], list[Any]]:
    """(streamed CLI export, model path) for ``kind``."""
    labels = [Label(question_id="q", sentence_id=f"q:s{s}", has_error=s == 1) for s in range(3)]
    dis = tmp_path / "dis.jsonl"
    write_disagreements(dis, find_disagreements(_traces(), labels, "refuted"))
    units = build_units(disagreement_traces(read_disagreements(dis)), kind)
    anns = tmp_path / f"{kind.value}.jsonl"
    anns.write_text("".join(a.model_dump_json() + "\n" for a in _judged(units)))
    cb_path = tmp_path / "cb.yaml"
    cb_path.write_text(codebooks.dump(CB), encoding="utf-8")
    out = tmp_path / f"{kind.value}.json"
    args = ("export", dis, "-p", kind.value, "-c", cb_path, "--judged", anns, "-o", out)
    proc = runner(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    models = build_tasks(units, CB, kind, select_judged(read_models_jsonl(anns, Annotation), CB))
    # the very bytes the standard library writes for the model path's tasks
    assert out.read_bytes() == write_json(tmp_path / "models.json", models).read_bytes()
    return json.loads(out.read_text(encoding="utf-8")), models


def test_streamed_retrieval_tasks_are_the_model_paths(
    tmp_path: Path,
    run: Any,  # noqa: F811
) -> None:
    streamed, models = _exports(tmp_path, run, UnitKind.RETRIEVAL)
    assert streamed == models
    # by hand: the FPs are sentences 0 and 2 (no error, a refuted claim each) of bm25 and
    # dense; cb is closed-book. Per claim: the shared passage (one unit for both systems)
    # and each system's own: 2 sentences x 2 claims x (1 + 2) = 12 units
    assert len(streamed) == 12
    first = streamed[0]["data"]
    assert first["passage"] == "[1] p00 (T)\nShared 0.0"
    assert streamed[1]["data"]["passage"] == "[2] bm2500\nbm25 0.0"  # empty title: none
    # unit 0: scope given both low codes (codebook order), trustworthy not assessable,
    # entity_match's evidence without doubt, scope's with doubt and a quote not found
    assert first["proposal"].splitlines() == [
        f"Judge: {JUDGE}",
        "entity_match: exact_entity (exact entity)",
        "  why: fine",
        '  quote: "x"',
        "scope: broader_scope (broader scope), narrower_scope (narrower scope) [judge uncertain]",
        "  why: hard to say",
        '  quote (not found in the text): "not there"',
        "trustworthy: not_assessable (not assessable from this unit)",
        "polarity: direct (direct)",
        "chunking: complete_chunk (complete chunk)",
    ]
    # the prediction keeps this part's codes only: not_assessable is none of them
    (pred,) = streamed[0]["predictions"]
    assert pred["model_version"] == f"{CB.ref()} {JUDGE}"
    assert [(r["from_name"], r["value"]["choices"]) for r in pred["result"]] == [
        ("entity_match", ["exact_entity"]),
        ("scope", ["broader_scope", "narrower_scope"]),
        ("polarity", ["direct"]),
        ("chunking", ["complete_chunk"]),
    ]
    assert "scope: made_up (not in this codebook)" in streamed[1]["data"]["proposal"]
    assert [r["from_name"] for r in streamed[1]["predictions"][0]["result"]] == [
        "entity_match",
        "trustworthy",
        "polarity",
        "chunking",
    ]
    assert "predictions" not in streamed[2]  # unscored
    assert streamed[2]["data"]["proposal"].endswith("no usable answer: no JSON in answer")
    assert all("predictions" not in t for t in streamed[3:])  # not judged
    assert streamed[3]["data"]["proposal"] == "No judge proposal for this unit."


def test_streamed_verification_tasks_are_the_model_paths(
    tmp_path: Path,
    run: Any,  # noqa: F811
) -> None:
    streamed, models = _exports(tmp_path, run, UnitKind.VERIFICATION)
    assert streamed == models
    # by hand: the 2 x 2 FP claims of each of the 3 systems, but for sentence 2's claim 1 (no
    # reasoning): 3 x 3 = 9 units (their passages differ by system)
    assert len(streamed) == 9
    verdicts = [t["data"]["verdict"] for t in streamed]
    # systems in name order; claim 0.0 supported, 0.1 refuted, 2.0 supported; bm25 wrote
    # 'Supported ' and 'FALSE' (only the second differs once folded), cb asserted the
    # verdicts, dense wrote the canonical words
    assert verdicts == [
        "supported",
        "refuted (the pipeline wrote: FALSE)",
        "supported",
        f"supported ({ASSERTED}, no verifier)",
        f"refuted ({ASSERTED}, no verifier)",
        f"supported ({ASSERTED}, no verifier)",
        "supported",
        "refuted",
        "supported",
    ]
    assert streamed[0]["data"]["passages"] == "[1] p00 (T)\nShared 0.0\n\n[2] bm2500\nbm25 0.0"
    (pred,) = streamed[0]["predictions"]
    inference = [r["value"]["choices"] for r in pred["result"] if r["from_name"] == "inference"]
    assert inference == [["overreach", "conflict_synthesis_failure"]]
