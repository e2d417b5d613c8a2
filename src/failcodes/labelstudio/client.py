"""Push tasks to and pull annotations from a live Label Studio server (label-studio-sdk).

The only module of failcodes that imports ``label_studio_sdk``. The URL and token come from
arguments or the environment (``LABEL_STUDIO_URL``, ``LABEL_STUDIO_API_KEY``); the token is
kept in memory only and never appears in messages.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError

from failcodes.codebook import Codebook
from failcodes.errors import ConfigError, LabelStudioError
from failcodes.labelstudio import config as cfg
from failcodes.labelstudio.results import ReviewResult, annotations_from_export, check_blind
from failcodes.redact import redact_url
from failcodes.units import UnitKind

URL_ENV = "LABEL_STUDIO_URL"
TOKEN_ENV = "LABEL_STUDIO_API_KEY"
TITLE_MIN, TITLE_MAX = 3, 50  # Label Studio's PROJECT_TITLE_MIN_LEN / MAX_LEN
IMPORT_BATCH = 500


def resolve_connection(url: str | None = None, token: str | None = None) -> tuple[str, str]:
    """Return (url, token) from the arguments, else from the environment."""
    url = url or os.environ.get(URL_ENV)
    token = token or os.environ.get(TOKEN_ENV)
    if not url:
        raise ConfigError(f"no Label Studio URL: pass --url or set {URL_ENV}")
    if not token:
        raise ConfigError(f"no Label Studio token: set {TOKEN_ENV} (or pass --token)")
    return url.rstrip("/"), token


def project_titles(title: str, annotators: Sequence[str] = ()) -> list[str]:
    """The project title(s): one shared project, or one per annotator for blind double coding."""
    titles = [f"{title} [{a}]" for a in annotators] if annotators else [title]
    for t in titles:
        if not TITLE_MIN <= len(t) <= TITLE_MAX:
            raise ConfigError(
                f"Label Studio project title {t!r} must be {TITLE_MIN}-{TITLE_MAX} characters "
                f"long (it is {len(t)})"
            )
    if len(set(titles)) != len(titles):
        raise ConfigError("annotator names must be distinct")
    return titles


@dataclass
class PushReport:
    """What one push did, per project."""

    projects: dict[str, int] = field(default_factory=dict)  # title -> project id
    created_projects: list[str] = field(default_factory=list)
    imported: dict[str, int] = field(default_factory=dict)  # title -> new tasks
    skipped: dict[str, int] = field(default_factory=dict)  # title -> already present
    #: title -> tasks already present that show other than asked: no judge prediction on a
    #: push with one (pushed blind before), or one on a blind push (pushed --judged before)
    shown_otherwise: dict[str, int] = field(default_factory=dict)
    #: title -> (the model version the project pre-selected before the push, the one after,
    #: tasks already there holding judge predictions but none of the one after: they show no
    #: code pre-selected), when the one after is not this push's judge's or such tasks exist
    other_version: dict[str, tuple[str, str, int]] = field(default_factory=dict)


def _detail(exc: ApiError) -> str:
    body = exc.body
    if isinstance(body, dict):
        for key in ("detail", "validation_errors", "message"):
            if body.get(key):
                return (
                    " ".join(json.dumps(body[key]).split()) if key != "detail" else str(body[key])
                )
    return f"HTTP {exc.status_code}"


class LabelStudioClient:
    """A small failcodes-shaped facade over the Label Studio SDK."""

    def __init__(
        self, url: str | None = None, token: str | None = None, *, timeout: float = 120.0
    ) -> None:
        self.url, token = resolve_connection(url, token)
        #: The URL as printed in messages: without ``user:password@`` or key-like parameters.
        self.shown_url = redact_url(self.url) or self.url
        # We own the HTTP client so it can be closed; no SDK retries: a down server or a bad
        # token should fail at once, with one line.
        self._http = httpx.Client(timeout=timeout, follow_redirects=True)
        self._sdk = LabelStudio(  # type: ignore[no-untyped-call]
            base_url=self.url,
            api_key=token,
            timeout=timeout,
            max_retries=0,
            httpx_client=self._http,
        )

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    def __enter__(self) -> LabelStudioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        """Turn SDK and HTTP failures into one-line :class:`LabelStudioError`."""
        try:
            yield
        except ApiError as exc:
            if exc.status_code in (401, 403):
                raise LabelStudioError(
                    f"Label Studio at {self.shown_url} rejected the token (HTTP {exc.status_code}) "
                    f"while trying to {what}; check {TOKEN_ENV}"
                ) from None
            raise LabelStudioError(
                f"Label Studio at {self.shown_url} refused to {what}: {_detail(exc)}"
            ) from None
        except httpx.TimeoutException:
            raise LabelStudioError(
                f"Label Studio at {self.shown_url} did not answer in time while trying to {what}"
            ) from None
        except httpx.HTTPError as exc:
            raise LabelStudioError(
                f"cannot reach Label Studio at {self.shown_url} to {what}: {type(exc).__name__}"
            ) from None
        except json.JSONDecodeError:
            raise LabelStudioError(
                f"{self.shown_url} did not answer like a Label Studio server while trying to {what}"
            ) from None

    def whoami(self) -> str:
        """The authenticated user's email or username (checks URL and token)."""
        with self._calling("identify the user"):
            me = self._sdk.users.whoami()
        return str(me.email or me.username or me.id)

    def users(self) -> dict[int, str]:
        """Map of Label Studio user id to email (or username)."""
        with self._calling("list users"):
            users = self._sdk.users.list()
        return {u.id: str(u.email or u.username or u.id) for u in users if u.id is not None}

    def find_project(self, title: str) -> int | None:
        """Id of the project with exactly this title, or None."""
        with self._calling(f"look up project {title!r}"):
            found: Iterable[Any] = self._sdk.projects.list(title=title)
            matches = [int(p.id) for p in found if p.title == title and p.id is not None]
        if len(matches) > 1:
            raise LabelStudioError(
                f"several Label Studio projects are titled {title!r} (ids "
                f"{', '.join(map(str, matches))}); rename all but one"
            )
        return matches[0] if matches else None

    def ensure_project(self, title: str, label_config: str) -> tuple[int, bool]:
        """Reuse the project titled ``title`` or create it; return (id, created)."""
        pid = self.find_project(title)
        if pid is not None:
            with self._calling(f"read project {title!r}"):
                current = self._sdk.projects.get(id=pid).label_config or ""
            if _normalise_xml(current) != _normalise_xml(label_config):
                raise LabelStudioError(
                    f"Label Studio project {title!r} (id {pid}) has another labeling config "
                    "(another codebook or part); choose another project title"
                )
            return pid, False
        with self._calling(f"create project {title!r}"):
            project = self._sdk.projects.create(title=title, label_config=label_config)
        if project.id is None:
            raise LabelStudioError(f"Label Studio did not return an id for project {title!r}")
        return project.id, True

    def export_tasks(self, project_id: int) -> list[Any]:
        """All tasks of a project (with annotations and predictions) as export JSON."""
        with self._calling(f"export project {project_id}"):
            raw = b"".join(
                self._sdk.projects.exports.download_sync(
                    project_id, export_type="JSON", download_all_tasks=True
                )
            )
            data = json.loads(raw)
        if not isinstance(data, list):
            raise LabelStudioError(f"export of project {project_id} is not a list of tasks")
        return data

    def unit_task_ids(self, project_id: int) -> dict[str, int]:
        """Map failcodes unit id -> Label Studio task id for the tasks already in a project."""
        out: dict[str, int] = {}
        for task in self.export_tasks(project_id):
            data = task.get("data") if isinstance(task, dict) else None
            if isinstance(data, dict) and isinstance(data.get(cfg.UNIT_ID), str):
                out[data[cfg.UNIT_ID]] = int(task["id"])
        return out

    def predictions(self, project_id: int) -> dict[int, list[dict[str, Any]]]:
        """Predictions stored in a project: task id -> [{model_version, result}, ...]."""
        with self._calling(f"list the predictions of project {project_id}"):
            found = self._sdk.predictions.list(project=project_id)
        out: dict[int, list[dict[str, Any]]] = {}
        for p in found:
            if p.task is None:
                continue
            out.setdefault(int(p.task), []).append(
                {"model_version": p.model_version, "result": p.result}
            )
        return out

    def import_tasks(self, project_id: int, tasks: Sequence[dict[str, Any]]) -> list[int]:
        """Bulk-import tasks (with their predictions); return the new task ids."""
        ids: list[int] = []
        for start in range(0, len(tasks), IMPORT_BATCH):
            batch = list(tasks[start : start + IMPORT_BATCH])
            with self._calling(f"import tasks into project {project_id}"):
                # Plain dicts: typed request objects fail with SDK 2.1.2.
                resp = self._sdk.projects.import_tasks(
                    id=project_id,
                    request=batch,  # type: ignore[arg-type]
                    return_task_ids=True,
                )
            ids.extend(int(i) for i in getattr(resp, "task_ids", None) or [])
        return ids

    def model_version(self, project_id: int) -> str:
        """The model version whose predictions the project shows pre-selected ('' none)."""
        with self._calling(f"read project {project_id}"):
            return self._sdk.projects.get(id=project_id).model_version or ""

    def set_model_version(self, project_id: int, version: str) -> None:
        """Make the interface show predictions of ``version`` pre-selected."""
        with self._calling(f"set the model version of project {project_id}"):
            self._sdk.projects.update(id=project_id, model_version=version)

    def push(
        self,
        tasks: Sequence[dict[str, Any]],
        label_config: str,
        title: str,
        *,
        annotators: Sequence[str] = (),
    ) -> PushReport:
        """Create or reuse the project(s) and import the tasks not already there.

        Idempotent by failcodes unit id: pushing the same units twice imports nothing the
        second time. With ``annotators``, each gets an own project (blind double coding).
        """
        titles = project_titles(title, annotators)
        report = PushReport()
        versions = sorted({p["model_version"] for t in tasks for p in t.get("predictions", [])})
        for t in titles:
            pid, created = self.ensure_project(t, label_config)
            report.projects[t] = pid
            if created:
                report.created_projects.append(t)
            present = {} if created else self.unit_task_ids(pid)
            new = [task for task in tasks if task["data"][cfg.UNIT_ID] not in present]
            asked = {
                task["data"][cfg.UNIT_ID]: bool(task.get("predictions"))
                for task in tasks
                if task["data"][cfg.UNIT_ID] in present
            }
            shown = self.predictions(pid) if present and (asked or versions) else {}
            if asked:  # 'N already there' hid that they show what an earlier push showed
                report.shown_otherwise[t] = sum(
                    bool(shown.get(present[u])) != judged for u, judged in asked.items()
                )
            was = self.model_version(pid) if shown else ""
            self.import_tasks(pid, new)
            # only with predictions imported: Label Studio refuses a model version no
            # prediction of the project has ('Validation error', exit 2, when every task of
            # a --judged push was there already, pushed blind)
            now = was
            if versions and any(task.get("predictions") for task in new):
                self.set_model_version(pid, versions[-1])
                now = versions[-1]
            # Label Studio pre-selects the predictions of the project's one model version:
            # a --judged push with another judge switched it, and the tasks an earlier judge's
            # push left there showed no code pre-selected from then on, unsaid
            if versions and (now != was or now != versions[-1]):
                hidden = sum(
                    all(p["model_version"] != now for p in held) for held in shown.values() if held
                )
                if hidden or now != versions[-1]:
                    report.other_version[t] = (was, now, hidden)
            report.imported[t] = len(new)
            report.skipped[t] = len(tasks) - len(new)
        return report

    def pull(
        self, codebook: Codebook, kind: UnitKind, title: str, *, annotators: Sequence[str] = ()
    ) -> ReviewResult:
        """Fetch every annotation of the project(s) and map them to failcodes annotations."""
        titles = project_titles(title, annotators)
        users = self.users()
        merged = ReviewResult()
        owners: dict[str, str] = {}  # coder -> the blind project holding their annotations
        for t, annotator in zip(titles, list(annotators) or [""], strict=True):
            pid = self.find_project(t)
            if pid is None:
                raise LabelStudioError(f"no Label Studio project titled {t!r} at {self.shown_url}")
            tasks = self.export_tasks(pid)
            if annotator:
                check_blind(tasks, annotator, users, owners, f"Label Studio project {t!r}")
            part = annotations_from_export(
                tasks,
                codebook,
                kind,
                users=users,
                project=pid,
                source=f"Label Studio project {t!r}",
            )
            merged.annotations.extend(part.annotations)
            merged.problems.extend(part.problems)
            merged.tasks += part.tasks
            # the reviews made with the judge's codes shown: per annotator's project too (the
            # first line of a blind pull said nothing of them, whatever the push pre-selected)
            merged.pre_selected += part.pre_selected
            merged.unrecorded += part.unrecorded
            merged.drafts += part.drafts
            merged.named_codes += part.named_codes
            for coder, n in part.ground_truth.items():
                merged.ground_truth[coder] = merged.ground_truth.get(coder, 0) + n
            merged.projects.append(pid)
        return merged


def _normalise_xml(text: str) -> str:
    """Compare configs ignoring whitespace between tags."""
    return "".join(line.strip() for line in text.splitlines())
