"""Assignments: a lead gives a golden set, or a share of it, to named reviewers, and the overlap still holds.

Once a golden set has an assignment under a rubric, its items are dealt out: the items in a stable random order,
each item's ``overlap`` label slots laid out slot by slot (every item's first slot, then every item's second), and
the assigned reviewers, in name order, take consecutive runs of those slots as long as their share of the items.
A run is at most one pass over the items long (a share is at most 1), so the slots of one item, one pass apart,
always fall to different reviewers: each item reaches its overlap in distinct reviewers when the shares add up to
the overlap, whatever order the reviewers work in. A reviewer's queue is then their own items only; someone not
assigned is served nothing there. The deal is recomputed from the items and assignments as they are now, so an
added item or reviewer is dealt in at once.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from workbench.calibration.rubric_versions import get_rubric
from workbench.core.errors import InputError
from workbench.core.models import GoldenSetRecord
from workbench.features.people.raters import known_raters, resolve_rater
from workbench.store import Store, audit


@dataclass(frozen=True, slots=True)
class Assigned:
    rater: str
    share: float
    items: int  # items dealt to them
    labeled: int  # their labels of the golden set (dealt items or not)
    left: int  # dealt items they have not labeled yet


@dataclass(frozen=True, slots=True)
class AssignmentStatus:
    golden_set: str
    rubric: str
    n_items: int
    overlap: int
    reviewers: list[Assigned]

    @property
    def slots(self) -> int:
        return sum(a.items for a in self.reviewers)

    def warning(self) -> str | None:
        """One sentence when the shares cannot give every item its overlap, else None."""
        if not self.reviewers or self.slots >= self.n_items * self.overlap:
            return None
        short = self.n_items * self.overlap - self.slots
        return (f"The shares deal {self.slots} of the {self.n_items * self.overlap} labels the overlap of "
                f"{self.overlap} asks for, so {short} stay unlabeled; raise the shares (they should add up to "
                f"{self.overlap}) or assign more reviewers.")

    def summary(self) -> str:
        if not self.reviewers:
            return (f"Golden set '{self.golden_set}' under {self.rubric} has no assignment: every reviewer is served "
                    "its items.")
        lines = [f"Golden set '{self.golden_set}' under {self.rubric}: {self.n_items} items, overlap {self.overlap}, "
                 f"dealt to {len(self.reviewers)} reviewer{'s' * (len(self.reviewers) != 1)}:"]
        lines += [f"  {a.rater}\tshare {a.share:g}\t{a.items} items\t{a.labeled} labeled\t{a.left} left"
                  for a in self.reviewers]
        return "\n".join(lines + [w] if (w := self.warning()) else lines)


def _quota(share: float, n_items: int) -> int:
    return min(n_items, math.ceil(share * n_items - 1e-9))


def deal(item_ids: list[str], shares: dict[str, float], overlap: int, golden_set_id: int) -> dict[str, set[str]]:
    """{rater: item ids dealt to them} (see the module): distinct reviewers for each item's slots."""
    order = sorted(item_ids, key=lambda i: hashlib.sha256(f"deal\n{golden_set_id}\n{i}".encode()).digest())
    n = len(order)
    out: dict[str, set[str]] = {}
    k = 0
    for rater in sorted(shares):
        mine = out.setdefault(rater, set())
        for _ in range(_quota(shares[rater], n)):
            if k >= n * overlap:
                break
            mine.add(order[k % n])
            k += 1
    return out


def dealt_to(store: Store, gs: GoldenSetRecord, rubric_name: str, rater: str) -> set[str] | None:
    """The items dealt to this rater; None when the golden set has no assignment under the rubric (everyone is
    served everything), an empty set when it has one without them."""
    rows = store.labeling.assignments(gs.id, rubric_name)
    if not rows:
        return None
    if rater not in {r["rater"] for r in rows}:
        return set()
    ids = [r["item_id"] for r in store.item_index(gs.id)]
    return deal(ids, {r["rater"]: float(r["share"]) for r in rows}, gs.overlap, gs.id).get(rater, set())


def assign(store: Store, golden_set: str, rubric: str, raters: tuple[str, ...], *, share: float = 1.0,
           remove: bool = False, clear: bool = False, actor: str | None = None) -> AssignmentStatus:
    """Assign (or with ``remove`` unassign) named reviewers, each to ``share`` of the items; ``clear`` drops every
    assignment, so everyone is served the golden set again. Raters are named by email or name and must exist."""
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    if not 0 < share <= 1:
        raise InputError(f"--share is {share:g}, not a share above 0 and at most 1", field="--share",
                         fix="give the share of the golden set's items each named reviewer labels, e.g. 0.5")
    names = []
    for who in raters:
        r = resolve_rater(store, who)
        if r is None or r.removed_at is not None:
            state = "was removed" if r is not None else "is not a rater"
            raise InputError(f"'{who}' {state}", field="--to",
                             fix=f"name an active rater ({known_raters(store)}), or add them first ('workbench "
                                 f"rater add EMAIL --role reviewer')")
        names.append(r.name)
    with store.transaction():
        if clear:
            store.labeling.unassign(gs.id, rv.name, None)
        elif remove:
            store.labeling.unassign(gs.id, rv.name, names)
        else:
            store.labeling.assign(gs.id, rv.name, names, share, assigned_by=audit.who(actor))
        audit.record(store, actor=actor, action="assignment.set", target=f"{golden_set}/{rv.name}",
                     detail={"raters": names, "share": None if remove or clear else share,
                             "removed": remove, "cleared": clear})
    return assignment_status(store, golden_set, rubric)


def assignment_status(store: Store, golden_set: str, rubric: str) -> AssignmentStatus:
    rv = get_rubric(store, rubric)
    gs = store.golden_set(golden_set)
    rows = store.labeling.assignments(gs.id, rv.name)
    ids = [r["item_id"] for r in store.item_index(gs.id)]
    dealt = deal(ids, {r["rater"]: float(r["share"]) for r in rows}, gs.overlap, gs.id) if rows else {}
    labeled_by = {}
    for row in store.labels(gs.id, rv.name):
        labeled_by.setdefault(row["rater"], set()).add(row["item_id"])
    out = [Assigned(r["rater"], float(r["share"]), len(dealt.get(r["rater"], ())), int(r["labeled"]),
                    len(dealt.get(r["rater"], set()) - labeled_by.get(r["rater"], set()))) for r in rows]
    return AssignmentStatus(golden_set, rv.name, len(ids), gs.overlap, out)
