"""Session 30, helper t30latin: the offline judge reads accented Latin words whole (issue 30)."""

from __future__ import annotations

import unicodedata

from failcodes.codebook import bundled
from failcodes.judge.providers.offline import OFFLINE_MODEL, OfflineCoder
from failcodes.traces import Passage
from failcodes.units import Unit, UnitKind

_CLAIM = "Frühe Übelkeit über Wochen führt zu Gewichtsverlust."
_PASSAGE = "Übelkeit führt selten zu Gewichtsverlust."


def _without_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def _codes(claim: str, passage: str) -> dict[str, tuple[str, ...]]:
    part = bundled().part(UnitKind.RETRIEVAL)
    unit = Unit(
        id="u1",
        kind=UnitKind.RETRIEVAL,
        claim=claim,
        passages=(Passage(passage_id="p1", rank=1, text=passage, source="PubMed"),),
    )
    answer = OfflineCoder().code(unit, part).answer
    assert answer is not None
    return {d: a.codes for d, a in answer.dimensions.items()}


def test_a_german_claim_with_accents_is_coded_as_the_same_text_without() -> None:
    # [a-z0-9] read 'Frühe' as 'fr' + 'he', 'über' as 'ber', 'führt' as 'f' + 'hrt': the claim's
    # content words (longer than 2 letters, 6-letter stems) were belkei, ber, gewich, hrt,
    # wochen, 3 of them (belkei, gewich, hrt) in the passage: overlap 3/5 = 0.6 -> exact entity
    # (>= 0.6). Without accents (Fruhe Ubelkeit uber ... fuhrt) the words are fruhe, ubelke,
    # uber, wochen, fuhrt, gewich, 3 in the passage (ubelke, fuhrt, gewich): 3/6 = 0.5 ->
    # partial entity (0.3 <= 0.5 < 0.6). Read as Unicode letters both are 3/6 = 0.5: partial
    # match, one code for one text. Scope (no number, no population word, overlap >= 0.5):
    # exact scope; polarity (>= 0.5, no hedge): direct; chunk: well chunked; PubMed: trusted.
    plain = _codes(_without_accents(_CLAIM), _without_accents(_PASSAGE))
    accented = _codes(_CLAIM, _PASSAGE)
    assert accented == plain
    assert accented == {
        "entity_match": ("partial_entity",),  # main: exact_entity (plain: partial_entity)
        "scope": ("exact_scope",),
        "trustworthy": ("trustworthy_source",),
        "evidence_polarity": ("direct_polarity",),
        "chunking": ("well_chunked",),
    }
    # NFD input (a decomposed 'Ü', as macOS file names and some exports give) reads the same
    decomposed = _codes(
        unicodedata.normalize("NFD", _CLAIM), unicodedata.normalize("NFD", _PASSAGE)
    )
    assert decomposed == accented
    assert OFFLINE_MODEL == "heuristic-v6"


def test_a_thai_claim_is_read_as_character_pairs() -> None:
    # Thai is written without spaces between words: read as [a-z0-9] it had no word (entity
    # overlap 0 -> irrelevant on main). Read as character bigrams as CJK is: the claim
    # 'folic acid should start before pregnancy' (29 characters, 28 distinct bigrams) and the
    # passage 'should start taking folic acid before pregnancy' share 27 of them (all but
    # 'กค', the claim's join of โฟลิก and ควร): 27/28 = 0.96 -> exact entity (>= 0.6).
    codes = _codes("กรดโฟลิกควรเริ่มก่อนตั้งครรภ์", "ควรเริ่มกินกรดโฟลิกก่อนตั้งครรภ์")
    assert codes["entity_match"] == ("exact_entity",)  # main: irrelevant
    assert codes["evidence_polarity"] == ("direct_polarity",)  # main: neutral
