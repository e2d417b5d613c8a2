"""The Label Studio labeling config (XML) for one part of a codebook.

The interface shows the claim, the passage (retrieval units) or the passages, verdict and
reasoning trace (verification units), and the judge's proposal as text; then one choice group
per dimension (step) listing every subcode (single choice; multiple choice for a dimension the
codebook declares multi-label), a free-text field to propose a new code and a comment box.
Pure: no SDK, no I/O.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from failcodes.codebook import Codebook, Part
from failcodes.errors import ConfigError
from failcodes.units import UnitKind

#: Names of the object tags (and the task data keys they show).
CLAIM = "claim"
PASSAGE = "passage"
PASSAGES = "passages"
VERDICT = "verdict"
REASONING = "reasoning"
PROPOSAL = "proposal"
#: Names of the two free-text control tags.
OTHER = "other_code"
COMMENT = "comment"
#: Task data keys that are not shown but let failcodes map results back.
UNIT_ID = "failcodes_unit_id"
UNIT_KIND = "failcodes_unit_kind"
CODEBOOK = "failcodes_codebook"

RESERVED_NAMES = frozenset({CLAIM, PASSAGE, PASSAGES, VERDICT, REASONING, PROPOSAL, OTHER, COMMENT})

# Label Studio 1.23 accepts almost any config but then misreads some ids: its server parses
# the config with xmljson (badgerfish), which turns "10" into the number 10, "1.10" into 1.1
# and "true"/"false" into booleans (so annotations no longer match their labels); it splits
# toName on ","; its annotation summaries key on names joined with "|"; a value starting with
# "$" is read as a task-data variable; duplicate names are rejected outright. Ids made of ASCII
# letters, digits, "_", "." and "-" that start with a letter (and are not true/false) are safe.
_SAFE_ID = re.compile(r"(?!(?i:true|false)$)[A-Za-z][A-Za-z0-9_.\-]{0,99}")
_SAFE_ID_RULE = (
    "start with a letter, use only A-Z a-z 0-9 _ . - and not be true/false "
    "(Label Studio misreads other ids)"
)


def object_names(kind: UnitKind) -> tuple[str, ...]:
    """The object tags (task data keys) shown for units of ``kind``, in display order."""
    if kind is UnitKind.RETRIEVAL:
        return (CLAIM, PASSAGE, PROPOSAL)
    return (CLAIM, PASSAGES, VERDICT, REASONING, PROPOSAL)


def check_label_studio_ids(codebook: Codebook, kind: UnitKind) -> Part:
    """Return the codebook part for ``kind`` after checking its ids are safe in Label Studio.

    Raises :class:`~failcodes.errors.ConfigError` naming the first offending id.
    """
    try:
        part = codebook.part(kind)
    except KeyError:
        raise ConfigError(
            f"codebook {codebook.name}@{codebook.version} has no '{kind.value}' part"
        ) from None
    for dim in part.dimensions:
        if not _SAFE_ID.fullmatch(dim.id):
            raise ConfigError(
                f"dimension id {dim.id!r} cannot be a Label Studio tag name: ids must "
                f"{_SAFE_ID_RULE}"
            )
        if dim.id in RESERVED_NAMES:
            raise ConfigError(
                f"dimension id {dim.id!r} clashes with a name failcodes uses in the "
                f"Label Studio config (reserved: {', '.join(sorted(RESERVED_NAMES))})"
            )
        for sub in dim.subcodes:
            if not _SAFE_ID.fullmatch(sub.id):
                raise ConfigError(
                    f"code id {sub.id!r} (dimension {dim.id!r}) cannot be a Label Studio "
                    f"choice: ids must {_SAFE_ID_RULE}"
                )
    return part


def labeling_config(codebook: Codebook, kind: UnitKind) -> str:
    """Return the Label Studio labeling config XML for the ``kind`` part of ``codebook``."""
    part = check_label_studio_ids(codebook, kind)
    view = ET.Element("View")
    ET.SubElement(
        view,
        "Header",
        value=f"{codebook.name} v{codebook.version}: {part.label} ({kind.value} unit)",
    )
    titles = {
        CLAIM: "Claim",
        PASSAGE: "Retrieved passage",
        PASSAGES: "Passages shown to the verifier",
        VERDICT: "Verifier's verdict",
        REASONING: "Verifier's reasoning",
        PROPOSAL: "Judge's proposal (pre-selected below; correct it where you disagree)",
    }
    for name in object_names(kind):
        ET.SubElement(view, "Header", value=titles[name], size="5")
        ET.SubElement(view, "Text", name=name, value=f"${name}")
    for dim in part.dimensions:
        block = ET.SubElement(view, "View")
        multi = " (several may apply)" if dim.multi_label else ""
        ET.SubElement(block, "Header", value=f"{dim.id}: {dim.label}{multi}", size="5")
        choices = ET.SubElement(
            block,
            "Choices",
            name=dim.id,
            toName=CLAIM,
            choice="multiple" if dim.multi_label else "single",
            showInline="false",
            required="true",
        )
        for sub in dim.subcodes:
            hint = f"{sub.label}: {' '.join(sub.definition.split())}"
            if sub.high_quality:
                hint = f"[high quality] {hint}"
            ET.SubElement(choices, "Choice", value=sub.id, hint=hint)
    for header, name, rows in (
        ("Other: propose a new code (name and definition)", OTHER, "2"),
        ("Comment", COMMENT, "3"),
    ):
        ET.SubElement(view, "Header", value=header, size="5")
        ET.SubElement(
            view,
            "TextArea",
            name=name,
            toName=CLAIM,
            rows=rows,
            maxSubmissions="1",
            editable="true",
        )
    ET.indent(view)
    return ET.tostring(view, encoding="unicode") + "\n"
