"""A study: one folder, one study file, every step's output the next step's input.

- :mod:`failcodes.study.layout`: :class:`StudyLayout`, the one place that names every path.
- :mod:`failcodes.study.config`: the study file (``failcodes.toml``) as a pydantic contract.
- :mod:`failcodes.study.create`: ``failcodes init NAME``.
- :mod:`failcodes.study.steps`: the study as ordered ``failcodes`` command lines.
- :mod:`failcodes.study.runner`: ``failcodes run`` (pending steps, resumable).
"""

from __future__ import annotations

from failcodes.study.config import StudyFile, load_study
from failcodes.study.create import init_study
from failcodes.study.layout import STUDY_FILE, StudyLayout
from failcodes.study.steps import Step, plan_study

__all__ = [
    "STUDY_FILE",
    "Step",
    "StudyFile",
    "StudyLayout",
    "init_study",
    "load_study",
    "plan_study",
]
