"""``judge retrieval|reasoning`` as a use case: :class:`JudgeRequest` -> :class:`JudgeResult`.

:class:`JudgeOptions` are the settings a study's ``[judge]`` table may hold (which judge, how
it is called, the run mode, the budget); :class:`JudgeRequest` adds what a study names itself
(the input, the codebook, the run folder, the cache) and the dry run. A new judge option is a
field here and its use in the engine: the CLI's flags, the study file's fields and the Python
API's arguments follow from the field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from failcodes.commands.base import Note, Options, Request, ignore_note, option, top_k_option
from failcodes.errors import BudgetExceededError, ConfigError, FailcodesError, InputError
from failcodes.judge.estimate import compare_lines
from failcodes.judge.job import JudgeJob
from failcodes.judge.journal import refuse_stale_ids
from failcodes.judge.limits import MAX_ATTEMPTS, MAX_CONCURRENCY, MAX_WAIT_S, Limits, RetryPolicy
from failcodes.judge.modes import BUDGET_WITH_BATCH, Batch, Cascade, Grouped, PerUnit
from failcodes.judge.pricing import load_prices
from failcodes.judge.run import (
    discard_if_untouched,
    read_summary,
    refuse_another_run,
    run_judge,
    write_estimate,
)
from failcodes.judge.settings import JudgeSettings
from failcodes.judge.spec import JudgeSpec, check_url
from failcodes.judge.summary import endpoint_lines, summary_lines
from failcodes.units import UnitKind, build_units, traces_without_reasoning

#: A request that reads a judge's run and takes the judge's passage cut (its ``top_k``).
_Reads = TypeVar("_Reads", bound=Request)

if TYPE_CHECKING:
    from failcodes.judge.estimate import CostEstimate
    from failcodes.judge.modes import Mode
    from failcodes.judge.panelrun import Member, PanelReport
    from failcodes.judge.summary import RunSummary

#: The response cache shared by judge runs (``judge``, ``saturate recode``, ``cache``).
DEFAULT_CACHE = Path("annotations") / "judge-cache.sqlite"

HEURISTIC_NOTE = (
    "note: the offline judge is a heuristic baseline (rule-based, no model), not an LLM judge"
)


def judge_list(value: Any) -> Any:
    """One judge given alone (``"offline"``) as a list of one (a panel is several)."""
    return [value] if isinstance(value, str | JudgeSpec) else value


def _url(url: str | None) -> str | None:
    return None if url is None else check_url(url)


#: Bounds of the judge's options (issue 29; the call bounds are failcodes.judge.limits'):
#: each panel member is a whole run.
MAX_PANEL = 16
MAX_OUTPUT_TOKENS = 1_000_000


class JudgeOptions(Options):
    """How a judge is called: the fields a study's ``[judge]`` table holds."""

    judge: Annotated[
        list[JudgeSpec], BeforeValidator(judge_list), Field(min_length=1, max_length=MAX_PANEL)
    ] = option(
        default_factory=lambda: [JudgeSpec.of("offline")],
        help="offline | anthropic:MODEL | openai:MODEL[@URL]. Repeat for a judge panel (each "
        "member judges into RUN_DIR/panel/, consensus and inter-judge agreement in "
        "RUN_DIR/panel.json); repeat one spec to sample that model several times (see "
        "--temperature).",
    )
    base_url: str | None = option(None, help="Endpoint of an OpenAI/Anthropic-compatible server.")
    concurrency: int = option(
        Limits.concurrency, help="Calls in flight.", ge=1, le=MAX_CONCURRENCY, strict=True
    )
    rpm: float | None = option(None, help="Requests-per-minute limit.", ge=1)
    tpm: float | None = option(None, help="Tokens-per-minute limit.", ge=1)
    top_k: int | None = top_k_option(strict=True)
    budget: float | None = option(
        None,
        help="Stop cleanly before the run spends more than USD (earlier invocations included).",
        ge=0,
        allow_inf_nan=False,
    )
    prices: Path | None = option(None, help="Price table (YAML).")
    no_cache: bool = option(False, help="Do not read or write the cache.", strict=True)
    max_output_tokens: int = option(
        JudgeSettings.max_output_tokens,
        help="Output tokens per call.",
        ge=16,
        le=MAX_OUTPUT_TOKENS,
        strict=True,
    )
    timeout: float = option(
        120.0, help="Seconds per call.", ge=0.1, le=MAX_WAIT_S, allow_inf_nan=False
    )
    max_attempts: int = option(
        RetryPolicy.max_attempts, help="Attempts per call.", ge=1, le=MAX_ATTEMPTS, strict=True
    )
    group_by_claim: bool = option(
        False, help="One call per claim for all its passages.", strict=True
    )
    batch: bool = option(
        False, help="Use the provider's batch API (half price, slower).", strict=True
    )
    cascade: JudgeSpec | None = option(
        None, help="Cheap judge first (e.g. offline); only its uncertain units go to --judge."
    )
    batch_size: int | None = option(None, help="Items per batch.", ge=1, strict=True)
    poll_interval: float = option(
        30.0, help="Seconds between polls.", ge=0.01, le=MAX_WAIT_S, allow_inf_nan=False
    )
    price_as: str | None = option(
        None,
        help="Price the judge as this price-table entry (e.g. openai:gpt-5-mini); a judge "
        "behind a non-vendor --base-url is priced as unknown without it.",
    )
    temperature: float | None = option(
        None,
        help="Sampling temperature of an OpenAI judge, recorded with the run (default 0; the "
        "offline judge, Anthropic and OpenAI reasoning models take none: refused).",
    )

    _base_url = field_validator("base_url")(_url)

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is not None and not 0 <= value <= 2:  # NaN too
            raise ValueError(f"must be between 0 and 2, got {value}")
        # (on the field: on the table, a study file's error named [judge]'s line, '--temperature')
        for spec in info.data.get("judge") or []:
            if (why := spec.temperature_refused(value)) is not None:
                raise ValueError(f"{why}; leave it out")
        return value

    @model_validator(mode="after")
    def _panel_or_cascade(self) -> JudgeOptions:
        if len(self.judge) > 1 and self.cascade is not None:
            raise ValueError("--cascade cannot be combined with a panel (several --judge)")
        # refused here, not only by the batch run: a dry run given both said the run would
        # stop at the budget, where the run refuses to start
        if self.batch and self.budget is not None:
            raise ValueError(BUDGET_WITH_BATCH)
        # one entry prices every LLM judge of the run: an anthropic member of a mixed panel
        # was priced as openai:gpt-5-mini ($0.0169 where haiku-4-5's price gives $0.0606)
        llms = [j for j in [*self.judge, self.cascade] if j is not None and not j.heuristic]
        if self.price_as is not None and len({j.vendor for j in llms}) > 1:
            raise ValueError(
                f"--price-as {self.price_as} prices every judge of the run; these call two APIs "
                f"({', '.join(j.name for j in llms)}); give each judge its price with "
                "--prices FILE (an entry per judge) instead"
            )
        return self

    @property
    def panel(self) -> bool:
        """True for a judge panel (several judges): the run writes panel.json."""
        return len(self.judge) > 1

    def run_mode(self, *, dry_run: bool = False) -> Mode:
        """The run mode these options ask for (a dry run builds no client for a cascade)."""
        base: PerUnit | Grouped | Batch = PerUnit()
        if self.batch:
            group = Grouped() if self.group_by_claim else None
            base = Batch(size=self.batch_size, poll=self.poll_interval, group=group)
        elif self.group_by_claim:
            base = Grouped()
        if self.cascade is None:
            return base
        return Cascade(self.cascade.coder(dry_run=dry_run), base)

    def scaled(self) -> bool:
        """Whether any option beyond one call per unit is on."""
        return self.group_by_claim or self.batch or self.cascade is not None

    def settings(self) -> JudgeSettings:
        """The engine's settings (limits, retries, output tokens, budget, an explicit price)."""
        price = None
        if self.price_as is not None:
            price = self.price_table().lookup(self.price_as)
            if price is None:
                raise ConfigError(
                    f"--price-as {self.price_as}: no such entry in the price table"
                    + (f" {self.prices}" if self.prices else " (add one with --prices FILE)")
                )
        return JudgeSettings(
            limits=Limits(
                concurrency=self.concurrency,
                requests_per_minute=self.rpm,
                tokens_per_minute=self.tpm,
            ),
            retry=RetryPolicy(max_attempts=self.max_attempts),
            max_output_tokens=self.max_output_tokens,
            budget_usd=self.budget,
            price=price,
        )

    def price_table(self) -> Any:
        """The price table (``prices``, else the bundled vendor list)."""
        return load_prices(self.prices)

    def coder(self, spec: JudgeSpec, *, dry_run: bool = False) -> Any:
        """``spec``'s client with these options (a dry run needs no key)."""
        return spec.coder(
            base_url=self.base_url,
            timeout=self.timeout,
            temperature=self.temperature,
            dry_run=dry_run,
        )

    def members(self, *, dry_run: bool = False, stand_in: bool = False) -> list[Member]:
        """One panel member per judge (a repeated spec is one model sampled several times).

        ``stand_in``: members that name the judge without a client (their calls go elsewhere).
        """
        from failcodes.judge.panelrun import Member, member_names

        names = member_names([s.name for s in self.judge])
        return [
            Member(
                name,
                spec.stand_in(self.base_url) if stand_in else self.coder(spec, dry_run=dry_run),
                self.temperature,
            )
            for name, spec in zip(names, self.judge, strict=True)
        ]

    @property
    def passage_cut(self) -> int | None:
        """The deepest passage rank these options judge (None: every passage)."""
        return self.top_k

    def cut(self, request: _Reads) -> _Reads:
        """``request`` cut at the passages these options judge (their ``top_k``).

        ``request`` reads this judge's runs (attribute, the Label Studio export): any other
        passage would be read as not coded (its item undetermined) or, coded under an
        earlier ``top_k``, counted again.
        """
        assert "top_k" in type(request).model_fields, type(request).__name__
        return request.model_copy(update={"top_k": self.top_k})

    def judges_passage(self, rank: int) -> bool:
        """Whether a passage ranked ``rank`` is a retrieval unit under these options."""
        return self.top_k is None or rank <= self.top_k

    def units(self, traces: Any, kind: UnitKind) -> list[Any]:
        """The units these options judge in ``traces`` (passages cut at ``top_k``)."""
        return build_units(traces, kind, top_k=self.top_k)

    def who(self) -> str:
        """The judge(s) and run mode in words (``openai:m, batch``)."""
        who = " + ".join(
            s.name + (" (offline: heuristic baseline)" if s.heuristic else "") for s in self.judge
        )
        how = "".join(
            [
                f", cascade ({self.cascade} first)" if self.cascade else "",
                ", batch" if self.batch else "",
                ", grouped by claim" if self.group_by_claim else "",
            ]
        )
        return who + how


