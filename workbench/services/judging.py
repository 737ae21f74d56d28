"""Running judges on a golden set: the runner wired to SQLite, one committed judgment at a time.

A run is resumed by default (the latest run of this judge config on the
golden set): what it already holds is skipped, so an interrupted or killed run
picks up where it stopped and sends no request twice. ``new_run`` starts a
fresh run of the same config on purpose, which is how drift is measured.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..judges.base import WorkKey
from ..judges.runner import RunEstimate, RunReport, estimate_run, run_judge
from ..judges.sink import InMemorySink, PendingBatch
from ..models import Item, Judgment, JudgeSpec, Rubric
from ..store import Store
from .golden_sets import load_items
from .rubrics import RubricVersion, get_rubric


class SqliteRunSink:
    """RunSink over the store: every ``record`` is its own committed transaction."""

    def __init__(self, store: Store, run_id: int, config_hash: str, items: dict[str, dict]):
        self.store, self.run_id, self.config_hash = store, run_id, config_hash
        self.items = items  # item_id -> {pk, content_hash}

    def done_keys(self) -> set[WorkKey]:
        return {(self.config_hash, h, r) for h, r in self.store.done_keys(self.config_hash, self.run_id)}

    def record(self, key: WorkKey, judgment: Judgment) -> None:
        item = self.items[judgment.item_id]
        with self.store.transaction():
            self.store.insert_judgments([{
                "run_id": self.run_id, "item_pk": item["pk"], "item_content_hash": key[1], "config_hash": key[0],
                "repeat": judgment.repeat, "score": judgment.score, "unscored_reason": judgment.unscored_reason,
                "rationale": judgment.rationale, "evidence_steps": list(judgment.evidence_steps) or None,
                "trace": judgment.trace, "tokens_in": judgment.tokens_in, "tokens_out": judgment.tokens_out,
                "tokens_cached": judgment.tokens_cached, "cost_usd": judgment.cost_usd,
                "latency_ms": judgment.latency_ms, "model_version": judgment.model_version,
                "created_at": judgment.created_at}])

    def save_batch(self, provider: str, batch_id: str, keys: Sequence[WorkKey]) -> None:
        self.store.save_batch(self.run_id, provider, batch_id, [list(k) for k in keys])

    def pending_batches(self) -> list[PendingBatch]:
        return [PendingBatch(b["provider"], b["batch_id"], tuple(tuple(k) for k in b["keys"]))
                for b in self.store.pending_batches(self.run_id)]

    def mark_batch_done(self, batch_id: str) -> None:
        self.store.mark_batch_done(batch_id)


@dataclass
class Prepared:
    rubric: RubricVersion
    spec: JudgeSpec
    items: list[Item]
    run_id: int
    run_name: str
    sink: SqliteRunSink


def prepare_run(store: Store, golden_set: str, rubric: str, judge: str, *, new_run: bool = False,
                create: bool = True) -> Prepared:
    rv = get_rubric(store, rubric)
    spec = rv.rubric.judge(judge)
    gs = store.golden_set(golden_set)
    row = store.judge_row(rv.id, judge)
    runs = [r for r in store.runs(gs["id"], row["pk"]) if r["source"] == "run"]
    if runs and not new_run:
        run_id, name = runs[-1]["id"], runs[-1]["name"]
    elif create:
        name = f"run-{len(store.runs(gs['id'], row['pk'])) + 1}"
        run_id, _ = store.ensure_run(row["pk"], gs["id"], source="run", name=name, params={"model": spec.model})
    else:
        run_id, name = 0, "(new run)"
    index = {r["item_id"]: r for r in store.item_index(gs["id"])}
    sink = SqliteRunSink(store, run_id, row["config_hash"], index)
    return Prepared(rv, spec, load_items(store, golden_set), run_id, name, sink)


def estimate(store: Store, golden_set: str, rubric: str, judge: str, *, repeats: int | None = None,
             limit: int | None = None, batch: bool = False, new_run: bool = False) -> RunEstimate:
    """The --dry-run estimate: tokens and cost of what a run would still send. Writes nothing."""
    p = prepare_run(store, golden_set, rubric, judge, new_run=new_run, create=False)
    done = p.sink.done_keys() if p.run_id else set()
    return estimate_run(p.items, p.rubric.rubric, p.spec, done_keys=done, repeats=repeats, limit=limit, batch=batch)


def run(store: Store, golden_set: str, rubric: str, judge: str, *, repeats: int | None = None,
        limit: int | None = None, concurrency: int = 8, budget_usd: float | None = None, new_run: bool = False,
        batch: bool = False, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
        progress: Callable[[int, int, float], None] | None = None, should_stop: Callable[[], bool] | None = None,
        provider_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Judge the golden set's items (resuming the current run); returns a summary of what was done."""
    check_provider(get_rubric(store, rubric).rubric.judge(judge), provider_options)  # before any run row exists
    p = prepare_run(store, golden_set, rubric, judge, new_run=new_run)
    store.set_run_status(p.run_id, "running")
    stopped = None
    try:
        if batch:
            from ..judges.batch import run_batch
            report: Any = asyncio.run(run_batch(p.items, p.rubric.rubric, p.spec, p.sink, repeats=repeats,
                                                limit=limit, budget_usd=budget_usd,
                                                provider_options=provider_options))
        else:
            report = asyncio.run(run_judge(
                p.items, p.rubric.rubric, p.spec, p.sink, repeats=repeats, limit=limit, concurrency=concurrency,
                budget_usd=budget_usd, requests_per_minute=requests_per_minute,
                tokens_per_minute=tokens_per_minute, progress=progress, should_stop=should_stop,
                provider_options=provider_options))
            stopped = report.stopped
    except BaseException:
        store.set_run_status(p.run_id, "stopped")
        raise
    complete = _complete(store, p, repeats, limit)
    store.set_run_status(p.run_id, "done" if complete and not stopped else "stopped")
    summary = {"run": p.run_name, "judge": judge, "model": p.spec.model, "complete": complete}
    summary.update(_report_dict(report))
    return summary


