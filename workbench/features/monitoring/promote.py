"""A living golden set: the stream's labeled traces join a golden set as a new frozen version, with their labels,
adjudications and the judge's production verdicts, so re-calibration (``calibrate -g G``) sees today's traffic.

Through the import path (items, labels, adjudications, judgments), so the same checks apply; frozen versions are
snapshots and stay as they were. Calibration reads one run of the judge (its latest), so the promoted verdicts go
into a new run that also holds the judge's verdicts on the golden set's own items from the run calibration read
before: the new version is calibrated on all its items, not on the promoted ones alone.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from workbench.calibration.golden_sets import adjudications, consensus, runs_of
from workbench.calibration.rubric_versions import get_rubric_ref, judge_row
from workbench.calibration.snapshots import freeze
from workbench.core.errors import InputError, NotFound
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
    judgments: int  # production verdicts, one per promoted trace
    version: int
    version_hash: str
    run: str  # the judge's run on the new version: the production verdicts and those kept from ``kept_from``
    kept: int = 0  # verdicts on the golden set's own items, copied from the judge's run ``kept_from``
    kept_from: str | None = None

    def summary(self) -> str:
        kept = (f" and its {self.kept} verdicts on the golden set's own items from run '{self.kept_from}'"
                if self.kept_from else "")
        return (f"{self.items} labeled traces of stream '{self.stream}' in golden set '{self.golden_set}' ({self.added} "
                f"new), with {self.labels} labels; the judge's {self.judgments} production verdicts{kept} are run "
                f"'{self.run}'; frozen as version {self.version} ({self.version_hash[:16]}…). Re-calibrate with: "
                f"workbench calibrate -g {self.golden_set} -r RUBRIC -j JUDGE")


def _write(path: Path, rows: list[dict]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def _verdicts_kept(store: Store, golden_set: str, rubric_ref: str, judge: str,
                   promoted: set[str]) -> tuple[str | None, list[dict]]:
    """(run name, rows) of the judge's verdicts on the golden set's items other than ``promoted``, from its latest run
    there (the one ``calibrate`` reads); (None, []) for a new golden set or a judge without runs on it. Copied
    without cost, latency or tokens: they were paid for once, in that run."""
    try:
        gs = store.golden_set(golden_set)
    except NotFound:
        return None, []
    row = judge_row(store, get_rubric_ref(store, rubric_ref).id, judge)
    runs = [r for r in runs_of(store, gs.id, row.pk) if r.n_judgments]
    if not runs:
        return None, []
    base = runs[-1]
    cols = store.judgment_columns(gs.id, row.pk)
    kept = []
    for item, run_id, repeat, score, reason, model_version in zip(
            cols["item_id"], cols["run_id"], cols["repeat"], cols["score"], cols["unscored_reason"],
            cols["model_version"]):
        if run_id != base.id or item in promoted:
            continue
        kept.append({"item_id": item, "score": score, "repeat": repeat,
                     **({"unscored_reason": reason or "unscored"} if score is None else {}),
                     **({"model_version": model_version} if model_version else {})})
    return base.name, kept


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
    production = [{"item_id": i, "score": verdicts.get(i),
                   **({} if verdicts.get(i) is not None else {"unscored_reason": "unscored in production"})}
                  for i in ids]
    kept_from, kept = _verdicts_kept(store, golden_set, rubric_ref, sb.judge_id, set(ids))
    # named by its content: promoting again with nothing new lands in the same run and adds nothing
    digest = hashlib.sha256(json.dumps(kept + production, sort_keys=True).encode()).hexdigest()
    run = f"promoted-{stream}-{digest[:8]}"
    judgment_rows = [{**r, "run": run} for r in kept + production]
    with tempfile.TemporaryDirectory(prefix="workbench-promote-") as tmp, store.transaction():
        d = Path(tmp)
        items = import_items(store, _write(d / "items.jsonl", [it.to_dict() for it in store.items(src.id, ids)]),
                             golden_set)
        import_labels(store, _write(d / "labels.jsonl", label_rows), golden_set, sb.rubric_name)
        if adj_rows:
            import_adjudications(store, _write(d / "adjudications.jsonl", adj_rows), golden_set, sb.rubric_name)
        import_judgments(store, _write(d / f"production-verdicts-of-{stream}.jsonl", judgment_rows), golden_set,
                         rubric_ref, sb.judge_id)
        version = freeze(store, golden_set)
    return Promoted(stream, golden_set, len(ids), items.added, len(label_rows), len(production),
                    int(version.get("version")), str(version.get("hash")), run, len(kept), kept_from)