def options_of(options: JudgeOptions) -> dict[str, Any]:
    """The :class:`JudgeOptions` fields of ``options`` (to build a request from them)."""
    return {name: getattr(options, name) for name in JudgeOptions.model_fields}


@dataclass
class JudgeResult:
    """What a judge request did: an estimate (dry run) or a run's summary, or a panel's."""

    kind: UnitKind
    run_dir: Path
    heuristic: bool
    estimate: CostEstimate | None = None
    summary: RunSummary | None = None
    #: The estimate written before a scaled run (to compare with what it cost).
    before: CostEstimate | None = None
    members: list[str] = field(default_factory=list)
    estimates: list[CostEstimate] = field(default_factory=list)
    panel: PanelReport | None = None
    #: ``--budget`` (USD), said beside a dry run's estimate that crosses it.
    budget: float | None = None
    #: What the run's earlier invocations spent (USD): the budget bounds the run's total.
    spent: float = 0.0
    #: The same, per panel member (each member's budget bounds its own run).
    member_spent: list[float] = field(default_factory=list)
    summaries: list[RunSummary] = field(default_factory=list)
    #: What the units assumed, said first (and by ``failcodes run``): claims whose ranks skip
    #: within ``--top-k`` (:class:`~failcodes.attribution.RankGaps`).
    first: list[str] = field(default_factory=list)

    def said(self) -> list[str]:
        """What ``failcodes run`` says on stderr too (a step's log alone is not read)."""
        return list(self.first)

    def lines(self) -> list[str]:
        """The result as plain lines (a study step's log)."""
        if self.estimate is not None:
            return [*self.estimate.lines(), *self._over_budget(self.estimate.cost_usd)]
        if self.summary is not None:
            before = compare_lines(self.before, self.summary) if self.before else []
            return [
                *summary_lines(self.summary),
                *before,
                f"annotations: {self.run_dir / 'annotations.jsonl'}",
            ]
        lines: list[str] = []
        spent = self.member_spent or [0.0] * len(self.estimates)
        for name, est, earlier in zip(self.members, self.estimates, spent, strict=False):
            # each member's own budget, over its own run
            said = [*est.lines(), *self._over_budget(est.cost_usd, earlier)]
            lines += [f"[{name}]", *(f"  {line}" for line in said)]
        if self.estimates:
            known = [e.cost_usd for e in self.estimates if e.cost_usd is not None]
            total = f"${sum(known):.4f}" if len(known) == len(self.estimates) else "unknown"
            lines.append(f"panel estimated cost (every member): {total}")
        for name, summary in zip(self.members, self.summaries, strict=False):
            lines += [f"[{name}]", *(f"  {line}" for line in summary_lines(summary))]
        if self.panel is not None:
            lines += agreement_lines(self.panel)
            lines.append(f"panel: {self.run_dir / 'panel.json'}")
        return lines

    def _over_budget(self, cost: float | None, spent: float | None = None) -> list[str]:
        """The line saying an estimate crosses ``--budget`` (the run would stop short).

        ``spent``: what the run spent before (default: :attr:`spent`).
        """
        spent = self.spent if spent is None else spent
        if self.budget is None or cost is None or cost + spent <= self.budget:
            return []
        what = f"the estimate ${cost:.4f} crosses"
        if spent:
            what = f"the estimate ${cost:.4f} and the ${spent:.4f} the run spent before cross"
        return [
            f"over budget: {what} --budget ${self.budget:.4f}; the run stops scheduling before "
            "the spend would cross it (exit 2), units left unjudged"
        ]

    def unfinished(self) -> str | None:
        """Why the run left units unjudged, or None when every unit is in its journal.

        A study counts a judge step finished only when this is None: a step that judged
        nothing (a dry run made "6 step(s) run" with every attribution undetermined) or
        stopped part-way is not done, and the steps after it would read half a run.
        """
        if self.estimate is not None or self.estimates:
            return f"judge {self.kind.value}: a dry run estimates the cost and judges nothing"
        named = [("", self.summary)] if self.summary is not None else []
        named += [(f" ({m})", s) for m, s in zip(self.members, self.summaries, strict=False)]
        for member, s in named:
            left = s.units - s.already_done - s.judged
            if left > 0:
                why = "stopped by the budget" if s.stopped_by_budget else "stopped early"
                return (
                    f"judge {self.kind.value}{member}: {left} of {s.units} units left "
                    f"unjudged ({why}; {self.run_dir})"
                )
        return None


