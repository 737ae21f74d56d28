"""`workbench import --from SOURCE`: another eval tool's results, read, mapped onto the rubric's scale, landed whole.

The adapter (``workbench.features.interop``) reads the tool's records; every value is
mapped explicitly (``interop.mapping``); everything is validated before the
write lock is taken; then items (through the same staged path as
``import items``), labels, the judges the rubric does not declare yet (as a
new rubric version) and the judgments land in one transaction, so a bad
record anywhere leaves the database as it was. Each judge's judgments go into
a run named after a hash of their content (and of the source run they belong
to, when the source names one): importing the same results again adds nothing
and says so ("nothing new"), while a second run of the tool on the same items
becomes a second run of the judge.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit
from typing import Callable

from workbench.core.errors import ConfigError, InputError, NotFound
from workbench.core.formats import Record, parse_item, write_jsonl
from workbench.core.hashing import sha256_hex
from workbench.features.interop.base import (Adapter, LibraryMissing, SourceError, SourceItem, SourceJudgment,
    SourceLabel, Skipped, model_family, split_model)
from workbench.features.interop.registry import adapter_entry, get_adapter
from workbench.core.import_maps import UNSCORED, ImportMaps
from workbench.core.models import Item, JudgeSpec, Judgment, Label
from workbench.core.scale import Scale
from workbench.core.names import NAME_MAX, check_name
from workbench.store import Store, audit
from workbench.features.importing import service as importing
from workbench.calibration.golden_sets import ItemIndexRow, item_index, runs_of
from workbench.calibration.rubric_versions import RubricVersion, get_rubric, judge_row, register_rubric

Progress = Callable[[int], None]
PROGRESS_EVERY = 200


@dataclass
class JudgeImport:
    judge_id: str
    model: str
    declared: bool  # already in the rubric (else added by this import)
    read: int = 0
    added: int = 0
    unscored: int = 0
    held: int = 0  # verdicts the judge already held by the tool's own id (another export or pull brought them)
    run: str = ""


@dataclass
class InteropResult:
    source: str
    uri: str
    records: int = 0
    items_read: int = 0
    items_added: int = 0
    labels_read: int = 0
    labels_added: int = 0
    raters: list[str] = field(default_factory=list)
    judges: list[JudgeImport] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    rubric: str = ""
    rubric_version: int = 0
    golden_set: str = ""
    rubric_version_added: bool = False  # the import declared a judge by a new rubric version

    @property
    def nothing_new(self) -> bool:
        """True when the golden set held every item, label and judgment already: the import changed no row."""
        return not (self.items_added or self.labels_added or self.rubric_version_added
                    or any(j.added for j in self.judges))

    def summary_lines(self) -> list[str]:
        lines = [f"{self.source} {self.uri}: {self.records} records read; rubric {self.rubric} "
                 f"v{self.rubric_version}",
                 f"  items: {self.items_read} read, {self.items_added} added, "
                 f"{self.items_read - self.items_added} already present",
                 f"  labels: {self.labels_read} read, {self.labels_added} added or changed"
                 + (f" (raters: {', '.join(self.raters)})" if self.raters else "")]
        for j in self.judges:
            lines.append(f"  judgments of {j.judge_id} ({j.model}{'' if j.declared else ', added to the rubric'}): "
                         f"{j.read} read ({j.unscored} unscored), {j.added} added"
                         + (f", {j.held} held already (by {self.source}'s own ids)" if j.held else "")
                         + f", run {j.run}")
        if not self.judges:
            lines.append("  judgments: none")
        n = sum(self.skipped.values())
        lines.append(f"  skipped: {n}" + (" (" + ", ".join(f"{why}: {k}" for why, k in self.skipped.most_common())
                                          + ")" if n else ""))
        if self.nothing_new:
            lines.append(f"nothing new: golden set '{self.golden_set}' already holds every item, label and judgment "
                         "of this import")
        return lines


def import_from(store: Store, source: str, uri: str, golden_set: str, rubric: str, *, map_file: str | None = None,
                progress: Progress | None = None, adapter_options: dict | None = None, scorer: str | None = None,
                judge_per_scorer: bool = False) -> InteropResult:
    """Import a tool's results into a golden set under a rubric; all of it or nothing.

    ``adapter_options`` go to the adapter (e.g. an ``http_client`` for an adapter that pulls over HTTP).
    ``scorer`` imports only that scorer of an Inspect log, ``judge_per_scorer`` each scorer as its own judge (a
    log of two or more scorers is refused without one of them).
    """
    golden_set = check_name(golden_set, "golden set name")
    rv = get_rubric(store, rubric)
    scale = rv.rubric.scale
    maps = (ImportMaps.load(map_file, scale) if map_file
            else ImportMaps.parse(rv.rubric.import_maps, scale, f"rubric '{rv.name}' import_maps"))
    entry = adapter_entry(source)  # an unknown source is refused before its library is looked for
    if scorer is not None and judge_per_scorer:
        raise ConfigError("--scorer imports one scorer and --judge-per-scorer all of them: give one of the two")
    read_options = {k: v for k, v in (("scorer", scorer), ("judge_per_scorer", judge_per_scorer)) if v}
    result = InteropResult(source, str(uri), rubric=rv.name, golden_set=golden_set)
    try:
        adapter = get_adapter(source, **(adapter_options or {}))
        taken = getattr(adapter, "read_options", ())
        for option in read_options:
            if option not in taken:
                raise ConfigError(f"--{option.replace('_', '-')} is not an option of importing from {entry.title}, "
                                  "whose results name one judge per metric or score already; leave it out")
        if "rubric" in taken:  # an adapter that maps the tool's own pass/fail onto the scale (DeepEval's success)
            read_options["rubric"] = rv.rubric
        read = _read(source, adapter, uri, maps, result, progress, scale, read_options)
    except LibraryMissing:  # an adapter that needs its tool's library only for some inputs (Langfuse's pull)
        raise adapter_entry(source).library_missing() from None
    specs = _judge_specs(source, rv, read.judgments)
    new = [s for s in specs.values() if s.id not in {j.id for j in rv.rubric.judges}]
    result.items_read, result.labels_read = len(read.items), len(read.labels)
    result.raters = sorted({r for _, r in read.labels})
    with store.transaction():
        if read.items:
            result.items_added = _land_items(store, source, read.items, golden_set)
        target = rv
        if new:  # a judge the rubric does not declare: declared by a new rubric version (same content otherwise)
            target = register_rubric(store, dataclasses.replace(rv.rubric, judges=rv.rubric.judges + tuple(new)))
            result.rubric_version_added = True
        result.rubric_version = target.version
        try:
            gs_id: int | None = store.golden_set(golden_set).id
        except NotFound:  # verdicts without their items, into a new golden set: each is refused by its record
            gs_id = None
        index = {r.item_id: r for r in item_index(store, gs_id)} if gs_id is not None else {}
        if read.labels:
            result.labels_added = _land_labels(store, source, target, read.labels, index, golden_set)
            if result.labels_added:  # one audit entry for the import, in its transaction
                audit.record(store, actor=None, action="labels.imported", target=f"{golden_set}/{source}",
                             detail={"source": source, "from": _no_secrets(str(uri)), "rubric": f"{target.name}@v{target.version}",
                                     "labels": len(read.labels), "changed": result.labels_added})
        for key, rows in read.judgments.items():
            spec = specs[key]
            ji = JudgeImport(spec.id, spec.model, declared=spec not in new, read=len(rows),
                             unscored=sum(s is None for _, s, _ in rows))
            by_run: dict[str | None, list] = defaultdict(list)
            for row in rows:
                by_run[row[0].source_run].append(row)
            runs = []
            for run_rows in by_run.values():
                added, held, run = _land_judgments(store, source, target, spec, run_rows, index, gs_id, golden_set,
                                                   uri)
                ji.added += added
                ji.held += held
                runs.append(run)
            ji.run = ", ".join(runs)
            result.judges.append(ji)
    return result


@dataclass
class _Read:
    """A source's records, validated and mapped onto the scale, before anything is written."""

    items: dict[str, tuple[SourceItem, Item]] = field(default_factory=dict)
    labels: dict[tuple[str, str], tuple[SourceLabel, int]] = field(default_factory=dict)
    # (tool's judge name, grader model) -> [(record, score or None, unscored reason)]
    judgments: dict[tuple[str, str | None], list[tuple[SourceJudgment, int | None, str | None]]] = field(
        default_factory=lambda: defaultdict(list))


