"""Running judges on a golden set: the runner wired to SQLite, one committed judgment at a time.

A run in progress holds a lease in the database (process, host, heartbeat):
two runners of the same run never both send requests; the second says who
holds it and stops, and a lease whose heartbeat stopped is taken over.

A run is resumed by default (the judge's current run on the golden set: its
latest, whether run here or imported): what it already holds is skipped, so an
interrupted or killed run picks up where it stopped, and a finished or imported
run has nothing left to do; no request is sent twice. ``new_run`` starts a
fresh run of the same config on purpose, which is how drift is measured.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from workbench.core.errors import ConfigError, Conflict
from workbench.judges.base import WorkKey
from workbench.judges.runner import RunEstimate, estimate_run, run_judge
from workbench.judges.sink import InMemorySink, PendingBatch
from workbench.features.judging.records import RunSummary, StoredBatch
from workbench.core.models import Item, Judgment, JudgeSpec, Rubric
from workbench.store import Store, leases
from workbench.store import probes as probe_runs
from workbench.store.mapping import judgment_from_row
from workbench.calibration.golden_sets import item_index, load_items, runs_of
from workbench.calibration.rubric_versions import RubricVersion, get_rubric, judge_row

ItemTransform = Callable[[list[Item]], list[Item]]


class SqliteRunSink:
    """RunSink over the store: every ``record`` is its own committed transaction.

    A write outlasts a busy database (``Store.retrying``: backoff, never a
    dropped verdict). The runner awaits ``arecord``, which does that wait in a
    worker thread so the event loop keeps reading the replies in flight; a lock
    keeps those threads from interleaving transactions on the one connection.
    """

    def __init__(self, store: Store, run_id: int, config_hash: str, item_pks: dict[str, int]):
        self.store, self.run_id, self.config_hash = store, run_id, config_hash
        self.item_pks = item_pks  # item_id -> the item's row
        self._lock = threading.Lock()

    def done_keys(self) -> set[WorkKey]:
        with self._lock:
            return {(self.config_hash, h, r) for h, r in self.store.done_keys(self.config_hash, self.run_id)}

    def record(self, key: WorkKey, judgment: Judgment) -> None:
        # the content hash is the one judged (a probe run judges a perturbed copy of the item)
        judged = {judgment.item_id: {"pk": self.item_pks[judgment.item_id], "content_hash": key[1]}}

        def write() -> None:
            with self.store.transaction():
                self.store.insert_judgments(self.run_id, key[0], [judgment], judged)

        self._write(write, f"the judgment of item '{judgment.item_id}' (repeat {judgment.repeat})")

    async def arecord(self, key: WorkKey, judgment: Judgment) -> None:
        await asyncio.to_thread(self.record, key, judgment)

    def save_batch(self, provider: str, batch_id: str, keys: Sequence[WorkKey]) -> None:
        self._write(lambda: self.store.save_batch(self.run_id, provider, batch_id, [list(k) for k in keys]),
                    f"batch {batch_id}")

    def pending_batches(self) -> list[PendingBatch]:
        with self._lock:
            return [StoredBatch(**b).pending() for b in self.store.pending_batches(self.run_id)]

    def mark_batch_done(self, batch_id: str) -> None:
        self._write(lambda: self.store.mark_batch_done(batch_id), f"batch {batch_id}")

    def _write(self, write: Callable[[], None], what: str) -> None:
        with self._lock:
            self.store.retrying(write, what=f"saving {what}")


@dataclass
class Prepared:
    rubric: RubricVersion
    spec: JudgeSpec
    items: list[Item]
    run_id: int
    run_name: str
    sink: SqliteRunSink


def prepare_run(store: Store, golden_set: str, rubric: str, judge: str, *, new_run: bool = False,
                create: bool = True, probe: str | None = None, transform: ItemTransform | None = None) -> Prepared:
    """The run to judge into and its items. ``probe`` tags a stress-probe run (one per probe, never a calibration
    run) and ``transform`` maps the golden set's items to the ones that run judges (the perturbed copies)."""
    rv = get_rubric(store, rubric)
    spec = rv.rubric.judge(judge)
    gs = store.golden_set(golden_set)
    row = judge_row(store, rv.id, judge)
    runs = runs_of(store, gs.id, row.pk)
    if probe is not None:
        run_id, name = probe_runs.ensure_probe_run(store, row.pk, gs.id, probe, model=spec.model, create=create)
    elif runs and not new_run:  # the current run, as run_status and the Judges page name it
        run_id, name = runs[-1].id, runs[-1].name
    elif create:
        name = f"run-{len(runs) + 1}"
        run_id, _ = store.ensure_run(row.pk, gs.id, source="run", name=name, params={"model": spec.model})
    else:
        run_id, name = 0, "(new run)"
    sink = SqliteRunSink(store, run_id, row.config_hash, {r.item_id: r.pk for r in item_index(store, gs.id)})
    items = load_items(store, golden_set)
    return Prepared(rv, spec, items if transform is None else transform(items), run_id, name, sink)


