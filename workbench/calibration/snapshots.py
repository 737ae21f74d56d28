"""Snapshots of a golden set: frozen versions (item ids, content hashes and consensus labels, identified by a
hash) and the export of a golden set back to files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from workbench.core.models import GoldenSetRecord
from workbench.core.formats import judgment_to_dict, write_jsonl
from workbench.core.hashing import sha256_hex
from workbench.core.names import safe_path
from workbench.store import Store
from workbench.store import active_queue as active_store
from workbench.calibration.golden_sets import (Consensus, GoldenSetVersion, ItemIndexRow, adjudications, consensus,
                                               item_index, label_rows, runs_of)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A golden set's item ids with their content hashes, and each rubric's consensus labels: what a version names
    by its hash."""

    golden_set: str
    items: list[list[str]]  # [item_id, content_hash], sorted
    consensus: dict[str, dict[str, int | None]]  # rubric -> item_id -> consensus score (None: unresolved)

    def to_json(self) -> dict[str, Any]:
        return {"golden_set": self.golden_set, "items": self.items, "consensus": self.consensus}


@dataclass(frozen=True, slots=True)
class FrozenVersion:
    """A golden set's version as ``freeze`` recorded it, with each rubric's labeled and unresolved items."""

    golden_set: str
    version: int
    hash: str
    n_items: int
    rubrics: dict[str, dict[str, int]]  # rubric -> {"labeled": n, "unresolved": n}

    def to_json(self) -> dict[str, Any]:
        return {"golden_set": self.golden_set, "version": self.version, "hash": self.hash, "n_items": self.n_items,
                "rubrics": self.rubrics}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FrozenVersion:
        return cls(**d)


def freeze(store: Store, golden_set: str, *, known: dict[str, Consensus] | None = None, gs: GoldenSetRecord | None = None,
           index: list[dict] | None = None) -> dict:
    """Snapshot item ids, content hashes and consensus labels; the same state gives the same version.

    ``known`` holds consensus the caller has just computed (by rubric), ``gs`` the golden set's row and ``index``
    its item index (``Store.item_index``), so they are not read again. Returns a :class:`FrozenVersion`'s JSON.
    """
    gs = gs or store.golden_set(golden_set)
    snapshot = _snapshot(store, golden_set, known=known, gs=gs, index=index)
    payload = snapshot.to_json()
    row = GoldenSetVersion.from_row(store.insert_golden_set_version(gs.id, sha256_hex(payload), payload))
    return FrozenVersion(golden_set, row.version, row.hash, len(snapshot.items),
                         {r: {"labeled": len(v), "unresolved": sum(s is None for s in v.values())}
                          for r, v in snapshot.consensus.items()}).to_json()


def current_snapshot(store: Store, golden_set: str, *, known: dict[str, Consensus] | None = None,
                     gs: GoldenSetRecord | None = None, index: list[dict] | None = None,
                     rubrics: list[str] | None = None) -> tuple[str, dict]:
    """(hash, snapshot) of the golden set as it is now, without recording a version (what freeze would record);
    ``rubrics`` the golden set's labeled rubrics (``Store.label_rubrics``) when the caller has read them."""
    payload = _snapshot(store, golden_set, known=known, gs=gs, index=index, rubrics=rubrics).to_json()
    return sha256_hex(payload), payload


def _snapshot(store: Store, golden_set: str, *, known: dict[str, Consensus] | None,
              gs: GoldenSetRecord | None, index: list[dict] | None, rubrics: list[str] | None = None) -> Snapshot:
    gs = gs or store.golden_set(golden_set)
    rows = [ItemIndexRow(**r) for r in index] if index is not None else item_index(store, gs.id)
    cons = {}
    for rubric in store.label_rubrics(gs.id) if rubrics is None else rubrics:
        c = (known or {}).get(rubric) or consensus(store, golden_set, rubric, gs=gs)
        cons[rubric] = {i: s for i, s in sorted(c.labels.items())}
    return Snapshot(golden_set, sorted([r.item_id, r.content_hash] for r in rows), cons)


def export_golden_set(store: Store, golden_set: str, out: str | Path) -> dict[str, int]:
    """Write the golden set back to files that import into the same database state.

    Layout: golden_set.yaml, items.jsonl, and per rubric <rubric>/labels.jsonl,
    <rubric>/adjudications.jsonl and <rubric>/judgments/<judge>.jsonl.
    """
    out = Path(out)
    gs = store.golden_set(golden_set)
    out.mkdir(parents=True, exist_ok=True)
    (out / "golden_set.yaml").write_text(yaml.safe_dump(
        {"name": golden_set, "overlap": gs.overlap, "synthetic_demo": bool(gs.is_demo)}, sort_keys=False))
    counts = {"items.jsonl": write_jsonl(out / "items.jsonl", (item.to_dict() for item in store.items(gs.id)))}
    for rubric in store.label_rubrics(gs.id):
        inclusion = active_store.label_inclusion(store, gs.id, rubric)  # labels served by the active queue
        labels = [label.to_json(inclusion.get((label.item_id, label.rater)))
                  for label in label_rows(store, gs.id, rubric)]
        counts[f"{rubric}/labels.jsonl"] = write_jsonl(safe_path(out, rubric, "labels.jsonl"), labels)
        adj = [a.to_json() for a in adjudications(store, gs.id, rubric)]
        if adj:
            counts[f"{rubric}/adjudications.jsonl"] = write_jsonl(safe_path(out, rubric, "adjudications.jsonl"), adj)
    judges_seen = {(run.rubric_name, run.judge_id): run.judge_pk for run in runs_of(store, gs.id)}
    for (rubric, judge_id), judge_pk in judges_seen.items():
        rows = [judgment_to_dict(run, j) for run, j in store.run_judgments(gs.id, judge_pk)]
        counts[f"{rubric}/judgments/{judge_id}.jsonl"] = write_jsonl(
            safe_path(out, rubric, "judgments", f"{judge_id}.jsonl"), rows)
    return counts