def _read(source: str, adapter: Adapter, uri: str, maps: ImportMaps, result: InteropResult,
          progress: Progress | None, scale: Scale, read_options: dict | None = None) -> _Read:
    # a refusal names the file: an export of one file is that file (one of several names its own already)
    file = Path(uri).name if "://" not in str(uri) and Path(uri).is_file() else None
    try:
        return _read_records(source, adapter, uri, maps, result, progress, scale, read_options, file)
    except SourceError as e:
        if file is None or e.source != source or e.record is None:
            raise
        raise SourceError(f"{source} {file}", e.record, e.problem, field=e.field, fix=e.fix) from None


def _read_records(source: str, adapter: Adapter, uri: str, maps: ImportMaps, result: InteropResult,
                  progress: Progress | None, scale: Scale, read_options: dict | None, file: str | None) -> _Read:
    read = _Read()
    carried: dict[str, ImportMaps] = {}
    seen_repeat: dict[tuple, int] = {}
    for rec in adapter.read(str(uri), **(read_options or {})):
        if file is not None and not isinstance(rec, Skipped) and rec.origin is None:
            rec = dataclasses.replace(rec, origin=file)
        result.records += 1
        if progress and result.records % PROGRESS_EVERY == 0:
            progress(result.records)
        if isinstance(rec, Skipped):
            result.skipped[rec.reason] += 1
            continue
        where = _where(source, rec)
        if isinstance(rec, SourceItem):
            item = _item(source, rec)
            prior = read.items.get(item.id)
            if prior is not None and prior[1].content_hash != item.content_hash:
                raise SourceError(where, rec.record, f"item '{item.id}' appears again with other content (first in "
                                  f"record {prior[0].record})", field="id", fix="give each item its own id")
            read.items.setdefault(item.id, (rec, item))
        elif isinstance(rec, SourceLabel):
            score = _maps_for(maps, carried, rec, where, scale).score(where, rec.record, rec.field, rec.name,
                                                                       rec.value)
            if score is UNSCORED:
                result.skipped["label mapped to unscored"] += 1
                continue
            _name(where, rec.record, rec.rater, "rater name", "rater")
            if (prior_label := read.labels.get((rec.item_id, rec.rater))) is not None:
                raise SourceError(where, rec.record, f"rater '{rec.rater}' labels item '{rec.item_id}' twice (also "
                                  f"record {prior_label[0].record})", field="rater",
                                  fix="keep one label per item and rater")
            read.labels[(rec.item_id, rec.rater)] = (rec, score)
        elif isinstance(rec, SourceJudgment):
            if rec.value is None:
                score, reason = None, rec.unscored_reason or "the source gives no score"
            else:
                mapped = _maps_for(maps, carried, rec, where, scale).score(where, rec.record, rec.field, rec.name,
                                                                           rec.value)
                score, reason = ((None, f"the import map sends {rec.value!r} to unscored") if mapped is UNSCORED
                                 else (mapped, None))
            key = (rec.judge, rec.model, rec.source_run, rec.item_id, rec.repeat)
            if key in seen_repeat:
                raise SourceError(where, rec.record, f"judge '{rec.judge}' grades item '{rec.item_id}' repeat "
                                  f"{rec.repeat} twice (also record {seen_repeat[key]})", field=rec.field,
                                  fix="keep one verdict per item and repeat")
            seen_repeat[key] = rec.record
            read.judgments[(rec.judge, rec.model)].append((rec, score, reason))
    if progress:
        progress(result.records)
    if not (read.items or read.labels or read.judgments):
        raise SourceError(source, None, f"{uri} holds nothing to import ({result.records} records read"
                          + (f", {sum(result.skipped.values())} skipped" if result.skipped else "") + ")",
                          fix="check that the file or URI is the tool's results export")
    return read