def agreement_lines(report: PanelReport) -> list[str]:
    """The panel's agreement per dimension (and how many units it splits on)."""
    from failcodes.panel import uncertain_line

    cost = f"${report.cost_usd:.4f} (every member)"
    if report.unpriced:  # an unpriced member counts $0 a unit: the sum is no dollar figure
        cost = f"unknown (no price for {', '.join(report.unpriced)})"
    lines = [
        f"panel of {len(report.members)}: {', '.join(report.members)}; cost {cost}; "
        f"splits on {len(report.split_units)} of {len(report.units)} units"
    ]
    if report.decided:
        d = report.decided
        lines.append(
            f"consensus: {d.get('unanimous', 0)} unanimous, {d.get('majority', 0)} by majority, "
            f"{d.get('primary', 0)} ties broken by the primary judge ({report.primary}), "
            f"{d.get('undecided', 0)} undecided"
        )
    doubted = uncertain_line(report.members, report.units)
    if doubted is not None:
        lines.append(doubted)
    lines += [f"warning: {w}" for w in report.warnings]
    lines.append("inter-judge agreement per dimension (fleiss / krippendorff / gwet_ac1):")
    rows: dict[str, dict[str, float | None]] = {}
    for r in report.agreement:
        if r.code is None:
            rows.setdefault(r.dimension, {})[r.statistic] = r.value
    for dim, stats in rows.items():
        cells = " / ".join("–" if v is None else f"{v:.3f}" for v in stats.values())
        lines.append(f"  {dim}: {cells}")
    for q in report.quotes:
        share = q.share_verified
        lines.append(
            f"quotes verified ({q.coder}): {q.verified} of {q.dimensions_coded} dimensions"
            + ("" if share is None else f" ({share:.1%})")
        )
    return lines


