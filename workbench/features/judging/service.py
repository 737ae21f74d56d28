"""Running judges on a golden set: the runner wired to SQLite, one committed judgment at a time.

Several runners (processes on one machine or many, against one database) may
share a run: each holds a lease of its own (process, host, heartbeat) and
claims each (item, repeat) before sending its request (``store/claims.py``),
so no request is sent twice while its runner lives; the claims of a runner
that died (heartbeat stopped, or its process gone on this host) are taken over
by the others, and the run is done when every judgment is stored, whoever
stores the last. A batch run stays alone on its run: it is refused while
shared runners work, and refuses them.

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
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from workbench.core.errors import ConfigError, Conflict
from workbench.judges.base import WorkKey
from workbench.judges.runner import RunEstimate, estimate_run, run_judge
from workbench.judges.sink import ClaimOutcome, InMemorySink, PendingBatch
from workbench.features.judging.records import CostCheck, RunSummary, StoredBatch
from workbench.core.models import Item, Judgment, JudgeSpec, Rubric
from workbench.store import Store, claims, leases
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
        self.runner: leases.Holder | None = None  # a shared run's runner: keys are claimed, then settled
        self._lock = threading.Lock()

    def done_keys(self) -> set[WorkKey]:
        with self._lock:
            return {(self.config_hash, h, r) for h, r in self.store.done_keys(self.config_hash, self.run_id)}

    def record(self, key: WorkKey, judgment: Judgment) -> bool:
        """Store the judgment; False when another runner of the shared run stored this key first."""
        # the content hash is the one judged (a probe run judges a perturbed copy of the item)
        judged = {judgment.item_id: {"pk": self.item_pks[judgment.item_id], "content_hash": key[1]}}

        def write() -> bool:
            with self.store.transaction():
                if self.runner is not None and not claims.settle(self.store, self.run_id, key[1:], self.runner):
                    return False
                self.store.insert_judgments(self.run_id, key[0], [judgment], judged)
                return True

        return self._write(write, f"the judgment of item '{judgment.item_id}' (repeat {judgment.repeat})")

    async def arecord(self, key: WorkKey, judgment: Judgment) -> bool:
        return await asyncio.to_thread(self.record, key, judgment)

    async def aclaim(self, keys: Sequence[WorkKey], want: int) -> ClaimOutcome | None:
        """Claim up to ``want`` of ``keys`` for this runner (all of them when the run is not shared)."""
        if self.runner is None:
            return ClaimOutcome(claimed=tuple(keys[:want]))
        return await asyncio.to_thread(self._claim, keys, want)

    def _claim(self, keys: Sequence[WorkKey], want: int) -> ClaimOutcome | None:
        by_key = {k[1:]: k for k in keys}
        with self._lock:
            got = claims.claim(self.store, self.run_id, self.runner, list(by_key), want)
        if got is None:
            return None
        return ClaimOutcome(*(tuple(by_key[k] for k in part) for part in (got.claimed, got.done, got.held)))

    async def arelease(self, keys: Sequence[WorkKey]) -> None:
        if self.runner is not None:
            runner = self.runner
            await asyncio.to_thread(self._write, lambda: claims.release(self.store, self.run_id, runner,
                                                                        [k[1:] for k in keys]), "a given-up claim")

    def save_batch(self, provider: str, batch_id: str, keys: Sequence[WorkKey]) -> None:
        self._write(lambda: self.store.save_batch(self.run_id, provider, batch_id, [list(k) for k in keys]),
                    f"batch {batch_id}")

    def pending_batches(self) -> list[PendingBatch]:
        with self._lock:
            return [StoredBatch(**b).pending() for b in self.store.pending_batches(self.run_id)]

    def mark_batch_done(self, batch_id: str) -> None:
        self._write(lambda: self.store.mark_batch_done(batch_id), f"batch {batch_id}")

    def _write(self, write: Callable[[], Any], what: str) -> Any:
        with self._lock:
            return self.store.retrying(write, what=f"saving {what}")


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

    Other runners of the same run (another CLI, another machine, the Judges
    page) share it: each (item, repeat) is claimed before its request, so none
    is paid for twice while its runner lives; the claims of a runner whose
    heartbeat stopped (or a killed process of this host) are taken over. A
    batch run is alone on its run: a runner of the other kind is refused with
    a ``Conflict`` naming the holder.
    """
    check_provider(get_rubric(store, rubric).rubric.judge(judge), provider_options, batch=batch)  # before any run row
    p = prepare_run(store, golden_set, rubric, judge, new_run=new_run, probe=probe, transform=transform)
    holder = _join(store, p, golden_set, judge, exclusive=batch)
    if not batch:
        p.sink.runner = holder
    keeper = leases.LeaseKeeper(store.path, holder).start()

    def stop_now() -> bool:
        return keeper.lost.is_set() or (should_stop is not None and should_stop())

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
    finally:
        keeper.stop()
        complete = _leave(store, p, holder, repeats, limit)
    return RunSummary(p.run_name, judge, p.spec.model, complete, report, lease_lost=keeper.lost.is_set())