def _maps_for(maps: ImportMaps, carried: dict[str, ImportMaps], rec: SourceLabel | SourceJudgment, where: str,
              scale: Scale) -> ImportMaps:
    """The import's maps, or, for a name they do not map, the map the source record carries (checked once)."""
    if rec.carried_map is None or maps.for_name(rec.name) is not None:
        return maps
    key = json.dumps([rec.name, rec.carried_map], sort_keys=True, default=str)
    if key not in carried:
        try:
            carried[key] = ImportMaps.parse({rec.name: rec.carried_map}, scale, f"the scale {where} declares")
        except InputError as e:
            raise SourceError(where, rec.record, e.problem, field=rec.field,
                              fix="export the judge again from the workbench, or give --map") from None
    return carried[key]


def _where(source: str, rec: SourceItem | SourceLabel | SourceJudgment) -> str:
    """How an error names the source: the tool, and the file when its export spans several."""
    return f"{source} {rec.origin}" if rec.origin else source


def _item(source: str, rec: SourceItem) -> Item:
    try:
        return parse_item(Record(source, rec.record, rec.data))
    except InputError as e:
        raise SourceError(_where(source, rec), rec.record, e.problem, field=e.field, fix=e.fix) from None


def _name(source: str, record: int, value: str, what: str, field_name: str) -> str:
    try:
        return check_name(value, what)
    except InputError as e:
        raise SourceError(source, record, e.problem, field=field_name, fix=e.fix) from None


