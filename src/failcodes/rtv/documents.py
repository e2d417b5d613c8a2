"""Reading source documents: plain text (.txt, .md) or PDF (text layer via pypdf)."""

from __future__ import annotations

from pathlib import Path

from failcodes.errors import InputError
from failcodes.jsonio import decode_error

TEXT_SUFFIXES = frozenset({".txt", ".md", ".text"})
PDF_SUFFIXES = frozenset({".pdf"})


def read_document(path: str | Path) -> str:
    """Return a document's text. PDFs are read page by page (pages joined by a blank line).

    A PDF without a text layer (e.g. a scan without OCR) is an error, as seed 000 advises
    flagging such documents rather than scoring them.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError("document not found", path=p)
    suffix = p.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        try:
            return p.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise decode_error(p, exc) from None
    if suffix in PDF_SUFFIXES:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError

        try:
            reader = PdfReader(str(p))
            pages = [page.extract_text() or "" for page in reader.pages]
        except (PdfReadError, ValueError, KeyError) as exc:
            raise InputError(f"unreadable PDF ({exc})", path=p) from None
        text = "\n\n".join(pg.strip() for pg in pages).strip()
        if not text:
            raise InputError("PDF has no extractable text (scanned without OCR?)", path=p)
        return text
    raise InputError(f"unsupported document type {suffix!r} (use .txt, .md or .pdf)", path=p)


def load_documents(folder: str | Path) -> dict[str, str]:
    """Read every .txt/.md/.pdf file of a folder; the document id is the file stem."""
    base = Path(folder)
    if not base.is_dir():
        raise InputError("documents folder not found", path=base)
    docs: dict[str, str] = {}
    for p in sorted(base.iterdir()):
        if p.suffix.lower() not in TEXT_SUFFIXES | PDF_SUFFIXES:
            continue
        if p.stem in docs:
            raise InputError(f"two documents share the id {p.stem!r}", path=p)
        docs[p.stem] = read_document(p)
    if not docs:
        raise InputError("no .txt, .md or .pdf documents in the folder", path=base)
    return docs
