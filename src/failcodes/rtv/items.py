"""RtV input items and ordinal answer scales.

Input: JSONL, one item a line; the fields are docs/rtv.md's ("Inputs").
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.errors import InputError
from failcodes.jsonio import iter_jsonl
from failcodes.tableio import validate_record


class RtvItem(FrozenModel):
    """One model output to verify against its source document."""

    item_id: str
    doc_id: str
    model: str
    question: str
    response: str
    explanation: str | None = None
    human: str | None = None
    group: str | None = None
    question_key: str | None = None

    @property
    def key(self) -> str:
        """The cross-model question key (``question_key`` or ``doc_id`` + question)."""
        return self.question_key or f"{self.doc_id}::{self.question}"


class OrdinalScale(FrozenModel):
    """An ordinal answer scale with a binary collapse (answers matched case-insensitively)."""

    name: str
    levels: dict[str, int] = Field(description="answer -> ordinal code")
    binary: dict[str, int] = Field(description="answer -> 0/1 decision after collapsing")

    def code(self, answer: str) -> int:
        """The ordinal code of an answer; raises ValueError naming the valid answers."""
        key = answer.strip().lower()
        if key not in self.levels:
            raise ValueError(
                f"answer {answer!r} is not on scale {self.name} ({', '.join(self.levels)})"
            )
        return self.levels[key]

    def collapse(self, answer: str) -> int:
        """The binary (decision-level) value of an answer."""
        self.code(answer)
        return self.binary[answer.strip().lower()]


#: RoB 2 signalling-question answers, coded as in seed 000 (yes=5 ... not applicable=0).
#: Binary collapse (our choice, documented): yes / probably yes -> 1, everything else -> 0.
ROB2_ITEM = OrdinalScale(
    name="rob2-item",
    levels={
        "yes": 5,
        "probably yes": 4,
        "probably no": 3,
        "no": 2,
        "no information": 1,
        "not applicable": 0,
    },
    binary={
        "yes": 1,
        "probably yes": 1,
        "probably no": 0,
        "no": 0,
        "no information": 0,
        "not applicable": 0,
    },
)

#: RoB 2 domain judgements, coded as in seed 000 (high=3, some concerns=2, low=1).
#: Binary collapse (our choice, documented): low -> 0, some concerns / high -> 1 ("at risk").
ROB2_DOMAIN = OrdinalScale(
    name="rob2-domain",
    levels={"low": 1, "some concerns": 2, "high": 3},
    binary={"low": 0, "some concerns": 1, "high": 1},
)

SCALES: dict[str, OrdinalScale] = {s.name: s for s in (ROB2_ITEM, ROB2_DOMAIN)}


def read_items(path: str | Path) -> list[RtvItem]:
    """Read RtV items from JSONL; errors name the file, line and field."""
    p = Path(path)
    items: list[RtvItem] = []
    seen: set[str] = set()
    for lineno, obj in iter_jsonl(p):
        item = validate_record(RtvItem, obj, p, lineno)
        if item.item_id in seen:
            raise InputError(
                f"duplicate item_id {item.item_id!r}", path=p, line=lineno, field="item_id"
            )
        seen.add(item.item_id)
        items.append(item)
    if not items:
        raise InputError("no items", path=p)
    return items