def estimate(store: Store, golden_set: str, rubric: str, judge: str, *, repeats: int | None = None,
             limit: int | None = None, batch: bool = False, new_run: bool = False, probe: str | None = None,
             transform: ItemTransform | None = None) -> RunEstimate:
    """The --dry-run estimate: tokens and cost of what a run would still send. Writes nothing."""
    p = prepare_run(store, golden_set, rubric, judge, new_run=new_run, create=False, probe=probe,
                    transform=transform)
    done = p.sink.done_keys() if p.run_id else set()
    return estimate_run(p.items, p.rubric.rubric, p.spec, done_keys=done, repeats=repeats, limit=limit, batch=batch)


def run(store: Store, golden_set: str, rubric: str, judge: str, **options: Any) -> dict[str, Any]:
    """:func:`run_summary` as its JSON (what the pages, refine and the tests read)."""
    return run_summary(store, golden_set, rubric, judge, **options).to_json()


def run_summary(store: Store, golden_set: str, rubric: str, judge: str, *, repeats: int | None = None,
                limit: int | None = None, concurrency: int = 8, budget_usd: float | None = None,
                new_run: bool = False, batch: bool = False, requests_per_minute: float | None = None,
                tokens_per_minute: float | None = None, progress: Callable[[int, int, float], None] | None = None,
                should_stop: Callable[[], bool] | None = None, provider_options: dict[str, Any] | None = None,
                probe: str | None = None, transform: ItemTransform | None = None,
                followup: Callable[[int], str | None] | None = None) -> RunSummary:
    """Judge the golden set's items (resuming the current run); returns a summary of what was done.

    The run is leased to this process while it works: a second runner of the
    same run (another CLI, the Judges page) is refused with a ``Conflict``
    naming the holder, so no request is paid for twice. A lease whose holder
    stopped heartbeating (or a killed process of this host) is taken over.
    """
    check_provider(get_rubric(store, rubric).rubric.judge(judge), provider_options, batch=batch)  # before any run row
    p = prepare_run(store, golden_set, rubric, judge, new_run=new_run, probe=probe, transform=transform)
    holder = _claim(store, p, golden_set, judge)
    keeper = leases.LeaseKeeper(store.path, holder).start()

    def stop_now() -> bool:
        return keeper.lost.is_set() or (should_stop is not None and should_stop())

    status, stopped = "stopped", None
    try:
        store.set_run_status(p.run_id, "running")
        if batch:
            from workbench.judges.batch import run_batch
            report: Any = asyncio.run(run_batch(p.items, p.rubric.rubric, p.spec, p.sink, repeats=repeats,
                                                limit=limit, budget_usd=budget_usd,
                                                provider_options=provider_options))
        else:
            report = asyncio.run(run_judge(
                p.items, p.rubric.rubric, p.spec, p.sink, repeats=repeats, limit=limit, concurrency=concurrency,
                budget_usd=budget_usd, requests_per_minute=requests_per_minute,
                tokens_per_minute=tokens_per_minute, progress=progress, should_stop=stop_now,
                provider_options=provider_options, followup=followup))
            stopped = report.stopped
        complete = _complete(store, p, repeats, limit)
        status = "done" if complete and not stopped else "stopped"
    finally:
        keeper.stop()
        _release(store, p, holder, status)
    return RunSummary(p.run_name, judge, p.spec.model, complete, report, lease_lost=keeper.lost.is_set())