def check_provider(spec: JudgeSpec, provider_options: dict[str, Any] | None = None) -> None:
    """Raise the ConfigError of a missing SDK or key now, not after a run has been opened."""
    from ..judges.registry import get_provider

    async def probe() -> None:
        await get_provider(spec, **(provider_options or {})).aclose()

    asyncio.run(probe())


def _complete(store: Store, p: Prepared, repeats: int | None, limit: int | None) -> bool:
    from ..judges.runner import plan_work
    work, _ = plan_work(p.items, p.rubric.rubric, p.spec, repeats=repeats, limit=limit)
    done = p.sink.done_keys()
    return all(k in done for k, _ in work)


def _report_dict(report: Any) -> dict[str, Any]:
    if isinstance(report, RunReport):
        d = {k: getattr(report, k) for k in report.__dataclass_fields__}
        d["n_done"] = report.n_done
        return d
    return {k: getattr(report, k) for k in getattr(report, "__dataclass_fields__", {})}


def judge_items(items: Sequence[Item], rubric: Rubric, spec: JudgeSpec, *, concurrency: int = 8,
                provider_options: dict[str, Any] | None = None) -> list[Judgment]:
    """Judge items outside any golden set (grading with an approved bundle): repeat 0 of each."""
    sink = InMemorySink()
    asyncio.run(run_judge(list(items), rubric, spec, sink, repeats=1, concurrency=concurrency,
                          provider_options=provider_options))
    return list(sink.judgments.values())


def run_status(store: Store, golden_set: str, rubric: str, judge: str) -> dict[str, Any]:
    """Progress of the judge's current run: for the Judges page."""
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    row = store.judge_row(rv.id, judge)
    runs = store.runs(gs["id"], row["pk"])
    spec = rv.rubric.judge(judge)
    n_items = len(store.item_index(gs["id"]))
    out = {"runs": [{"name": r["name"], "source": r["source"], "status": r["status"], "judgments": r["n_judgments"]}
                    for r in runs], "planned": n_items * spec.repeats}
    if runs:
        judgments = store.judgments(gs["id"], row["pk"], runs[-1]["id"])
        out.update(current=runs[-1]["name"], done=len(judgments),
                   cost_usd=sum(j["cost_usd"] or 0 for j in judgments),
                   unscored=sum(j["score"] is None for j in judgments))
    return json.loads(json.dumps(out, default=str))
