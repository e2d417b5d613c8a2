"""The dry run from columns equals the object path's estimate to the last digit (issue 18).

Every comparison runs the same disagreements file through the object path (pydantic
``read_disagreements`` -> ``disagreement_traces`` -> ``build_units`` -> ``estimate_units``)
and through :mod:`failcodes.judge.colestimate` (streamed records -> unit sizes ->
``estimate_sizes``) and asserts equal :class:`Estimate` objects, so the expected values are
the object path's own, computed in the test.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcodes import traceio
from failcodes.cli.main import main
from failcodes.disagreementio import (
    iter_disagreement_claims,
    read_disagreements,
)
from failcodes.disagreements import ClaimRecord, Disagreement
from failcodes.errors import InputError
from failcodes.hashing import content_hash
from failcodes.judge import JudgeSettings, Limits, PriceTable, RetryPolicy, make_coder, run_judge
from failcodes.judge.colestimate import (
    columnar_mode,
    estimate_columns,
    estimate_sizes,
    needs_groups,
    read_unit_sizes,
    unit_sizes,
)
from failcodes.judge.estimate import PricingOnlyCoder, estimate_units
from failcodes.judge.job import JudgeJob
from failcodes.judge.journal import Journal
from failcodes.judge.modes import Batch, Grouped, Mode, PerUnit
from failcodes.judge.pricing import Price
from failcodes.judge.providers.offline import OfflineCoder
from failcodes.judge.run import estimate_run
from failcodes.judge.unitjudge import Coder, UnitJudge
from failcodes.traceio import read_traces
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.units import (
    UnitKind,
    build_units,
    claim_unit_ids,
    disagreement_traces,
    retrieval_unit_digests,
    unit_id,
)
from failcodes.verdicts import Verdict
from tests.fakeserver import FakeServer
from tests.judge_helpers import make_codebook, write_codebook, write_disagreements, write_traces

CB = make_codebook()
PRICES = PriceTable(
    prices={
        "openai:fake-model": Price(
            input=1000.0, cached_input=100.0, output=2000.0, batch_discount=0.5
        ),
        "anthropic:fake-claude": Price(
            input=1000.0, cached_input=100.0, cache_write=1250.0, output=2000.0, batch_discount=0.5
        ),
    }
)
_TEXT = st.text(alphabet=st.sampled_from(list("ab <>&\"'\n é\\")), max_size=10)


def _trace(system: str, sentence: int, index: int, passages: list[Passage], **kw: object) -> Trace:
    return Trace(
        system=system,
        question_id=f"q{sentence // 2}",
        sentence_id=f"q{sentence // 2}:s{sentence}",
        claim_id=f"c{sentence}.{index}",
        claim=kw.pop("claim", f"claim {sentence}.{index} & <it>"),  # type: ignore[arg-type]
        passages=tuple(passages),
        verdict=kw.pop("verdict", Verdict.REFUTED),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def _write(path: Path, traces: list[Trace], mappings: tuple[str, ...] = ("refuted",)) -> Path:
    """Traces as a disagreements file: one sentence-level record per (system, sentence)."""
    groups: dict[tuple[str, str, str], list[Trace]] = {}
    for t in traces:
        groups.setdefault((t.system, t.question_id, t.sentence_id), []).append(t)
    items = []
    for mapping in mappings:
        for (system, qid, sid), members in groups.items():
            claims = tuple(
                ClaimRecord(
                    claim_id=t.claim_id,
                    claim=t.claim,
                    verdict=t.verdict,
                    raw_verdict=t.raw_verdict,
                    maps_to_error=t.verdict is Verdict.REFUTED,
                    reasoning=t.reasoning,
                    passages=t.passages,
                    evidence_source=t.evidence_source,
                )
                for t in members
            )
            items.append(
                Disagreement(
                    id=content_hash([system, mapping, qid, sid]),
                    kind="FN",
                    level="sentence",
                    system=system,
                    mapping=mapping,
                    error_verdicts=("refuted",),
                    question_id=qid,
                    sentence_id=sid,
                    label_has_error=True,
                    predicted_error=False,
                    claims=claims,
                )
            )
    return write_disagreements(path, items)


def _overlapping(n_sentences: int = 3, systems: int = 4) -> list[Trace]:
    """Each claim's pool of 8 passages; system r shows 5 from 2r (ranks differ, 9 vs 10)."""
    out = []
    for s in range(n_sentences):
        for c in range(2):
            pool = [f'passage {s}.{c}.{j}: dose & <risk> "{j}"' for j in range(8)]
            for r in range(systems):
                shown = pool[r : r + 5] if r < 2 else pool[:1] + pool[r : r + 4]
                passages = [
                    Passage(
                        passage_id=f"p{j}",
                        rank=8 + j if s == 1 else j + 1,  # rank 9 vs 10: lengths differ
                        text=text,
                        # a passage's source and title go with its text (they are part of the
                        # unit the judge is shown): by its place in the pool
                        source="pubmed" if pool.index(text) % 2 else None,
                        title=f"T & {pool.index(text)}" if pool.index(text) % 3 == 0 else "",
                    )
                    for j, text in enumerate(shown)
                ]
                out.append(
                    _trace(
                        f"sys{r}",
                        s,
                        c,
                        passages,
                        verdict=list(Verdict)[(s + c + r) % 5],
                        reasoning=None if (s + r) % 3 == 0 else "because <b> & 'c'",
                        raw_verdict="Refuted",
                    )
                )
    return out


