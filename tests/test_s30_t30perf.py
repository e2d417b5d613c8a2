"""Session 30 (t30perf): issue 30's speed floors; what each step did more than its work.

- :class:`failcodes.unitrepeats.SeenDigests` merged its dict into its sorted array every
  8,192 digests, copying the whole array each time: N / 8,192 copies of up to N digests
  (3M digests, a 100x study's claims: 366 merges, 9.2 of 15.2 CPU-s). It now merges when the
  dict holds a share of the array's digests, so the array is copied a bounded number of times
  per digest.
"""

from __future__ import annotations

import pytest


def test_seen_digests_merge_at_a_share_of_the_array_not_every_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from failcodes import unitrepeats

    monkeypatch.setattr(unitrepeats, "DIGEST_WINDOW", 4)
    sizes: list[int] = []  # the array's size after each merge
    settle = unitrepeats.SeenDigests._settle

    def counted(self: unitrepeats.SeenDigests) -> None:
        settle(self)
        sizes.append(len(self._keys))

    monkeypatch.setattr(unitrepeats.SeenDigests, "_settle", counted)
    seen = unitrepeats.SeenDigests()
    digests = [i.to_bytes(16, "big") for i in range(2000)]
    assert all(map(seen.add, digests))
    # by hand: a merge when the dict holds max(4, k // 16) digests, k the array's size:
    # k = 4, 8, ..., 80 (20 merges of 4), then k + k // 16: 85, 90, 95, 100, 106, ... 1922
    # (k_{i+1} = k_i + max(4, k_i // 16): 74 merges in all), the last 78 left in the dict;
    # a merge every 4 digests was 500 merges (2000 / 4), the array copied each time
    assert sizes[:24] == [*range(4, 84, 4), 85, 90, 95, 100]
    assert (len(sizes), sizes[-1], len(seen._recent)) == (74, 1922, 78)
    # every digest keeps its first number (i), from the array or the dict
    assert [seen.setdefault(d, -1) for d in digests] == list(range(2000))
