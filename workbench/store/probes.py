"""Stress-probe runs: runs tagged with a probe (``runs.probe``), kept apart from the calibration runs.

A probe run judges perturbed copies of the golden set's items; its judgments
are keyed like any run's (config hash, the perturbed item's content hash,
repeat), so it resumes and never pays twice. ``Store.runs`` and
``Store.judgments`` leave these runs out; this module is how they are read.
"""

from __future__ import annotations

from workbench.store.db import now, query, query_one
from workbench.store.mapping import from_json, to_json
from workbench.store.store import Store

RUN_PREFIX = "probe:"


def probe_run_name(probe: str) -> str:
    return f"{RUN_PREFIX}{probe}"


def ensure_probe_run(store: Store, judge_pk: int, golden_set_id: int, probe: str, *, model: str,
                     create: bool = True) -> tuple[int, str]:
    """(run id, name) of the judge's run for this probe on the golden set: one per probe, resumed every time.

    Without ``create``, a probe never run gives run id 0 (an estimate writes nothing).
    """
    name = probe_run_name(probe)
    with store.transaction():
        row = query_one(store.conn, "SELECT id FROM runs WHERE judge_pk = ? AND golden_set_id = ? AND name = ?",
                        (judge_pk, golden_set_id, name))
        if row:
            return row["id"], name
        if not create:
            return 0, name
        run_id = store.conn.execute(
            "INSERT INTO runs (judge_pk, golden_set_id, source, name, status, params, started_at, probe) "
            "VALUES (?, ?, 'run', ?, 'running', ?, ?, ?) RETURNING id",
            (judge_pk, golden_set_id, name, to_json({"model": model, "probe": probe}), now(),
             probe)).fetchone()[0]
        return run_id, name


def probe_runs(store: Store, golden_set_id: int, judge_pk: int) -> list[dict]:
    """The judge's probe runs on the golden set, with their judgment counts and known cost."""
    rows = query(store.conn, """
        SELECT r.id, r.name, r.probe, r.status, r.params, r.started_at, r.finished_at,
               count(j.id) AS n_judgments, coalesce(sum(j.cost_usd), 0.0) AS cost_usd,
               sum(CASE WHEN j.cost_usd IS NULL AND j.id IS NOT NULL THEN 1 ELSE 0 END) AS n_unpriced
        FROM runs r LEFT JOIN judgments j ON j.run_id = r.id
        WHERE r.golden_set_id = ? AND r.judge_pk = ? AND r.probe IS NOT NULL
        GROUP BY r.id ORDER BY r.id""", (golden_set_id, judge_pk))
    for r in rows:
        r["params"] = from_json(r["params"])
    return rows


def probe_judgments(store: Store, golden_set_id: int, judge_pk: int) -> list[dict]:
    """Every judgment of the judge's probe runs on the golden set: probe, item_id, repeat, score, ..."""
    return query(store.conn, """
        SELECT r.probe, j.run_id, i.item_id, j.repeat, j.score, j.unscored_reason, j.item_content_hash,
               j.cost_usd, j.tokens_in, j.tokens_out, j.model_version
        FROM judgments j JOIN runs r ON r.id = j.run_id JOIN items i ON i.pk = j.item_pk
        WHERE r.golden_set_id = ? AND r.judge_pk = ? AND r.probe IS NOT NULL
        ORDER BY r.id, i.position, j.repeat""", (golden_set_id, judge_pk))
