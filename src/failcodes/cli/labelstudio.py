"""``failcodes labelstudio config|export|push|pull|import``: human review in Label Studio.

The server URL and token come from ``--url``/``--token`` or from ``LABEL_STUDIO_URL`` and
``LABEL_STUDIO_API_KEY`` (prefer the environment: command lines are visible to other users).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from failcodes import jsonio
from failcodes.cli.main import command_group
from failcodes.cli.requests import field_marker, request_command
from failcodes.commands.labelstudio import ExportRequest, codebook_or_bundled, iter_review_tasks
from failcodes.errors import ConfigError, InputError, LabelStudioError
from failcodes.fileio import atomic_write_text, check_not_input, write_jsonl
from failcodes.labelstudio.config import labeling_config
from failcodes.labelstudio.results import (
    SKIPPED,
    ReviewResult,
    annotations_from_export,
    check_users,
)
from failcodes.units import UnitKind

ls_app = command_group("labelstudio")

MAX_PROBLEMS_SHOWN = 20

PartOpt = Annotated[UnitKind, field_marker(ExportRequest, "part")]

CodebookOpt = Annotated[
    Path | None,
    typer.Option(
        "--codebook",
        "-c",
        help="Codebook YAML file (default: the study's codebook when the units, or -o, are in "
        "a study folder; else the bundled codebook).",
    ),
]
UrlOpt = Annotated[
    str | None, typer.Option("--url", help="Label Studio URL (default: $LABEL_STUDIO_URL).")
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Label Studio API token (default and preferred: $LABEL_STUDIO_API_KEY).",
        show_default=False,
    ),
]
UnitsArg = Annotated[Path, field_marker(ExportRequest, "units")]
ProjectOpt = Annotated[str, typer.Option("--project", help="Label Studio project title.")]
JudgedOpt = Annotated[Path | None, field_marker(ExportRequest, "judged")]
JudgeOpt = Annotated[str | None, field_marker(ExportRequest, "judge")]
PlanOpt = Annotated[Path | None, field_marker(ExportRequest, "plan")]
TopKOpt = Annotated[int | None, field_marker(ExportRequest, "top_k")]
DatasetOpt = Annotated[str | None, field_marker(ExportRequest, "dataset")]
AnnotationsOutOpt = Annotated[Path, typer.Option("-o", "--out", help="Annotations JSONL to write.")]
DEFAULT_ANNOTATIONS_OUT = Path("annotations/labelstudio.jsonl")
AnnotatorOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--annotator",
        help="Blind double coding: one project per annotator, titled 'PROJECT [NAME]'.",
    ),
]


def _check_kept(result: ReviewResult, part: UnitKind, source: str | Path) -> None:
    """Refuse an export with no annotation, or none holding a code of ``part`` (another config).

    Every choice would be dropped as unknown, and each annotation written as scored with no
    code: annotations of nothing, exit 0.
    """
    if not result.annotations:  # an empty annotations file, exit 0
        why = (
            f", but {result.drafts} draft{'s' if result.drafts > 1 else ''} saved in Label "
            "Studio and never submitted: submit them (the drafts are not reviews)"
            if result.drafts
            else " (exported before anyone annotated?)"
        )
        raise InputError(f"no annotations in its {result.tasks} task(s){why}", path=source)
    if any(a.codes or a.code_sets for a in result.annotations):
        return
    unknown = [p for p in result.problems if p.message.startswith("unknown ")]
    if not unknown:
        return
    names = sorted({repr(p.value if p.value is not None else p.dimension) for p in unknown})
    raise InputError(
        f"no annotation holds a code of the codebook's {part.value!r} part (found: "
        f"{', '.join(names[:3])}): exported from a project with another labelling config? "
        "(`failcodes labelstudio config` writes the one to use)",
        path=source,
    )


def _check_nothing_dropped(out: Path, result: ReviewResult, what: str) -> None:
    """Refuse to write over an annotations file holding reviews the new ones lack.

    A task deleted in Label Studio (or deleted and imported again) takes its annotations with
    it; the earlier pull was then their last copy, and pulling into it again lost them at exit
    0. Checked by (unit, coder); a file that is no JSONL is replaced as before.
    """
    if not out.is_file():
        return
    kept = {(a.unit_id, a.coder) for a in result.annotations}
    try:
        earlier = dict.fromkeys(
            (r.get("unit_id"), r.get("coder")) for _, r in jsonio.iter_jsonl(out)
        )
    except InputError:
        return
    lost = [key for key in earlier if key not in kept]
    if lost:
        unit, coder = lost[0]
        raise InputError(
            f"holds {len(lost)} annotation(s) that this {what} does not (first: unit {unit} by "
            f"{coder}; tasks or annotations deleted in Label Studio?): writing would lose them; "
            "write to another file (-o), or move this one away first",
            path=out,
        )


def _report(result: ReviewResult, out: Path) -> None:
    if result.pre_selected:
        typer.echo(
            f"Assumed: {result.pre_selected} of {len(result.annotations)} annotations were made "
            "with the judge's codes pre-selected (Label Studio predictions): a reviewer who "
            "keeps them agrees with the judge more than a blind one may, so human vs judge "
            "agreement and the corrected shares may lean toward the judge (push without "
            "--judged for a blind review)"
        )
    for problem in result.problems[:MAX_PROBLEMS_SHOWN]:
        typer.echo(f"failcodes: warning: {problem}", err=True)
    if len(result.problems) > MAX_PROBLEMS_SHOWN:
        typer.echo(
            f"failcodes: warning: ... and {len(result.problems) - MAX_PROBLEMS_SHOWN} more "
            "problems",
            err=True,
        )
    coders = sorted({a.coder for a in result.annotations})
    warned = (
        f"; {len(result.problems)} warning(s) above (a choice not in the codebook is dropped; a "
        "dimension left empty stays without a code)"
        if result.problems
        else ""
    )
    # a skip read as an annotation, a draft dropped: a reviewer's unsubmitted work unsaid
    skips = sum(1 for a in result.annotations if a.reason == SKIPPED)
    skipped = f"; {skips} of them a skipped task (not a review)" if skips else ""
    n = result.drafts
    drafts = (
        f"; {n} draft{'s' if n > 1 else ''} saved in Label Studio and never submitted: not "
        f"read (submit {'them' if n > 1 else 'it'} to count {'them' if n > 1 else 'it'})"
        if n
        else ""
    )
    typer.echo(
        f"{len(result.annotations)} annotations from {len(coders)} coder(s) on "
        f"{result.tasks} tasks -> {out}{skipped}{drafts}{warned}"
    )


@ls_app.command("config")
def config_cmd(
    part: PartOpt,
    codebook: CodebookOpt = None,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Write the XML here (default: stdout).")
    ] = None,
) -> None:
    """Write the labeling config XML for one codebook part."""
    check_not_input([out], [codebook])
    xml = labeling_config(codebook_or_bundled(codebook), part)
    if out is None:
        typer.echo(xml, nl=False)
    else:
        atomic_write_text(out, xml)
        typer.echo(f"labeling config -> {out}")


def _export(request: ExportRequest) -> None:
    for line in request.run().lines():
        typer.echo(line)


_export_cmd: Any = request_command(ExportRequest, _export)
ls_app.command("export")(_export_cmd)


@ls_app.command("push")
def push_cmd(
    units: UnitsArg,
    part: PartOpt,
    project: ProjectOpt,
    codebook: CodebookOpt = None,
    judged: JudgedOpt = None,
    judge: JudgeOpt = None,
    top_k: TopKOpt = None,
    annotator: AnnotatorOpt = None,
    url: UrlOpt = None,
    token: TokenOpt = None,
    plan: PlanOpt = None,
    dataset: DatasetOpt = None,
) -> None:
    """Create or reuse the project(s) and import the tasks not yet there (by unit id)."""
    from failcodes.labelstudio.client import LabelStudioClient, project_titles

    cb = codebook_or_bundled(codebook, near=units)  # in a study: its codebook now
    project_titles(project, annotator or [])  # check titles before any network call
    found = iter_review_tasks(cb, part, units, judged, judge, top_k, plan, dataset)
    tasks = [json.loads(task) for task, _ in found]
    with LabelStudioClient(url, token) as client:
        report = client.push(tasks, labeling_config(cb, part), project, annotators=annotator or [])
    for title, pid in report.projects.items():
        state = "created" if title in report.created_projects else "reused"
        typer.echo(
            f"project {title!r} (id {pid}, {state}): {report.imported[title]} tasks imported, "
            f"{report.skipped[title]} already there"
        )


@ls_app.command("pull")
def pull_cmd(
    part: PartOpt,
    project: ProjectOpt,
    codebook: CodebookOpt = None,
    annotator: AnnotatorOpt = None,
    out: AnnotationsOutOpt = DEFAULT_ANNOTATIONS_OUT,
    url: UrlOpt = None,
    token: TokenOpt = None,
) -> None:
    """Fetch annotations, check every choice against the codebook, write failcodes JSONL."""
    from failcodes.labelstudio.client import LabelStudioClient

    cb = codebook_or_bundled(codebook, near=out.parent)  # pulled into a study: its codebook
    with LabelStudioClient(url, token) as client:
        result = client.pull(cb, part, project, annotators=annotator or [])
    _check_kept(result, part, f"Label Studio project {project}")
    _check_nothing_dropped(out, result, "pull")
    write_jsonl(out, result.annotations)
    _report(result, out)


@ls_app.command("import")
def import_cmd(
    export: Annotated[Path, typer.Argument(help="A Label Studio JSON export file.")],
    part: PartOpt,
    codebook: CodebookOpt = None,
    project_id: Annotated[
        int | None,
        typer.Option("--project-id", help="Fail unless every task is from this project."),
    ] = None,
    user: Annotated[
        list[str] | None,
        typer.Option("--user", help="Name a Label Studio user id: ID=email (exports hold ids)."),
    ] = None,
    out: AnnotationsOutOpt = DEFAULT_ANNOTATIONS_OUT,
) -> None:
    """Map a Label Studio JSON export file (no server needed) to failcodes annotations."""
    users: dict[int, str] = {}
    for item in user or []:
        key, sep, name = item.partition("=")
        if not sep or not key.strip().isdigit() or not name.strip():
            raise ConfigError(f"--user expects ID=NAME with a numeric id, got {item!r}")
        was = users.setdefault(int(key), name.strip())
        if was != name.strip():  # the last name silently won: one reviewer's reviews renamed
            raise ConfigError(f"--user: id {int(key)} named twice ({was!r} and {name.strip()!r})")
        other = next((k for k, v in users.items() if v == name.strip() and k != int(key)), None)
        if other is not None:  # two people as one coder: one review of a unit was dropped
            raise ConfigError(
                f"--user: ids {other} and {int(key)} both named {name.strip()!r} (two Label "
                "Studio users are two reviewers: their reviews of one unit would be one coder's, "
                "and one dropped)"
            )
    check_not_input([out], [export, codebook])
    cb = codebook_or_bundled(codebook, near=out.parent)  # imported into a study: its codebook
    tasks = jsonio.read_json(export)
    if tasks == []:  # an empty export: no empty annotations file, no zero exit
        raise InputError(
            "no tasks in the export (expected a list of Label Studio tasks)", path=export
        )
    check_users(tasks, users, str(export))
    result = annotations_from_export(
        tasks, cb, part, users=users, project=project_id, source=str(export)
    )
    _check_kept(result, part, export)
    _check_nothing_dropped(out, result, "export")
    write_jsonl(out, result.annotations)
    _report(result, out)


def _waiting(exe: Path, folder: Path, first: bool) -> Callable[[float], None]:
    """A tick that says once, after 2 s, that the server is starting (and migrating)."""
    said: list[bool] = []

    def waiting(seconds: float) -> None:  # said once the server is up and busy starting
        if seconds >= 2 and not said:
            said.append(True)
            typer.echo(
                f"starting Label Studio from {exe} (data: {folder})"
                + ("; a new data folder: the first start migrates its database" if first else ""),
                err=True,
            )

    return waiting


def _say_ready(local: Any, took: float, credentials: Path) -> None:
    """The URL, where the password is, and the two lines to export for push/pull."""
    creds = local.creds
    typer.echo(f"# Label Studio is ready at {local.url} ({took:.0f} s)")
    typer.echo(f"# log in as {creds.email}; password in {credentials}")
    typer.echo("# in the shell where you run failcodes labelstudio push/pull:")
    typer.echo(f"export LABEL_STUDIO_URL={local.url}")
    typer.echo(f"export LABEL_STUDIO_API_KEY={creds.token}")
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # started in the background by a shell without job control (`serve &` in a script):
        # SIGINT stays ignored, as that shell asked, so Ctrl-C would not stop it
        typer.echo(
            f"# SIGINT is ignored here (started in the background); stop the server with "
            f"kill {os.getpid()}",
            err=True,
        )
    else:
        typer.echo("# Ctrl-C stops the server", err=True)


@ls_app.command("serve")
def serve(
    port: Annotated[
        int | None,
        typer.Option("--port", min=1, max=65535, help="Port on 127.0.0.1 (default: a free one)."),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="The server's data (projects, reviews, login); default "
            "~/.local/share/failcodes/label-studio. Reviews survive restarts here.",
        ),
    ] = None,
    binary: Annotated[
        Path | None,
        typer.Option(
            "--bin",
            help="The label-studio executable (default: $FAILCODES_LABEL_STUDIO_BIN, "
            ".venv-labelstudio/bin/label-studio here or above, or one on PATH).",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=1, help="Seconds to wait for the server to answer."),
    ] = 600.0,
) -> None:
    """Start a local Label Studio server for review; Ctrl-C stops it.

    Runs the server of its own environment (make labelstudio-venv) on 127.0.0.1 with a
    generated admin and API key (kept in the data folder, reused on every later start), waits
    until it answers, and prints the URL and the two lines to export in the shell where you
    run `failcodes labelstudio push/pull`. The first start on a new data folder migrates its
    database (30 s to a few minutes); later starts take seconds.
    """
    from failcodes.labelstudio import server as ls_server

    exe = ls_server.find_binary(binary)
    folder = (data_dir or ls_server.default_data_dir()).expanduser().resolve()
    first = not (folder / ls_server.CREDENTIALS).exists()
    local = ls_server.LocalServer(exe, folder, port or ls_server.free_port())
    waiting = _waiting(exe, folder, first)
    try:
        local.start()
        took = local.wait_ready(timeout, tick=waiting)
        _say_ready(local, took, folder / ls_server.CREDENTIALS)
        code = local.wait()
    except KeyboardInterrupt:
        if local.stop():
            typer.echo(
                f"Label Studio did not stop within {ls_server.STOP_GRACE_S:.0f} s of SIGTERM; "
                "killed it (SIGKILL)",
                err=True,
            )
        typer.echo("stopped Label Studio", err=True)
        return
    finally:
        local.stop()
    raise LabelStudioError(f"Label Studio exited with code {code} (log: {local.log_path})")
