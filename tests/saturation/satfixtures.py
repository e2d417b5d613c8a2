"""Helpers for the saturation tests: a small two-dimension codebook and a 30-unit pool."""

from __future__ import annotations

import json
from pathlib import Path

from failcodes.codebook import Codebook, Dimension, Part, Subcode
from failcodes.traces import Passage
from failcodes.units import Provenance, Unit, UnitKind, unit_id


def small_codebook() -> Codebook:
    """Retrieval part with two dimensions; verification part with one step."""
    return Codebook(
        name="testbook",
        version=1,
        changelog="seed",
        parts=(
            Part(
                id=UnitKind.RETRIEVAL,
                label="Retrieval",
                dimensions=(
                    Dimension(
                        id="entity_match",
                        label="Entity match",
                        definition="Same condition, intervention, population, outcome.",
                        subcodes=(
                            Subcode(
                                id="exact_entity",
                                label="Exact entity",
                                definition="All entities match.",
                                high_quality=True,
                            ),
                            Subcode(
                                id="entity_mismatch",
                                label="Entity mismatch",
                                definition="A key entity differs from the claim.",
                            ),
                            Subcode(
                                id="irrelevant",
                                label="Irrelevant",
                                definition="Nothing to do with the claim.",
                            ),
                        ),
                    ),
                    Dimension(
                        id="scope",
                        label="Scope",
                        definition="Whether the passage covers the claim's scope.",
                        subcodes=(
                            Subcode(
                                id="exact_scope",
                                label="Exact scope",
                                definition="Same scope as the claim.",
                                high_quality=True,
                            ),
                            Subcode(
                                id="different_context",
                                label="Different context",
                                definition="Other population, setting, dose or time.",
                            ),
                        ),
                    ),
                ),
            ),
            Part(
                id=UnitKind.VERIFICATION,
                label="Verification",
                dimensions=(
                    Dimension(
                        id="inference",
                        label="Inference",
                        definition="Whether the reasoning's inference is valid.",
                        subcodes=(
                            Subcode(
                                id="valid_inference",
                                label="Valid",
                                definition="Sound.",
                                high_quality=True,
                            ),
                            Subcode(id="overreach", label="Overreach", definition="Too far."),
                        ),
                    ),
                ),
            ),
        ),
    )


def make_unit(i: int, passage: str | None = None, system: str | None = None) -> Unit:
    """Retrieval unit number ``i`` (content differs per i, so ids differ)."""
    claim = f"Drug {i} lowers blood pressure in adults"
    text = passage or f"Trial {i} of drug {i} measured blood pressure in adult patients."
    sys_name = system or "ABC"[i % 3]
    return Unit(
        id=unit_id(UnitKind.RETRIEVAL, claim, (text,)),
        kind=UnitKind.RETRIEVAL,
        claim=claim,
        passages=(Passage(passage_id=f"p{i}", rank=1, text=text),),
        provenance=(
            Provenance(system=sys_name, question_id=f"q{i}", sentence_id="s1", claim_id="c1"),
        ),
    )


def make_pool(n: int = 30) -> list[Unit]:
    """``n`` units, systems A, B, C in turn."""
    return [make_unit(i) for i in range(n)]


def write_inputs(folder: Path, codebook: Codebook, pool: list[Unit]) -> tuple[Path, Path]:
    """Codebook JSON and units JSONL files for CLI tests."""
    folder.mkdir(parents=True, exist_ok=True)
    cb = folder / "codebook.json"
    cb.write_text(json.dumps(codebook.model_dump(mode="json")), encoding="utf-8")
    units = folder / "units.jsonl"
    units.write_text("".join(u.model_dump_json() + "\n" for u in pool), encoding="utf-8")
    return cb, units
