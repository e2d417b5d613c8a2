"""``report`` as a use case: a study folder's tables, figures and index.html."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.runlock import reading_lock

if TYPE_CHECKING:
    from failcodes.study.layout import StudyLayout

#: Why ``report`` stops while ``failcodes run`` writes the study.
MID_RUN = (
    "the study is mid-run ({holder} is running its steps): a report now would be built "
    "from a half-judged study; wait for the run to finish, then report"
)


@dataclass
class ReportResult:
    """Where the report's page is, and what the report could not correct."""

    index: Path
    notes: list[str] = field(default_factory=list)
    #: Of the notes, those about the figures (labels the installed fonts cannot draw).
    figure_notes: list[str] = field(default_factory=list)
    #: Every cell of the corrected Tables 8-9 as numbers (judge-only, human, PPI++ shares with
    #: their intervals; report.corrected.CorrectedShare): the tables' CSVs, typed.
    corrected: list[Any] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The result as plain lines (a study step's log)."""
        return [f"report: {self.index}"]

    def said(self) -> list[str]:
        """The notes ``failcodes run`` says on stderr too, not only in the step's log.

        A figure drawn with empty boxes is said only in its caption otherwise: nobody opens
        the report's log of a run that finished.
        """
        return list(self.figure_notes)


class ReportRequest(Request):
    """Write paper tables (md, tex, csv), figures (png, pdf) and index.html for a run."""

    command: ClassVar[tuple[str, ...]] = ("report",)

    run_dir: Path = option(argument=True, help="A study folder (docs/study.md), e.g. the demo's.")
    codebook: Path | None = option(
        None, help="Codebook YAML the annotations were made under (if not bundled)."
    )

    out: Path | None = option(
        None,
        flags=("-o", "--out"),
        help="Output folder of the report (default: the study's report/ for a study folder, "
        "else reports/report).",
    )

    def run(self, *, note: Note = ignore_note) -> ReportResult:
        """Build the report; a stale review plan is said through ``note`` (uncorrected).

        A study's steps whose settings or inputs changed since ``failcodes run`` ran them
        (:func:`failcodes.study.state.changed_steps`) are said first, and in the run box.
        """
        from failcodes import codebook as codebooks
        from failcodes.fileio import check_regular_file
        from failcodes.report.build import build_report
        from failcodes.report.corrected import corrected_notes_key
        from failcodes.report.rundir import load_run_dir
        from failcodes.study.layout import StudyLayout
        from failcodes.units import UnitKind

        layout = StudyLayout.of(self.run_dir)
        if layout.study_file.is_symlink() or layout.study_file.exists():
            # a FIFO named like the study file: the folder was reported as no study at all
            # (without the study's lock), the report written to ./reports
            check_regular_file(layout.study_file)
        out = self.out
        if out is None:
            out = layout.report_dir if layout.study_file.is_file() else Path("reports") / "report"
        # a study being run is read whole or not at all: half its units judged, the report
        # was built from them without a word (inside the run's own step, the lock is held)
        study = layout.root if layout.study_file.is_file() else None
        cb = codebooks.load(self.codebook) if self.codebook is not None else None
        with reading_lock(study, busy=MID_RUN) if study else contextlib.nullcontext():
            stale = _changed(layout) if study else None
            inputs = load_run_dir(self.run_dir, codebook=cb)
            if stale and inputs.meta is not None:
                inputs.meta.extra.insert(0, ("Not up to date", stale))
            result = ReportResult(build_report(inputs, out), corrected=inputs.corrected_shares)
        if stale:
            note(stale)
        result.notes += inputs.notes.get("assumed", [])  # reviewer names taken as people
        result.notes += inputs.notes.get("codebook", [])  # a codebook assumed for the tables
        for kind in UnitKind:  # a stale review plan: the report is uncorrected; say how to fix
            result.notes += inputs.notes.get(corrected_notes_key(kind), [])
        # reviews made under an older codebook: migrated, or stale with the command that
        # re-opens them
        result.notes += inputs.notes.get("reviews", [])
        result.figure_notes = inputs.notes.get("figures", [])  # labels the fonts cannot draw
        result.notes += result.figure_notes
        for line in result.notes:
            note(line)
        return result


def _changed(layout: StudyLayout) -> str | None:
    """A line naming the steps whose study file settings or inputs changed since they ran.

    Also the files a finished step wrote that changed since (edited, or written again by hand).
    """
    from failcodes.errors import FailcodesError
    from failcodes.study.state import changed_steps, edited, load_state

    lost: list[str] = []
    try:
        steps = changed_steps(layout, lost)
    except FailcodesError:  # a study file that does not load: said where it is read
        return None
    state = load_state(layout)
    # a step's output edited, or written again by hand (other settings than the study's)
    touched = ", ".join(f"{name} (step {step})" for step in state for name in edited(step, layout))
    if not steps and not touched and not lost:
        return None
    names = ", ".join(s.name for s in steps if s.name in state)
    begun = ", ".join(s.name for s in steps if s.name not in state)
    said = []
    if names:
        said.append(
            f"the study changed since `failcodes run` ran these steps: {names} (their settings "
            "or input files)"
        )
    if begun:  # their outputs are an earlier run's, or half written
        said.append(f"these steps began and did not finish (failed, or stopped): {begun}")
    if touched:
        said.append(
            "these files changed since `failcodes run` wrote them (edited, or written again by "
            f"hand?), shown as they are now: {touched}"
        )
    if lost:
        said.append(
            "these files `failcodes run` wrote are gone (deleted since?), so this report shows "
            f"the study without them: {', '.join(lost)}"
        )
    run = "this report shows the outputs of that run, not of the study as it is: "
    return (
        f"{'; '.join(said)}; {run if steps else ''}run `failcodes run {layout.root}` to bring "
        "them up to date"
    )
