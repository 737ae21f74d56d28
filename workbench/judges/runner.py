"""Running a judge over items: bounded concurrency, rate limits, budget, resume.

Work is keyed by (judge config hash, item content hash, repeat). The runner asks
the sink which keys are done and never sends a request for them; it hands each
judgment to the sink as soon as it completes, so a run stopped at any point
(Ctrl-C, a killed process, the budget) resumes where it left off.

A run several runners share (processes on one or many machines, one sink
over one database) is claimed key by key: when the sink offers `aclaim`, a
worker claims a few keys before it sends their requests, keys another live
runner holds are looked at again every `CLAIM_POLL_S` until they are stored
(or their runner is gone and they can be claimed), and a key given up after
retries is given back for another runner to try.

    report = asyncio.run(run_judge(items, rubric, spec, sink, concurrency=16, budget_usd=5))
    estimate = estimate_run(items, rubric, spec, done_keys=sink.done_keys())   # --dry-run

Failures: a retryable API error (429, 529, 5xx, connection) that outlives the
SDK's own retries pauses the run (honouring Retry-After) and is tried again up
to `max_attempts`; if it still fails the item is left undone (not recorded) so
a re-run tries it. A rejected request (400-class) is recorded as unscored
`api_error: ...`. An authentication or not-found error stops the run with
RunAborted. Only sanitized messages are kept: never the SDK exception.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from workbench.core.errors import ConfigError, WorkbenchError
from workbench.core.models import Item, JudgeSpec, Judgment, Rubric
from workbench.judges.base import JudgeProvider, ProviderError, scrub_record
from workbench.judges.pricing import PRICE_TABLE_VERSION, cost_usd, estimate_cost, price_for, warn_unpriced
from workbench.judges.prompting import (DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS, TOOLS_OVERHEAD_CHARS,
    estimate_input_tokens, estimate_item_chars, system_prompt, tokens_for_chars)
from workbench.judges.ratelimit import RateLimiter
from workbench.judges.registry import get_provider, provider_entry
from workbench.judges.sink import RunSink
from workbench.judges.types import BudgetExceeded, ChatRequest, JudgeContext, JudgeOutcome, Usage, WorkKey

log = logging.getLogger(__name__)

EXPECTED_OUTPUT_TOKENS = 350  # a verdict: a paragraph of rationale and a score
EXPECTED_AGENTIC_TURNS = 6
AGENTIC_TURN_OUTPUT_TOKENS = 150
AGENTIC_RESULT_TOKENS = 700  # a typical capped tool result
CLAIM_WINDOW = 64  # keys a claim looks through at most for the ones it may take
CLAIM_POLL_S = 0.5  # how often a runner looks again at keys another live runner holds

ProgressCallback = Callable[[int, int, float], None]


class RunAborted(WorkbenchError):
    """The run cannot go on (bad key, unknown model); what completed is recorded."""

    def __init__(self, message: str, report: RunReport):
        super().__init__(message)
        self.report = report


# --------------------------------------------------------------------------- planning

def provider_traits(spec: JudgeSpec) -> tuple[bool, bool]:
    """(prompted, billed) of the judge's provider, as registered: is it shown the rubric's prompt (its
    tokens estimated), and do its tokens cost money. A provider handed to the runner under a prefix
    registered nowhere counts as a billed chat model."""
    entry = provider_entry(spec.provider)
    return (True, True) if entry is None else (entry.prompted, entry.billed)


def plan_work(items: Sequence[Item], rubric: Rubric, spec: JudgeSpec, *, repeats: int | None = None,
              limit: int | None = None) -> tuple[list[tuple[WorkKey, Item]], list[str]]:
    """All (key, item) of a run in order (repeat 0 of every item first), and ids of duplicate items.

    `limit` keeps the first N items (each with all its repeats). An item whose
    content equals an earlier item's has the same key and is judged once; its
    id is returned as a duplicate.
    """
    repeats = spec.repeats if repeats is None else repeats
    if repeats < 1:
        raise ConfigError(f"repeats must be at least 1, got {repeats}")
    if limit is not None and limit < 0:
        raise ConfigError(f"limit must not be negative, got {limit}")
    config_hash = spec.config_hash(rubric.content_hash)
    chosen = list(items if limit is None else items[:limit])
    hashes: list[tuple[str, Item]] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    for item in chosen:
        h = item.content_hash
        if h in seen:
            duplicates.append(item.id)
            continue
        seen.add(h)
        hashes.append((h, item))
    work = [((config_hash, h, r), item) for r in range(repeats) for h, item in hashes]
    return work, duplicates


# --------------------------------------------------------------------------- estimates (--dry-run)

@dataclass(frozen=True)
class RunEstimate:
    """What a run would cost: tokens from ~chars/4 plus expected output, cost from the price table."""

    model: str
    n_planned: int  # judgments in scope (items x repeats, after --limit)
    n_done: int  # already judged: will be skipped
    n_to_run: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: the model has no price
    max_cost_usd: float | None  # if every reply used max_tokens (single) / the token budget (agentic)
    batch: bool
    price_table_version: str = PRICE_TABLE_VERSION
    duplicates: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def judgment_token_estimate(item: Item, spec: JudgeSpec, system_chars: int, *,
                            agentic_token_budget: int = 200_000) -> tuple[int, int, int]:
    """(expected input, expected output, worst-case total) tokens for one judgment."""
    max_tokens = spec.max_tokens or DEFAULT_MAX_TOKENS
    if spec.mode == "agentic":
        base = tokens_for_chars(system_chars + TOOLS_OVERHEAD_CHARS + 1500 + min(len(item.input), 8000))
        turns = min(spec.max_turns or DEFAULT_MAX_TURNS, EXPECTED_AGENTIC_TURNS)
        grow = AGENTIC_RESULT_TOKENS + AGENTIC_TURN_OUTPUT_TOKENS
        expected_in = sum(base + t * grow for t in range(turns))
        expected_out = turns * AGENTIC_TURN_OUTPUT_TOKENS + EXPECTED_OUTPUT_TOKENS
        return expected_in, expected_out, agentic_token_budget + max_tokens
    expected_in = tokens_for_chars(system_chars + estimate_item_chars(item, spec) + TOOLS_OVERHEAD_CHARS)
    return expected_in, min(max_tokens, EXPECTED_OUTPUT_TOKENS), expected_in + max_tokens


def estimate_run(items: Sequence[Item], rubric: Rubric, spec: JudgeSpec, *, done_keys: set[WorkKey] | None = None,
                 repeats: int | None = None, limit: int | None = None, batch: bool = False,
                 agentic_token_budget: int = 200_000) -> RunEstimate:
    """The `--dry-run` estimate. Needs no SDK, key or network."""
    work, duplicates = plan_work(items, rubric, spec, repeats=repeats, limit=limit)
    done = done_keys or set()
    todo = [(k, it) for k, it in work if k not in done]
    prompted, billed = provider_traits(spec)
    system_chars = len(system_prompt(rubric, spec)) if prompted else 0
    tin = tout = worst_in = worst_out = 0
    if prompted:
        max_tokens = spec.max_tokens or DEFAULT_MAX_TOKENS
        for _, item in todo:
            i, o, worst = judgment_token_estimate(item, spec, system_chars,
                                                  agentic_token_budget=agentic_token_budget)
            tin, tout = tin + i, tout + o
            worst_in += worst - max_tokens
            worst_out += max_tokens
    if not billed:
        cost = max_cost = 0.0
    else:
        cost = estimate_cost(spec.model_name, tin, tout, batch=batch)
        max_cost = estimate_cost(spec.model_name, worst_in, worst_out, batch=batch)
        if cost is None and todo:
            warn_unpriced(spec.model_name)
    return RunEstimate(model=spec.model, n_planned=len(work), n_done=len(work) - len(todo), n_to_run=len(todo),
                       input_tokens=tin, output_tokens=tout, cost_usd=cost, max_cost_usd=max_cost, batch=batch,
                       duplicates=tuple(duplicates))


# --------------------------------------------------------------------------- the run

@dataclass
class RunReport:
    model: str
    config_hash: str
    n_planned: int = 0
    n_skipped: int = 0  # already done before this run
    n_recorded: int = 0  # judgments recorded by this run
    n_scored: int = 0
    n_unscored: int = 0
    n_failed: int = 0  # given up after retries: not recorded, a re-run tries again
    n_elsewhere: int = 0  # shared run: stored by another runner while this one worked
    n_dropped: int = 0  # shared run: a verdict another runner had stored first (not stored again)
    n_requests: int = 0
    failures: list[str] = field(default_factory=list)  # sanitized messages (at most 20)
    stopped: str | None = None  # None (finished), "budget", "stopped" or "aborted"
    cost_usd: float = 0.0  # known cost of this run's recorded judgments
    spent_usd: float = 0.0  # all API spend, including agentic turns of a judgment cut off by the budget
    cost_unknown: bool = False  # some judgments have no price
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    rate_limited_s: float = 0.0  # time the rate limiter held requests back
    wall_s: float = 0.0
    duplicates: list[str] = field(default_factory=list)

    @property
    def n_done(self) -> int:
        return self.n_skipped + self.n_recorded + self.n_elsewhere


@dataclass
class _RunState:
    """Whether the workers are stopping, and the error that aborted the run (a wrong key, an unknown model)."""

    stopping: bool = False
    fatal: ProviderError | None = None


class _Gate:
    """Budget reservation and rate limiting in front of each API request."""

    def __init__(self, limiter: RateLimiter, budget_usd: float | None, model: str, *, billed: bool = True):
        self.limiter, self.budget, self.model, self.billed = limiter, budget_usd, model, billed
        self.spent = 0.0
        self.reserved = 0.0
        self.requests = 0

    async def before(self, request: ChatRequest) -> tuple[float, int] | None:
        self.requests += 1
        if self.budget is None and not self.limiter.active:
            return None
        est_in = estimate_input_tokens(request)
        reserve = 0.0
        if self.budget is not None and self.billed:
            reserve = estimate_cost(self.model, est_in, request.max_tokens) or 0.0
            if self.spent + self.reserved + reserve > self.budget:
                raise BudgetExceeded(f"the next request (up to ${reserve:.4f}) would take the run over its budget "
                                     f"of ${self.budget:.2f} (spent ${self.spent:.4f})")
            self.reserved += reserve
        await self.limiter.acquire(est_in + request.max_tokens)
        return reserve, est_in + request.max_tokens

    def after(self, ticket: tuple[float, int] | None, usage: Usage | None) -> None:
        if usage is not None and self.billed:
            self.spent += cost_usd(self.model, usage) or 0.0
        if ticket is None:
            return
        reserve, estimated = ticket
        self.reserved -= reserve
        self.limiter.settle(estimated, usage.total if usage is not None else 0)


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def make_judgment(item: Item, repeat: int, outcome: JudgeOutcome, *, cost: float | None,
                  latency_ms: float | None, secrets: Sequence[str]) -> Judgment:
    """The record a sink stores for one outcome, with the provider's `secrets` scrubbed from the outcome.

    Every judgment of a run or a batch is made here, so this is where a key a provider echoed back (in a
    rationale, a trace, a model name) is taken out before anything is stored or shown.
    """
    outcome = scrub_record(outcome, secrets)
    u = outcome.usage
    return Judgment(item_id=item.id, score=outcome.score, repeat=repeat, unscored_reason=outcome.unscored_reason,
                    rationale=outcome.rationale, evidence_steps=tuple(outcome.evidence_steps), trace=outcome.trace,
                    tokens_in=u.input_tokens if u else None, tokens_out=u.output_tokens if u else None,
                    tokens_cached=u.cached_tokens if u else None, cost_usd=cost,
                    latency_ms=None if latency_ms is None else round(latency_ms, 2),
                    model_version=outcome.model_version, created_at=_now_iso(), confidence=outcome.confidence,
                    step=outcome.step, agent=outcome.agent)


async def run_judge(
    items: Sequence[Item], rubric: Rubric, spec: JudgeSpec, sink: RunSink, *,
    provider: JudgeProvider | None = None,
    repeats: int | None = None,
    limit: int | None = None,
    concurrency: int = 8,
    budget_usd: float | None = None,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    agentic_token_budget: int = 200_000,
    max_attempts: int = 3,
    progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
    provider_options: dict[str, Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    tag_factory: Callable[[], str] | None = None,
    followup: Callable[[int], str | None] | None = None,
    claim_batch: int | None = None,
) -> RunReport:
    """Judge every (item, repeat) not yet in the sink; record each judgment as it completes.

    Parameters
    ----------
    provider : an existing provider (tests, reuse); by default one is made from
        ``spec.model`` with ``provider_options`` (env, http_client, max_retries,
        timeout) and closed at the end.
    repeats : judgments per item (default ``spec.repeats``); limit : first N items only.
    concurrency : requests in flight at most.
    budget_usd : hard stop: a request is sent only if its worst-case cost (input
        estimate + max_tokens) fits in what is left; then ``stopped == "budget"``.
    requests_per_minute, tokens_per_minute : client-side token buckets.
    progress : called as ``progress(done, total, cost_so_far)`` after each judgment,
        ``done`` counting judgments done before this run.
    should_stop : polled before each judgment (a UI stop button); ``stopped == "stopped"``.
    clock, sleep : injectable for tests (rate limiter and back-off).
    followup : the pushback probe's objection to a verdict, sent in the same conversation (chat judges).
    claim_batch : keys claimed at a time from a shared run's sink (default: up to 4); a runner killed
        mid-run leaves at most its requests in flight to be paid again.

    Returns a RunReport; raises RunAborted on authentication / not-found errors
    and ConfigError for a budget on a model without a price.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    started = time.perf_counter()
    work, duplicates = plan_work(items, rubric, spec, repeats=repeats, limit=limit)
    config_hash = spec.config_hash(rubric.content_hash)
    done = sink.done_keys()
    todo: deque[tuple[WorkKey, Item, int]] = deque((k, it, 0) for k, it in work if k not in done)
    report = RunReport(model=spec.model, config_hash=config_hash, n_planned=len(work),
                       n_skipped=len(work) - len(todo), duplicates=duplicates)
    if not todo:
        return report
    prompted, billed = provider_traits(spec)
    model_id = spec.model_name
    if budget_usd is not None and billed and price_for(model_id) is None:
        raise ConfigError(f"--budget needs a price for '{model_id}', which price table {PRICE_TABLE_VERSION} "
                          "does not have; run without --budget or add the model to workbench/judges/pricing.py")
    own_provider = provider is None
    if provider is None:
        provider = get_provider(spec, **(provider_options or {}))
    secrets = tuple(getattr(provider, "secrets", ()))

    limiter = RateLimiter(requests_per_minute, tokens_per_minute, clock=clock, sleep=sleep)
    gate = _Gate(limiter, budget_usd, model_id, billed=billed)
    system = system_prompt(rubric, spec) if prompted else None
    state = _RunState()
    aclaim = getattr(sink, "aclaim", None)  # a shared run: claim each key before its request
    arelease = getattr(sink, "arelease", None)
    want = claim_batch if claim_batch is not None else max(1, min(4, concurrency))
    ready: deque[tuple[WorkKey, Item, int]] = deque()  # this runner's to request (claimed, if claims are used)
    waiting: list[tuple[WorkKey, Item, int]] = []  # another live runner's claims: looked at again later
    claiming = asyncio.Lock()

    def stop(reason: str) -> None:
        if not state.stopping:
            state.stopping = True
            report.stopped = reason

    async def handle_error(err: ProviderError, key: WorkKey, item: Item, attempt: int) -> None:
        text = err.describe()
        if err.fatal:
            state.fatal = err
            stop("aborted")
            return
        if err.retryable and attempt + 1 < max_attempts:
            delay = err.retry_after if err.retry_after is not None else min(60.0, 2.0 ** attempt)
            log.info("retrying %s after %.1fs: %s", item.id, delay, text)
            if err.kind in ("rate_limit", "overloaded"):
                limiter.pause(delay)  # everyone backs off, not only this worker
            else:
                await sleep(delay)
            ready.append((key, item, attempt + 1))  # still this runner's claim
            return
        if err.kind == "bad_request":  # the request itself was rejected: retrying cannot help, so it is a result
            outcome = JudgeOutcome(score=None, unscored_reason=err.unscored_reason(), usage=None, n_requests=1)
            await record(key, item, outcome, latency_ms=None)
            return
        report.n_failed += 1
        if len(report.failures) < 20:
            report.failures.append(f"{item.id} (repeat {key[2]}): {text}")
        log.warning("giving up on %s (repeat %d) after %d attempts: %s", item.id, key[2], attempt + 1, text)
        if arelease is not None:  # another runner of a shared run may try it
            await arelease([key])

    arecord = getattr(sink, "arecord", None)  # a sink that may wait on a busy database does it off the loop

    async def record(key: WorkKey, item: Item, outcome: JudgeOutcome, latency_ms: float | None) -> None:
        if not billed:
            cost: float | None = 0.0
        else:
            cost = cost_usd(model_id, outcome.usage) if outcome.usage is not None else None
        judgment = make_judgment(item, key[2], outcome, cost=cost, latency_ms=latency_ms, secrets=secrets)
        if arecord is not None:
            # shielded: a stop or budget cancel while the write waits must not lose the verdict
            stored = await asyncio.shield(arecord(key, judgment))
        else:
            stored = sink.record(key, judgment)
        if stored is False:  # another runner of the shared run stored this key first
            report.n_dropped += 1
            return
        report.n_recorded += 1
        if outcome.score is None:
            report.n_unscored += 1
        else:
            report.n_scored += 1
        if cost is None:
            report.cost_unknown = True
        else:
            report.cost_usd += cost
        u = outcome.usage
        if u is not None:
            report.tokens_in += u.input_tokens
            report.tokens_out += u.output_tokens
            report.tokens_cached += u.cached_tokens
        if progress is not None:
            progress(report.n_done, report.n_planned, report.cost_usd)

    async def claim_more() -> bool:
        """Claim the next keys of `todo` into `ready`; False when this runner lost the run."""
        window = [todo[i] for i in range(min(len(todo), CLAIM_WINDOW))]
        got = await aclaim([entry[0] for entry in window], want)
        if got is None:
            log.warning("this runner's lease of the run was taken over: stopping")
            return False
        claimed, held = set(got.claimed), set(got.held)
        for _ in range(got.n_seen):
            entry = todo.popleft()
            if entry[0] in claimed:
                ready.append(entry)
            elif entry[0] in held:
                waiting.append(entry)
            else:
                report.n_elsewhere += 1
        return True

    async def next_work() -> tuple[WorkKey, Item, int] | None:
        async with claiming:  # one claim at a time per runner
            while not state.stopping:
                if ready:
                    return ready.popleft()
                if aclaim is None:
                    return todo.popleft() if todo else None
                if todo:
                    if not await claim_more():
                        stop("stopped")
                    continue
                if not waiting:
                    return None
                if should_stop is not None and should_stop():
                    stop("stopped")
                    return None
                await asyncio.sleep(CLAIM_POLL_S)  # their runner stores them, gives them back, or dies
                todo.extend(waiting)
                waiting.clear()
            return None

    async def worker() -> None:
        while not state.stopping:
            if should_stop is not None and should_stop():
                stop("stopped")
                break
            entry = await next_work()
            if entry is None:
                break
            key, item, attempt = entry
            ctx = JudgeContext(gate=gate, system_prompt=system, agentic_token_budget=agentic_token_budget,
                               tag_factory=tag_factory, followup=followup)
            t0 = time.perf_counter()
            error: ProviderError | None = None
            try:
                outcome = await provider.judge(item, rubric, spec, ctx=ctx)
            except BudgetExceeded as exc:
                log.info("budget reached: %s", exc)
                ready.appendleft((key, item, attempt))
                stop("budget")
                break
            except ProviderError as exc:
                error = exc.redacted(secrets)  # a key echoed in its message or request id
            if error is not None:
                await handle_error(error, key, item, attempt)
                continue
            await record(key, item, outcome, (time.perf_counter() - t0 - ctx.waited_s) * 1000)

    tasks = [asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(todo)))]
    try:
        finished, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for task in finished:
            if task.exception() is not None:
                raise task.exception()
    finally:
        for task in tasks:
            task.cancel()
        report.n_requests = gate.requests
        report.spent_usd = gate.spent
        report.rate_limited_s = limiter.waited
        report.wall_s = time.perf_counter() - started
        if own_provider:
            await provider.aclose()
    if state.fatal is not None:
        err = state.fatal
        fix = {"auth": "check the API key in the environment (and that the account may use this model)",
               "not_found": f"check the model name '{spec.model}'"}.get(err.kind, "check the judge configuration")
        raise RunAborted(f"judge run stopped: {err.describe()}; {fix}", report)
    return report


def run_judge_sync(*args: Any, **kwargs: Any) -> RunReport:
    """`run_judge` from synchronous code (the CLI). Ctrl-C keeps every judgment already recorded."""
    return asyncio.run(run_judge(*args, **kwargs))
