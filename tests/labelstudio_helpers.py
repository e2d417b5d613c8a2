"""Small codebook, units and judge annotations shared by the Label Studio tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from failcodes.annotations import Annotation, CoderKind
from failcodes.codebook import Codebook, Dimension, Part, Subcode
from failcodes.traces import Passage
from failcodes.units import Unit, UnitKind, unit_id
from failcodes.verdicts import Verdict

if TYPE_CHECKING:
    from failcodes.labelstudio.client import LabelStudioClient


def sub(code: str, hq: bool = False) -> Subcode:
    return Subcode(
        id=code, label=code.replace("_", " ").title(), definition=f"{code} def.", high_quality=hq
    )


def toy_codebook() -> Codebook:
    """Retrieval: entity (3 codes), scope (2); verification: inference (2)."""
    return Codebook(
        name="toy",
        version=1,
        parts=(
            Part(
                id=UnitKind.RETRIEVAL,
                label="Retrieval",
                dimensions=(
                    Dimension(
                        id="entity",
                        label="Entity match",
                        definition="Same entities?",
                        subcodes=(
                            sub("exact_entity", True),
                            sub("partial_entity"),
                            sub("irrelevant"),
                        ),
                    ),
                    Dimension(
                        id="scope",
                        label="Scope",
                        definition="Same scope?",
                        subcodes=(sub("exact_scope", True), sub("broader_scope")),
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
                        definition="Valid?",
                        subcodes=(sub("valid_inference", True), sub("overreach")),
                    ),
                ),
            ),
        ),
    )


def retrieval_unit(i: int) -> Unit:
    claim, text = f"Claim {i}: statins lower LDL.", f"Passage {i} about statins."
    return Unit(
        id=unit_id(UnitKind.RETRIEVAL, claim, (text,)),
        kind=UnitKind.RETRIEVAL,
        claim=claim,
        passages=(Passage(passage_id=f"p{i}", rank=1, text=text, title=f"Doc {i}"),),
    )


def verification_unit(i: int) -> Unit:
    claim, texts = f"Claim {i}", (f"First {i}", f"Second {i}")
    return Unit(
        id=unit_id(UnitKind.VERIFICATION, claim, texts, "Because.", Verdict.SUPPORTED),
        kind=UnitKind.VERIFICATION,
        claim=claim,
        passages=tuple(
            Passage(passage_id=f"p{k}", rank=k + 1, text=t) for k, t in enumerate(texts)
        ),
        reasoning="Because.",
        verdict=Verdict.SUPPORTED,
    )


ENTITY = ("exact_entity", "partial_entity", "irrelevant")
SCOPE = ("exact_scope", "broader_scope")


def judge_codes(i: int) -> dict[str, str]:
    """Deterministic codes covering every subcode: entity cycles by 3, scope by 2."""
    return {"entity": ENTITY[i % 3], "scope": SCOPE[i % 2]}


def judged(unit: Unit, cb: Codebook, i: int, coder: str = "anthropic:claude-test") -> Annotation:
    return Annotation(
        unit_id=unit.id,
        unit_kind=unit.kind,
        codebook=cb.ref(),
        coder=coder,
        coder_kind=CoderKind.HEURISTIC if coder == "offline" else CoderKind.LLM,
        codes=judge_codes(i),
        rationale=f"rationale {i}",
    )


def create_user(client: LabelStudioClient, email: str) -> int:
    """Create an annotator account on the server (or find it by email); return its user id."""
    existing = {name: uid for uid, name in client.users().items()}
    if email in existing:
        return existing[email]
    with client._calling(f"create user {email!r}"):
        user = client._sdk.users.create(username=email, email=email)
    assert user.id is not None, email
    return int(user.id)


def annotate(
    client: LabelStudioClient,
    task_id: int,
    result: Sequence[dict[str, Any]],
    *,
    completed_by: int,
    lead_time: float | None = None,
) -> int:
    """Record an annotation on a task as user ``completed_by`` (a reviewer); return its id."""
    with client._calling(f"annotate task {task_id}"):
        ann = client._sdk.annotations.create(
            id=task_id, result=list(result), completed_by=completed_by, lead_time=lead_time
        )
    assert ann.id is not None, task_id
    return int(ann.id)
