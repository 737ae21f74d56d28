"""A living golden set: the stream's labeled traces join a golden set as a new frozen version, with their labels,
adjudications and the judge's production verdicts, so re-calibration (``calibrate -g G``) sees today's traffic.

Through the import path (items, labels, adjudications, judgments), so the same checks apply; frozen versions are
snapshots and stay as they were.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from workbench.calibration.golden_sets import adjudications, consensus
from workbench.calibration.snapshots import freeze
from workbench.core.errors import InputError
from workbench.core.names import check_name
from workbench.features.importing.service import (import_adjudications, import_items, import_judgments,
                                                  import_labels)
from workbench.features.monitoring import queries
from workbench.store import Store


@dataclass(frozen=True, slots=True)
class Promoted:
    stream: str
    golden_set: str
    items: int
    added: int
    labels: int
    judgments: int
    version: int
    version_hash: str

    def summary(self) -> str:
        return (f"{self.items} labeled traces of stream '{self.stream}' in golden set '{self.golden_set}' ({self.added} "
                f"new), with {self.labels} labels and {self.judgments} production verdicts; frozen as version "
                f"{self.version} ({self.version_hash[:16]}…). Re-calibrate with: workbench calibrate -g "
                f"{self.golden_set} -r RUBRIC -j JUDGE")


def _write(path: Path, rows: list[dict]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def promote(store: Store, stream: str, golden_set: str) -> Promoted:
    golden_set = check_name(golden_set, "golden set name")
    if golden_set == stream:
        raise InputError(f"golden set '{golden_set}' is the stream's own", fix="name the golden set to promote into")
    sid, _, sb = queries.current_epoch(store, stream)
    verdicts = queries.sampled_scores(store, sid)
    labeled = {i: s for i, s in consensus(store, stream, sb.rubric_name).labels.items() if i in verdicts}
    if not labeled:
        raise InputError(f"stream '{stream}' has no labeled trace yet",
                         fix=f"label items of golden set '{stream}' in the UI (or import labels), then promote")
    src = store.golden_set(stream)
    ids = sorted(labeled)
    rubric_ref = f"{sb.rubric_name}@v{sb.rubric_version}"
    label_rows = [{"item_id": r.get("item_id"), "rater": r.get("rater"), "score": r.get("score"),
                   **({"rationale": r.get("rationale")} if r.get("rationale") else {})}
                  for r in store.labels(src.id, sb.rubric_name) if r.get("item_id") in labeled]
    adj_rows = [{"item_id": a.item_id, "score": a.score, "lead": a.lead, **({"note": a.note} if a.note else {})}
                for a in adjudications(store, src.id, sb.rubric_name) if a.item_id in labeled]
    judgment_rows = [{"item_id": i, "score": verdicts.get(i), "run": f"production-{stream}",
                      **({} if verdicts.get(i) is not None else {"unscored_reason": "unscored in production"})}
                     for i in ids]
    with tempfile.TemporaryDirectory(prefix="workbench-promote-") as tmp, store.transaction():
        d = Path(tmp)
        items = import_items(store, _write(d / "items.jsonl", [it.to_dict() for it in store.items(src.id, ids)]),
                             golden_set)
        import_labels(store, _write(d / "labels.jsonl", label_rows), golden_set, sb.rubric_name)
        if adj_rows:
            import_adjudications(store, _write(d / "adjudications.jsonl", adj_rows), golden_set, sb.rubric_name)
        import_judgments(store, _write(d / "judgments.jsonl", judgment_rows), golden_set, rubric_ref, sb.judge_id)
        version = freeze(store, golden_set)
    return Promoted(stream, golden_set, len(ids), items.added, len(label_rows), len(judgment_rows),
                    int(version.get("version")), str(version.get("hash")))