def no_units_message(kind: UnitKind, traces: int) -> str:
    """Why a judge has nothing to code in ``traces`` traces."""
    if kind is UnitKind.RETRIEVAL:
        return (
            f"nothing to judge: none of the {traces} trace(s) carries a retrieved passage "
            "(a closed-book or provided-evidence pipeline has no retrieval step to code); "
            "use `judge reasoning` for the verifier's reasoning"
        )
    return (
        f"nothing to judge: none of the {traces} trace(s) carries verifier reasoning "
        "(the reasoning field is empty)"
    )


class JudgeRequest(JudgeOptions, Request):
    """Code every unit of ``source`` (passages or reasoning) with the judge(s)."""

    command: ClassVar[tuple[str, ...]] = ("judge",)

    kind: UnitKind = option(UnitKind.RETRIEVAL, help="retrieval or verification (reasoning).")
    source: Path = option(
        flags=("--from",), help="Traces or disagreements (JSONL): the judge's input."
    )
    codebook: Path | None = option(
        None, help="Codebook file (YAML/JSON; default: the bundled codebook)."
    )
    dry_run: bool = option(False, help="Estimate tokens and cost; call nothing.", strict=True)
    cache: Path = option(DEFAULT_CACHE, help="Response cache (SQLite).")
    output: Path | None = option(None, flags=("-o", "--output"), help="Run directory.")

    @field_validator("kind", mode="before")
    @classmethod
    def _reasoning(cls, value: Any) -> Any:
        # the CLI's word (`failcodes judge reasoning`), refused from Python as "--kind: Input
        # should be 'retrieval' or 'verification'"
        return UnitKind.VERIFICATION if value == "reasoning" else value

    def words(self) -> tuple[str, ...]:
        """``judge retrieval`` or ``judge reasoning``."""
        return ("judge", "retrieval" if self.kind is UnitKind.RETRIEVAL else "reasoning")

    def fixed_fields(self) -> frozenset[str]:
        """The kind is the subcommand."""
        return frozenset({"kind"})

    @property
    def run_dir(self) -> Path:
        """The run folder (``-o``, else ``annotations/judge-<kind>``)."""
        return self.output or Path("annotations") / f"judge-{self.kind.value}"

    def run(
        self, *, note: Note = ignore_note, on_progress: Callable[[int, int], None] | None = None
    ) -> JudgeResult:
        """Judge (or, with ``dry_run``, price) every unit; notes go to ``note`` as they come."""
        from failcodes.commands.inputs import codebook_note, load_codebook, rank_gaps, source_units

        codebook = load_codebook(self.codebook, self.kind)  # a missing part: before any output
        units, sizes, traces = self._units(note)
        # a claim whose ranks skip (1, 3, 5) has fewer than k passages judged under --top-k k
        skipped = rank_gaps([self.source], self.top_k, traces or None).line()
        if skipped:
            note(skipped)
        # an earlier failcodes' ids: refused, not judged again
        refuse_stale_ids(self.run_dir, lambda: source_units(self.source, self.kind, self.top_k))
        settings = self.settings()  # a bad --price-as: before any client or folder
        said = codebook_note(self.codebook, codebook)
        if self.panel:
            result = self._panel(units, codebook, settings, said, note)
        else:
            single = _Single(self, codebook, settings, units=units, sizes=sizes, traces=traces)
            result = single.run(said, note, on_progress)
        result.first = [skipped] if skipped else []
        for summary in (result.summary, *result.summaries):  # a resume at another endpoint
            result.first += endpoint_lines(summary) if summary is not None else []
        for estimate in (result.estimate, *result.estimates):  # its dry run says it too
            result.first += estimate.endpoint_lines() if estimate is not None else []
        return result

    def _units(self, note: Note) -> tuple[Any, Any, list[Any]]:
        """The units (or, for a dry run the columns can price, their sizes).

        ``note`` gets a traces file's reasonings and passages read as none (missing marks).
        """
        from failcodes.commands.inputs import load_traces, load_unit_sizes, load_unit_stream
        from failcodes.judge.colestimate import columnar_mode, needs_groups
        from failcodes.traces import Marks

        # a dry run of one judge in a mode the columns can price reads no Unit objects (issue
        # 18); anything else, or an input the fast reader does not vouch for, reads traces
        planned = self.run_mode(dry_run=True) if self.cascade is None else None
        found: tuple[Any, Any] | None = None  # (units, sizes)
        if self.dry_run and not self.panel and planned and columnar_mode(planned, self.kind):
            sizes = load_unit_sizes(
                self.source, self.kind, top_k=self.top_k, grouped=needs_groups(planned)
            )
            found = None if sizes is None else ([], sizes)
        elif not (self.dry_run or self.panel or self.scaled()):
            # one judge, one call per unit: the units of a disagreements file are read one at
            # a time while they are judged (grouping, batches, a cascade and a panel hold them)
            stream = load_unit_stream(self.source, self.kind, top_k=self.top_k)
            found = None if stream is None else (stream, stream.sizes)
        if found is not None:
            if not found[1].units:
                raise InputError(no_units_message(self.kind, found[1].traces), path=self.source)
            return *found, []
        marks = Marks()
        traces = load_traces(self.source, marks)
        for line in marks.lines():
            note(line)
        units = build_units(traces, self.kind, top_k=self.top_k)
        if not units:
            raise InputError(no_units_message(self.kind, len(traces)), path=self.source)
        return units, None, traces

    def job(
        self, codebook: Any, settings: JudgeSettings, cache_path: Path | None, mode: Mode
    ) -> Any:
        """The engine's job for this request (the run folder and cache checked first)."""
        from failcodes.commands.inputs import check_run_outputs

        check_run_outputs(self.run_dir, cache_path)  # one line, nothing created, before a call
        return JudgeJob(
            codebook,
            self.kind,
            self.run_dir,
            mode=mode,
            cache_path=cache_path,
            prices=self.price_table(),
            settings=settings,
        )

    def _panel(
        self, units: list[Any], codebook: Any, settings: JudgeSettings, said: str | None, note: Note
    ) -> JudgeResult:
        from failcodes.judge.panelrun import estimate_panel, member_dir, run_panel
        from failcodes.judge.run import refuse_single_run

        refuse_single_run(self.run_dir, "a judge panel of " + ", ".join(map(str, self.judge)))
        mode = self.run_mode(dry_run=self.dry_run)
        job = self.job(codebook, settings, None if self.no_cache else self.cache, mode)
        if said:
            note(said)
        members = self.members(dry_run=self.dry_run)
        result = JudgeResult(
            self.kind,
            self.run_dir,
            heuristic=all(s.heuristic for s in self.judge),
            members=[m.name for m in members],
            budget=self.budget,
        )
        if self.dry_run:
            result.estimates = estimate_panel(units, members, job)
            if self.budget is not None:
                result.member_spent = [
                    earlier_spend(member_dir(self.run_dir, i, m.name))
                    for i, m in enumerate(members, 1)
                ]
        else:
            result.panel, result.summaries = run_panel(units, members, job)
        return result