def _object_units(path: Path, kind: UnitKind, top_k: int | None = None) -> list:  # type: ignore[type-arg]
    return build_units(disagreement_traces(read_disagreements(path)), kind, top_k=top_k)


def _both(
    path: Path,
    kind: UnitKind,
    coder: Coder,
    run_dir: Path,
    mode: Mode,
    *,
    top_k: int | None = None,
    concurrency: int = 4,
    chunk: int = 3,
) -> tuple[object, object]:
    settings_ = JudgeSettings(limits=Limits(concurrency=concurrency))
    judge = UnitJudge(coder, CB, kind, prices=PRICES, settings=settings_)
    journal = Journal(run_dir)
    try:
        want = estimate_units(judge, journal, _object_units(path, kind, top_k), mode)
        grouped = needs_groups(mode)
        sizes = unit_sizes(
            iter_disagreement_claims(path), kind, top_k=top_k, chunk=chunk, grouped=grouped
        )
        got = estimate_sizes(judge, journal, sizes, mode)
    finally:
        journal.close()
    return got, want


@pytest.mark.parametrize("kind", list(UnitKind))
@pytest.mark.parametrize("spec", ["openai:fake-model", "anthropic:fake-claude", "offline"])
@pytest.mark.parametrize(
    "mode",
    [
        PerUnit(),
        Batch(),
        Grouped(),
        Grouped(size=3),
        Batch(group=Grouped(size=4)),
        Batch(group=Grouped(size=4), commit_every=5),  # groups within chunks of 5, as the run
    ],
    ids=["per-unit", "batch", "grouped", "grouped-3", "batch-grouped-4", "batch-grouped-chunks"],
)
@pytest.mark.parametrize("top_k", [None, 3])
def test_columnar_estimate_equals_the_object_path(tmp_path, kind, spec, mode, top_k) -> None:
    if not columnar_mode(mode, kind):  # grouping is for retrieval units
        assert kind is UnitKind.VERIFICATION and needs_groups(mode)
        return
    # two mappings: every claim record twice (the repeated traces count once)
    path = _write(tmp_path / "d.jsonl", _overlapping(), mappings=("refuted", "non_supported"))
    coder: Coder = OfflineCoder() if spec == "offline" else PricingOnlyCoder(spec)
    for concurrency in (1, 4):
        got, want = _both(
            path, kind, coder, tmp_path / "run", mode, top_k=top_k, concurrency=concurrency
        )
        assert got == want


def test_the_workload_is_deduplicated_across_retrievers(tmp_path) -> None:
    # hand count per claim: sys0 shows pool[0-4], sys1 [1-5], sys2 [0, 2-5], sys3 [0, 3-6]:
    # 7 distinct passages shown 5 + 5 + 5 + 5 = 20 times; 3 sentences x 2 claims -> 42
    # units, 120 rows; 4 systems x 6 claims = 24 traces (each record written twice)
    path = _write(tmp_path / "d.jsonl", _overlapping(), mappings=("refuted", "non_supported"))
    sizes = read_unit_sizes(path, UnitKind.RETRIEVAL)
    assert sizes is not None
    assert (sizes.units, sizes.rows, sizes.traces) == (42, 120, 24)
    got, want = _both(
        path, UnitKind.RETRIEVAL, PricingOnlyCoder("openai:fake-model"), tmp_path / "r", PerUnit()
    )
    assert got == want
    assert (got.units, got.rows, got.naive_calls) == (42, 120, 120)  # type: ignore[attr-defined]


