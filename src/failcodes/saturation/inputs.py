"""Edges of the saturation loop: read input files and resolve coder/proposer specs.

Specs:

* coder (``--judge``): ``offline`` or ``PROVIDER:MODEL`` go through the judge package
  (:mod:`failcodes.judge`); ``scripted:FILE.json`` is the deterministic fake.
* proposer (``--proposer``): ``offline`` (heuristic baseline), ``scripted:FILE.json``, or
  ``llm:PROVIDER:MODEL`` (the LLM path through a judge provider).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from failcodes import codebook
from failcodes.codebook import Codebook
from failcodes.errors import ConfigError, InputError
from failcodes.jsonio import read_json
from failcodes.saturation.coders import Coder, ScriptedCoder
from failcodes.saturation.proposers import OfflineProposer, Proposer, ScriptedProposer
from failcodes.tableio import read_models_jsonl
from failcodes.units import Unit


def load_codebook(path: Path) -> Codebook:
    """Read and validate a codebook.

    Taxonomy YAML goes through :func:`failcodes.codebook.load` (file:line errors); JSON is the
    model dump a project keeps in its lineage.
    """
    path = Path(path)
    if path.suffix != ".json":
        return codebook.load(path)
    data = read_json(path)
    try:
        return codebook.validate(Codebook.model_validate(data))
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise InputError(err["msg"], path=path, field=field) from exc


def load_units(path: Path) -> list[Unit]:
    """Read units from JSONL (one Unit per line); errors name file, line and field."""
    return read_models_jsonl(path, Unit)


def _scripted_path(spec: str) -> Path:
    path = Path(spec.partition(":")[2])
    if not path.is_file():
        raise ConfigError(f"{spec!r}: scripted file not found")
    return path


def resolve_coder(spec: str, *, base_url: str | None = None) -> Coder:
    """The coder named by ``spec`` (see module docstring)."""
    if spec.startswith("scripted:"):
        return ScriptedCoder.from_file(_scripted_path(spec))
    from failcodes.saturation.judging import JudgeCoder

    return JudgeCoder(spec, base_url=base_url)


def resolve_proposer(spec: str, *, base_url: str | None = None) -> Proposer:
    """The proposer named by ``spec`` (see module docstring)."""
    if spec == "offline":
        return OfflineProposer()
    if spec.startswith("scripted:"):
        return ScriptedProposer.from_file(_scripted_path(spec))
    if spec.startswith("llm:"):
        from failcodes.saturation.judging import llm_proposer

        return llm_proposer(spec.removeprefix("llm:"), base_url=base_url)
    raise ConfigError(
        f"unknown proposer {spec!r}; use offline, llm:PROVIDER:MODEL or scripted:FILE.json"
    )
