"""Session 30 (t30human): the human loop, third pass: left items of session 29 and new shapes
(issue 30)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_cli_labelstudio import run  # noqa: F401  (in-process CLI fixture)

# --- Label Studio: a --judged push with another judge (real server) --------------------------


def test_a_judged_push_with_another_judge_says_which_tasks_lose_their_codes(
    labelstudio_server: tuple[str, str],
    tmp_path: Path,
    run: Any,  # noqa: F811
) -> None:
    # units 0-1 pushed --judged with judge A, then units 2-3 --judged with judge B into the same
    # project. Label Studio shows a task's predictions of the project's one model version
    # (label_studio/tasks/serializers.py, get_predictions: predictions.filter(model_version=
    # project.model_version)); the second push sets it to B's, so units 0-1 (A's predictions
    # only) show no code pre-selected from then on. main: '2 tasks imported, 0 already there'
    # and nothing else. By hand: 2 tasks hide A's.
    from failcodes.labelstudio.client import LabelStudioClient
    from failcodes.labelstudio.tasks import model_version
    from tests.labelstudio_helpers import judged, retrieval_unit, toy_codebook
    from tests.test_cli_labelstudio import write_codebook

    url, token = labelstudio_server
    cb = toy_codebook()
    cb_path = write_codebook(tmp_path)
    units = [retrieval_unit(9300 + i) for i in range(4)]
    for name, part in (("a", units[:2]), ("b", units[2:])):
        (tmp_path / f"{name}.units.jsonl").write_text(
            "".join(u.model_dump_json() + "\n" for u in part)
        )
    a = [judged(u, cb, i, coder="openai:judge-a") for i, u in enumerate(units[:2])]
    b = [judged(u, cb, i, coder="openai:judge-b") for i, u in enumerate(units[2:])]
    for name, anns in (("a", a), ("b", b)):
        (tmp_path / f"{name}.judged.jsonl").write_text(
            "".join(x.model_dump_json() + "\n" for x in anns)
        )
    version_a, version_b = model_version(cb, a[0]), model_version(cb, b[0])
    env = {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": token}
    args = ("-p", "retrieval", "-c", cb_path, "--project", "s30 two judges")
    proc = run("push", "a.units.jsonl", *args, "--judged", "a.judged.jsonl", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("2 tasks imported, 0 already there")
    proc = run("push", "b.units.jsonl", *args, "--judged", "b.judged.jsonl", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (
        f"2 tasks imported, 0 already there; Label Studio pre-selects one model version's "
        f"predictions, now {version_b!r} (it was {version_a!r}): 2 task(s) already there hold "
        "only another judge's and show no code pre-selected (push them to another --project to "
        "keep them judged)"
    ) in proc.stdout
    with LabelStudioClient(url, token) as client:
        pid = client.find_project("s30 two judges")
        assert pid is not None
        assert client.model_version(pid) == version_b
    # A's units again, --judged with A: all there, nothing imported, the project keeps B's
    proc = run("push", "a.units.jsonl", *args, "--judged", "a.judged.jsonl", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (
        f"0 tasks imported, 2 already there; the project pre-selects the predictions of "
        f"{version_b!r}, not this push's {version_a!r}"
    ) in proc.stdout


# --- saturate: reviewers' proposals no round could place are said once ------------------------


def test_an_unplaced_reviewer_proposal_is_kept_with_its_round_and_said_once(
    tmp_path: Path,
) -> None:
    # bob's review has two low-quality codes (entity_mismatch, different_context), so his
    # proposal 'Wrong dose' has no known dimension: round 1 says so in a note line. main kept
    # it nowhere: the same review file given to round 2 repeated the whole note (and each
    # round after). Now round 1 keeps it in rounds/r0001/unplaced-proposals.jsonl and round 2
    # says one line naming that file. alice's placed proposal goes to round 1 (accepted).
    import json

    from tests.saturation.satfixtures import make_pool
    from tests.saturation.test_cli import cli, setup_project
    from tests.test_s29_t29human import _decide, _review

    pool = make_pool(12)
    coder, proposer = setup_project(tmp_path, {})
    reviews = tmp_path / "reviews.jsonl"
    ok, wide = "exact_entity", "different_context"
    reviews.write_text(
        _review(0, "alice", {"entity_match": ok, "scope": wide}, "Paediatric population: kids")
        + "\n"
        + _review(1, "bob", {"entity_match": "entity_mismatch", "scope": wide}, "Wrong dose")
        + "\n",
        encoding="utf-8",
    )
    args = ("round", "trial", "--judge", f"scripted:{coder}", "--proposer", f"scripted:{proposer}")
    bob = f"note: reviewer bob's proposal on unit {pool[1].id} ('Wrong dose') is not proposed"
    done = cli(*args, "--reviews", str(reviews), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert bob in done.stdout
    kept = tmp_path / "annotations" / "trial" / "rounds" / "r0001" / "unplaced-proposals.jsonl"
    rows = [json.loads(line) for line in kept.read_text(encoding="utf-8").splitlines()]
    assert [(r["origin"], r["text"]) for r in rows] == [
        (f"proposed by reviewer bob in their review of unit {pool[1].id} (codebook testbook v1)",
         "Wrong dose")
    ]  # fmt: skip
    assert _decide(tmp_path, 1, {"decision": "accept"}).returncode == 0
    again = cli(*args, "--reviews", str(reviews), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert bob not in again.stdout
    assert (
        "note: 1 reviewer proposal(s) not placed (dimension not known) and said before: not said "
        "again; rounds/r0001/unplaced-proposals.jsonl lists them (give them by hand: --proposer "
        "scripted:FILE)"
    ) in again.stdout
    assert "note: 1 reviewer proposal(s) already given to an earlier round" in again.stdout
