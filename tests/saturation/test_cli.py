"""`failcodes saturate` end to end: review file path, status, figure and pruning through the
CLI entry point (in process, for speed), and the terminal review through its real prompts in
a subprocess (a pseudo-terminal with pexpect, and piped stdin)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
import yaml

from failcodes import codebook
from failcodes.cli.main import main
from failcodes.saturation import ProjectStore
from tests.saturation.satfixtures import make_pool, small_codebook, write_inputs

PY = sys.executable


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(*args: str, cwd: Path) -> Result:
    """Run `failcodes saturate ARGS` in process (the real entry point, exit codes included)."""
    import contextlib
    import io
    import os

    out, err = io.StringIO(), io.StringIO()
    code = 0
    old = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(["saturate", *args])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(old)
    return Result(code, out.getvalue(), err.getvalue())


def setup_project(tmp: Path, script: dict[str, list[dict[str, object]]]) -> tuple[Path, Path]:
    pool = make_pool(12)
    cb, units = write_inputs(tmp / "in", small_codebook(), pool)
    coder = tmp / "in" / "coder.json"
    # units 0, 3, 6, 9 -> different_context on scope; others high quality
    coder.write_text(
        json.dumps({"codes": {u.id: {"scope": "different_context"} for u in pool[::3]}})
    )
    proposer = tmp / "in" / "proposer.json"
    proposer.write_text(json.dumps(script))
    done = cli(
        "init",
        "trial",
        "--codebook",
        str(cb),
        "--units",
        str(units),
        "--batch-size",
        "4",
        "--stop-k",
        "2",
        "--created-by",
        "carol",
        "--export-to",
        "tax",
        cwd=tmp,
    )
    assert done.returncode == 0, done.stderr
    assert "12 retrieval units" in done.stdout
    readme = (tmp / "annotations" / "trial" / "README.md").read_text()
    assert "failcodes saturate round trial --dir annotations/trial" in readme
    return coder, proposer


def scripted_round(work: Path, coder: Path, proposer: Path) -> str:
    """``saturate round trial`` with the scripted judge and proposer; its stdout."""
    done = cli(
        "round", "trial", "--judge", f"scripted:{coder}", "--proposer", f"scripted:{proposer}",
        cwd=work,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def decide(work: Path, number: int, *decisions: dict[str, str]) -> Result:
    """Round ``number``'s review file filled in by reviewer dana (a decision a proposal), read."""
    review = work / "annotations" / "trial" / "rounds" / f"r{number:04d}" / "review.yaml"
    data = yaml.safe_load(review.read_text(encoding="utf-8"))
    data["reviewer"] = "dana"
    for item, decision in zip(data["proposals"], decisions, strict=True):
        item.update(decision)
    review.write_text(yaml.safe_dump(data), encoding="utf-8")
    return cli("review", "trial", "--file", str(review), cwd=work)


SCRIPT = {
    "1": [
        {
            "dimension": "scope",
            "parent_subcode": "different_context",
            "name": "Animal study",
            "definition": "Findings in animals, not humans.",
        },
        {
            "dimension": "scope",
            "parent_subcode": "different_context",
            "name": "Paediatric",
            "definition": "Children instead of adults.",
        },
        {
            "dimension": "entity_match",
            "parent_subcode": None,
            "name": "Wrong outcome",
            "definition": "The passage measures another outcome than the claim.",
        },
    ],
}