def unread_cache(coder: Any, cache_path: Path | None) -> str | None:
    """The line a dry run without the judge's key says when its cache holds that judge's answers.

    Without the key the judge is priced by a stand-in whose cache keys match no real run's, so
    the dry run counted 0 cached and priced every unit as a call, without a word.
    """
    from failcodes.judge.estimate import PricingOnlyCoder

    if not isinstance(coder, PricingOnlyCoder) or cache_path is None or not cache_path.is_file():
        return None
    from failcodes.judge.cache import ResponseCache

    cache = ResponseCache(cache_path)
    try:
        held = cache.stats().by_model.get(coder.spec, 0)
    finally:
        cache.close()
    if not held:
        return None
    return (
        f"{cache_path} holds {held} answer(s) of {coder.spec} (any endpoint), not read: without "
        "the judge's API key a dry run cannot tell which units they answer, so it prices every "
        "unit as a call; set the key to count the cache hits"
    )


def earlier_spend(run_dir: Path) -> float:
    """What a run folder's earlier invocations spent (USD; 0 unpriced or new).

    As its ``summary.json`` says: a dry run's ``--budget`` line adds it (the budget bounds the
    run).
    """
    earlier = read_summary(run_dir)
    return earlier.journal_cost_usd if earlier is not None and earlier.price_known else 0.0