def test_grouped_calls_follow_the_claims(tmp_path) -> None:
    # 6 claims x 7 distinct passages (see above): groups of at most 3 -> 3 + 3 + 1 per claim
    # = 18 calls, of which 6 single-unit calls at the per-unit prefix
    path = _write(tmp_path / "d.jsonl", _overlapping())
    coder = PricingOnlyCoder("openai:fake-model")
    got, want = _both(path, UnitKind.RETRIEVAL, coder, tmp_path / "r", Grouped(size=3))
    assert got == want
    assert (got.calls, got.units, got.grouped) == (18, 42, True)  # type: ignore[attr-defined]


@pytest.mark.parametrize("chunk", [1, 2, 7, 1 << 18])
def test_chunking_does_not_change_the_units(tmp_path, chunk) -> None:
    path = _write(tmp_path / "d.jsonl", _overlapping(), mappings=("a", "b"))
    for kind in UnitKind:
        one = unit_sizes(iter_disagreement_claims(path), kind, chunk=1 << 18, grouped=True)
        other = unit_sizes(iter_disagreement_claims(path), kind, chunk=chunk, grouped=True)
        if kind is UnitKind.RETRIEVAL:
            assert one.groups is not None and other.groups is not None
            assert np.concatenate(one.groups).tolist() == np.concatenate(other.groups).tolist()
        else:  # grouping is for retrieval units
            assert one.groups is None and other.groups is None
        assert (one.traces, one.without_reasoning) == (other.traces, other.without_reasoning)
        assert (one.rows, one.row_tokens) == (other.rows, other.row_tokens)
        assert one.ids().tolist() == other.ids().tolist()
        assert one.tokens().tolist() == other.tokens().tolist()


