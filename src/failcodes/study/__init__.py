"""A study: one folder, one study file, every step's output the next step's input.

- :mod:`failcodes.study.layout`: :class:`StudyLayout`, the one place that names every path.
- :mod:`failcodes.study.config`: the study file (``failcodes.toml``) as a pydantic contract.
- :mod:`failcodes.study.create`: ``failcodes init NAME``.
- :mod:`failcodes.study.steps`: the study as ordered steps, each holding a command's request.
- :mod:`failcodes.study.runner`: ``failcodes run`` and ``failcodes.run_study`` (pending
  steps, resumable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcodes.deferredimport import lazy_exports

if TYPE_CHECKING:
    from failcodes.study.config import StudyFile as StudyFile
    from failcodes.study.config import load_study as load_study
    from failcodes.study.create import init_study as init_study
    from failcodes.study.layout import STUDY_FILE as STUDY_FILE
    from failcodes.study.layout import StudyLayout as StudyLayout
    from failcodes.study.steps import Step as Step
    from failcodes.study.steps import plan_study as plan_study

#: Imported on first use: ``failcodes.study.layout`` (pure paths) is read by layers below
#: the study (the use cases), which must not load the planner with it.
_LAZY, __getattr__ = lazy_exports(globals())
__all__ = sorted(_LAZY)