def test_review_file_end_to_end(workdir: Path) -> None:
    coder, proposer = setup_project(workdir, SCRIPT)
    done = cli(
        "round",
        "trial",
        "--judge",
        f"scripted:{coder}",
        "--proposer",
        f"scripted:{proposer}",
        cwd=workdir,
    )
    assert done.returncode == 0, done.stderr
    review = workdir / "annotations" / "trial" / "rounds" / "r0001" / "review.yaml"
    assert f"review file: {review.relative_to(workdir)}" in done.stdout
    assert "(heuristic baseline)" in done.stdout  # the scripted proposer is no LLM

    data = yaml.safe_load(review.read_text())
    assert [p["id"] for p in data["proposals"]] == ["r0001-p01", "r0001-p02", "r0001-p03"]
    assert data["proposals"][2]["parent_subcode"] == "new subcode"
    assert "subcode:different_context" in data["proposals"][0]["merge_targets"]
    assert data["proposals"][0]["examples"], "examples are shown to the reviewer"

    # a person edits the file: accept, rename, merge ...
    data["reviewer"] = "dana"
    data["proposals"][0]["decision"] = "accept"
    data["proposals"][1]["decision"] = "rename"
    data["proposals"][1]["new_name"] = "Paediatric population"
    data["proposals"][2]["decision"] = "merge"
    data["proposals"][2]["target"] = "subcode:entity_mismatch"
    edited = workdir / "edited.yaml"
    edited.write_text(yaml.safe_dump(data))
    done = cli("review", "trial", "--file", str(edited), cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "recorded 3 decision(s) by dana" in done.stdout
    assert "round 1 closed: 2 new pattern(s); codebook v2 written" in done.stdout
    # units 0, 3 (and 6, 9 if drawn) coded different_context in round 1 are flagged
    store = ProjectStore.open(workdir / "annotations" / "trial")
    batch = store.round(1).unit_ids
    touched = {u.id for u in make_pool(12)[::3]} & set(batch)
    assert {f.unit_id for f in store.recode_flags()} == touched
    assert f"{len(touched)} unit(s) flagged for re-coding" in done.stdout

    v2 = store.codebook()
    leaves = [
        leaf.id for leaf in v2.part(store.config().kind).dimension("scope").subcodes[1].leaves
    ]
    assert leaves == ["animal_study", "paediatric_population"]
    assert [(d.reviewer, d.via, d.action.value) for d in store.decisions()] == [
        ("dana", "file", "accept"),
        ("dana", "file", "rename"),
        ("dana", "file", "merge"),
    ]

    # status as JSON, with the accumulation figure
    fig = workdir / "curve.png"
    done = cli("status", "trial", "--format", "json", "--figure", str(fig), cwd=workdir)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["versions"] == [1, 2]
    assert info["accumulation"] == [
        {"round": 1, "new_patterns": 2, "cumulative": 2, "codebook_version": 2}
    ]
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # a bad decision names the file and the line of the proposal
    data["proposals"][0]["decision"] = "maybe"
    edited.write_text(yaml.safe_dump(data))
    done = cli("review", "trial", "--file", str(edited), cwd=workdir)
    assert done.returncode == 2
    assert done.stderr.startswith(f"failcodes: error: {edited}:")
    assert "unknown decision 'maybe'" in done.stderr


def test_two_empty_rounds_saturate_and_prune(workdir: Path) -> None:
    coder, proposer = setup_project(workdir, SCRIPT)
    cli(
        "round",
        "trial",
        "--judge",
        f"scripted:{coder}",
        "--proposer",
        f"scripted:{proposer}",
        cwd=workdir,
    )
    auto = cli(
        "round",
        "trial",
        "--judge",
        f"scripted:{coder}",
        "--proposer",
        f"scripted:{proposer}",
        cwd=workdir,
    )
    assert auto.returncode == 2 and "awaits review" in auto.stderr
    review = workdir / "annotations" / "trial" / "rounds" / "r0001" / "review.yaml"
    data = yaml.safe_load(review.read_text())
    data["reviewer"] = "erin"
    for p, d in zip(data["proposals"], ["accept", "reject", "accept"], strict=True):
        p["decision"] = d
    review.write_text(yaml.safe_dump(data))
    assert cli("review", "trial", "--file", str(review), cwd=workdir).returncode == 0
    for n in (2, 3):
        done = cli(
            "round",
            "trial",
            "--judge",
            f"scripted:{coder}",
            "--proposer",
            f"scripted:{proposer}",
            cwd=workdir,
        )
        assert done.returncode == 0, done.stderr
        assert f"round {n} closed: 0 new pattern(s)" in done.stdout
    assert "SATURATED" in done.stdout
    done = cli("round", "trial", "--judge", f"scripted:{coder}", cwd=workdir)
    assert done.returncode == 2 and "saturated" in done.stderr
    done = cli("status", "trial", "--figure", "curve.pdf", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "accumulation: r1: +2 (=2), r2: +0 (=2), r3: +0 (=2)" in done.stdout
    assert "2/2 rounds without new patterns - SATURATED" in done.stdout
    assert (workdir / "curve.pdf").read_bytes()[:5] == b"%PDF-"

    # pruning: animal_study has its example units; wrong_outcome is a subcode (not listed)
    done = cli("prune", "trial", "--min-support", "99", cwd=workdir)
    assert done.returncode == 0, done.stderr
    listing = workdir / "annotations" / "trial" / "prune" / "prune-0001.yaml"
    data = yaml.safe_load(listing.read_text())
    assert [c["leaf_id"] for c in data["leaves"]] == ["animal_study"]
    data["leaves"][0]["action"] = "fold"
    data["reviewer"] = "erin"
    listing.write_text(yaml.safe_dump(data))
    done = cli("prune", "trial", "--apply", str(listing), cwd=workdir)
    assert done.returncode == 0, done.stderr
    store = ProjectStore.open(workdir / "annotations" / "trial")
    v3 = store.codebook()
    sub = v3.part(store.config().kind).dimension("scope").subcodes[1]
    assert (v3.version, sub.leaves) == (3, ())
    assert sub.include == ("Animal study: Findings in animals, not humans.",)
    assert "folded rare leaf animal_study into scope.different_context" in v3.changelog
    assert "decided by erin" in v3.changelog
    # the leaf is gone through a `remove` migration entry; its parent code stays
    changes = store.changes(3)
    assert changes is not None
    assert changes["migration_map"]["codes"]["animal_study"] is None
    assert changes["migration_map"]["codes"]["different_context"] == "different_context"
    # every version was also exported as taxonomy YAML that loads back identically
    assert codebook.load(workdir / "tax" / "testbook.v3.yaml") == v3
    assert codebook.load(workdir / "tax" / "testbook.v2.yaml") == store.codebook(2)


@pytest.mark.parametrize("driver", ["pexpect", "pipe"])
def test_terminal_review_through_real_prompts(workdir: Path, driver: str) -> None:
    coder, proposer = setup_project(workdir, SCRIPT)
    cli(
        "round",
        "trial",
        "--judge",
        f"scripted:{coder}",
        "--proposer",
        f"scripted:{proposer}",
        cwd=workdir,
    )
    args = [
        "-m",
        "failcodes",
        "saturate",
        "review",
        "trial",
        "--interactive",
        "--reviewer",
        "frank",
    ]
    if driver == "pipe":
        # accept p01; merge p02 into target 2 of the listed targets; quit before p03
        done = subprocess.run(
            [PY, *args],
            cwd=workdir,
            input="a\nm\n2\nq\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "recorded 2 decision(s) by frank; 1 left for later" in done.stdout
        store = ProjectStore.open(workdir / "annotations" / "trial")
        # targets of scope, in order: subcode:exact_scope, subcode:different_context
        assert [(d.action.value, d.target) for d in store.decisions()] == [
            ("accept", None),
            ("merge", "subcode:different_context"),
        ]
        assert store.round(1).phase.value == "proposed"
        return
    child = pexpect.spawn(PY, args, cwd=str(workdir), encoding="utf-8", timeout=30)
    child.expect(r"\[1/3\] r0001-p01")
    child.expect("name:\\s+Animal study")
    child.expect("examples")
    child.expect("Decision")
    child.sendline("x")  # invalid answer: asked again
    child.expect("please answer one of")
    child.sendline("r")
    child.expect("New name: ")
    child.sendline("Animal model evidence")
    child.expect(r"New definition \(empty keeps it\): ")
    child.sendline("")
    child.expect("recorded: rename by frank")
    child.expect(r"\[2/3\] r0001-p02")
    child.expect("Decision")
    child.sendline("j")
    child.expect("recorded: reject by frank")
    child.expect(r"\[3/3\] r0001-p03\s+entity_match > NEW SUBCODE")
    child.expect("Decision")
    child.sendline("a")
    child.expect("recorded 3 decision\\(s\\) by frank")
    child.expect("round 1 closed: 2 new pattern\\(s\\); codebook v2 written")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    store = ProjectStore.open(workdir / "annotations" / "trial")
    v2 = store.codebook()
    ent = v2.part(store.config().kind).dimension("entity_match")
    assert ent.code_ids()[-1] == "wrong_outcome"  # new subcode
    scope = v2.part(store.config().kind).dimension("scope")
    assert [leaf.label for leaf in scope.subcodes[1].leaves] == ["Animal model evidence"]
    assert {(d.reviewer, d.via) for d in store.decisions()} == {("frank", "terminal")}


def test_auto_accept_is_explicit_and_labelled(workdir: Path) -> None:
    coder, proposer = setup_project(workdir, SCRIPT)
    done = cli(
        "round",
        "trial",
        "--judge",
        f"scripted:{coder}",
        "--proposer",
        f"scripted:{proposer}",
        "--auto-accept",
        "--reviewer",
        "ci-bot",
        cwd=workdir,
    )
    assert done.returncode == 0, done.stderr
    assert "AUTO-ACCEPTED 3 proposal(s) without human review" in done.stdout
    store = ProjectStore.open(workdir / "annotations" / "trial")
    assert {(d.via, d.reviewer) for d in store.decisions()} == {("auto-accept", "ci-bot")}
    assert store.round(1).new_patterns == 3 and store.codebook().version == 2