def test_ids_and_lengths_are_the_units_own(tmp_path) -> None:
    path = _write(tmp_path / "d.jsonl", _overlapping())
    for kind in UnitKind:
        units = _object_units(path, kind)
        sizes = unit_sizes(iter_disagreement_claims(path), kind, chunk=5)
        from failcodes.judge.prompts import user_length

        by_id = {int(u.id, 16): u for u in units}
        assert sorted(by_id) == sizes.ids().tolist()
        for uid, tokens in zip(sizes.ids(), sizes.tokens(), strict=True):
            assert tokens == -(-user_length(by_id[int(uid)]) // 4)  # ceil(chars / 4)
        assert sizes.rows == sum(len(u.provenance) for u in units)
        assert sizes.row_tokens == sum(
            len(u.provenance) * -(-user_length(u) // 4) for u in units
        )  # ceil(chars / 4) per row


def test_a_repeated_trace_keeps_its_first_record(tmp_path) -> None:
    # the same (system, question, sentence, claim) twice with different passages, in lines
    # far apart (chunk=1: the repeat is found across chunks): the object path keeps the first
    first = _trace("sysA", 0, 0, [Passage(passage_id="p", rank=1, text="first")])
    later = _trace("sysA", 0, 0, [Passage(passage_id="p", rank=1, text="second text")])
    other = [_trace("sysB", s, 0, [Passage(passage_id="p", rank=1, text="x")]) for s in range(3)]
    a = _write(tmp_path / "a.jsonl", [first, *other])
    b = _write(tmp_path / "b.jsonl", [later])
    path = tmp_path / "d.jsonl"
    path.write_bytes(a.read_bytes() + b.read_bytes())
    units = _object_units(path, UnitKind.RETRIEVAL)
    # "second text" is dropped; the three "x" are three claims (claim texts differ)
    assert [u.passages[0].text for u in units] == ["first", "x", "x", "x"]
    for chunk in (1, 2, 100):
        sizes = unit_sizes(iter_disagreement_claims(path), UnitKind.RETRIEVAL, chunk=chunk)
        assert (sizes.units, sizes.rows, sizes.traces) == (4, 4, 4)
        assert sorted(sizes.ids().tolist()) == sorted(int(u.id, 16) for u in units)


#: Passage ids as corpora write them ("13734012:4", "PMID 31234"), and with characters a
#: prompt escapes (a verification prompt shows the id: its length is counted escaped).
_PIDS = st.sampled_from(["p", "13734012:4", "PMID 31234", "w<1> & 'x'", 'é"2'])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    claim=_TEXT,
    shown=st.lists(
        st.tuples(_TEXT, st.none() | st.just("") | _TEXT, st.none() | st.just("") | _TEXT, _PIDS),
        max_size=4,
    ),
)
def test_retrieval_digests_are_unit_ids(claim, shown) -> None:
    # the fast paths (the claim hashed once; a claim's retrieval and verification ids
    # together) and unit_id agree, sources, titles and passage ids included, for both kinds;
    # all are the content hash of the unit's canonical JSON, whose passage is its text when
    # nothing else is shown (an empty one is not) and else the object of what is shown: a
    # retrieval prompt shows the source and title, a verification prompt the id too
    passages = [Passage(passage_id=i, rank=1, text=t, source=s, title=n) for t, s, n, i in shown]
    digests = retrieval_unit_digests(claim, passages)
    ids = [unit_id(UnitKind.RETRIEVAL, claim, (p,)) for p in passages]
    assert [digests[8 * i : 8 * i + 8].hex() for i in range(len(shown))] == ids
    entries = [t if not s and not n else {"source": s or None, "text": t, "title": n or None}
               for t, s, n, _ in shown]  # fmt: skip
    assert ids == [
        content_hash({"kind": "retrieval", "claim": claim, "passages": [e], "reasoning": None,
                      "verdict": None})
        for e in entries
    ]  # fmt: skip
    both, step = claim_unit_ids(claim, passages, "Because.", Verdict.REFUTED)
    assert both == digests
    assert step == unit_id(UnitKind.VERIFICATION, claim, passages, "Because.", Verdict.REFUTED)
    shown_ids = [{"passage_id": i, "source": s or None, "text": t, "title": n or None}
                 for t, s, n, i in shown]  # fmt: skip
    assert step == content_hash({"kind": "verification", "claim": claim, "passages": shown_ids,
                                 "reasoning": "Because.", "verdict": "refuted"})  # fmt: skip


_PASSAGE = st.builds(
    Passage,
    passage_id=_PIDS,
    rank=st.integers(1, 12),
    text=_TEXT,
    source=st.none() | _TEXT,
    title=st.none() | _TEXT,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(
        st.tuples(
            st.integers(0, 2),  # system
            st.integers(0, 3),  # sentence
            st.integers(0, 1),  # claim
            st.sampled_from(["c1", "c2 & <x>", "c'3'"]),
            st.lists(_PASSAGE, max_size=4, unique_by=lambda p: p.rank),
            st.none() | st.sampled_from(["", "  ", "r & <s>", "r"]),
            st.sampled_from(list(Verdict)),
            # none / post-hoc: the passages are citations, no retrieval unit (issue 28)
            st.none() | st.sampled_from(list(EvidenceSource)),
        ),
        min_size=1,
        max_size=8,
    ),
    top_k=st.none() | st.integers(1, 4),
    mode=st.sampled_from(
        [
            PerUnit(),
            Batch(),
            Grouped(size=2),
            Batch(group=Grouped(size=3)),
            Batch(group=Grouped(size=3), commit_every=4),
        ]
    ),
)
def test_columnar_equals_object_path_on_generated_files(
    tmp_path_factory, data, top_k, mode
) -> None:
    traces = [
        _trace(
            f"s{sys_}",
            s,
            c,
            ps,
            claim=claim,
            reasoning=reasoning,
            verdict=verdict,
            evidence_source=source,
        )
        for sys_, s, c, claim, ps, reasoning, verdict, source in data
    ]
    folder = tmp_path_factory.mktemp("gen")
    path = _write(folder / "d.jsonl", traces, mappings=("m1", "m2"))
    for kind in UnitKind:
        if not _object_units(path, kind, top_k):
            continue
        got, want = _both(
            path, kind, PricingOnlyCoder("anthropic:fake-claude"), folder / kind.value,
            mode if columnar_mode(mode, kind) else PerUnit(), top_k=top_k, chunk=2,
        )  # fmt: skip
        assert got == want


# -- journal (done units, calibrated output), response cache, CLI ------------------------


@pytest.fixture(scope="module")
def server():
    with FakeServer() as fake:
        yield fake


def test_done_units_and_calibrated_output_from_the_journal(server, tmp_path, monkeypatch) -> None:
    server.reset()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dryrun")
    path = _write(tmp_path / "d.jsonl", _overlapping(6))
    units = _object_units(path, UnitKind.RETRIEVAL)

    def coder() -> Coder:  # a run closes its client: a fresh coder per use
        return make_coder("openai:fake-model", base_url=server.openai_base_url)

    fast = JudgeSettings(limits=Limits(concurrency=2), retry=RetryPolicy.no_wait())
    run_dir = tmp_path / "run"
    job = JudgeJob(CB, UnitKind.RETRIEVAL, run_dir, prices=PRICES, settings=fast)
    run_judge(units[:25], coder(), job)
    got, want = _both(path, UnitKind.RETRIEVAL, coder(), run_dir, PerUnit())
    assert got == want
    assert got.already_done == 25  # type: ignore[attr-defined]
    assert got.output_source == "mean of the journal"  # type: ignore[attr-defined]
    # a response cache with entries needs the rendered messages: the columns decline
    cache = tmp_path / "cache.sqlite"
    run_judge(
        units[25:30],
        coder(),
        JudgeJob(
            CB, UnitKind.RETRIEVAL, tmp_path / "o2", cache_path=cache, prices=PRICES, settings=fast
        ),
    )
    sizes = read_unit_sizes(path, UnitKind.RETRIEVAL)
    assert sizes is not None
    est = JudgeJob(CB, UnitKind.RETRIEVAL, tmp_path / "est", prices=PRICES, settings=fast)
    assert estimate_columns(sizes, coder(), dataclasses.replace(est, cache_path=cache)) is None
    empty = dataclasses.replace(est, cache_path=tmp_path / "empty.sqlite")
    assert estimate_columns(sizes, coder(), empty) == estimate_run(units, coder(), empty)
    assert estimate_columns(sizes, coder(), est.at(est.run_dir, mode=Grouped())) is None


def _cli(args: list[str], capsys) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _forbid_objects(monkeypatch) -> None:
    def refuse(*args: object, **kw: object) -> None:
        raise AssertionError("the object path was used")

    monkeypatch.setattr("failcodes.judge.run.estimate_run", refuse)  # the request imports it on use


@pytest.mark.parametrize("kind", ["retrieval", "reasoning"])
def test_cli_dry_run_from_disagreements_uses_columns_and_equals_traces_input(
    tmp_path, capsys, monkeypatch, kind
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    traces = _overlapping()
    dis = _write(tmp_path / "d.jsonl", traces, mappings=("refuted", "non_supported"))
    src = write_traces(tmp_path / "t.jsonl", disagreement_traces(read_disagreements(dis)))
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    base = ["judge", kind, "--codebook", str(cb), "--judge", "openai:gpt-5-mini", "--dry-run"]
    base += ["--format", "json", "--no-cache"]
    code, from_traces, err_t = _cli([*base, "--from", str(src), "-o", str(tmp_path / "a")], capsys)
    assert code == 0, err_t
    with monkeypatch.context() as m:
        _forbid_objects(m)
        code, from_dis, err_d = _cli([*base, "--from", str(dis), "-o", str(tmp_path / "b")], capsys)
    assert code == 0, err_d
    assert json.loads(from_dis) == json.loads(from_traces)
    assert err_d == err_t  # e.g. "N trace(s) without reasoning skipped"
    if kind == "reasoning":
        assert "8 trace(s) without reasoning skipped" in err_d  # (s + r) % 3 == 0: 8 of 24


def test_cli_grouped_and_cascade_dry_runs_equal_the_traces_input(
    tmp_path, capsys, monkeypatch
) -> None:
    # grouped (direct or batch items) is priced from columns, a cascade by the object path
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    dis = _write(tmp_path / "d.jsonl", _overlapping())
    src = write_traces(tmp_path / "t.jsonl", disagreement_traces(read_disagreements(dis)))
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    base = ["judge", "retrieval", "--codebook", str(cb), "--judge", "openai:gpt-5-mini"]
    base += ["--dry-run", "--format", "json", "--no-cache"]
    for extra in (["--group-by-claim"], ["--batch", "--group-by-claim"], ["--cascade", "offline"]):
        outs = []
        for i, source in enumerate((src, dis)):
            run = str(tmp_path / f"{extra[-1]}{i}")
            with monkeypatch.context() as m:
                if source == dis and "--cascade" not in extra:
                    _forbid_objects(m)
                code, out, err = _cli([*base, *extra, "--from", str(source), "-o", run], capsys)
            assert code == 0, err
            outs.append(json.loads(out))
        assert outs[0] == outs[1]
        assert outs[0]["grouped"] is ("--group-by-claim" in extra)


def _parquet_twin(path: Path) -> Path:
    """The same disagreements as Parquet, written by the tool (models -> Arrow rows)."""
    return write_disagreements(path.with_suffix(".parquet"), read_disagreements(path))


@pytest.mark.parametrize("kind", ["retrieval", "reasoning"])
@pytest.mark.parametrize(
    "extra", [[], ["--batch"], ["--batch", "--group-by-claim"]], ids=["per-unit", "batch", "bg"]
)
def test_cli_dry_run_from_parquet_uses_columns_and_equals_jsonl(
    tmp_path, capsys, monkeypatch, kind, extra
) -> None:
    # issue 30: a Parquet disagreements file was read into models, traces and units; its
    # dry run now counts from the columns, as the JSONL file's: the same numbers, and the
    # object path's over the same traces (the JSONL test above shows that one equal too)
    if kind == "reasoning" and "--group-by-claim" in extra:
        return  # grouping is for retrieval units
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    dis = _write(tmp_path / "d.jsonl", _overlapping(), mappings=("refuted", "non_supported"))
    pq = _parquet_twin(dis)
    src = write_traces(tmp_path / "t.jsonl", disagreement_traces(read_disagreements(dis)))
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    base = ["judge", kind, "--codebook", str(cb), "--judge", "openai:gpt-5-mini", "--dry-run"]
    base += ["--format", "json", "--no-cache", *extra]
    outs = {}
    for name, source in (("traces", src), ("jsonl", dis), ("parquet", pq)):
        with monkeypatch.context() as m:
            if name == "parquet":
                _forbid_objects(m)
            run = ["--from", str(source), "-o", str(tmp_path / name)]
            code, out, err = _cli([*base, *run], capsys)
        assert code == 0, err
        outs[name] = (json.loads(out), err)
    assert outs["parquet"] == outs["jsonl"] == outs["traces"]
    got = outs["parquet"][0]
    # 3 sentences x 2 claims, each claim's pool of 8 passages shown 5 at a time by 4
    # systems: sys0 p0-4, sys1 p1-5, sys2 p0,p2-4, sys3 p0,p3-6 -> 7 distinct passages a
    # claim (p0-p6), 6 claims -> 42 retrieval units from 6 x 4 x 5 = 120 rows; reasoning:
    # 24 traces, 8 without reasoning ((s + r) % 3 == 0), each of the 16 others its own unit
    assert (got["units"], got["rows"]) == ((42, 120) if kind == "retrieval" else (16, 16))


def test_parquet_dry_run_counts_the_calls_and_items_a_run_sends(server, tmp_path, monkeypatch):
    # the dry run of a Parquet file (from columns) against a real batch + grouped run of
    # the same units through the SDK and the fake server: units, batch items (groups +
    # units alone) and the journal's count agree
    server.reset()
    server.control(latency=0.0, batch_delay=0.0)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dryrun")
    pq = _parquet_twin(_write(tmp_path / "d.jsonl", _overlapping(), mappings=("a", "b")))
    mode = Batch(size=50, poll=0.01, group=Grouped(size=3), commit_every=10)
    coder = make_coder("openai:fake-model", base_url=server.openai_base_url)
    fast = JudgeSettings(limits=Limits(concurrency=2), retry=RetryPolicy.no_wait())
    judge = UnitJudge(coder, CB, UnitKind.RETRIEVAL, prices=PRICES, settings=fast)
    sizes = read_unit_sizes(pq, UnitKind.RETRIEVAL, grouped=True)
    assert sizes is not None  # counted from the columns, not the object path
    journal = Journal(tmp_path / "est")
    try:
        est = estimate_sizes(judge, journal, sizes, mode)
    finally:
        journal.close()
    units = _object_units(pq, UnitKind.RETRIEVAL)
    job = JudgeJob(
        CB, UnitKind.RETRIEVAL, tmp_path / "run", mode=mode, prices=PRICES, settings=fast
    )
    summary = run_judge(
        units, make_coder("openai:fake-model", base_url=server.openai_base_url), job
    )
    assert est.units == summary.judged == len(units) == 42  # type: ignore[attr-defined]
    assert est.calls == summary.groups + summary.judged_alone  # type: ignore[attr-defined]
    assert summary.grouped_units > 0  # grouping happened: the items are not one per unit
    raw = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert raw["journal_units"] == 42


@pytest.mark.parametrize("bad", ["nan-score", "rank-as-float"])
def test_cli_bad_parquet_row_is_the_object_readers_error(tmp_path, capsys, bad) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = _parquet_twin(_write(tmp_path / "d.jsonl", _overlapping(2)))
    rows = pq.read_table(good).to_pylist()
    passages = rows[1]["claims"][0]["passages"]
    schema = pq.read_schema(good)
    if bad == "nan-score":  # a double may be NaN in Parquet; the model refuses it
        passages[0]["score"] = float("nan")
    else:  # 2.0 for a rank: pydantic takes it as 2 (the fast reader may not vouch for it)
        field = pa.field("rank", pa.float64())
        schema = pa.schema(
            [
                f
                if f.name != "claims"
                else pa.field("claims", _with_passage_field(f.type, field), f.nullable)
                for f in schema
            ]
        )
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    args = ["judge", "retrieval", "--from", str(path), "--codebook", str(cb), "--judge"]
    args += ["openai:gpt-5-mini", "--dry-run", "--no-cache", "-o", str(tmp_path / "r")]
    if bad == "rank-as-float":  # accepted by the exact reader: the same numbers as the good file
        code, out, err = _cli([*args, "--format", "json"], capsys)
        want = _cli([*args[:3], str(good), *args[4:], "--format", "json"], capsys)
        assert code == 0 and (json.loads(out), err) == (json.loads(want[1]), want[2])
        return
    with pytest.raises(InputError) as exc:  # the model refuses NaN
        read_disagreements(path)
    code, _, err = _cli(args, capsys)
    assert code == 2
    assert str(exc.value) in err and "Traceback" not in err


def _with_passage_field(claims_type, field):  # type: ignore[no-untyped-def]
    """The ``claims`` list type with one passage field's type replaced."""
    import pyarrow as pa

    claim = claims_type.value_type
    fields = []
    for f in claim:
        if f.name == "passages":
            passage = f.type.value_type
            inner = [field if g.name == field.name else g for g in passage]
            f = pa.field("passages", pa.list_(pa.struct(inner)), f.nullable)
        fields.append(f)
    return pa.list_(pa.struct(fields))


def test_cli_bad_disagreements_line_is_the_object_readers_error(tmp_path, capsys) -> None:
    dis = _write(tmp_path / "d.jsonl", _overlapping(2))
    lines = dis.read_text().splitlines()
    lines[1] = lines[1].replace('"system":', '"system": "dup", "system":', 1)  # duplicate key
    dis.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        read_disagreements(dis)
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    code, _, err = _cli(
        [
            *("judge", "retrieval", "--from", str(dis), "--codebook", str(cb)),
            *("--judge", "openai:gpt-5-mini", "--dry-run", "--no-cache", "-o", str(tmp_path / "r")),
        ],
        capsys,
    )
    assert code == 2
    assert str(exc.value) in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()  # nothing created before the input was read


@pytest.mark.parametrize("words", [100, 14_000, 60_000])
def test_longer_messages_widen_their_part(tmp_path, words) -> None:
    # token counts are held in 8 bits until one needs 16 (100 words: 500 characters, ~130
    # tokens fit; 14,000: ~17,500 tokens) or 32 (60,000 words: ~75,000 tokens)
    long = [Passage(passage_id="p", rank=1, text="dose " * words)]
    short = [Passage(passage_id="q", rank=i + 1, text=f"short {i}") for i in range(3)]
    traces = [_trace("sysA", s, 0, long if s == 1 else short[s:]) for s in range(3)]
    path = _write(tmp_path / "d.jsonl", traces)
    sizes = unit_sizes(iter_disagreement_claims(path), UnitKind.RETRIEVAL, chunk=1)
    assert int(sizes.tokens().max()) > words * 5 // 4
    got, want = _both(
        path, UnitKind.RETRIEVAL, PricingOnlyCoder("openai:fake-model"), tmp_path / "r", PerUnit()
    )
    assert got == want


@settings(max_examples=200, deadline=None)
@given(
    shapes=st.lists(
        st.tuples(
            st.sampled_from([0, 1100, 2048]),
            st.integers(0, 50),
            st.integers(1, 3),
            st.integers(1, 6),
        ),
        max_size=6,
    ),
    misses=st.integers(0, 4),
    step=st.sampled_from([1, 128]),
    writes=st.booleans(),
)
def test_a_repeated_call_shape_counts_as_its_calls(shapes, misses, step, writes) -> None:
    # CallShape(repeat=k) prices exactly as k copies of the shape (cache misses, writes)
    from failcodes.judge.estimate import CachingModel, CallShape, call_tokens

    caching = CachingModel(min_tokens=1024, step=step, writes=writes, misses=misses)
    repeated = [CallShape(p, u, a, repeat=k) for p, u, a, k in shapes]
    expanded = [CallShape(p, u, a) for p, u, a, k in shapes for _ in range(k)]
    assert call_tokens(repeated, output_per_answer=7.5, caching=caching) == call_tokens(
        expanded, output_per_answer=7.5, caching=caching
    )


def _without_empty_titles() -> list[Trace]:
    """:func:`_overlapping` with no ``""`` in a line: the fast reader leaves such a line (an
    empty title; a text ending in an escaped quote) to the object reader's steps."""
    return [
        t.model_copy(
            update={
                "passages": tuple(
                    p.model_copy(update={"title": p.title or None, "text": p.text.strip('"')})
                    for p in t.passages
                )
            }
        )
        for t in _overlapping()
    ]


@pytest.mark.parametrize("kind", list(UnitKind))
@pytest.mark.parametrize("top_k", [None, 3])
@pytest.mark.parametrize("mode", [PerUnit(), Batch(), Grouped()], ids=["unit", "batch", "group"])
def test_traces_input_from_columns_equals_the_object_path(tmp_path, kind, top_k, mode) -> None:
    # every unit of every trace (a whole data set priced, not its disagreements)
    if not columnar_mode(mode, kind):
        return
    src = tmp_path / "t.jsonl"
    traceio.write_traces(src, _without_empty_titles())  # as ingest writes them: no nulls
    judge = UnitJudge(PricingOnlyCoder("openai:fake-model"), CB, kind, prices=PRICES)
    journal = Journal(tmp_path / "run")
    try:
        want = estimate_units(
            judge, journal, build_units(read_traces(src), kind, top_k=top_k), mode
        )
        sizes = read_unit_sizes(src, kind, top_k=top_k, grouped=needs_groups(mode), traces=True)
        assert sizes is not None
        got = estimate_sizes(judge, journal, sizes, mode)
    finally:
        journal.close()
    assert got == want


def test_cli_dry_run_from_traces_uses_columns_and_falls_back_on_a_duplicate(
    tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = tmp_path / "t.jsonl"
    traceio.write_traces(src, _without_empty_titles())  # as ingest writes them: no nulls
    cb = write_codebook(tmp_path / "cb.yaml", CB)
    base = ["judge", "retrieval", "--codebook", str(cb), "--judge", "openai:gpt-5-mini"]
    base += ["--dry-run", "--format", "json", "--no-cache", "--from", str(src)]
    with monkeypatch.context() as m:
        _forbid_objects(m)
        code, out, err = _cli([*base, "-o", str(tmp_path / "a")], capsys)
    assert code == 0, err
    assert json.loads(out)["rows"] == 24 * 5  # 6 claims x 4 systems, 5 passages each
    # a repeated (system, claim_id): the columns stand down and the object reader names it
    lines = src.read_text().splitlines()
    src.write_text("\n".join([*lines, lines[0]]) + "\n")
    code, _, err = _cli([*base, "-o", str(tmp_path / "b")], capsys)
    assert code == 2 and f"t.jsonl:{len(lines) + 1}, field 'claim_id': duplicate" in err