def _join(store: Store, p: Prepared, golden_set: str, judge: str, *, exclusive: bool) -> leases.Holder:
    holder, blocker = claims.join(store, p.run_id, exclusive=exclusive)
    if blocker is not None:
        kind = " as a batch run" if not exclusive else ""
        raise Conflict(f"judge '{judge}' is already running on golden set '{golden_set}'{kind} (run {p.run_name}, "
                       f"{blocker.describe()}); wait for it to finish or stop it there, since a run whose heartbeat "
                       f"stops for {leases.LEASE_STALE_S:.0f} s is taken over")
    return holder


def _leave(store: Store, p: Prepared, holder: leases.Holder, repeats: int | None, limit: int | None) -> bool:
    """Give back this runner's claims and lease and set the run's status in one transaction; returns whether the
    run is complete. Complete: done, whoever stored the last judgment. Else 'stopped' when no other runner works on
    it; a runner whose lease was taken over leaves the status to the others."""
    def finish() -> bool:
        with store.transaction():
            ours = claims.leave(store, p.run_id, holder)
            complete = _complete(store, p, repeats, limit)
            if complete:
                store.set_run_status(p.run_id, "done")
            elif ours and not claims.others_alive(store, p.run_id, holder):
                store.set_run_status(p.run_id, "stopped")
            return complete

    return store.retrying(finish, what=f"finishing run {p.run_name}")


def run_holder(store: Store, golden_set: str, rubric: str, judge: str) -> dict[str, Any] | None:
    """The process running the judge's current run now (this or another), or None: for the Judges page."""
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    runs = runs_of(store, gs.id, judge_row(store, rv.id, judge).pk)
    if not runs:
        return None
    live = claims.runners(store, runs[-1].id)
    if not live:
        return None
    holder = live[0]
    return {"run": runs[-1].name, "pid": holder.pid, "host": holder.host, "since": holder.acquired_at,
            "heartbeat_at": holder.heartbeat_at, "description": holder.describe(), "runners": len(live)}


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


def cost_check(store: Store, golden_set: str, rubric: str, judge: str) -> CostCheck:
    """The estimate for the judgments of the judge's last run (same items, same repeats) beside the cost that run
    recorded, and in words why they differ by more than a quarter, or cannot be compared: for the Judges page."""
    from workbench.judges.runner import EXPECTED_AGENTIC_TURNS, EXPECTED_OUTPUT_TOKENS

    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    row = judge_row(store, rv.id, judge)
    runs = [r for r in runs_of(store, gs.id, row.pk) if r.n_judgments]
    if not runs:
        return CostCheck(None, None, 0, None, 0, None, why="no run of this judge has judgments yet")
    last = runs[-1]
    judged = [judgment_from_row(j) for j in store.judgments(gs.id, row.pk, last.id)]
    ids = {j.item_id for j in judged}
    repeats = max(j.repeat for j in judged) + 1
    e = estimate(store, golden_set, rubric, judge, repeats=repeats, new_run=True,
                 transform=lambda items: [i for i in items if i.id in ids])
    priced = [j.cost_usd for j in judged if j.cost_usd is not None]
    recorded = sum(priced) if priced else None
    scale = len(judged) / e.n_to_run if e.n_to_run else 0.0
    estimated = None if e.cost_usd is None else e.cost_usd * scale
    with_tokens = [j for j in judged if j.tokens_in is not None and j.tokens_out is not None]
    rec_tokens = ((sum(j.tokens_in for j in with_tokens) / len(with_tokens),
                   sum(j.tokens_out for j in with_tokens) / len(with_tokens)) if with_tokens else None)
    est_tokens = (e.input_tokens / e.n_to_run, e.output_tokens / e.n_to_run) if e.n_to_run else None
    check = CostCheck(last.name, last.source, len(judged), recorded, len(judged) - len(priced), estimated,
                      rec_tokens, est_tokens)
    if check.within:
        return check
    spec = rv.rubric.judge(judge)
    if estimated is None:
        why = f"the price table has no price for {spec.model}, so nothing can be estimated"
    elif recorded is None:
        why = (f"{last.name} recorded no price for its judgments"
               + (" (it was imported without costs)" if last.source == "import" else ""))
    else:
        parts = []
        if rec_tokens and est_tokens:
            parts.append(f"{last.name} used {rec_tokens[0]:,.0f} input and {rec_tokens[1]:,.0f} output tokens "
                         f"per judgment, the estimate assumes {est_tokens[0]:,.0f} and {est_tokens[1]:,.0f}")
        if spec.mode == "agentic":
            parts.append(f"an agentic judge calls its tools as often as it needs, and the estimate assumes "
                         f"{EXPECTED_AGENTIC_TURNS} turns per judgment")
        else:
            parts.append(f"the estimate counts about 4 characters per input token and {EXPECTED_OUTPUT_TOKENS} "
                         "output tokens per verdict")
        if last.source == "import":
            parts.append(f"{last.name} was imported, with the costs the tool that made it recorded")
        if check.n_unpriced:
            parts.append(f"{check.n_unpriced} of its judgments have no recorded price")
        why = "; ".join(parts)
    return replace(check, why=why)
