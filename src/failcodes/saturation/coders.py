"""Coders: what codes a round's batch with the current codebook.

The saturation loop needs one call from a judge: code these units, yielding each annotation as
soon as it is finished, so the round can journal it at once (and a killed round resumes without
re-coding). :class:`Coder` is that seam; :class:`failcodes.saturation.judging.JudgeCoder`
adapts the judge package to it, and :class:`ScriptedCoder` is the deterministic fake for tests.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from failcodes.annotations import Annotation, CoderKind
from failcodes.codebook import Codebook
from failcodes.jsonio import read_json
from failcodes.units import Unit


class Coder(Protocol):
    """Codes units with a codebook, yielding each annotation as it finishes."""

    @property
    def name(self) -> str:
        """Coder spec recorded in the round (``offline``, ``anthropic:MODEL``, ``scripted``)."""

    @property
    def kind(self) -> CoderKind:
        """LLM, or HEURISTIC for the offline baseline and fakes."""

    def code(
        self, units: Sequence[Unit], codebook: Codebook, *, workdir: Path
    ) -> Iterator[Annotation]:
        """Yield one annotation per unit (any order).

        ``workdir`` (the round's folder) may hold the coder's own journal or cache.
        """


@dataclass
class ScriptedCoder:
    """Fake judge for tests: fixed codes per unit, the high-quality code elsewhere.

    ``codes[unit_id][dimension] = subcode`` and ``leaves[unit_id][dimension] = [leaf ids]``
    override the defaults. A leaf whose id is not in the current codebook is left out, so a
    scripted leaf only appears once the loop has accepted it. ``delay_s`` sleeps before each
    unit and ``calls_log`` gets one line per coded unit (used by the kill-and-resume test).
    """

    codes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    leaves: Mapping[str, Mapping[str, Sequence[str]]] = field(default_factory=dict)
    delay_s: float = 0.0
    calls_log: Path | None = None
    name: str = "scripted"
    kind: CoderKind = CoderKind.HEURISTIC

    @classmethod
    def from_file(cls, path: Path, **kwargs: object) -> ScriptedCoder:
        """Load ``{"codes": {...}, "leaves": {...}}`` from a JSON file."""
        data = read_json(path)
        return cls(codes=data.get("codes", {}), leaves=data.get("leaves", {}), **kwargs)  # type: ignore[arg-type]

    def code(
        self,
        units: Sequence[Unit],
        codebook: Codebook,
        *,
        workdir: Path | None = None,  # noqa: ARG002
    ) -> Iterator[Annotation]:
        """Yield scripted annotations, one per unit, in order."""
        ref = codebook.ref()
        for unit in units:
            if self.delay_s:
                time.sleep(self.delay_s)
            part = codebook.part(unit.kind)
            codes = {d.id: d.high_quality_code for d in part.dimensions}
            codes.update(self.codes.get(unit.id, {}))
            known = {
                leaf.id
                for d in part.dimensions
                for s in d.subcodes
                if s.id == codes.get(d.id)
                for leaf in s.leaves
            }
            leaves = {
                dim: [leaf for leaf in ids if leaf in known]
                for dim, ids in self.leaves.get(unit.id, {}).items()
            }
            if self.calls_log is not None:
                with self.calls_log.open("a", encoding="utf-8") as fh:
                    fh.write(unit.id + "\n")
            yield Annotation(
                unit_id=unit.id,
                unit_kind=unit.kind,
                codebook=ref,
                coder=self.name,
                coder_kind=self.kind,
                codes=codes,
                leaves={k: v for k, v in leaves.items() if v},
            )
