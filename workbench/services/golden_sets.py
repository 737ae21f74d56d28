"""Golden sets: importing items, labels, adjudications and judgments; consensus; freeze; export.

Every import lands whole or not at all: a bad record anywhere leaves the
database exactly as it was, and re-importing the same file changes nothing.
Files are read and validated before the write lock is taken, so an import
holds it only briefly and reviewers and runs keep writing meanwhile.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from ..consensus import consensus_label
from ..errors import InputError, NotFound
from ..formats import (judgment_to_dict, parse_adjudication, parse_item, parse_judgment, parse_label, read_records,
                       write_jsonl)
from ..hashing import canonical_json, sha256_hex
from ..formats import check_evidence_steps
from ..models import Item, Judgment, Producer
from ..names import check_name, safe_path
from ..store import Store
from ..store import active_queue as active_store
from .rubrics import RubricVersion, get_rubric

Progress = Callable[[int], None]
BATCH = 1000


@dataclass
class ImportResult:
    file: str
    records: int = 0
    added: int = 0
    unchanged: int = 0
    details: dict = field(default_factory=dict)

    def summary(self, what: str) -> str:
        return f"{self.file}: {self.records} {what} read, {self.added} added or changed, {self.unchanged} already present"


def _tick(progress: Progress | None, n: int) -> None:
    if progress and n % BATCH == 0:
        progress(BATCH)


# -- items ---------------------------------------------------------------------

def import_items(store: Store, path: str | Path, golden_set: str, *, progress: Progress | None = None,
                 is_demo: bool = False) -> ImportResult:
    """Import items: all of the file or none of it, without holding the write lock while the file is read.

    Every record is parsed, validated and hashed into a private staging file
    first (reviewers and runs keep writing meanwhile); then the items land at
    once (see ``workbench/store/staging.py``). An id already in the golden set
    with the same content is left as it is; with other content the file is
    refused.
    """
    path = Path(path)
    golden_set = check_name(golden_set, "golden set name")
    result = ImportResult(path.name)
    try:
        gs_id: int | None = store.golden_set(golden_set)["id"]
    except NotFound:
        gs_id = None  # created when the items land
    with store.staged_items() as staged:
        if gs_id is not None:
            staged.check_against(store, gs_id)
        batch: dict[str, tuple[int, dict]] = {}  # item_id -> (line, row)

        def flush() -> None:
            ids = list(batch)
            earlier = staged.earlier(ids)
            existing = store.item_hashes(gs_id, ids) if gs_id is not None else {}
            rows = []
            for item_id, (line, row) in batch.items():
                if (prior := earlier.get(item_id)) is not None:
                    if prior[1] != row["content_hash"]:
                        raise InputError(f"item id '{item_id}' appears twice with different content (first on line "
                                         f"{prior[0]})", file=path.name, line=line, field="id",
                                         fix="give each item its own id")
                    continue
                old = existing.get(item_id)
                if old is not None and old != row["content_hash"]:
                    raise _changed_item(item_id, golden_set, path, line)
                rows.append({**row, "line": line, "present": old is not None})
            staged.add(rows)
            batch.clear()

        for rec in read_records(path):
            item = parse_item(rec)
            row = _item_row(item)
            prior = batch.get(item.id)
            if prior is not None:
                if prior[1]["content_hash"] != row["content_hash"]:
                    raise rec.error(f"item id '{item.id}' appears twice with different content (first on line {prior[0]})",
                                    field="id", fix="give each item its own id")
            else:
                batch[item.id] = (rec.line, row)
            result.records += 1
            _tick(progress, result.records)
            if len(batch) >= BATCH:
                flush()
        flush()
        landed = store.land_items(staged, golden_set, is_demo=is_demo)
    if landed.conflict is not None:  # landed meanwhile from another import, with other content
        item_id, line = landed.conflict
        raise _changed_item(item_id, golden_set, path, line)
    result.added = landed.added
    result.unchanged = result.records - result.added
    result.details["write_lock_s"] = round(landed.lock_s, 3)
    return result


def _changed_item(item_id: str, golden_set: str, path: Path, line: int) -> InputError:
    return InputError(f"item id '{item_id}' is already in golden set '{golden_set}' with different content",
                      file=path.name, line=line, field="id", fix="give the changed item a new id, or remove the duplicate")


def _item_row(item: Item) -> dict:
    text = canonical_json(item.content())  # hashed as text: the same hash as sha256_hex(content), serialised once
    return {"item_id": item.id, "task_id": item.cluster, "category": item.category,
            "producer_model": item.producer.model if item.producer else None,
            "producer_family": item.producer.family if item.producer else None,
            "content": text, "content_hash": sha256_hex(text)}


def item_from_row(row: dict) -> Item:
    c = row["content"]
    producer = c.get("producer")
    return Item(id=row["item_id"], input=c["input"], task_id=c.get("task_id"), category=c.get("category", "default"),
                output=c.get("output"), trajectory=c.get("trajectory"),
                producer=Producer(**producer) if producer else None, reference=c.get("reference"),
                metadata=c.get("metadata") or {})


def load_items(store: Store, golden_set: str) -> list[Item]:
    gs = store.golden_set(golden_set)
    return [item_from_row(r) for r in store.items(gs["id"])]


# -- labels --------------------------------------------------------------------

def import_labels(store: Store, path: str | Path, golden_set: str, rubric: str, *,
                  progress: Progress | None = None) -> ImportResult:
    """Import labels: the file is validated first, then written in one short transaction."""
    path = Path(path)
    result = ImportResult(path.name)
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    pks = store.item_pks(gs["id"])  # items are never changed or removed: safe to read before the lock
    rows: list[dict] = []
    seen: dict[tuple[str, str], int] = {}
    for rec in read_records(path):
        label = parse_label(rec)
        pk = _item_pk(pks, label.item_id, rec, golden_set)
        _on_scale(rv, label.score, rec, "score")
        key = (label.item_id, label.rater)
        if key in seen:
            raise rec.error(f"rater '{label.rater}' labels item '{label.item_id}' twice (also line {seen[key]})",
                            field="rater", fix="keep one label per item and rater")
        seen[key] = rec.line
        rows.append({"item_pk": pk, "rater": label.rater, "rubric_name": rv.name, "rubric_id": rv.id,
                     "score": label.score, "rationale": label.rationale, "created_at": label.created_at,
                     "inclusion_probability": label.inclusion_probability})
        result.records += 1
        _tick(progress, result.records)
    with store.transaction():
        store.ensure_raters({r["rater"] for r in rows})
        n = store.count_label_events()
        store.upsert_labels(rows)
        result.added = store.count_label_events() - n
        active_store.record_inclusion(store, [r for r in rows if r["inclusion_probability"] is not None])
    result.unchanged = result.records - result.added
    return result


def _item_pk(pks: dict[str, int], item_id: str, rec, golden_set: str) -> int:
    pk = pks.get(item_id)
    if pk is None:
        raise rec.error(f"unknown item '{item_id}' in golden set '{golden_set}'", field="item_id",
                        fix="import the items first or correct the id")
    return pk


def _on_scale(rv: RubricVersion, score: int, rec, field_name: str) -> None:
    if (problem := rv.off_scale(score)) is not None:
        raise rec.error(problem, field=field_name, fix="use one of the scale's values")


def import_adjudications(store: Store, path: str | Path, golden_set: str, rubric: str) -> ImportResult:
    path = Path(path)
    result = ImportResult(path.name)
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    pks = store.item_pks(gs["id"])
    rows = []
    seen: dict[str, int] = {}
    for rec in read_records(path):
        a = parse_adjudication(rec)
        pk = _item_pk(pks, a["item_id"], rec, golden_set)
        if (first := seen.setdefault(a["item_id"], rec.line)) != rec.line:
            raise rec.error(f"item '{a['item_id']}' is adjudicated twice (also line {first})", field="item_id",
                            fix="keep one final label per item")
        _on_scale(rv, a["score"], rec, "score")
        rows.append({"item_pk": pk, "rubric_name": rv.name, "rubric_id": rv.id, "score": a["score"],
                     "note": a["note"], "lead": a["lead"], "created_at": a["created_at"]})
        result.records += 1
    with store.transaction():
        result.added = store.upsert_adjudications(rows)
    result.unchanged = result.records - result.added
    return result


def adjudicate(store: Store, golden_set: str, rubric: str, item_id: str, score: int, *, lead: str,
               note: str | None = None) -> None:
    """A lead's final label for an item; it overrides the raters' majority."""
    rv = get_rubric(store, rubric)
    rv.require_on_scale(score)
    with store.transaction():
        gs = store.golden_set(golden_set)
        item = store.item(gs["id"], item_id)
        store.upsert_adjudications([{"item_pk": item["pk"], "rubric_name": rv.name, "rubric_id": rv.id,
                                     "score": score, "note": note, "lead": lead, "created_at": None}])


# -- consensus -----------------------------------------------------------------

@dataclass(frozen=True)
class Consensus:
    """Per item: the consensus score (None = unresolved) and the raw human labels."""

    labels: dict[str, int | None]
    human: dict[str, dict[str, int]]  # item_id -> rater -> score
    adjudicated: dict[str, int]

    @property
    def unresolved(self) -> list[str]:
        return [i for i, s in self.labels.items() if s is None]

    @property
    def resolved(self) -> dict[str, int]:
        return {i: s for i, s in self.labels.items() if s is not None}


def consensus(store: Store, golden_set: str, rubric: str, *, gs: dict | None = None) -> Consensus:
    """Consensus of every labeled (or adjudicated) item of the golden set under a rubric.

    ``gs`` is the golden set's row when the caller has looked it up already.
    """
    gs = gs or store.golden_set(golden_set)
    human: dict[str, dict[str, int]] = defaultdict(dict)
    for item_id, rater, score in store.label_scores(gs["id"], rubric):
        human[item_id][rater] = score
    adjudicated = {r["item_id"]: r["score"] for r in store.adjudications(gs["id"], rubric)}
    ids = list(human) + [i for i in adjudicated if i not in human]
    labels = {i: consensus_label(human.get(i, {}).values(), adjudicated.get(i)) for i in ids}
    return Consensus(labels, dict(human), adjudicated)


# -- judgments -----------------------------------------------------------------

def import_judgments(store: Store, path: str | Path, golden_set: str, rubric: str, judge: str, *,
                     progress: Progress | None = None) -> ImportResult:
    """Judgments made elsewhere, for a judge declared in the rubric.

    Records without a 'run' go into one run named after the file's content
    hash, so importing the same file twice adds nothing.
    """
    path = Path(path)
    result = ImportResult(path.name)
    rv = get_rubric(store, rubric)
    spec = rv.rubric.judge(judge)
    file_hash = _file_sha256(path)
    gs = store.golden_set(golden_set)
    judge_row = store.judge_row(rv.id, spec.id)
    items = {r["item_id"]: r for r in store.item_index(gs["id"])}
    by_run: dict[str, list[dict]] = defaultdict(list)
    seen: dict[tuple, int] = {}
    n_steps: dict[str, int] = {}
    for rec in read_records(path):
        run, j = parse_judgment(rec)
        item = items.get(j.item_id)
        if item is None:
            raise rec.error(f"unknown item '{j.item_id}' in golden set '{golden_set}'", field="item_id",
                            fix="import the items first or correct the id")
        if j.score is not None:
            _on_scale(rv, j.score, rec, "score")
        if j.evidence_steps:
            if j.item_id not in n_steps:  # each item's content is read once, and only when steps are cited
                n_steps[j.item_id] = len(store.item(gs["id"], j.item_id)["content"].get("trajectory") or ())
            check_evidence_steps(rec, j, n_steps[j.item_id])
        run_name = run or f"import-{file_hash[:12]}"
        key = (run_name, j.item_id, j.repeat)
        if key in seen:
            raise rec.error(f"item '{j.item_id}' repeat {j.repeat} appears twice in run '{run_name}' "
                            f"(also line {seen[key]})", field="repeat", fix="number repeats 0, 1, 2, ...")
        seen[key] = rec.line
        by_run[run_name].append(_judgment_row(j, item, judge_row["config_hash"]))
        result.records += 1
        _tick(progress, result.records)
    with store.transaction():  # the file is validated: only the writes hold the lock
        for run_name, rows in by_run.items():
            run_id, _ = store.ensure_run(judge_row["pk"], gs["id"], source="import", name=run_name,
                                         params={"file": path.name}, status="done")
            for r in rows:
                r["run_id"] = run_id
            result.added += store.insert_judgments(rows)
    result.unchanged = result.records - result.added
    return result


def _judgment_row(j: Judgment, item: dict, config_hash: str) -> dict:
    return {"item_pk": item["pk"], "item_content_hash": item["content_hash"], "config_hash": config_hash,
            "repeat": j.repeat, "score": j.score, "unscored_reason": j.unscored_reason, "rationale": j.rationale,
            "evidence_steps": list(j.evidence_steps) or None, "trace": j.trace, "tokens_in": j.tokens_in,
            "tokens_out": j.tokens_out, "tokens_cached": j.tokens_cached, "cost_usd": j.cost_usd,
            "latency_ms": j.latency_ms, "model_version": j.model_version, "created_at": j.created_at}


def judgment_from_row(row: dict) -> Judgment:
    return Judgment(item_id=row["item_id"], score=row["score"], repeat=row["repeat"],
                    unscored_reason=row["unscored_reason"], rationale=row["rationale"],
                    evidence_steps=tuple(row["evidence_steps"] or ()), trace=row["trace"],
                    tokens_in=row["tokens_in"], tokens_out=row["tokens_out"], tokens_cached=row["tokens_cached"],
                    cost_usd=row["cost_usd"], latency_ms=row["latency_ms"], model_version=row["model_version"],
                    created_at=row["created_at"])


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# -- freeze and export ---------------------------------------------------------

def freeze(store: Store, golden_set: str, *, known: dict[str, Consensus] | None = None, gs: dict | None = None,
           index: list[dict] | None = None) -> dict:
    """Snapshot item ids, content hashes and consensus labels; the same state gives the same version.

    ``known`` holds consensus the caller has just computed (by rubric), ``gs`` the golden set's row and ``index``
    its item index (``Store.item_index``), so they are not read again.
    """
    gs = gs or store.golden_set(golden_set)
    version_hash, snapshot = current_snapshot(store, golden_set, known=known, gs=gs, index=index)
    row = store.insert_golden_set_version(gs["id"], version_hash, snapshot)
    return {"golden_set": golden_set, "version": row["version"], "hash": row["hash"], "n_items": len(snapshot["items"]),
            "rubrics": {r: {"labeled": len(v), "unresolved": sum(s is None for s in v.values())}
                        for r, v in snapshot["consensus"].items()}}


def current_snapshot(store: Store, golden_set: str, *, known: dict[str, Consensus] | None = None,
                     gs: dict | None = None, index: list[dict] | None = None) -> tuple[str, dict]:
    """(hash, snapshot) of the golden set as it is now, without recording a version (what freeze would record)."""
    gs = gs or store.golden_set(golden_set)
    items = [[r["item_id"], r["content_hash"]] for r in (store.item_index(gs["id"]) if index is None else index)]
    cons = {}
    for rubric in store.label_rubrics(gs["id"]):
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
        {"name": golden_set, "overlap": gs["overlap"], "synthetic_demo": bool(gs["is_demo"])}, sort_keys=False))
    counts["items.jsonl"] = write_jsonl(out / "items.jsonl",
                                        (item_from_row(r).to_dict() for r in store.items(gs["id"])))
    for rubric in store.label_rubrics(gs["id"]):
        inclusion = active_store.label_inclusion(store, gs["id"], rubric)  # labels served by the active queue
        labels = [{k: v for k, v in {"item_id": r["item_id"], "rater": r["rater"], "score": r["score"],
                                     "rationale": r["rationale"], "created_at": r["created_at"],
                                     "inclusion_probability": inclusion.get((r["item_id"], r["rater"]))}.items()
                   if v is not None} for r in store.labels(gs["id"], rubric)]
        counts[f"{rubric}/labels.jsonl"] = write_jsonl(safe_path(out, rubric, "labels.jsonl"), labels)
        adj = [{k: v for k, v in r.items() if k != "item_pk" and v is not None}
               for r in store.adjudications(gs["id"], rubric)]
        if adj:
            counts[f"{rubric}/adjudications.jsonl"] = write_jsonl(safe_path(out, rubric, "adjudications.jsonl"), adj)
    judges_seen: dict[tuple[str, str], int] = {}
    for run in store.runs(gs["id"]):
        judges_seen[(run["rubric_name"], run["judge_id"])] = run["judge_pk"]
    for (rubric, judge_id), judge_pk in judges_seen.items():
        rows = [judgment_to_dict(r["run_name"], judgment_from_row(r)) for r in store.judgments(gs["id"], judge_pk)]
        counts[f"{rubric}/judgments/{judge_id}.jsonl"] = write_jsonl(
            safe_path(out, rubric, "judgments", f"{judge_id}.jsonl"), rows)
    return counts


def list_golden_sets(store: Store) -> list[dict]:
    return store.golden_sets()


def show_golden_set(store: Store, golden_set: str) -> dict:
    gs = store.golden_set(golden_set)
    items = store.item_index(gs["id"])
    categories: dict[str, int] = defaultdict(int)
    families: dict[str, int] = defaultdict(int)
    for r in items:
        categories[r["category"]] += 1
        families[r["producer_family"] or "unknown"] += 1
    rubrics = {}
    for rubric in store.label_rubrics(gs["id"]):
        c = consensus(store, golden_set, rubric)
        per_item = [len(v) for v in c.human.values()]
        rubrics[rubric] = {"labeled_items": len(c.human), "labels": sum(per_item),
                           "raters": len({r for v in c.human.values() for r in v}),
                           "with_2_or_more": sum(n >= 2 for n in per_item),
                           "resolved": len(c.resolved), "unresolved": len(c.unresolved),
                           "adjudicated": len(c.adjudicated)}
    runs = [{"rubric": r["rubric_name"], "rubric_version": r["rubric_version"], "judge": r["judge_id"],
             "run": r["name"], "source": r["source"], "judgments": r["n_judgments"], "status": r["status"]}
            for r in store.runs(gs["id"])]
    return {"name": golden_set, "synthetic_demo": bool(gs["is_demo"]), "overlap": gs["overlap"], "items": len(items),
            "categories": dict(categories), "producer_families": dict(families), "rubrics": rubrics, "runs": runs,
            "versions": store.golden_set_versions(gs["id"])}
