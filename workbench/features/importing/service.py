"""Importing into a golden set: items, labels, adjudications and judgments made elsewhere.

Every import lands whole or not at all: a bad record anywhere leaves the
database exactly as it was, and re-importing the same file changes nothing.
Files are read and validated before the write lock is taken, so an import
holds it only briefly and reviewers and runs keep writing meanwhile.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from workbench.core.errors import InputError, NotFound
from workbench.core.formats import (Record, check_evidence_steps, check_step, parse_adjudication, parse_item,
    parse_judgment, parse_label, read_records)
from workbench.core.models import Judgment, Label
from workbench.core.names import check_name
from workbench.core.scale import Scale
from workbench.store import Store, audit, staging
from workbench.store.mapping import item_row
from workbench.calibration.golden_sets import ItemIndexRow
from workbench.calibration.rubric_versions import get_rubric, get_rubric_ref, judge_row
from workbench.features.importing.records import ItemColumns, ParsedAdjudication
from workbench.features.people.raters import add_new_raters, raters_of_import

Progress = Callable[[int], None]
BATCH = 1000


@dataclass
class ImportResult:
    file: str
    records: int = 0
    added: int = 0
    unchanged: int = 0
    write_lock_s: float | None = None  # how long the items' landing held the write lock

    @property
    def details(self) -> dict:
        return {} if self.write_lock_s is None else {"write_lock_s": self.write_lock_s}

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
        gs_id: int | None = store.golden_set(golden_set).id
    except NotFound:
        gs_id = None  # created when the items land
    with staging.StagedItems() as staged:
        if gs_id is not None:
            staged.check_against(store, gs_id)
        batch: dict[str, tuple[int, dict, str]] = {}  # item_id -> (line, row, content hash)

        def flush() -> None:
            ids = list(batch)
            earlier = staged.earlier(ids)
            existing = store.item_hashes(gs_id, ids) if gs_id is not None else {}
            rows = []
            for item_id, (line, row, content_hash) in batch.items():
                if (prior := earlier.get(item_id)) is not None:
                    if prior[1] != content_hash:
                        raise InputError(f"item id '{item_id}' appears twice with different content (first on line "
                                         f"{prior[0]})", file=path.name, line=line, field="id",
                                         fix="give each item its own id")
                    continue
                old = existing.get(item_id)
                if old is not None and old != content_hash:
                    raise _changed_item(item_id, golden_set, path, line)
                rows.append({**row, "line": line, "present": old is not None})
            staged.add(rows)
            batch.clear()

        for rec in read_records(path):
            item = parse_item(rec)
            row = item_row(item)
            content_hash = ItemColumns(**row).content_hash
            prior = batch.get(item.id)
            if prior is not None:
                if prior[2] != content_hash:
                    raise rec.error(f"item id '{item.id}' appears twice with different content (first on line {prior[0]})",
                                    field="id", fix="give each item its own id")
            else:
                batch[item.id] = (rec.line, row, content_hash)
            result.records += 1
            _tick(progress, result.records)
            if len(batch) >= BATCH:
                flush()
        flush()
        landed = staging.land_items(store, staged, golden_set, is_demo=is_demo)
    if landed.conflict is not None:  # landed meanwhile from another import, with other content
        item_id, line = landed.conflict
        raise _changed_item(item_id, golden_set, path, line)
    result.added = landed.added
    result.unchanged = result.records - result.added
    result.write_lock_s = round(landed.lock_s, 3)
    return result


def _changed_item(item_id: str, golden_set: str, path: Path, line: int) -> InputError:
    return InputError(f"item id '{item_id}' is already in golden set '{golden_set}' with different content",
                      file=path.name, line=line, field="id", fix="give the changed item a new id, or remove the duplicate")


# -- labels --------------------------------------------------------------------

def import_labels(store: Store, path: str | Path, golden_set: str, rubric: str, *,
                  progress: Progress | None = None, actor: str | None = None,
                  new_raters: bool = True) -> ImportResult:
    """Import labels: the file is validated first, then written in one short transaction, with one audit entry
    (under ``actor``: the UI's user, else the command line's) naming the file, what it changed and whose labels.

    Each ``rater`` value that is a known rater's email (any case) or name is that rater. Any other value is a new
    reviewer with ``new_raters``; without it (the command line's and the Import page's default) the file is refused
    by a sentence naming the line, the value and the known raters, and nothing is written.
    """
    path = Path(path)
    result = ImportResult(path.name)
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    pks = store.item_pks(gs.id)  # items are never changed or removed: safe to read before the lock
    parsed: list[tuple[Label, int]] = []
    first_line: dict[str, int] = {}
    n_steps = _StepCounter(store, gs.id)
    for rec in read_records(path):
        label = parse_label(rec, rv.rubric.scale, scale_of=f"rubric '{rv.name}'")
        _item_pk(pks, label.item_id, rec, golden_set)
        if label.step is not None:
            check_step(rec, label.item_id, label.step, n_steps(label.item_id))
        first_line.setdefault(label.rater, rec.line)
        parsed.append((label, rec.line))
        result.records += 1
        _tick(progress, result.records)
    with store.transaction():  # one short transaction: new raters, the labels and their audit entry
        named = raters_of_import(store, first_line, file=path.name, new_raters=new_raters)
        new = add_new_raters(store, [v for v, n in named.items() if n is None])
        named.update(new)
        labels = _one_label_per_person(parsed, named, path.name)
        before = store.count_label_events()
        result.added = store.upsert_labels(rv.name, rv.id, labels, pks)
        if result.added:
            audit.record(store, actor=actor, action="labels.imported", target=f"{golden_set}/{path.name}",
                         detail={"file": path.name, "rubric": f"{rv.name}@v{rv.version}", "labels": result.records,
                                 "changed": result.added, "raters": store.label_events_by_rater(since=before),
                                 **({"new_raters": sorted(set(new.values()))} if new else {})})
    result.unchanged = result.records - result.added
    return result


def _one_label_per_person(parsed: list[tuple[Label, int]], named: dict[str, str], file: str) -> list[Label]:
    """The labels under their raters' names, refusing a person who labels an item twice (under one value or two:
    'alice' and 'alice@example.com' are one person)."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for label, line in parsed:
        label = replace(label, rater=named[label.rater])
        key = (label.item_id, label.rater)
        if key in seen:
            raise InputError(f"rater '{label.rater}' labels item '{label.item_id}' twice (also line {seen[key]})",
                             file=file, line=line, field="rater", fix="keep one label per item and rater")
        seen[key] = line
        out.append(label)
    return out


