"""Reviewer labeling: the queue, saving one label at a time, skipping, flagging, adjudication lists.

(Raters and their roles: ``raters.py``; every saved or changed label is written to the audit log in the save's
transaction; blind-review masking: ``services/masking.py``.)

A save is one upsert by (item, rater, rubric) inside BEGIN IMMEDIATE, so a
double click, a rerun or two tabs give one label, and every change is kept in
label_events by the database's own triggers.

The queue gives each reviewer the items that still need labels under the
golden set's overlap and that they have not labeled, skipped or flagged, in an
order that is random per reviewer but stable (a hash of rater and item). The
item shown is reserved for a while; reading the free slots and claiming one
happen in one BEGIN IMMEDIATE transaction, so two reviewers never take the
same last slot. What a reviewer receives is blind: task, trajectory, output
and reference only, never the producing model, metadata or judgments, and
every model, family or maker name in them masked (``services/masking.py``).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Callable

from workbench.core.errors import InputError, NotFound
from workbench.core.models import GoldenSetRecord, Label
from workbench.core.scale import Scale
from workbench.store import Store
from workbench.store import active_queue as q
from workbench.store import audit
from workbench.features.labeling import masking as masking_service
from workbench.calibration.golden_sets import consensus, item_pk, label_rows
from workbench.features.labeling.assignment import dealt_to
from workbench.features.labeling.gold import gold_turn
from workbench.features.labeling.masking import Masking
from workbench.features.people.raters import local_rater, refuse_removed
from workbench.calibration.rubric_versions import get_rubric, rubric_summaries
from workbench.features.labeling.records import HeldItem, ItemFlag, StoredBlindItem

RESERVATION_TTL = timedelta(minutes=10)
FLAG_KINDS = ("broken item", "unsure")


def _iso(at: datetime | None) -> str:
    return (at or datetime.now(timezone.utc)).astimezone(timezone.utc).isoformat(timespec="milliseconds")


# -- saving --------------------------------------------------------------------

def rationale_required(scale: Scale, score: int) -> bool:
    """A rationale is required for the lowest and the highest value of the scale.

    >>> from workbench.core.scale import DEFAULT_SCALE
    >>> [rationale_required(DEFAULT_SCALE, v) for v in (-1, 0, 1)]
    [True, False, True]
    """
    return score in (scale.values[0], scale.values[-1])


def submit_label(store: Store, golden_set: str, rubric: str, item_id: str, rater: str, score: int,
                 rationale: str | None = None) -> bool:
    """The reviewer's save: check the rationale rule, upsert the label, free the reservation; one transaction.

    Returns True when the label was inserted or changed (False: the same label
    was already stored, e.g. a double click).
    """
    rv = get_rubric(store, rubric)
    rv.require_on_scale(score)
    rater = local_rater(store, rater)  # an email or a merged name is the rater it names
    rationale = (rationale or "").strip() or None
    if rationale is None and rationale_required(rv.rubric.scale, score):
        raise InputError(f"a rationale is required for '{rv.rubric.scale.label_of(score)}' ({score:+d})",
                         fix="write why in the rationale box, then press the key again")
    with store.transaction():
        refuse_removed(store, rater)
        gs = store.golden_set(golden_set)
        pk = item_pk(store, gs, item_id)
        before = store.labeling.rater_label(pk, rv.name, rater)
        changed = store.upsert_labels(rv.name, rv.id, [Label(item_id, rater, score, rationale)], {item_id: pk}) > 0
        if changed:  # the label and its audit entry land together, or neither does
            audit.record(store, actor=rater, action="label.changed" if before else "label.saved",
                         target=f"{gs.name}/{item_id}",
                         detail={"rubric": f"{rv.name}@v{rv.version}", "score": score, "rationale": rationale,
                                 **({"old_score": before.get("score")} if before else {})})
        record_served(store, gs, pk, rv.name, rater)  # the item's inclusion probability, if active
        store.labeling.release(pk, rv.name, rater)
        return changed


def set_aside(store: Store, golden_set: str, rubric: str, item_id: str, rater: str, kind: str = "skip",
              note: str | None = None) -> None:
    """Skip or flag an item ('broken item', 'unsure'): it leaves this rater's queue and its slot is freed."""
    if kind not in ("skip", *FLAG_KINDS):
        raise InputError(f"unknown flag '{kind}'", fix=f"use one of: skip, {', '.join(FLAG_KINDS)}")
    rv = get_rubric(store, rubric)
    rater = local_rater(store, rater)
    with store.transaction():
        gs = store.golden_set(golden_set)
        pk = item_pk(store, gs, item_id)
        note = (note or "").strip() or None
        if not store.labeling.has_flag(pk, rv.name, rater, kind, note):  # a double press records it once
            store.labeling.add_flag(pk, rv.name, rater, kind, note)
        store.labeling.release(pk, rv.name, rater)


# -- the queue -----------------------------------------------------------------

