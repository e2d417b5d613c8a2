"""Overlapping fixed-size character chunks (seed 000: 1,400 characters, 200 overlap)."""

from __future__ import annotations

from pydantic import Field

from failcodes.contract import FrozenModel

DEFAULT_CHUNK_SIZE = 1400
DEFAULT_OVERLAP = 200


class Chunk(FrozenModel):
    """One chunk of a source document: ``text == document[start:end]``."""

    doc_id: str
    index: int = Field(ge=0, description="0-based position of the chunk in its document.")
    start: int = Field(ge=0, description="Character offset of the first character.")
    end: int = Field(ge=0, description="Character offset one past the last character.")
    text: str

    @property
    def chunk_id(self) -> str:
        """Stable identifier: ``doc_id#index``."""
        return f"{self.doc_id}#{self.index}"


def chunk_text(
    text: str, doc_id: str, *, size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_OVERLAP
) -> list[Chunk]:
    """Split ``text`` into chunks of ``size`` characters, consecutive chunks sharing ``overlap``.

    Chunk i starts at ``i * (size - overlap)``; the last chunk ends at the end of the text and
    no chunk is produced that lies entirely inside the previous one. Empty text -> no chunks.
    """
    if size <= 0:
        raise ValueError("chunk size must be positive")
    if not 0 <= overlap < size:
        raise ValueError("overlap must be >= 0 and smaller than the chunk size")
    step = size - overlap
    chunks: list[Chunk] = []
    start = 0
    n = len(text)
    while start < n:
        end = min(start + size, n)
        chunks.append(
            Chunk(doc_id=doc_id, index=len(chunks), start=start, end=end, text=text[start:end])
        )
        if end == n:
            break
        start += step
    return chunks