def _run_lease_key(run_id: int) -> str:
    return f"run:{run_id}"


def _claim(store: Store, p: Prepared, golden_set: str, judge: str) -> leases.Holder:
    holder, ours = leases.acquire(store, _run_lease_key(p.run_id))
    if not ours:
        raise Conflict(f"judge '{judge}' is already running on golden set '{golden_set}' (run {p.run_name}, "
                       f"{holder.describe()}); wait for it to finish or stop it there, since a run whose heartbeat "
                       f"stops for {leases.LEASE_STALE_S:.0f} s is taken over")
    return holder


def _release(store: Store, p: Prepared, holder: leases.Holder, status: str) -> None:
    """The final status and the lease's release in one transaction, so a resume never finds it still held."""
    def finish() -> None:
        with store.transaction():
            still_ours = leases.current(store, holder.key)
            if still_ours is not None and still_ours.token == holder.token:
                store.set_run_status(p.run_id, status)
                leases.release(store, holder)

    store.retrying(finish, what=f"finishing run {p.run_name}")


def run_holder(store: Store, golden_set: str, rubric: str, judge: str) -> dict[str, Any] | None:
    """The process running the judge's current run now (this or another), or None: for the Judges page."""
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    runs = runs_of(store, gs.id, judge_row(store, rv.id, judge).pk)
    if not runs:
        return None
    holder = leases.live_holder(store, _run_lease_key(runs[-1].id))
    if holder is None:
        return None
    return {"run": runs[-1].name, "pid": holder.pid, "host": holder.host, "since": holder.acquired_at,
            "heartbeat_at": holder.heartbeat_at, "description": holder.describe()}


def check_provider(spec: JudgeSpec, provider_options: dict[str, Any] | None = None, *, batch: bool = False) -> None:
    """Raise the ConfigError of a missing SDK or key, or of a judge without batch mode, now, not after a run
    has been opened (a refused run must leave no empty run behind)."""
    from workbench.judges.registry import get_provider

    async def probe() -> bool:
        provider = get_provider(spec, **(provider_options or {}))
        await provider.aclose()
        return bool(getattr(provider, "supports_batch", False))

    supports_batch = asyncio.run(probe())
    if batch and (spec.mode != "single" or not supports_batch):
        raise ConfigError(f"judge '{spec.id}' ({spec.model}, {spec.mode} mode) has no batch mode; run it without "
                          "--batch")


def _complete(store: Store, p: Prepared, repeats: int | None, limit: int | None) -> bool:
    from workbench.judges.runner import plan_work
    work, _ = plan_work(p.items, p.rubric.rubric, p.spec, repeats=repeats, limit=limit)
    done = p.sink.done_keys()
    return all(k in done for k, _ in work)


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
    row = judge_row(store, rv.id, judge)
    runs = runs_of(store, gs.id, row.pk)
    spec = rv.rubric.judge(judge)
    n_items = len(store.item_index(gs.id))
    out = {"runs": [{"name": r.name, "source": r.source, "status": r.status, "judgments": r.n_judgments}
                    for r in runs], "planned": n_items * spec.repeats}
    if runs:
        current = runs[-1]
        judgments = [judgment_from_row(j) for j in store.judgments(gs.id, row.pk, current.id)]
        costs = [j.cost_usd for j in judgments if j.cost_usd is not None]
        out.update(current=current.name, current_source=current.source, current_status=current.status,
                   done=len(judgments), unscored=sum(j.score is None for j in judgments),
                   # None when no judgment has a price: unknown, never $0
                   cost_usd=sum(costs) if costs else None, n_unpriced=len(judgments) - len(costs))
    return json.loads(json.dumps(out, default=str))
