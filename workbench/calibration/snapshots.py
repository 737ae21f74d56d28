"""Snapshots of a golden set: frozen versions (item ids, content hashes and consensus labels, identified by a
hash) and the export of a golden set back to files.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from workbench.core.models import GoldenSetRecord
from workbench.core.formats import judgment_to_dict, write_jsonl
from workbench.core.hashing import sha256_hex
from workbench.core.names import safe_path
from workbench.store import Store
from workbench.store import active_queue as active_store
from workbench.calibration.golden_sets import Consensus, consensus


def freeze(store: Store, golden_set: str, *, known: dict[str, Consensus] | None = None, gs: GoldenSetRecord | None = None,
           index: list[dict] | None = None) -> dict:
    """Snapshot item ids, content hashes and consensus labels; the same state gives the same version.

    ``known`` holds consensus the caller has just computed (by rubric), ``gs`` the golden set's row and ``index``
    its item index (``Store.item_index``), so they are not read again.
    """
    gs = gs or store.golden_set(golden_set)
    version_hash, snapshot = current_snapshot(store, golden_set, known=known, gs=gs, index=index)
    row = store.insert_golden_set_version(gs.id, version_hash, snapshot)
    return {"golden_set": golden_set, "version": row["version"], "hash": row["hash"], "n_items": len(snapshot["items"]),
            "rubrics": {r: {"labeled": len(v), "unresolved": sum(s is None for s in v.values())}
                        for r, v in snapshot["consensus"].items()}}


def current_snapshot(store: Store, golden_set: str, *, known: dict[str, Consensus] | None = None,
                     gs: GoldenSetRecord | None = None, index: list[dict] | None = None) -> tuple[str, dict]:
    """(hash, snapshot) of the golden set as it is now, without recording a version (what freeze would record)."""
    gs = gs or store.golden_set(golden_set)
    items = [[r["item_id"], r["content_hash"]] for r in (store.item_index(gs.id) if index is None else index)]
    cons = {}
    for rubric in store.label_rubrics(gs.id):
        c = (known or {}).get(rubric) or consensus(store, golden_set, rubric, gs=gs)
        cons[rubric] = {i: s for i, s in sorted(c.labels.items())}
    snapshot = {"golden_set": golden_set, "items": sorted(items), "consensus": cons}
    return sha256_hex(snapshot), snapshot


def export_golden_set(store: Store, golden_set: str, out: str | Path) -> dict[str, int]:
    """Write the golden set back to files that import into the same database state.

    Layout: golden_set.yaml, items.jsonl, and per rubric <rubric>/labels.jsonl,
    <rubric>/adjudications.jsonl and <rubric>/judgments/<judge>.jsonl.
    """
    out = Path(out)
    gs = store.golden_set(golden_set)
    counts: dict[str, int] = {}
    out.mkdir(parents=True, exist_ok=True)
    (out / "golden_set.yaml").write_text(yaml.safe_dump(
        {"name": golden_set, "overlap": gs.overlap, "synthetic_demo": bool(gs.is_demo)}, sort_keys=False))
    counts["items.jsonl"] = write_jsonl(out / "items.jsonl",
                                        (item.to_dict() for item in store.items(gs.id)))
    for rubric in store.label_rubrics(gs.id):
        inclusion = active_store.label_inclusion(store, gs.id, rubric)  # labels served by the active queue
        labels = [{k: v for k, v in {"item_id": r["item_id"], "rater": r["rater"], "score": r["score"],
                                     "rationale": r["rationale"], "created_at": r["created_at"],
                                     "inclusion_probability": inclusion.get((r["item_id"], r["rater"]))}.items()
                   if v is not None} for r in store.labels(gs.id, rubric)]
        counts[f"{rubric}/labels.jsonl"] = write_jsonl(safe_path(out, rubric, "labels.jsonl"), labels)
        adj = [{k: v for k, v in r.items() if k != "item_pk" and v is not None}
               for r in store.adjudications(gs.id, rubric)]
        if adj:
            counts[f"{rubric}/adjudications.jsonl"] = write_jsonl(safe_path(out, rubric, "adjudications.jsonl"), adj)
    judges_seen: dict[tuple[str, str], int] = {}
    for run in store.runs(gs.id):
        judges_seen[(run["rubric_name"], run["judge_id"])] = run["judge_pk"]
    for (rubric, judge_id), judge_pk in judges_seen.items():
        rows = [judgment_to_dict(run, j) for run, j in store.run_judgments(gs.id, judge_pk)]
        counts[f"{rubric}/judgments/{judge_id}.jsonl"] = write_jsonl(
            safe_path(out, rubric, "judgments", f"{judge_id}.jsonl"), rows)
    return counts