@dataclass(frozen=True)
class BlindItem:
    """What a reviewer sees of an item: no producer, no metadata, no judgments."""

    item_id: str
    input: str
    output: str | None = None
    trajectory: list[dict] = field(default_factory=list)
    reference: str | None = None

    def masked(self, masking: Masking = masking_service.DEFAULT) -> "BlindItem":
        """The same item with every model, family and maker name and every self-description masked, in every field
        a reviewer reads: task, output, reference, and each step whole (its text, a tool's name, tool calls' names
        and arguments, keys included, and tool outputs)."""
        return replace(self, input=masking.mask(self.input), output=masking.mask(self.output),
                       reference=masking.mask(self.reference),
                       trajectory=[masking.mask_step(s) for s in self.trajectory])


def _blind(store: Store, gs: GoldenSetRecord, row: dict) -> BlindItem:
    """What a reviewer receives: the item's content only, masked by the golden set's blind-review setting (a lead's
    choice, never the reviewer's)."""
    r = StoredBlindItem(**row)
    item = BlindItem(r.item_id, r.input or "", r.output, r.trajectory or [], r.reference)
    return item.masked(masking_service.masking_of(store, gs))


def queue_key(rater: str, item_id: str) -> bytes:
    """The item's place in this rater's queue: random across raters, stable across sessions."""
    return hashlib.sha256(f"{rater}\n{item_id}".encode()).digest()


def next_item(store: Store, golden_set: str, rubric: str, rater: str, *, at: datetime | None = None,
              ttl: timedelta = RESERVATION_TTL) -> BlindItem | None:
    """The item this rater should label now, reserved for them for ``ttl``; None when their queue is empty.

    A rater who already holds a live reservation gets the same item again (a
    rerun, a refresh or a second tab shows the same item) and its reservation
    is extended. In an assigned golden set the rater is served the items dealt
    to them only (``assignment.py``); at the set's gold rate a turn serves a
    gold item instead (``gold.py``).
    """
    rv = get_rubric(store, rubric)
    rater = local_rater(store, rater)
    now = at or datetime.now(timezone.utc)
    at_s, until = _iso(now), _iso(now + ttl)
    queries = store.labeling
    with store.transaction():
        refuse_removed(store, rater)  # a removed rater is served nothing
        gs = store.golden_set(golden_set)
        held = queries.live_reservation(gs.id, rv.name, rater, at=at_s)
        if held is None:
            queries.purge_expired_reservations(rv.name, at=at_s)
            key = order_key(store, gs) or queue_key
            dealt = dealt_to(store, gs, rv.name, rater)
            held = (queries.first_candidate(gs.id, rv.name, rater, overlap=gs.overlap, at=at_s, order_key=key)
                    if dealt is None else _first_dealt(store, gs, rv.name, rater, dealt, at_s, key))
            if held is None:  # a rater whose work is done is not kept busy with gold
                return None
            held = gold_turn(store, gs, rv.name, rater) or held
        h = HeldItem(**held)
        queries.reserve(h.pk, rv.name, rater, expires_at=until)
        return _blind(store, gs, queries.blind_item(gs.id, h.item_id))


def _free_dealt(store: Store, gs: GoldenSetRecord, rubric_name: str, rater: str, dealt: set[str],
                at: str) -> list[dict]:
    return [r for r in store.labeling.queue_candidates(gs.id, rubric_name, rater, overlap=gs.overlap, at=at)
            if r["item_id"] in dealt]


def _first_dealt(store: Store, gs: GoldenSetRecord, rubric_name: str, rater: str, dealt: set[str], at: str,
                 key: Callable[[str, str], bytes]) -> dict | None:
    """The first free item of those dealt to this rater (an assigned golden set), in the queue's order."""
    free = _free_dealt(store, gs, rubric_name, rater, dealt, at)
    return min(free, key=lambda r: key(rater, r["item_id"])) if free else None


def open_item(store: Store, golden_set: str, item_id: str) -> BlindItem:
    """An item by id, blind and masked (for changing an earlier label, and for adjudication)."""
    gs = store.golden_set(golden_set)
    row = store.labeling.blind_item(gs.id, item_id)
    if row is None:
        raise NotFound(f"golden set '{golden_set}' has no item '{item_id}'")
    return _blind(store, gs, row)


def my_label(store: Store, golden_set: str, rubric: str, item_id: str, rater: str) -> dict | None:
    """This rater's current label of the item: {score, rationale, created_at, updated_at} or None."""
    gs = store.golden_set(golden_set)
    return store.labeling.rater_label(item_pk(store, gs, item_id), get_rubric(store, rubric).name, rater)


def recent_labels(store: Store, golden_set: str, rubric: str, rater: str, *, limit: int = 10) -> list[dict]:
    """This rater's latest labels, newest first: item_id, score, rationale, updated_at, n_changes."""
    gs = store.golden_set(golden_set)
    return store.labeling.recent_labels(gs.id, get_rubric(store, rubric).name, rater, limit=limit)


