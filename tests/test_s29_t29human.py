"""Session 29 (t29human): the human loop, second pass: reviewers' proposals reach `saturate`,
spelling variants are said, and new shapes (issue 30)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.saturation.test_cli import cli, setup_project

PAEDIATRIC = {
    "dimension": "scope",
    "parent_subcode": "different_context",
    "name": "Paediatric population",
    "definition": "Children instead of the claim's adults.",
}


PEDIATRIC = {"name": "Pediatric population", "definition": "Patients under 18 years."}


def _round(work: Path, coder: Path, proposer: Path) -> str:
    done = cli(
        "round", "trial", "--judge", f"scripted:{coder}", "--proposer", f"scripted:{proposer}",
        cwd=work,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _decide(work: Path, number: int, *decisions: dict[str, str]) -> Any:
    review = work / "annotations" / "trial" / "rounds" / f"r{number:04d}" / "review.yaml"
    data = yaml.safe_load(review.read_text(encoding="utf-8"))
    data["reviewer"] = "dana"
    for item, decision in zip(data["proposals"], decisions, strict=True):
        item.update(decision)
    review.write_text(yaml.safe_dump(data), encoding="utf-8")
    return cli("review", "trial", "--file", str(review), cwd=work)


# --- (b) spelling variants are said, not joined ------------------------------------------


def test_a_spelling_variant_of_a_leaf_is_said_not_joined(tmp_path: Path) -> None:
    # round 1 adds the leaf 'Paediatric population'; round 2's proposer gives 'Pediatric
    # population' ('Patients under 18 years.'). Normalised 'paediatric population' / 'pediatric
    # population': one edit (delete the 'a'), not equal; similarity max(J_name 1/3, (1/3 +
    # J_all 1/11) / 2) = 1/3 < 0.5 (J_all: 'population' of 11 tokens): main opened it as a new
    # pattern without a word. It stays open (a few edits also part hypertension/hypotension),
    # and the round's output and the review file say it.
    coder, proposer = setup_project(
        tmp_path, {"1": [PAEDIATRIC], "2": [{**PAEDIATRIC, **PEDIATRIC}]}
    )
    _round(tmp_path, coder, proposer)
    assert _decide(tmp_path, 1, {"decision": "accept"}).returncode == 0
    out = _round(tmp_path, coder, proposer)
    assert "1 proposal(s), 1 after deduplication" in out
    said = (
        "note: proposal r0002-p01 (Pediatric population): new pattern 'Pediatric population' is "
        "close to existing code 'paediatric_population' ('Paediatric population') (edit "
        "distance 1): a spelling variant is not joined by itself; merge with target "
        "leaf:paediatric_population if it is the same pattern"
    )
    assert said in out
    review = tmp_path / "annotations" / "trial" / "rounds" / "r0002" / "review.yaml"
    item = yaml.safe_load(review.read_text(encoding="utf-8"))["proposals"][0]
    assert item["proposer_notes"] == [said.split("): ", 1)[1]]
    # merged, the round adds nothing: the stop rule counts it (1/2), as by hand
    done = _decide(tmp_path, 2, {"decision": "merge", "target": "leaf:paediatric_population"})
    assert done.returncode == 0, done.stderr
    status = cli("status", "trial", cwd=tmp_path).stdout
    assert "accumulation: r1: +1 (=1), r2: +0 (=1)" in status


def test_close_names_by_hand() -> None:
    from failcodes.saturation.dedupe import close_names, edit_distance

    assert edit_distance("tumour", "tumor") == 1  # delete u
    assert edit_distance("haemorrhage", "hemorrhage") == 1  # delete a
    assert edit_distance("hypertension", "hypotension") == 2  # e->o, delete r
    assert close_names("Tumour invasion", [("leaf:t", "Tumor invasion")]) == [
        ("leaf:t", "Tumor invasion", 1)
    ]
    # 'rat'/'cat': 1 edit in 3 letters, more than one per 5: not said
    assert close_names("Rat", [("leaf:c", "Cat")]) == []
    # equal once normalised: a duplicate, not a variant
    assert close_names("Animal studies", [("leaf:a", "Animal study")]) == []