def _land_items(store: Store, source: str, items: dict[str, tuple[SourceItem, Item]], golden_set: str) -> int:
    """Through ``import items`` itself (staging, conflict checks), inside the caller's transaction."""
    items = _without_landed_with_run_metadata(store, items, golden_set)
    if not items:
        return 0
    records = [rec for rec, _ in items.values()]
    with tempfile.TemporaryDirectory(prefix="workbench-interop-") as tmp:
        path = Path(tmp) / f"{source}-items.jsonl"
        write_jsonl(path, (item.to_dict() for _, item in items.values()))
        try:
            return importing.import_items(store, path, golden_set).added
        except InputError as e:
            if e.file == path.name and e.line is not None:  # name the source record, not the temporary file
                rec = records[e.line - 1]
                raise SourceError(_where(source, rec), rec.record, e.problem, field=e.field, fix=e.fix) from None
            raise


def _without_landed_with_run_metadata(store: Store, items: dict[str, tuple[SourceItem, Item]],
                                      golden_set: str) -> dict[str, tuple[SourceItem, Item]]:
    """The items less those the golden set holds with some source run's metadata inside (``SourceItem.run_metadata``,
    as imports did before keeping it out, from this run or another): the same items, already present."""
    with_run = [item_id for item_id, (rec, _) in items.items() if rec.run_metadata]
    if not with_run:
        return items
    try:
        gs_id = store.golden_set(golden_set).id
    except NotFound:
        return items
    stored = store.item_hashes(gs_id, with_run)
    differ = [item_id for item_id in with_run if stored.get(item_id) not in (None, items[item_id][1].content_hash)]
    landed = {old.id for old in (store.items(gs_id, differ) if differ else [])
              if _without_metadata(old, items[old.id][0].run_metadata).content_hash == items[old.id][1].content_hash}
    return {k: v for k, v in items.items() if k not in landed}


def _without_metadata(item: Item, run_metadata: dict) -> Item:
    """The item less the keys of ``run_metadata`` in its metadata (one level of nesting: {"inspect": {...}})."""
    metadata = dict(item.metadata)
    for key, value in run_metadata.items():
        if isinstance(value, dict) and isinstance(metadata.get(key), dict):
            metadata[key] = {k: v for k, v in metadata[key].items() if k not in value}
        else:
            metadata.pop(key, None)
    return dataclasses.replace(item, metadata=metadata)


def _judge_specs(source: str, rv: RubricVersion,
                 judgments: dict[tuple[str, str | None], list]) -> dict[tuple[str, str | None], JudgeSpec]:
    """One judge per (tool's judge name, grader model); a judge the rubric already declares is used as declared.

    The id is `<source>.<judge>@<bare model>`; two graders of one bare model from different providers keep
    their provider in the id, so they stay two judges.
    """
    declared = {j.id: j for j in rv.rubric.judges}
    bare_ids = Counter()
    for judge, model in judgments:
        bare_ids[(judge, split_model(model)[1])] += 1
    specs = {}
    for judge, model in judgments:
        provider, bare = split_model(model)
        shown = (f"{provider}-{bare}" if bare_ids[(judge, bare)] > 1 and provider else bare)
        judge_id = _slug(f"{source}.{_slug(judge)}" + (f"@{_slug(shown)}" if shown else ""))
        specs[(judge, model)] = declared.get(judge_id) or JudgeSpec(
            id=judge_id, model=f"imported/{source}/{bare or 'unknown'}", family=model_family(provider))
    return specs


def _slug(text: str) -> str:
    slug = re.sub(r"\.\.+", ".", re.sub(r"[^A-Za-z0-9_.:@+\-]+", "-", text)).strip("-.") or "judge"
    if not re.match(r"[A-Za-z0-9_]", slug):
        slug = "_" + slug
    return slug if len(slug) <= NAME_MAX else slug[:NAME_MAX - 13] + "-" + sha256_hex(text)[:12]


def _no_secrets(uri: str) -> str:
    """What the audit log says an import came from: a file's name, or a server's address without credentials or
    query (an API key never reaches the database).

    >>> _no_secrets("https://pk:sk@cloud.langfuse.com/api?key=x"), _no_secrets("/tmp/run/logs.eval")
    ('https://cloud.langfuse.com/api', 'logs.eval')
    """
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https") and parts.hostname:
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{parts.hostname}{port}{parts.path}"
    return Path(uri).name or uri