@dataclass(frozen=True)
class LabelingProgress:
    n_items: int
    n_complete: int  # items with at least `overlap` labels
    n_labels: int
    overlap: int
    mine: int
    set_aside: int  # items this rater skipped or flagged
    waiting: int  # items still in this rater's queue
    assigned: int | None = None  # items dealt to this rater (None: the golden set is not assigned; 0: not to them)

    @property
    def fraction(self) -> float:
        return self.n_complete / self.n_items if self.n_items else 1.0


def labeling_progress(store: Store, golden_set: str, rubric: str, rater: str, *,
                      at: datetime | None = None) -> LabelingProgress:
    gs = store.golden_set(golden_set)
    name = get_rubric(store, rubric).name
    rater = local_rater(store, rater)
    p = store.labeling.progress(gs.id, name, rater, overlap=gs.overlap)
    dealt = dealt_to(store, gs, name, rater)
    if dealt is None:
        waiting = store.labeling.count_queue(gs.id, name, rater, overlap=gs.overlap, at=_iso(at))
    else:
        waiting = len(_free_dealt(store, gs, name, rater, dealt, _iso(at)))
    return LabelingProgress(**p, overlap=gs.overlap, waiting=waiting,
                            assigned=None if dealt is None else len(dealt))


# -- adjudication --------------------------------------------------------------

@dataclass(frozen=True)
class Disagreement:
    """An item without consensus: every rater's label and rationale, and the flags raised on it."""

    item_id: str
    labels: list[dict]  # {rater, score, rationale, updated_at}
    flags: list[dict] = field(default_factory=list)  # {rater, kind, note}


@dataclass(frozen=True)
class AdjudicationStatus:
    labeled: int  # items with at least one label or an adjudication
    resolved: int
    adjudicated: int
    unresolved: list[Disagreement]


def adjudication_status(store: Store, golden_set: str, rubric: str) -> AdjudicationStatus:
    """Items without consensus (no strict majority and no lead's label), with their labels side by side."""
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    c = consensus(store, golden_set, rv.name)
    open_ids = set(c.unresolved)
    by_item: dict[str, list[dict]] = {i: [] for i in c.unresolved}
    for r in label_rows(store, gs.id, rv.name):
        if r.item_id in open_ids:
            by_item[r.item_id].append({"rater": r.rater, "score": r.score, "rationale": r.rationale,
                                       "updated_at": r.updated_at})
    flags_by: dict[str, list[dict]] = {}
    for f in (ItemFlag(**row) for row in store.labeling.flags(gs.id, rv.name, kinds=FLAG_KINDS)):
        if f.item_id in open_ids:
            flags_by.setdefault(f.item_id, []).append({"rater": f.rater, "kind": f.kind, "note": f.note})
    return AdjudicationStatus(len(c.labels), len(c.resolved), len(c.adjudicated),
                              [Disagreement(i, by_item[i], flags_by.get(i, [])) for i in c.unresolved])


def flagged_items(store: Store, golden_set: str, rubric: str) -> list[dict]:
    """Flags ('broken item', 'unsure') raised by reviewers, oldest first."""
    gs = store.golden_set(golden_set)
    return store.labeling.flags(gs.id, get_rubric(store, rubric).name, kinds=FLAG_KINDS)


# -- pickers ---------------------------------------------------------------------

def golden_set_names(store: Store) -> list[str]:
    return store.labeling.golden_set_names()


def rubric_names(store: Store) -> list[str]:
    """The rubrics a picker offers: refinement candidates are reached from the Refine page, not listed here."""
    return [r.name for r in rubric_summaries(store, candidates=False)]


def default_rubric(store: Store, golden_set: str) -> str | None:
    """The rubric this golden set is already labeled under, else the only or first rubric."""
    used = store.label_rubrics(store.golden_set(golden_set).id)
    names = rubric_names(store)
    for name in used:
        if name in names:
            return name
    return names[0] if names else None


# -- the active queue's order (set by the lead: ``features.planning.active_queue``), as reviewers are served --

def order_key(store: Store, gs: GoldenSetRecord) -> Callable[[str, str], bytes] | None:
    """The queue order of an active golden set (None: random order), as the labeling queue's sort key.

    Every reviewer gets the same order, lowest ``u / pi`` first; items added after the design come last.
    """
    if q.queue_order(store, gs.id) != "active":
        return None
    priority = q.priorities(store, gs.id)
    inf = float("inf")
    return lambda rater, item_id: struct.pack(">d", priority.get(item_id, inf)) + item_id.encode()


def record_served(store: Store, gs: GoldenSetRecord, item_pk: int, rubric_name: str, rater: str) -> None:
    """Record the item's inclusion probability on the label just saved, if the set's queue is active."""
    if q.queue_order(store, gs.id) != "active":
        return
    current = q.inclusion_probability(store, gs.id, item_pk)
    if current is not None:
        phase, p = current
        q.record_inclusion(store, [{"item_pk": item_pk, "rater": rater, "rubric_name": rubric_name,
                                    "inclusion_probability": p}])
        q.record_served(store, item_pk, rubric_name, phase)
