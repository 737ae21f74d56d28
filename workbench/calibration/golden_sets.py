"""Golden sets: listing and showing them, their items, consensus labels and a lead's adjudication.

Importing into a golden set is ``services/importing.py``; its frozen versions
and its export to files are ``services/snapshots.py``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from workbench.core.consensus import consensus_label
from workbench.core.errors import NotFound
from workbench.core.models import GoldenSetRecord, Item
from workbench.store import Store, audit
from workbench.calibration.rubric_versions import get_rubric


# -- rows of the store, typed where they are read -------------------------------

@dataclass(frozen=True, slots=True)
class ItemIndexRow:
    """An item without its content (``Store.item_index``): what statistics, snapshots and counts read."""

    pk: int
    item_id: str
    task_id: str | None
    category: str
    producer_model: str | None
    producer_family: str | None
    content_hash: str


@dataclass(frozen=True, slots=True)
class LabelRow:
    """A reviewer's label of an item (``Store.labels``)."""

    item_id: str
    item_pk: int
    rater: str
    score: int
    rationale: str | None
    created_at: str
    updated_at: str | None
    step: int | None = None  # the decisive error step the reviewer marked (features/steps)
    agent: str | None = None

    def to_json(self, inclusion_probability: float | None = None) -> dict[str, Any]:
        """The labels.jsonl record (with the active queue's inclusion probability), without fields that are None."""
        return {k: v for k, v in {"item_id": self.item_id, "rater": self.rater, "score": self.score,
                                  "rationale": self.rationale, "created_at": self.created_at,
                                  "inclusion_probability": inclusion_probability, "step": self.step,
                                  "agent": self.agent}.items() if v is not None}


@dataclass(frozen=True, slots=True)
class AdjudicationRow:
    """A lead's final label of an item (``Store.adjudications``)."""

    item_id: str
    item_pk: int
    score: int
    note: str | None
    lead: str
    created_at: str

    def to_json(self) -> dict[str, Any]:
        """The adjudications.jsonl record: the fields that import back, without the ones that are None."""
        return {k: v for k, v in {"item_id": self.item_id, "score": self.score, "note": self.note, "lead": self.lead,
                                  "created_at": self.created_at}.items() if v is not None}


@dataclass(frozen=True, slots=True)
class ItemLabel:
    """A reviewer's label of one item, with its rationale (``Store.item_labels``)."""

    rater: str
    score: int
    rationale: str | None
    created_at: str
    updated_at: str | None


@dataclass(frozen=True, slots=True)
class ItemAdjudication:
    """A lead's final label of one item, with the note (``Store.item_adjudication``)."""

    score: int
    note: str | None
    lead: str
    created_at: str


@dataclass(frozen=True, slots=True)
class RunRow:
    """A judge's calibration run on a golden set (``Store.runs``), with its judge, rubric version and count."""

    id: int
    judge_pk: int
    golden_set_id: int
    source: str
    name: str
    status: str
    params: dict[str, Any]
    started_at: str
    finished_at: str | None
    probe: str | None
    judge_id: str
    config_hash: str
    rubric_name: str
    rubric_version: int
    n_judgments: int


@dataclass(frozen=True, slots=True)
class GoldenSetVersion:
    """A frozen version of a golden set (``Store.golden_set_versions``)."""

    id: int
    version: int
    hash: str
    created_at: str

    @classmethod
    def from_row(cls, row: dict) -> GoldenSetVersion:
        """From a version row, also the whole one ``Store.insert_golden_set_version`` returns (its snapshot and
        golden set id are not kept)."""
        return cls(**{k: v for k, v in row.items() if k not in ("golden_set_id", "snapshot")})


@dataclass(frozen=True, slots=True)
class GoldenSetSummary:
    """A golden set with its counts (``Store.golden_sets``), as ``golden-set list`` prints it."""

    id: int
    name: str
    overlap: int
    is_demo: int
    created_at: str
    n_items: int
    n_labels: int
    n_raters: int
    n_judgments: int
    latest_version: int | None


def item_index(store: Store, golden_set_id: int) -> list[ItemIndexRow]:
    return [ItemIndexRow(**r) for r in store.item_index(golden_set_id)]


def runs_of(store: Store, golden_set_id: int, judge_pk: int | None = None) -> list[RunRow]:
    """The judge's (without ``judge_pk``: every judge's) calibration runs on the golden set, oldest first."""
    return [RunRow(**r) for r in store.runs(golden_set_id, judge_pk)]


def label_rows(store: Store, golden_set_id: int, rubric: str) -> list[LabelRow]:
    return [LabelRow(**r) for r in store.labels(golden_set_id, rubric)]


def adjudications(store: Store, golden_set_id: int, rubric: str) -> list[AdjudicationRow]:
    return [AdjudicationRow(**r) for r in store.adjudications(golden_set_id, rubric)]


def load_items(store: Store, golden_set: str) -> list[Item]:
    return store.items(store.golden_set(golden_set).id)


def item_pk(store: Store, gs: GoldenSetRecord, item_id: str) -> int:
    """The row id of the golden set's item (``gs``: its row), which labels and adjudications point to."""
    pk = store.item_pk(gs.id, item_id)
    if pk is None:
        raise NotFound(f"golden set '{gs.name}' has no item '{item_id}'")
    return pk