def _land_labels(store: Store, source: str, rv: RubricVersion, labels: dict, index: dict, golden_set: str) -> int:
    pks, rows = {}, []
    for (item_id, rater), (rec, score) in labels.items():
        pks[item_id] = _item_row(source, rec, item_id, index, golden_set).pk
        rows.append(Label(item_id, rater, score, rec.rationale, rec.created_at))
    return store.upsert_labels(rv.name, rv.id, rows, pks)


def _item_row(source: str, rec: SourceLabel | SourceJudgment, item_id: str, index: dict[str, ItemIndexRow],
              golden_set: str) -> ItemIndexRow:
    item = index.get(item_id)
    if item is None:
        raise SourceError(_where(source, rec), rec.record, f"refers to item '{item_id}', which is neither in this "
                          f"import nor in golden set '{golden_set}'", field="item_id",
                          fix="import the items first, or include the traces/samples in the export")
    return item


def _land_judgments(store: Store, source: str, rv: RubricVersion, spec: JudgeSpec, rows: list, index: dict,
                    gs_id: int, golden_set: str, uri: str) -> tuple[int, int, str]:
    """Land one source run's verdicts of a judge: (verdicts added, verdicts the judge held already by the tool's
    id, the run's name)."""
    row = judge_row(store, rv.id, spec.id)
    rows, known = _new_by_tool_id(store, source, row.pk, rows)
    if not rows:  # every verdict landed before, from another export or pull: the run that holds the first
        return 0, len(known), next(iter(known.values()))
    judgments = []
    for rec, score, reason in rows:
        _item_row(source, rec, rec.item_id, index, golden_set)  # refuses an unknown item
        judgments.append(Judgment(item_id=rec.item_id, score=score, repeat=rec.repeat, unscored_reason=reason,
                                  rationale=rec.rationale, tokens_in=rec.extra.get("tokens_in"),
                                  tokens_out=rec.extra.get("tokens_out"), cost_usd=rec.extra.get("cost_usd"),
                                  latency_ms=rec.extra.get("latency_ms"), model_version=rec.model_version,
                                  created_at=rec.created_at))
    # the run is named by what it holds: the same results imported again land in the same run and add nothing
    held = [[index[j.item_id].content_hash, j.repeat, j.score, j.unscored_reason, j.rationale] for j in judgments]
    source_run = rows[0][0].source_run  # two source runs with the same verdicts stay two runs
    digest = sha256_hex(held if source_run is None else [source_run] if rows[0][0].run_grows else [source_run, held])
    run = f"{source}-{digest[:12]}"
    if source_run is not None:  # this file landed before its source run was told apart: named by the verdicts
        legacy = f"{source}-{sha256_hex(held)[:12]}"
        if any(r.name == legacy and r.params.get("uri") == str(uri) for r in runs_of(store, gs_id, row.pk)):
            run = legacy
    run_id, _ = store.ensure_run(row.pk, gs_id, source="import", name=run,
                                 params={"source": source, "uri": str(uri)}, status="done")
    judged = {i: {"pk": r.pk, "content_hash": r.content_hash} for i, r in index.items()}
    added = store.insert_judgments(run_id, row.config_hash, judgments, judged)
    store.record_imported_verdicts(row.pk, source, run_id, [(rec.source_id, judged[j.item_id]["pk"], j.repeat)
                                                            for (rec, _, _), j in zip(rows, judgments) if rec.source_id])
    return added, len(known), run


def _new_by_tool_id(store: Store, source: str, judge_pk: int, rows: list) -> tuple[list, dict[str, str]]:
    """The rows whose tool id the judge does not hold yet, and the known ids (tool id -> run). Where some were
    known, each item's remaining verdicts are numbered 0, 1, ... again in their order, as a pull that brought only
    them would number them (they land in a run of their own; a run that grows keeps the source's numbers)."""
    known = store.imported_verdict_runs(judge_pk, source, [rec.source_id for rec, _, _ in rows if rec.source_id])
    fresh = [r for r in rows if r[0].source_id not in known]
    if not known or not fresh or fresh[0][0].run_grows:  # a growing run keeps its (item, repeat) keys as they were
        return fresh, known
    by_item: dict[str, int] = defaultdict(int)
    out = []
    for rec, score, reason in sorted(fresh, key=lambda r: (r[0].item_id, r[0].repeat)):
        out.append((dataclasses.replace(rec, repeat=by_item[rec.item_id]), score, reason))
        by_item[rec.item_id] += 1
    return out, known
