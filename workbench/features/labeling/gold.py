"""Gold items: adjudicated items a lead marks gold and the queue mixes into each reviewer's work, unannounced.

A reviewer's labels on gold items given after the marking are their accuracy on gold (the raters report shows it
with its interval): known answers, Prolific- and Label Studio-style, beside the agreement with the other reviewers.
The answer is the item's adjudication, read when used. Which turn serves gold is drawn from a hash of the golden
set, the rater and the turn's number, so it holds across reruns and tabs and cannot be read off the page: the item a
reviewer receives is the same blind item whether it is gold or not.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from workbench.calibration.rubric_versions import get_rubric
from workbench.core.errors import InputError
from workbench.core.inputs import did_you_mean
from workbench.core.models import GoldenSetRecord
from workbench.store import Store, audit


@dataclass(frozen=True, slots=True)
class GoldStatus:
    golden_set: str
    rubric: str
    n_gold: int
    rate: float
    n_adjudicated: int
    added: int = 0
    removed: int = 0

    def summary(self) -> str:
        changed = (f"{self.added} marked gold, " if self.added else "") + (
            f"{self.removed} no longer gold, " if self.removed else "")
        mix = (f"{self.rate:.0%} of each reviewer's turns serve one they have not labeled" if self.rate
               else "not mixed into the queue (set --rate to mix them in)")
        return (f"Golden set '{self.golden_set}' under {self.rubric}: {changed}{self.n_gold} gold item"
                f"{'s' * (self.n_gold != 1)} (of {self.n_adjudicated} adjudicated), {mix}.")


def set_gold(store: Store, golden_set: str, rubric: str, *, items: tuple[str, ...] = (),
             all_adjudicated: bool = False, remove: bool = False, rate: float | None = None,
             actor: str | None = None) -> GoldStatus:
    """Mark (or with ``remove`` unmark) items gold and set the share of turns that serve gold; only adjudicated
    items can be gold, since their adjudication is the answer."""
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    if rate is not None and not 0 <= rate <= 1:
        raise InputError(f"--rate is {rate:g}, not a share from 0 to 1", field="--rate",
                         fix="give the share of each reviewer's turns that serve a gold item, e.g. 0.1")
    adjudicated = {r["item_id"]: r for r in store.adjudications(gs.id, rv.name)}
    index = {r["item_id"]: r["pk"] for r in store.item_index(gs.id)}
    chosen = sorted(adjudicated) if all_adjudicated else list(dict.fromkeys(items))
    for item_id in chosen:
        if item_id not in index:
            raise InputError(f"golden set '{golden_set}' has no item '{item_id}'", field="--item",
                             fix=did_you_mean(item_id, index, "name an item of the golden set"))
        if item_id not in adjudicated and not remove:
            raise InputError(f"item '{item_id}' has no adjudication under {rv.name}, so it has no answer to be gold "
                             "against", field="--item", fix=f"adjudicate it first (the Adjudicate page), or name "
                             "an adjudicated item")
    pks = [index[i] for i in chosen]
    with store.transaction():
        added = 0 if remove else store.labeling.mark_gold(pks, rv.name, marked_by=audit.who(actor))
        removed = store.labeling.unmark_gold(pks, rv.name) if remove else 0
        if rate is not None:
            store.labeling.set_gold_rate(gs.id, rv.name, rate)
        if added or removed or rate is not None:
            audit.record(store, actor=actor, action="gold.set", target=f"{golden_set}/{rv.name}",
                         detail={"added": added, "removed": removed, "rate": rate})
    return status(store, golden_set, rubric, added=added, removed=removed)


def status(store: Store, golden_set: str, rubric: str, *, added: int = 0, removed: int = 0) -> GoldStatus:
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    return GoldStatus(golden_set, rv.name, len(store.labeling.gold_items(gs.id, rv.name)),
                      store.labeling.gold_rate(gs.id, rv.name), len(store.adjudications(gs.id, rv.name)),
                      added, removed)


def gold_turn(store: Store, gs: GoldenSetRecord, rubric_name: str, rater: str) -> dict | None:
    """The gold item this turn of the rater serves (``{pk, item_id}``), or None: a turn is gold with the set's rate,
    and then the gold item comes first in the rater's own order of them."""
    queries = store.labeling
    rate = queries.gold_rate(gs.id, rubric_name)
    if rate <= 0:
        return None
    turn = queries.rater_turns(gs.id, rubric_name, rater)
    draw = int.from_bytes(hashlib.sha256(f"gold\n{gs.id}\n{rubric_name}\n{rater}\n{turn}".encode()).digest()[:8],
                          "big") / 2 ** 64
    if draw >= rate:
        return None
    free = queries.gold_candidates(gs.id, rubric_name, rater)
    return min(free, key=lambda r: hashlib.sha256(f"{rater}\n{r['item_id']}".encode()).digest()) if free else None