def adjudicate(store: Store, golden_set: str, rubric: str, item_id: str, score: int, *, lead: str,
               note: str | None = None) -> None:
    """A lead's final label for an item; it overrides the raters' majority. The lead is its audit entry's actor
    (written in the same transaction, only when the final label changed)."""
    rv = get_rubric(store, rubric)
    rv.require_on_scale(score)
    with store.transaction():
        pk = item_pk(store, store.golden_set(golden_set), item_id)
        changed = store.upsert_adjudications([{"item_pk": pk, "rubric_name": rv.name, "rubric_id": rv.id,
                                               "score": score, "note": note, "lead": lead, "created_at": None}])
        if changed:
            audit.record(store, actor=lead, action="adjudication.saved", target=f"{golden_set}/{item_id}",
                         detail={"rubric": f"{rv.name}@v{rv.version}", "score": score, "note": note})


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

    def without(self, raters: tuple[str, ...]) -> Consensus:
        """The consensus with these raters' labels left out (``calibrate --exclude-rater``): each item's label is
        the adjudicated one, else the strict majority of the labels that remain; an item left with no label and no
        adjudication is dropped."""
        gone = set(raters)
        human = {i: kept for i, by in self.human.items() if (kept := {r: s for r, s in by.items() if r not in gone})}
        ids = list(human) + [i for i in self.adjudicated if i not in human]
        return Consensus({i: consensus_label(human.get(i, {}).values(), self.adjudicated.get(i)) for i in ids}, human,
                         self.adjudicated)

    def label_counts(self) -> dict[str, int]:
        """Labels held by each rater."""
        counts: dict[str, int] = defaultdict(int)
        for by in self.human.values():
            for r in by:
                counts[r] += 1
        return dict(counts)


def consensus(store: Store, golden_set: str, rubric: str, *, gs: GoldenSetRecord | None = None) -> Consensus:
    """Consensus of every labeled (or adjudicated) item of the golden set under a rubric.

    ``gs`` is the golden set's row when the caller has looked it up already.
    """
    gs = gs or store.golden_set(golden_set)
    human: dict[str, dict[str, int]] = defaultdict(dict)
    for item_id, rater, score in store.label_scores(gs.id, rubric):
        human[item_id][rater] = score
    adjudicated = {r.item_id: r.score for r in adjudications(store, gs.id, rubric)}
    ids = list(human) + [i for i in adjudicated if i not in human]
    labels = {i: consensus_label(human.get(i, {}).values(), adjudicated.get(i)) for i in ids}
    return Consensus(labels, dict(human), adjudicated)


def list_golden_sets(store: Store) -> list[dict]:
    return store.golden_sets()


def golden_set_summaries(store: Store) -> list[GoldenSetSummary]:
    return [GoldenSetSummary(**r) for r in store.golden_sets()]


@dataclass(frozen=True, slots=True)
class RubricLabels:
    """How far labeling of a golden set under a rubric has come."""

    labeled_items: int
    labels: int
    raters: int
    with_2_or_more: int
    resolved: int
    unresolved: int
    adjudicated: int


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A judge's run as ``golden-set show`` lists it."""

    rubric: str
    rubric_version: int
    judge: str
    run: str
    source: str
    judgments: int
    status: str


@dataclass(frozen=True, slots=True)
class GoldenSetOverview:
    """``golden-set show``: a golden set's items by category and producer, its labels per rubric, runs, versions."""

    name: str
    synthetic_demo: bool
    overlap: int
    items: int
    categories: dict[str, int]
    producer_families: dict[str, int]
    rubrics: dict[str, RubricLabels]
    runs: list[RunSummary]
    versions: list[GoldenSetVersion]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def golden_set_overview(store: Store, golden_set: str) -> GoldenSetOverview:
    gs = store.golden_set(golden_set)
    items = item_index(store, gs.id)
    categories: dict[str, int] = defaultdict(int)
    families: dict[str, int] = defaultdict(int)
    for r in items:
        categories[r.category] += 1
        families[r.producer_family or "unknown"] += 1
    rubrics = {}
    for rubric in store.label_rubrics(gs.id):
        c = consensus(store, golden_set, rubric)
        per_item = [len(v) for v in c.human.values()]
        rubrics[rubric] = RubricLabels(len(c.human), sum(per_item), len({r for v in c.human.values() for r in v}),
                                       sum(n >= 2 for n in per_item), len(c.resolved), len(c.unresolved),
                                       len(c.adjudicated))
    runs = [RunSummary(r.rubric_name, r.rubric_version, r.judge_id, r.name, r.source, r.n_judgments, r.status)
            for r in runs_of(store, gs.id)]
    return GoldenSetOverview(golden_set, bool(gs.is_demo), gs.overlap, len(items), dict(categories), dict(families),
                             rubrics, runs, [GoldenSetVersion.from_row(v) for v in store.golden_set_versions(gs.id)])


def show_golden_set(store: Store, golden_set: str) -> dict:
    """:func:`golden_set_overview` as the JSON object ``golden-set show --json`` prints."""
    return golden_set_overview(store, golden_set).to_json()