class _Single:
    """One judge's run (or dry run) of a request."""

    def __init__(
        self,
        request: JudgeRequest,
        codebook: Any,
        settings: JudgeSettings,
        *,
        units: Any,
        sizes: Any,
        traces: list[Any],
    ) -> None:
        self.request, self.codebook, self.settings = request, codebook, settings
        self.units, self.sizes, self.traces = units, sizes, traces

    def run(
        self, said: str | None, note: Note, on_progress: Callable[[int, int], None] | None
    ) -> JudgeResult:

        req = self.request
        spec = req.judge[0]
        coder = req.coder(spec, dry_run=req.dry_run)
        heuristic = spec.heuristic
        cache_path = None if req.no_cache or heuristic else req.cache
        mode = req.run_mode(dry_run=req.dry_run)
        fresh = not req.run_dir.exists()
        job = req.job(self.codebook, self.settings, cache_path, mode)
        refuse_another_run(job, coder)  # before the folder is locked or the cache made
        if said:
            note(said)
        self._note_skipped(note)
        result = JudgeResult(req.kind, req.run_dir, heuristic=heuristic, budget=req.budget)
        if req.dry_run:
            result.estimate = self._estimate(coder, job)
            unread = unread_cache(coder, cache_path)
            if unread:
                note(unread)
            if req.budget is not None:
                result.spent = earlier_spend(req.run_dir)
        else:
            result.before = self._before(coder, job, heuristic)
            try:
                # run_judge: blocking, inside a running event loop too (Jupyter)
                result.summary = run_judge(self.units, coder, job, on_progress=on_progress)
            except BudgetExceededError:
                # finished units are committed and exported: their closing summary first
                stopped = read_summary(req.run_dir)
                for line in summary_lines(stopped) if stopped is not None else ():
                    note(line)
                raise
            except FailcodesError:
                if fresh:  # e.g. an endpoint not listening: no empty run
                    discard_if_untouched(req.run_dir)
                raise
        if heuristic:
            note(HEURISTIC_NOTE)
        return result

    def _note_skipped(self, note: Note) -> None:
        if self.request.kind is not UnitKind.VERIFICATION:
            return
        skipped = (
            traces_without_reasoning(self.traces)
            if self.sizes is None
            else self.sizes.without_reasoning
        )
        if skipped:
            note(f"{skipped} trace(s) without reasoning skipped (nothing to code)")

    def _estimate(self, coder: Any, job: Any) -> CostEstimate:
        from failcodes.commands.inputs import source_units
        from failcodes.judge.colestimate import estimate_columns
        from failcodes.judge.run import estimate_run  # on use: tests/test_dryrun_columns.py

        if self.sizes is None:  # no columns: the units read
            return estimate_run(self.units, coder, job)
        est = estimate_columns(self.sizes, coder, job)
        if est is None:  # a response cache with entries: the object path
            req = self.request
            est = estimate_run(source_units(req.source, req.kind, req.top_k), coder, job)
        return est

    def _before(self, coder: Any, job: Any, heuristic: bool) -> CostEstimate | None:
        """The estimate of a scaled LLM run, written beside it (None otherwise)."""
        from failcodes.judge.run import estimate_run

        if not self.request.scaled() or heuristic:
            return None
        try:
            before = estimate_run(self.units, coder, job)
        except ConfigError:
            return None  # a cascade whose first judge is an LLM cannot be foreseen
        write_estimate(self.request.run_dir, before)
        return before
