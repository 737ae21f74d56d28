"""Batch mode (`--batch`): Anthropic Message Batches and the OpenAI Batch API, at half price.

    ids = await submit_batches(items, rubric, spec, sink)          # persisted through sink.save_batch
    report = await collect_batches(items, rubric, spec, sink)      # poll, import, sink.mark_batch_done
    report = await run_batch(items, rubric, spec, sink)            # both, resuming pending batches first

Each request's `custom_id` is derived from its work key, and the keys of a
batch are persisted with its id, so after a restart `collect_batches` resumes
polling from `sink.pending_batches()` and imports each result at most once
(keys already in `sink.done_keys()` are skipped). Keys in a pending batch are
never submitted again. Only single-mode judges can be batched (an agentic
judgment needs a conversation). Results that were not attempted (expired,
canceled) or failed on the server side are left undone, so a later run
submits them again; a rejected request is recorded as unscored `api_error`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.errors import ConfigError
from workbench.core.hashing import sha256_hex
from workbench.core.models import Item, JudgeSpec, Rubric
from workbench.judges.base import JudgeProvider, ProviderError, redact, scrub_secrets
from workbench.judges.pricing import cost_usd, estimate_cost, price_for
from workbench.judges.prompting import (DelimiterCollision, estimate_input_tokens, outcome_from_turn, single_request,
    system_prompt)
from workbench.judges.registry import get_provider
from workbench.judges.runner import make_judgment, plan_work
from workbench.judges.sink import PendingBatch, RunSink
from workbench.judges.types import JudgeContext, JudgeOutcome, ModelTurn, Usage, WorkKey

log = logging.getLogger(__name__)

MAX_BATCH_REQUESTS = 10_000  # well under both providers' per-batch limits (100k Anthropic, 50k OpenAI)


def custom_id_for(key: WorkKey) -> str:
    """A provider-safe id (<= 64 chars of [a-zA-Z0-9_-]) that identifies the work key."""
    return "wb-" + sha256_hex(f"{key[0]}|{key[1]}|{key[2]}")[:40]


@dataclass
class BatchReport:
    submitted: list[str] = field(default_factory=list)  # batch ids created by this call
    n_submitted: int = 0  # requests in them
    n_skipped: int = 0  # already done, or waiting in a pending batch
    n_imported: int = 0
    n_unscored: int = 0
    n_failed: int = 0  # not recorded: will be submitted again by a later run
    failures: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # batch ids still processing
    cost_usd: float = 0.0
    cost_unknown: bool = False
    stopped: str | None = None  # "budget" when the budget allowed only part of the work


def _provider(spec: JudgeSpec, provider: JudgeProvider | None, options: dict[str, Any] | None):
    if spec.mode != "single":
        raise ConfigError(f"judge '{spec.id}' is agentic; batch mode runs single-mode judges only, "
                          "run it without --batch")
    if provider is not None:
        return provider, False
    return get_provider(spec, **(options or {})), True


def _ours(batch: PendingBatch, spec: JudgeSpec, config_hash: str) -> bool:
    return batch.provider == spec.provider and bool(batch.keys) and all(k[0] == config_hash for k in batch.keys)


async def submit_batches(items: Sequence[Item], rubric: Rubric, spec: JudgeSpec, sink: RunSink, *,
                         provider: JudgeProvider | None = None, repeats: int | None = None,
                         limit: int | None = None, budget_usd: float | None = None,
                         max_batch_requests: int = MAX_BATCH_REQUESTS,
                         provider_options: dict[str, Any] | None = None,
                         tag_factory: Callable[[], str] | None = None,
                         report: BatchReport | None = None) -> BatchReport:
    """Submit every (item, repeat) not done and not already in a pending batch; persist the batch ids."""
    report = report or BatchReport()
    work, _ = plan_work(items, rubric, spec, repeats=repeats, limit=limit)
    config_hash = spec.config_hash(rubric.content_hash)
    in_flight = {k for b in sink.pending_batches() if _ours(b, spec, config_hash) for k in b.keys}
    done = sink.done_keys()
    todo = [(k, it) for k, it in work if k not in done and k not in in_flight]
    report.n_skipped += len(work) - len(todo)
    if not todo:
        return report
    model_id = spec.model_name
    if budget_usd is not None and price_for(model_id) is None:
        raise ConfigError(f"--budget needs a price for '{model_id}'; run without --budget or add it to the price table")
    provider, own = _provider(spec, provider, provider_options)
    secrets = tuple(getattr(provider, "secrets", ()))
    try:
        ctx = JudgeContext(system_prompt=system_prompt(rubric, spec), tag_factory=tag_factory)
        reserved = 0.0
        chunk: list[tuple[str, Any]] = []
        keys: list[WorkKey] = []

        async def flush() -> None:
            if not chunk:
                return
            batch_id = await provider.batch_submit(chunk, description=f"workbench {spec.id} {config_hash[:12]}")
            if scrub_secrets(batch_id, secrets) != batch_id:  # it would be stored and shown: never keep a key
                raise ProviderError(provider.provider, "the batch API answered with a batch id that contains the "
                                    "API key; it was not stored (check the server behind this provider)")
            sink.save_batch(spec.provider, batch_id, list(keys))
            report.submitted.append(batch_id)
            report.n_submitted += len(chunk)
            chunk.clear()
            keys.clear()

        for key, item in todo:
            try:
                request = single_request(item, rubric, spec, ctx=ctx)
            except DelimiterCollision as exc:
                outcome = JudgeOutcome(score=None, unscored_reason=f"refused: {exc}", usage=Usage(), n_requests=0)
                sink.record(key, make_judgment(item, key[2], outcome, cost=0.0, latency_ms=None, secrets=secrets))
                report.n_imported += 1
                report.n_unscored += 1
                continue
            if budget_usd is not None:
                worst = estimate_cost(model_id, estimate_input_tokens(request), request.max_tokens, batch=True) or 0.0
                if reserved + worst > budget_usd:
                    report.stopped = "budget"
                    break
                reserved += worst
            chunk.append((custom_id_for(key), request))
            keys.append(key)
            if len(chunk) >= max_batch_requests:
                await flush()
        await flush()
    finally:
        if own:
            await provider.aclose()
    return report


async def _import(provider: JudgeProvider, batch: PendingBatch, by_hash: dict[str, Item], rubric: Rubric,
                  spec: JudgeSpec, sink: RunSink, report: BatchReport) -> None:
    by_cid = {custom_id_for(k): k for k in batch.keys}
    done = sink.done_keys()
    model_id = spec.model_name
    secrets = tuple(getattr(provider, "secrets", ()))
    async for cid, result in provider.batch_results(batch.batch_id):
        key = by_cid.get(cid)
        if key is None or key in done:
            continue
        item = by_hash.get(key[1])
        if item is None:
            log.warning("batch %s: result for an item no longer in the golden set; skipped", batch.batch_id)
            continue
        if isinstance(result, ProviderError):
            result = result.redacted(secrets)  # a key echoed in the result line's message or request id
            if result.kind == "bad_request":
                outcome = JudgeOutcome(score=None, unscored_reason=result.unscored_reason(), usage=None)
            else:
                report.n_failed += 1
                if len(report.failures) < 20:
                    report.failures.append(f"{item.id} (repeat {key[2]}): {result.describe()}")
                continue
        else:
            assert isinstance(result, ModelTurn)
            outcome = outcome_from_turn(result, rubric, item)
        cost = cost_usd(model_id, outcome.usage, batch=True) if outcome.usage is not None else None
        sink.record(key, make_judgment(item, key[2], outcome, cost=cost, latency_ms=None, secrets=secrets))
        done.add(key)
        report.n_imported += 1
        report.n_unscored += outcome.score is None
        if cost is None:
            report.cost_unknown = True
        else:
            report.cost_usd += cost


async def collect_batches(items: Sequence[Item], rubric: Rubric, spec: JudgeSpec, sink: RunSink, *,
                          provider: JudgeProvider | None = None, wait: bool = True, poll_interval: float = 60.0,
                          sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                          progress: Callable[[int, int], None] | None = None,
                          provider_options: dict[str, Any] | None = None,
                          report: BatchReport | None = None) -> BatchReport:
    """Poll this judge's pending batches, import finished ones, mark them done.

    With `wait=False` it makes one pass (import what has ended) and returns the
    ids still processing in `report.pending`.
    """
    report = report or BatchReport()
    config_hash = spec.config_hash(rubric.content_hash)
    pending = [b for b in sink.pending_batches() if _ours(b, spec, config_hash)]
    if not pending:
        return report
    by_hash = {it.content_hash: it for it in items}
    provider, own = _provider(spec, provider, provider_options)
    try:
        total = len(pending)
        while pending:
            still = []
            for batch in pending:
                state = await provider.batch_state(batch.batch_id)
                if state.status == "in_progress":
                    still.append(batch)
                    continue
                if state.status == "failed":
                    report.n_failed += len(batch.keys)
                    detail = redact(state.detail or "no detail", getattr(provider, "secrets", ()))
                    report.failures.append(f"batch {batch.batch_id} failed: {detail}")
                else:
                    await _import(provider, batch, by_hash, rubric, spec, sink, report)
                sink.mark_batch_done(batch.batch_id)
            pending = still
            if progress is not None:
                progress(total - len(pending), total)
            if not pending or not wait:
                break
            await sleep(poll_interval)
        report.pending = [b.batch_id for b in pending]
    finally:
        if own:
            await provider.aclose()
    return report


async def run_batch(items: Sequence[Item], rubric: Rubric, spec: JudgeSpec, sink: RunSink, *,
                    provider: JudgeProvider | None = None, repeats: int | None = None, limit: int | None = None,
                    budget_usd: float | None = None, wait: bool = True, poll_interval: float = 60.0,
                    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                    max_batch_requests: int = MAX_BATCH_REQUESTS,
                    provider_options: dict[str, Any] | None = None) -> BatchReport:
    """`judge run --batch`: import finished pending batches, submit the rest, then poll until done."""
    provider, own = _provider(spec, provider, provider_options)
    report = BatchReport()
    try:
        await collect_batches(items, rubric, spec, sink, provider=provider, wait=False, report=report)
        await submit_batches(items, rubric, spec, sink, provider=provider, repeats=repeats, limit=limit,
                             budget_usd=budget_usd, max_batch_requests=max_batch_requests, report=report)
        if wait:
            await collect_batches(items, rubric, spec, sink, provider=provider, wait=True,
                                  poll_interval=poll_interval, sleep=sleep, report=report)
        else:
            config_hash = spec.config_hash(rubric.content_hash)
            report.pending = [b.batch_id for b in sink.pending_batches() if _ours(b, spec, config_hash)]
    finally:
        if own:
            await provider.aclose()
    return report
