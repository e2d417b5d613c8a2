"""The steps of a study, in order, each holding the request of the command that performs it.

:func:`plan_study` turns a study file into a list of :class:`Step`: each holds one typed
request of :mod:`failcodes.commands` (an ingest, the metrics written to ``metrics/X.json``,
...) whose paths all come from :class:`~failcodes.study.layout.StudyLayout`. ``failcodes run``
and ``failcodes.run_study`` run them in order, in process; ``failcodes run --plan`` prints
each as the command line that runs the same request (typing them gives the same files).

Order per data set: ingest -> metrics -> disagreements -> judge retrieval -> judge reasoning
(``recode`` instead once the study's codebook is newer than the run's,
:mod:`failcodes.study.recode`) -> attribute -> Label Studio task files; then the report. How
the plan follows the data (judge steps only with something to code) and why human review is
no step: docs/study.md (``failcodes run``).

The steps before the report are :func:`failcodes.study.plan.plan_work`'s; this module adds the
report step (the report's own stale-study check re-plans the others without importing it).
"""

from __future__ import annotations

from failcodes.commands.report import ReportRequest
from failcodes.study.config import StudyFile, resolve_path
from failcodes.study.layout import StudyLayout
from failcodes.study.plan import Step as Step
from failcodes.study.plan import has_traces as has_traces
from failcodes.study.plan import judged_kinds as judged_kinds
from failcodes.study.plan import plan_notes as plan_notes
from failcodes.study.plan import plan_work


def plan_study(study: StudyFile, layout: StudyLayout) -> list[Step]:
    """Every step of the study, in the order they run (see the module docstring)."""
    codebook = resolve_path(study.codebook, layout.root)
    steps = plan_work(study, layout)
    # the study's codebook: a study on a codebook that is not bundled (a re-coded version, see
    # failcodes.study.recode) reports under it
    report = ReportRequest(run_dir=layout.root, codebook=codebook, out=layout.report_dir)
    steps.append(
        Step(
            "report",
            report,
            inputs=(layout.root,),  # everything the report may read (see study.state)
            outputs=(layout.report_dir / "index.html",),
        )
    )
    return steps