class _StepCounter:
    """The number of steps of each item, read once per item and only for records that name a step."""

    def __init__(self, store: Store, golden_set_id: int):
        self._store, self._gs, self._n = store, golden_set_id, {}

    def __call__(self, item_id: str) -> int:
        if item_id not in self._n:
            self._n[item_id] = len(self._store.item(self._gs, item_id).trajectory or ())
        return self._n[item_id]


def _item_pk(pks: dict[str, int], item_id: str, rec, golden_set: str) -> int:
    pk = pks.get(item_id)
    if pk is None:
        raise rec.error(f"unknown item '{item_id}' in golden set '{golden_set}'", field="item_id",
                        fix="import the items first or correct the id")
    return pk


def import_adjudications(store: Store, path: str | Path, golden_set: str, rubric: str, *,
                         actor: str | None = None) -> ImportResult:
    path = Path(path)
    result = ImportResult(path.name)
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    pks = store.item_pks(gs.id)
    rows = []
    seen: dict[str, int] = {}
    for rec in read_records(path):
        a = ParsedAdjudication(**parse_adjudication(rec, rv.rubric.scale, scale_of=f"rubric '{rv.name}'"))
        pk = _item_pk(pks, a.item_id, rec, golden_set)
        if (first := seen.setdefault(a.item_id, rec.line)) != rec.line:
            raise rec.error(f"item '{a.item_id}' is adjudicated twice (also line {first})", field="item_id",
                            fix="keep one final label per item")
        rows.append(a.row(pk, rv.name, rv.id))
        result.records += 1
    with store.transaction():
        result.added = store.upsert_adjudications(rows)
        if result.added:
            audit.record(store, actor=actor, action="adjudications.imported", target=f"{golden_set}/{path.name}",
                         detail={"file": path.name, "rubric": f"{rv.name}@v{rv.version}",
                                 "adjudications": result.records, "changed": result.added})
    result.unchanged = result.records - result.added
    return result


