"""Session 30 (t30judge): the judge's response cache, resume and cost figures."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from failcodes.codebook import Codebook
from failcodes.judge import cache as cache_module
from failcodes.judge.cache import ResponseCache, cache_key, request_prefix_digest
from failcodes.judge.grouping import GROUP_SCHEMA_NAME
from failcodes.judge.prompts import group_template_hash, template_hash
from failcodes.judge.schema import answer_schema
from failcodes.units import UnitKind
from tests.cli_helpers import run_cli
from tests.fakeserver import FakeServer
from tests.judge_helpers import fresh_fake, make_codebook, make_traces, write_codebook, write_traces


@pytest.fixture
def fake(fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    return fresh_fake(fake_server, monkeypatch, "sk-test-t30judge")


def _edited(kind: UnitKind, words: str) -> Codebook:
    """The test codebook with ``words`` added to the first dimension's definition of ``kind``."""
    cb = make_codebook()
    parts = []
    for part in cb.parts:
        if part.id is kind:
            first = part.dimensions[0]
            first = first.model_copy(update={"definition": f"{first.definition} {words}"})
            part = part.model_copy(update={"dimensions": (first, *part.dimensions[1:])})
        parts.append(part)
    return cb.model_copy(update={"parts": tuple(parts)})


def _calls(fake: FakeServer) -> int:
    return int(fake.stats()["calls"].get("openai", 0))


def _judge(
    fake: FakeServer,
    capsys: pytest.CaptureFixture[str],
    src: Path,
    codebook: Path,
    run: Path,
    *extra: str,
) -> tuple[int, str, str]:
    return run_cli(
        [
            *("judge", "retrieval", "--from", str(src), "--codebook", str(codebook)),
            *("--judge", "openai:fake-model", "--base-url", fake.openai_base_url),
            *("-o", str(run), *extra),
        ],
        capsys,
    )


def test_an_edit_to_the_verification_part_keeps_the_retrieval_answers_cached(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The response cache was keyed on the whole codebook's hash: an edit to the verification
    # part (a definition reworded) missed every retrieval answer, though the retrieval judge
    # is shown the very same prompt (main: 3 calls again, paid twice). Keyed on the prompt
    # the judge is shown, they are served (0 calls); an edit to the retrieval part still
    # misses (3 calls: the judge is shown another definition).
    src = write_traces(tmp_path / "t.jsonl", make_traces(1))
    cache = ("--cache", str(tmp_path / "cache.sqlite"))
    books = {
        "a": write_codebook(tmp_path / "a.yaml"),
        "v": write_codebook(tmp_path / "v.yaml", _edited(UnitKind.VERIFICATION, "Say why.")),
        "r": write_codebook(tmp_path / "r.yaml", _edited(UnitKind.RETRIEVAL, "Say why.")),
    }
    assert _judge(fake, capsys, src, books["a"], tmp_path / "a", *cache)[0] == 0
    assert _calls(fake) == 3  # by hand: claim 0 against pm1, pm2 (sysA) and w1 (sysB)
    code, out, _ = _judge(fake, capsys, src, books["v"], tmp_path / "v", *cache)
    assert code == 0
    assert _calls(fake) == 3  # main: 6 (the 3 retrieval units asked again)
    assert "; cache hits: 3" in out  # main: 0
    assert _judge(fake, capsys, src, books["r"], tmp_path / "r", *cache)[0] == 0
    assert _calls(fake) == 6  # the retrieval part edited: all 3 asked


def _downgrade(path: Path, old: Path, codebook: Codebook, base_url: str) -> None:
    """Rewrite the cache at ``path`` into ``old`` as failcodes up to session 29 kept it.

    Its tables without the key-scheme column, each entry keyed the old way: the prefix digest
    held the whole codebook's hash and every template's (the formula of session 29's
    ``UnitJudge``), computed from the entry's own request (system prompt, schema, user
    message, output cap) and the fake server's OpenAI identity at temperature 0.
    """
    new = ResponseCache(path)
    conn = sqlite3.connect(old)
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    for name, script in cache_module.MIGRATIONS[:2]:  # 001_responses, 002_blobs
        conn.executescript(script)
        conn.execute("INSERT INTO _migrations VALUES (?, '2026-12-01')", (name,))
    rows = new._conn.execute(
        "SELECT key, provider, model, template_hash, payload, usage, raw_response, created_at "
        "FROM responses"
    ).fetchall()
    for key, provider, model, template, payload, usage, raw_response, created in rows:
        hit = new.get(key, count=False)
        assert hit is not None
        body = hit.raw_request
        system, user = (m["content"] for m in body["messages"])
        grouped = body["response_format"]["json_schema"]["name"] == GROUP_SCHEMA_NAME
        # a grouped request's key held the unit answer schema and one answer's output cap
        schema = body["response_format"]["json_schema"]["schema"]
        cap = body.get("max_completion_tokens", body.get("max_tokens"))
        if grouped:
            schema, cap = answer_schema(codebook.part(UnitKind.RETRIEVAL)), 1024
        prefix = request_prefix_digest(
            identity={
                "provider": provider,
                "model": model,
                "base_url": base_url,
                "temperature": 0.0,
            },
            params={"max_output_tokens": cap},
            system=system,
            schema=schema,
            template_hash=template_hash(),
            codebook_hash=codebook.hash,
        )
        if grouped:
            prefix += group_template_hash()  # a grouped request's salt
        conn.execute(
            "INSERT INTO responses (key, provider, model, template_hash, codebook_hash, payload, "
            "usage, raw_request, raw_response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cache_key(prefix, user),
                provider,
                model,
                template,
                codebook.hash,
                payload,
                usage,
                json.dumps(body),
                raw_response,
                created,
            ),
        )
    conn.commit()
    conn.close()
    new.close()


