"""failcodes: find out why a medical fact-checking pipeline disagrees with clinicians.

The public API re-exports the core contracts; submodules hold the functions.
"""

from failcodes.annotations import Annotation, CodebookRef, CoderKind, Status, Usage
from failcodes.codebook import Codebook, Dimension, Leaf, Part, Subcode
from failcodes.errors import FailcodesError, InputError
from failcodes.labels import Label
from failcodes.traces import Passage, Trace
from failcodes.units import Provenance, Unit, UnitKind
from failcodes.verdicts import Verdict

__version__ = "0.1.0"

__all__ = [
    "Annotation",
    "Codebook",
    "CodebookRef",
    "CoderKind",
    "Dimension",
    "FailcodesError",
    "InputError",
    "Label",
    "Leaf",
    "Part",
    "Passage",
    "Provenance",
    "Status",
    "Subcode",
    "Trace",
    "Unit",
    "UnitKind",
    "Usage",
    "Verdict",
    "__version__",
]
