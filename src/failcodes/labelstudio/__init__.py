"""Human review in Label Studio: labeling config, tasks with predictions, annotations back.

The SDK-free parts are importable from here; :mod:`failcodes.labelstudio.client` (which
imports ``label_studio_sdk``) is imported only when a server is used.
"""

from __future__ import annotations

from failcodes.labelstudio.config import check_label_studio_ids as check_label_studio_ids
from failcodes.labelstudio.config import labeling_config as labeling_config
from failcodes.labelstudio.results import ReviewProblem as ReviewProblem
from failcodes.labelstudio.results import ReviewResult as ReviewResult
from failcodes.labelstudio.results import annotations_from_export as annotations_from_export
from failcodes.labelstudio.tasks import build_tasks as build_tasks
from failcodes.labelstudio.tasks import model_version as model_version
from failcodes.labelstudio.tasks import select_judged as select_judged