def test_a_cache_written_before_the_prompt_keys_is_still_read(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Changing the key must not strand the answers already paid for: a cache whose entries
    # are keyed the old way (whole codebook hash) is still read, under the same codebook
    # (0 calls) and, since the request is the very same, after an edit to the verification
    # part (main: 3 calls, the old key holding the edited codebook's hash missed).
    src = write_traces(tmp_path / "t.jsonl", make_traces(1))
    first = tmp_path / "first.sqlite"
    books = {
        "a": write_codebook(tmp_path / "a.yaml"),
        "v": write_codebook(tmp_path / "v.yaml", _edited(UnitKind.VERIFICATION, "Say why.")),
    }
    assert _judge(fake, capsys, src, books["a"], tmp_path / "a", "--cache", str(first))[0] == 0
    assert _calls(fake) == 3
    old = tmp_path / "old.sqlite"
    _downgrade(first, old, make_codebook(), fake.openai_base_url)
    # the same codebook: every answer read from the old entries
    assert _judge(fake, capsys, src, books["a"], tmp_path / "a2", "--cache", str(old))[0] == 0
    assert _calls(fake) == 3
    # the verification part edited: the retrieval judge's request is the same, still read
    assert _judge(fake, capsys, src, books["v"], tmp_path / "v", "--cache", str(old))[0] == 0
    assert _calls(fake) == 3  # main: 6
    with sqlite3.connect(old) as db:
        schemes = db.execute("SELECT scheme, COUNT(*) FROM responses GROUP BY scheme").fetchall()
    assert schemes == [(1, 3)]  # migrated on open: the 3 old entries marked, none added


def test_a_grouped_answer_cached_before_the_prompt_keys_is_still_read(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same for a grouped run's answer (one call for claim 0's 3 passages): cached the old
    # way, it answers a grouped run after an edit to the verification part (main: 1 call).
    src = write_traces(tmp_path / "t.jsonl", make_traces(1))
    first = tmp_path / "first.sqlite"
    books = {
        "a": write_codebook(tmp_path / "a.yaml"),
        "v": write_codebook(tmp_path / "v.yaml", _edited(UnitKind.VERIFICATION, "Say why.")),
    }
    grouped = ("--group-by-claim", "--cache")
    assert _judge(fake, capsys, src, books["a"], tmp_path / "a", *grouped, str(first))[0] == 0
    assert _calls(fake) == 1  # by hand: pm1, pm2 and w1 of claim 0 in one request
    old = tmp_path / "old.sqlite"
    _downgrade(first, old, make_codebook(), fake.openai_base_url)
    assert _judge(fake, capsys, src, books["a"], tmp_path / "a2", *grouped, str(old))[0] == 0
    assert _calls(fake) == 1
    assert _judge(fake, capsys, src, books["v"], tmp_path / "v", *grouped, str(old))[0] == 0
    assert _calls(fake) == 1  # main: 2


def test_a_dry_run_at_another_base_url_says_the_second_endpoint(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A run resumed at another --base-url says so on its first line (session 29), but its dry
    # run said nothing: it priced the resume as if one endpoint judged the whole run (main:
    # first line "dry run, openai:fake-model at URL2 ...", no note, no field in the JSON).
    src1 = write_traces(tmp_path / "t1.jsonl", make_traces(1))
    src2 = write_traces(tmp_path / "t2.jsonl", make_traces(2))
    book = write_codebook(tmp_path / "a.yaml")
    run = tmp_path / "run"
    first = fake.openai_base_url  # http://127.0.0.1:PORT/v1
    other = first.replace("127.0.0.1", "localhost")
    assert _judge(fake, capsys, src1, book, run, "--no-cache")[0] == 0
    assert _calls(fake) == 3

    def dry(url: str, *extra: str) -> tuple[int, str, str]:
        return run_cli(
            [
                *("judge", "retrieval", "--from", str(src2), "--codebook", str(book)),
                *("--judge", "openai:fake-model", "--base-url", url, "-o", str(run)),
                *("--no-cache", "--dry-run", *extra),
            ],
            capsys,
        )

    code, out, _ = dry(other)
    assert code == 0
    assert out.splitlines()[0] == (
        f"note: this run's journal holds units judged at {first} (earlier invocations), and "
        f"this one would call {other}: one run of openai:fake-model at two endpoints; if they "
        "serve different models or versions under that name, judge again into another output "
        "folder (-o)"
    )  # main: the "dry run, ..." line
    # by hand: 2 claims x 2 systems x 2 passages = 8 rows; per claim pm1 (shared), pm2, w1
    assert out.splitlines()[1] == (
        f"dry run, openai:fake-model at {other} (per-unit): 8 (trace, passage) rows -> 6 "
        "deduplicated units (3 already done, 0 cached); 3 to call in 3 calls"
    )
    code, out, _ = dry(other, "--format", "json")
    assert code == 0 and json.loads(out)["other_endpoints"] == [first]
    # at the run's own endpoint: nothing to say
    code, out, _ = dry(first)
    assert code == 0 and out.startswith("dry run, ")
    assert _calls(fake) == 3  # the dry runs called nothing


def test_a_run_resumed_in_the_other_prompt_shape_says_so(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A per-unit run resumed with --group-by-claim (or the other way round) was not compared:
    # one run's codes answered two prompt shapes (a grouped request shows the judge the
    # claim's other passages beside each) without a word. Not refused (a grouped run asks
    # some units alone by design: a group of one, a result asked again, a cached answer), but
    # said first, in the dry run and the run, from then on; a journal written before the
    # key says it from its last session's mode.
    src1 = write_traces(tmp_path / "t1.jsonl", make_traces(1))
    src2 = write_traces(tmp_path / "t2.jsonl", make_traces(2))
    book = write_codebook(tmp_path / "a.yaml")
    run = tmp_path / "run"
    assert _judge(fake, capsys, src1, book, run, "--no-cache")[0] == 0
    assert _calls(fake) == 3  # per unit: claim 0's pm1, pm2, w1
    with sqlite3.connect(run / "journal.sqlite") as db:  # as a journal of main: no key
        db.execute("DELETE FROM meta WHERE key = 'prompt_shapes'")
    said = (
        "note: this run's journal holds units asked one unit a request (earlier invocations), "
        "and this one {verb} them grouped by claim (grouped): one run's codes from two prompt "
        "shapes (a grouped request shows the judge the claim's other passages beside each); to "
        "keep to one, resume in the earlier mode or judge again into another output folder (-o)"
    )
    grouped = ("--no-cache", "--group-by-claim")
    code, out, _ = _judge(fake, capsys, src2, book, run, *grouped, "--dry-run")
    assert code == 0
    assert out.splitlines()[0] == said.format(verb="would ask")  # main: "dry run, ..."
    code, out, _ = _judge(fake, capsys, src2, book, run, *grouped)
    assert code == 0
    assert out.splitlines()[0] == said.format(verb="asks")  # main: "judge: ..."
    assert _calls(fake) == 4  # by hand: claim 1's 3 passages in one grouped call
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    assert summary["other_shapes"] == ["one unit a request"]
    with sqlite3.connect(run / "journal.sqlite") as db:
        (shapes,) = db.execute("SELECT value FROM meta WHERE key = 'prompt_shapes'").fetchone()
    assert shapes.split("\n") == ["one unit a request", "grouped by claim"]
    # a fresh grouped run, and a per-unit one, in folders of their own: nothing to say
    for name, extra in (("g", grouped), ("p", ("--no-cache",))):
        code, out, _ = _judge(fake, capsys, src2, book, tmp_path / name, *extra)
        assert code == 0 and out.startswith("judge: "), out


def test_a_journal_older_than_the_prompt_digest_is_compared_on_its_templates(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A journal written before prompt_hash (session 29) was not compared on it at its first
    # resume (the digest was then recorded): an upgrade between its failcodes and this one,
    # changing the prompt, mixed two prompts in one run unseen (main: exit 0, 3 more calls).
    # Its template_hash (every template) tells: the same, the prompt is the same (resumed,
    # the digest recorded); another, refused in one line, nothing called.
    src1 = write_traces(tmp_path / "t1.jsonl", make_traces(1))
    src2 = write_traces(tmp_path / "t2.jsonl", make_traces(2))
    book = write_codebook(tmp_path / "a.yaml")
    for name, templates in (("same", template_hash()), ("other", "0" * 64)):
        run = tmp_path / name
        assert _judge(fake, capsys, src1, book, run, "--no-cache")[0] == 0
        with sqlite3.connect(run / "journal.sqlite") as db:  # as a journal of session 28
            db.execute("DELETE FROM meta WHERE key = 'prompt_hash'")
            db.execute("UPDATE meta SET value = ? WHERE key = 'template_hash'", (templates,))
    assert _calls(fake) == 6  # 3 units in each folder
    code, out, _ = _judge(fake, capsys, src2, book, tmp_path / "same", "--no-cache")
    assert code == 0 and "(3 already done, 3 judged now)" in out
    assert _calls(fake) == 9
    with sqlite3.connect(tmp_path / "same" / "journal.sqlite") as db:
        assert db.execute("SELECT 1 FROM meta WHERE key = 'prompt_hash'").fetchone() == (1,)
    code, out, err = _judge(fake, capsys, src2, book, tmp_path / "other", "--no-cache")
    assert (code, out) == (2, "")  # main: 0, claim 1's 3 units judged into it
    assert err == (
        f"failcodes: error: {tmp_path / 'other'} holds a run begun by a failcodes older than "
        f"the prompt digest (prompt_hash), whose prompt templates differ from this one's "
        f"(template_hash 000000000000, now {template_hash()[:12]}; same codebook): its judge "
        "may have been shown another prompt, and resuming would mix answers to two prompts in "
        "one run; judge again into another output folder (-o), or finish this run with the "
        "failcodes version that began it\n"
    )
    assert _calls(fake) == 9  # nothing called


GREEK = (
    "Η μετφορμίνη μειώνει την HbA1c σε ενήλικες με διαβήτη τύπου 2 κατά περίπου μία "
    "ποσοστιαία μονάδα όταν προστίθεται σε αλλαγές του τρόπου ζωής, σύμφωνα με αρκετές "
    "τυχαιοποιημένες ελεγχόμενες δοκιμές."
)
ARABIC = (
    "يخفض الميتفورمين مستوى الهيموغلوبين السكري لدى البالغين المصابين بداء السكري من النوع "
    "الثاني بنحو نقطة مئوية واحدة عند إضافته إلى تغييرات نمط الحياة، وفقا لعدة تجارب "
    "عشوائية محكومة."
)


def test_greek_and_arabic_text_is_not_priced_at_four_characters_a_token() -> None:
    # At 4 characters a token the dry run, the budget reservation and --tpm under-counted
    # Greek and Arabic: measured with OpenAI's o200k_base (quicktok 0.4; its cl100k_base count
    # equals tiktoken 0.14's), the Greek sentence is 70 tokens and the Arabic one 57, where
    # the estimate was ceil(197 / 4) = 50 and ceil(181 / 4) = 46 (main).
    from failcodes.judge.pricing import estimate_tokens

    assert (len(GREEK), len(ARABIC)) == (197, 181)
    # by hand: 161 Greek letters count 2 -> (197 + 161) / 4 = 89.5 -> 90 (o200k: 70, 1.29x,
    # English prose's 1.27x: 167 characters, 42 estimated, 33 in o200k)
    assert estimate_tokens(GREEK) == 90
    # 153 Arabic letters (the Arabic comma too) count 1.5 -> (181 + 76) / 4 = 64.25 -> 65
    # (o200k: 57, 1.14x)
    assert estimate_tokens(ARABIC) == 65
    # Cyrillic stays at 1 (o200k 0.95x of 4 characters a token), CJK at 4
    assert estimate_tokens("Метформин снижает") == 5  # ceil(17 / 4)
    assert estimate_tokens("二甲双胍") == 4


def test_a_budget_stop_with_calls_in_flight_does_not_say_reached(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each call in flight sets aside its cost (input and expected output tokens) until it is
    # paid: with --concurrency 8, a budget of $8 stopped scheduling when 3 calls had set
    # aside about $2.03 each, before a cent was spent, and the line said "budget of $8.0000
    # reached after spending $6.0250" (main): not reached; the 4th call's $2.04 beside the 3
    # in flight would have crossed it. (At real prices, with answers shorter than expected,
    # a small budget stopped at a third of it, t29judge.)
    import re

    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "openai:fake-model: {input: 1000.0, cached_input: 100.0, output: 2000.0}\n", "utf-8"
    )
    src = write_traces(tmp_path / "t.jsonl", make_traces(4))  # 12 units
    fake.control(latency=0.3)  # the calls overlap: every worker starts before one returns
    code, _, err = run_cli(
        [
            *("judge", "retrieval", "--from", str(src), "--judge", "openai:fake-model"),
            *("--base-url", fake.openai_base_url, "--prices", str(prices)),
            *("--codebook", str(write_codebook(tmp_path / "cb.yaml"))),
            *("--concurrency", "8", "--budget", "8", "--no-cache", "-o", str(tmp_path / "r")),
        ],
        capsys,
    )
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert "reached" not in line  # main: "budget of $8.0000 reached after spending $6.0250"
    found = re.fullmatch(
        r"failcodes: error: budget of \$8\.0000 would be exceeded by the calls in flight: "
        r"scheduling stopped at \$0\.0000 spent, with \$(\S+) set aside for 3 call\(s\) in "
        r"flight and \$(\S+) for the next \(each sets aside its input and expected output "
        r"tokens until it is paid\); \$(\S+) spent once they finished; 3 units judged and "
        r"committed, 9 left \(rerun with a larger --budget to resume: it bounds the run's total\)",
        line,
    )
    assert found is not None, line
    aside, following, spent = (float(g) for g in found.groups())
    # by hand: 3 calls of about $2.03 fit under $8 (6.09), a 4th does not (8.13)
    assert aside + following > 8 >= aside and 5.9 < aside < 6.3
    summary = json.loads((tmp_path / "r" / "summary.json").read_text("utf-8"))
    assert summary["judged"] == _calls(fake) == 3  # the 3 calls in flight, paid and kept
    assert round(summary["cost_usd"], 4) == spent


def test_a_dry_run_counts_no_cache_hit(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A dry run looked each unit up in the response cache counting a hit, so `cache stats`
    # said "3 entries, 3 hits" after one dry run of a run the cache answers (main: 3 hits
    # per dry run, none served), where the hits count answers served to runs.
    src = write_traces(tmp_path / "t.jsonl", make_traces(1))
    book = write_codebook(tmp_path / "a.yaml")
    cache = ("--cache", str(tmp_path / "c.sqlite"))
    assert _judge(fake, capsys, src, book, tmp_path / "a", *cache)[0] == 0  # 3 units stored
    code, out, _ = _judge(fake, capsys, src, book, tmp_path / "b", *cache, "--dry-run")
    assert code == 0 and "(0 already done, 3 cached); 0 to call" in out
    code, out, _ = run_cli(["cache", "stats", "--cache", cache[1], "--json"], capsys)
    assert code == 0
    assert (json.loads(out)["entries"], json.loads(out)["hits"]) == (3, 0)  # main: (3, 3)
    assert _judge(fake, capsys, src, book, tmp_path / "b", *cache)[0] == 0  # served: 3 hits
    code, out, _ = run_cli(["cache", "stats", "--cache", cache[1], "--json"], capsys)
    assert json.loads(out)["hits"] == 3
