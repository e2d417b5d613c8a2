"""Session 29 (t29att): attribute's reader holds its seen digests in ~24 bytes, not ~77-136.

``attribute --from DISAGREEMENTS`` kept a set of each claim's 16-byte digest and a dict of each
disagreement's id: ~36 MB of its peak at a 10x paper-scale study (300k claims, 98,600
disagreements), 3.6 at 1x; its 10x peak was 1.50x its 1x peak (issue 30). Both are now a
:class:`failcodes.unitrepeats.SeenDigests`: the latest digests in a dict, the older in one
sorted array.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_text


def test_seen_digests_give_each_digest_its_first_number_from_the_dict_and_the_array(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from failcodes import unitrepeats

    monkeypatch.setattr(unitrepeats, "DIGEST_WINDOW", 4)
    seen = unitrepeats.SeenDigests()
    # digest 0 ends in NULs (a numpy bytes item drops them: the lookup pads them back)
    digests = [b"\x01" + b"\x00" * 15, *(bytes([i]) * 16 for i in range(2, 11))]
    # add gives a new digest the number len(seen): digest i is number i (by hand)
    assert [seen.add(d) for d in digests] == [True] * 10
    # 10 digests, a merge each 4: 8 in the sorted array, the last 2 in the dict
    assert (len(seen._keys), len(seen._recent), len(seen)) == (8, 2, 10)
    assert [seen.add(d) for d in digests] == [False] * 10  # every one held, array or dict
    assert [seen.setdefault(d, 99) for d in digests] == list(range(10))
    assert seen.setdefault(b"\x00" * 16, 99) == 99  # never added: given 99
    assert seen.setdefault(b"\x00" * 16, 7) == 99
    with pytest.raises(ValueError, match="a digest is 16 bytes, not 3"):
        seen.setdefault(b"abc", 1)


def _claim(sentence: str, cid: str, gold: bool) -> dict[str, object]:
    passage = {"passage_id": f"p{cid}", "rank": 1, "text": f"text {cid}", "gold": gold}
    return {
        "system": "A",
        "question_id": "q1",
        "sentence_id": sentence,
        "claim_id": cid,
        "claim": f"claim {cid}",
        "verdict": "refuted",
        "passages": [passage],
    }


def test_attribute_reader_finds_claims_and_ids_seen_before_in_the_sorted_array(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from failcodes import unitrepeats
    from failcodes.commands.inputs import ItemSource

    # every digest merged into the array at once: each lookup after the first goes there
    monkeypatch.setattr(unitrepeats, "DIGEST_WINDOW", 1)
    claims = [_claim("s1", "c1", True), _claim("s1", "c1b", False), _claim("s2", "c2", True)]
    traces = write_text(tmp_path / "t.jsonl", "".join(json.dumps(c) + "\n" for c in claims))
    labels = write_text(
        tmp_path / "l.jsonl",
        '{"sentence_id": "s1", "question_id": "q1", "has_error": false}\n'
        '{"sentence_id": "s2", "question_id": "q1", "has_error": false}\n',
    )
    once = tmp_path / "d.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(once)]
    assert run_cli(args, capsys)[0] == 0
    s1, s2 = once.read_text().splitlines()  # sentence level: s1 (c1, c1b), s2 (c2), FPs
    again = json.dumps({**json.loads(s1), "id": "0123456789abcdef"})  # s1's claims again
    path = write_text(tmp_path / "d3.jsonl", f"{s1}\n{s2}\n{again}\n")
    got = [
        (item.sentence_id, [u.claim_id for u in new], [u.claim_id for u in item.claims])
        for item, new in ItemSource(path, {}, top_k=None)
    ]
    # by hand: s1's two claims first seen in line 1; line 3 holds them again (its causes,
    # an FP's every claim, but none new)
    assert got == [
        ("s1", ["c1", "c1b"], ["c1", "c1b"]),
        ("s2", ["c2"], ["c2"]),
        ("s1", [], ["c1", "c1b"]),
    ]
    # line 4 repeats line 2's id: found in the array, named by its line
    twice = write_text(tmp_path / "twice.jsonl", f"{s1}\n{s2}\n{again}\n{s2}\n")
    out = tmp_path / "att"
    code, stdout, err = run_cli(["attribute", "--from", str(twice), "-o", str(out)], capsys)
    second = json.loads(s2)["id"]
    assert (code, stdout, out.exists()) == (2, "", False)
    assert (
        err.strip()
        .splitlines()[0]
        .startswith(
            f"failcodes: error: {twice}:4, field 'id': the disagreement here has the id of the one "
            f"at line 2 ({second}: system 'A', question 'q1', sentence 's2')"
        )
    )