# -- judgments -----------------------------------------------------------------

def import_judgments(store: Store, path: str | Path, golden_set: str, rubric: str, judge: str, *,
                     progress: Progress | None = None) -> ImportResult:
    """Judgments made elsewhere, for a judge declared in the rubric (``NAME@vN``: in version N of it).

    Records without a 'run' go into one run named after the file's content
    hash, so importing the same file twice adds nothing.
    """
    path = Path(path)
    result = ImportResult(path.name)
    rv = get_rubric_ref(store, rubric)  # NAME: the current version; NAME@vN: version N (the demo's own, re-seeded)
    spec = rv.rubric.judge(judge)
    file_hash = _file_sha256(path)
    gs = store.golden_set(golden_set)
    row = judge_row(store, rv.id, spec.id)
    items = {ItemIndexRow(**r).item_id: r for r in store.item_index(gs.id)}  # rows as the store writes from them
    by_run: dict[str, list[Judgment]] = defaultdict(list)
    seen: dict[tuple, int] = {}
    n_steps: dict[str, int] = {}
    steps_of = _StepCounter(store, gs.id)
    for rec in read_records(path):
        run, j = parse_judgment_with_confidence(rec, rv.rubric.scale, scale_of=f"rubric '{rv.name}'")
        item = items.get(j.item_id)
        if item is None:
            raise rec.error(f"unknown item '{j.item_id}' in golden set '{golden_set}'", field="item_id",
                            fix="import the items first or correct the id")
        if j.evidence_steps:
            if j.item_id not in n_steps:  # each item's content is read once, and only when steps are cited
                n_steps[j.item_id] = len(store.item(gs.id, j.item_id).trajectory or ())
            check_evidence_steps(rec, j, n_steps[j.item_id])
        if j.step is not None:
            check_step(rec, j.item_id, j.step, steps_of(j.item_id))
        run_name = run or f"import-{file_hash[:12]}"
        key = (run_name, j.item_id, j.repeat)
        if key in seen:
            raise rec.error(f"item '{j.item_id}' repeat {j.repeat} appears twice in run '{run_name}' "
                            f"(also line {seen[key]})", field="repeat", fix="number repeats 0, 1, 2, ...")
        seen[key] = rec.line
        by_run[run_name].append(j)
        result.records += 1
        _tick(progress, result.records)
    with store.transaction():  # the file is validated: only the writes hold the lock
        for run_name, judgments in by_run.items():
            run_id, _ = store.ensure_run(row.pk, gs.id, source="import", name=run_name,
                                         params={"file": path.name}, status="done")
            result.added += store.insert_judgments(run_id, row.config_hash, judgments, items)
    result.unchanged = result.records - result.added
    return result


def parse_judgment_with_confidence(rec: Record, scale: Scale | None = None, *,
                                   scale_of: str = "the rubric") -> tuple[str | None, Judgment]:
    """A judgment record that may carry the judge's ``confidence`` (0..1; selective judging keeps an item when it
    reaches the threshold): read and checked here, the rest by ``parse_judgment``. Absent stays None."""
    value = rec.data.get("confidence")
    rest = Record(rec.file, rec.line, {k: v for k, v in rec.data.items() if k != "confidence"}, rec.from_csv)
    run, j = parse_judgment(rest, scale, scale_of=scale_of)
    if value is None or value == "":  # a CSV's empty cell is no confidence
        return run, j
    try:
        if isinstance(value, bool):
            raise ValueError
        confidence = float(value)
    except (TypeError, ValueError):
        raise rec.error(f"must be a number from 0 to 1, got {json.dumps(value)[:40]}", field="confidence",
                        fix="write the judge's confidence as a number from 0 to 1, or leave the field out") from None
    if not 0 <= confidence <= 1:  # NaN fails this too
        raise rec.error(f"is {value}, not a number from 0 to 1", field="confidence",
                        fix="write the judge's confidence as a share from 0 to 1 (not a percentage), or leave it out")
    return run, replace(j, confidence=confidence)


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
