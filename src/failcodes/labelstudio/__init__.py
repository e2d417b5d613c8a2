"""Human review in Label Studio: labeling config, tasks with predictions, annotations back.

The SDK-free parts are importable from here; :mod:`failcodes.labelstudio.client` (which
imports ``label_studio_sdk``) is imported only when a server is used.
"""

from __future__ import annotations

from failcodes.labelstudio.config import check_label_studio_ids, labeling_config
from failcodes.labelstudio.results import ReviewProblem, ReviewResult, annotations_from_export
from failcodes.labelstudio.tasks import build_tasks, model_version, select_judged

__all__ = [
    "ReviewProblem",
    "ReviewResult",
    "annotations_from_export",
    "build_tasks",
    "check_label_studio_ids",
    "labeling_config",
    "model_version",
    "select_judged",
]
