"""The refinement loop: propose rubric edits from development disagreements; let a held-out split decide.

    summary = refine(store, "demo", "demo-patch-quality", "lenient-mini", optimizer="openai/gpt-4o", rounds=3,
                     budget_usd=2)
    accept_round(store, round_id, lead="lead")     # the child becomes the rubric's next version

A session draws a seeded split of the golden set's items with a consensus,
stratified by consensus label and category and recorded with the golden-set
version. Each round collects the current rubric's disagreements on the
development part only, asks for an edit (an optimizer model, or few-shot
examples chosen from labeled development items), writes the child rubric with
its parent and diff, runs the judge with it on both parts, and compares parent
and child on the held-out part: the child is proposed for acceptance only when
the paired-bootstrap difference of the gate's agreement metric lies above 0
with its interval and no gate check gets worse. Nothing is exported: a lead
accepts, which adds the child as the rubric's next version, to be judged and
calibrated on the whole golden set like any other.

Candidates are rubric versions of their own name (``<rubric>.refine-<session>.r<round>``, round 0 being the
parent copied), so a proposal never becomes the rubric's current version, which judge runs, the Label page,
calibration and export take by default, until a lead accepts it. Each candidate's judge has two runs:
``run-1`` on the development items, ``run-2`` on the held-out ones; every judgment and the optimizer's reply
are committed as they arrive, so a killed session resumes without sending a finished request again, and
``budget_usd`` bounds everything the session spends, across resumes.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import yaml

from workbench.core.errors import ConfigError, Conflict, InputError, NotFound
from workbench.calibration.gate import FAILED, NOT_APPLICABLE, NOT_MEASURABLE, PASSED, UNDECIDED, WARNING
from workbench.features.refine import optimizer as opt
from workbench.judges.pricing import estimate_cost
from workbench.judges.prompting import estimate_input_tokens
from workbench.judges.runner import estimate_run
from workbench.judges.types import BudgetExceeded
from workbench.core.models import Criterion, Item, JudgeSpec, Judgment, Rubric, parse_model
from workbench.core.scale import Scale
from workbench.calibration.report import CalibrationReport
from workbench.judges.rubrics import rubric_from_dict
from workbench.stats import paired_bootstrap_delta
from workbench.features.refine.records import (PARTS, ChangedItem, CheckChange, CheckStatus, Lineage, PairedDelta,
    PartResult, RefineEstimate, RefineRound, RefineSession, RefineSplit, ReportSummary, RoundResults, SessionHistory)
from workbench.features.refine.stats import paired_gain, stratified_split
from workbench.store import Store
from workbench.store import leases
from workbench.features.refine import queries as db
from workbench.core.workspace import Workspace
from workbench.features.judging import service as judging
from workbench.calibration.calibrate import Options, calibrate, policy_for
from workbench.calibration.golden_sets import ItemIndexRow, consensus, item_index, load_items
from workbench.calibration.snapshots import FrozenVersion, current_snapshot, freeze
from workbench.calibration.rubric_versions import (RubricVersion, candidate_name, get_rubric, get_rubric_by_id,
    register_rubric)

RUN_OF_PART = {"development": "run-1", "held_out": "run-2"}
MAX_DISAGREEMENTS = 40  # shown to the optimizer per round, the largest first
EXCERPT_PART = 500  # characters of each part of an item excerpt
STATUS_RANK = {PASSED: 4, WARNING: 3, NOT_MEASURABLE: 2, UNDECIDED: 1, FAILED: 0}  # NOT_APPLICABLE: never compared
SHOWN_METRICS = ("krippendorff_alpha_ordinal", "exact_agreement", "mean_signed_error", "tpr", "tnr")


@dataclass
class SessionSummary:
    session_id: int
    split: RefineSplit
    rounds: list[RefineRound]
    spent_usd: float
    budget_usd: float | None
    stopped: str | None = None  # "budget" when the budget stopped the session
    messages: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- the split

def _split_for(store: Store, golden_set: str, rubric: str, *, seed: int, held_out_fraction: float,
               write: bool = True) -> tuple[RefineSplit | None, dict[str, str]]:
    """(split or None when not written, item_id -> part) of the current golden-set version."""
    gs = store.golden_set(golden_set)
    version_hash = FrozenVersion.from_json(freeze(store, golden_set)).hash if write else \
        current_snapshot(store, golden_set)[0]
    version_id = db.golden_set_version_id(store, gs.id, version_hash)
    found = None if version_id is None else db.find_split(store, version_id, rubric, seed, held_out_fraction)
    if found is not None:
        return found, db.parts(store, found.id)
    cons = consensus(store, golden_set, rubric)
    index = [r for r in item_index(store, gs.id) if r.item_id in cons.resolved]
    if not index:
        raise NotFound(f"golden set '{golden_set}' has no item with a consensus label under rubric '{rubric}'; "
                       "label items (or adjudicate them) before refining")
    try:
        s = stratified_split([r.item_id for r in index], [cons.resolved[r.item_id] for r in index],
                             [r.category for r in index], held_out_fraction=held_out_fraction, seed=seed,
                             groups=[r.task_id for r in index])
    except ValueError as exc:
        raise InputError(f"golden set '{golden_set}' cannot be split: {exc}", fix="label more items") from None
    parts = {**{i: "development" for i in s.development}, **{i: "held_out" for i in s.held_out}}
    if not write:
        return None, parts
    drawn = db.insert_split(store, golden_set_id=gs.id, golden_set_version_id=version_id, rubric_name=rubric,
                            seed=seed, held_out_fraction=held_out_fraction, strata=s.strata,
                            n_unresolved=len(cons.unresolved),
                            items=[(r.pk, parts[r.item_id], cons.resolved[r.item_id]) for r in index])
    return drawn, parts


# --------------------------------------------------------------------------- candidates

def _renamed(rubric: Rubric, name: str, judges: Sequence[JudgeSpec]) -> Rubric:
    """The rubric under another name with these judges, read back from its content as a rubric file would be."""
    return rubric_from_dict(replace(rubric, name=name, judges=tuple(judges)).content())


def rubric_diff(parent: Rubric, child: Rubric) -> str:
    """A unified diff of the two rubrics' YAML, names and judges left out (they differ by construction)."""
    def text(r: Rubric) -> list[str]:
        c = {k: v for k, v in r.content().items() if k not in ("name", "judges")}
        return yaml.safe_dump(c, sort_keys=False, allow_unicode=True, width=100).splitlines(keepends=True)
    return "".join(difflib.unified_diff(text(parent), text(child), "parent", "child"))


def example_excerpt(item: Item) -> str:
    """What a graded example shows of an item: the task, the last tool result and the final output, capped."""
    def cap(s: str | None) -> str:
        s = s or ""
        return s if len(s) <= EXCERPT_PART else s[:EXCERPT_PART] + " [...]"
    last_tool = next((s.get("content") for s in reversed(item.trajectory or []) if s.get("role") == "tool"), None)
    parts = [f"Task: {cap(item.input)}"]
    if isinstance(last_tool, str):
        parts.append(f"Last tool result: {cap(last_tool)}")
    parts.append(f"Final output: {cap(item.output) or '(none)'}")
    return "\n".join(parts)


def apply_edit(parent: Rubric, edit: opt.RubricEdit, items: dict[str, Item], name: str) -> Rubric:
    """The child rubric: the parent with the edit's levels, criteria, instructions and examples."""
    levels = tuple(replace(lv, description=edit.levels[lv.value]) if lv.value in edit.levels else lv
                   for lv in parent.scale.levels)
    criteria = {c.id: c for c in parent.criteria}
    for cid, desc in edit.criteria:
        criteria[cid] = Criterion(cid, desc)
    used = {e.get("item_id") for e in parent.examples}
    examples = parent.examples + tuple(
        {"item_id": e.item_id, "excerpt": example_excerpt(items[e.item_id]), "score": e.score,
         "rationale": e.rationale} for e in edit.examples if e.item_id not in used)
    child = replace(parent, name=name, scale=Scale(levels), criteria=tuple(criteria.values()),
                    instructions=edit.instructions or parent.instructions, examples=examples)
    return rubric_from_dict(child.content())


# --------------------------------------------------------------------------- what a round needs

@dataclass
class _Ctx:
    """One session's handles, resolved once."""

    store: Store
    golden_set: str
    gs_id: int
    base: RubricVersion
    judge: str
    session: RefineSession
    parts: dict[str, str]  # item_id -> part
    items: dict[str, Item]
    options: Options
    workspace: Workspace | None
    provider_options: dict[str, Any] | None
    optimizer_options: dict[str, Any] | None
    concurrency: int
    progress: Callable[[str], None]

    def ids(self, part: str) -> set[str]:
        return {i for i, p in self.parts.items() if p == part}

    def judge_pks(self) -> list[int]:
        prefix = candidate_name(self.base.name, self.session.id, 0)[:-1]
        return [db.judge_pk(self.store, get_rubric(self.store, name).id, self.judge)
                for name in db.rubric_names(self.store) if name.startswith(prefix)]

    def spent(self) -> float:
        return db.session_spend(self.store, self.session.id, self.judge_pks(), self.gs_id)

    def left(self) -> float | None:
        budget = self.session.budget_usd
        return None if budget is None else max(0.0, budget - self.spent())


def _judgments(store: Store, golden_set: str, rv: RubricVersion, judge: str, part: str) -> dict[str, Judgment]:
    """Repeat-0 judgments of a candidate's run on one part, by item id (none when the run is not made yet)."""
    gs = store.golden_set(golden_set)
    return {j.item_id: j for run, j in store.run_judgments(gs.id, db.judge_pk(store, rv.id, judge))
            if run == RUN_OF_PART[part] and j.repeat == 0}


def _scores(store: Store, golden_set: str, rv: RubricVersion, judge: str, part: str) -> dict[str, int | None]:
    """Repeat-0 scores of a candidate's run on one part (None: unscored)."""
    return {i: j.score for i, j in _judgments(store, golden_set, rv, judge, part).items()}


def _evaluate(c: _Ctx, rv: RubricVersion) -> str | None:
    """Run the judge with the candidate on the development, then the held-out items; 'budget' if it stopped."""
    gs = c.store.golden_set(c.golden_set)
    for part in PARTS:
        wanted = c.ids(part)
        names = db.run_names(c.store, gs.id, db.judge_pk(c.store, rv.id, c.judge))
        # run-1 holds the development items, run-2 the held-out ones: a part's run is made once, then resumed
        # (judging.run resumes the newest run), and the held-out run starts only once the development run is done
        if any(RUN_OF_PART[later] in names for later in PARTS[PARTS.index(part) + 1:]):
            continue
        new_run = RUN_OF_PART[part] not in names and bool(names)
        left = c.left()
        if left is not None and left <= 0:
            return "budget"
        c.progress(f"judging {len(wanted)} {part.replace('_', '-')} items with {rv.name}")
        summary = judging.run(c.store, c.golden_set, rv.name, c.judge, concurrency=c.concurrency, budget_usd=left,
                              new_run=new_run, provider_options=c.provider_options,
                              transform=lambda items, w=wanted: [i for i in items if i.id in w])
        if summary.get("stopped") == "budget":
            return "budget"
        if not summary.get("complete"):
            raise Conflict(f"the judge run of {rv.name} on the {part.replace('_', '-')} items did not finish "
                           f"({summary.get('n_failed', 0)} failed); run the same command again to retry them")
    return None


def _report(c: _Ctx, rv: RubricVersion, part: str) -> CalibrationReport:
    opts = Options(resamples=c.options.resamples, seed=c.options.seed, run=RUN_OF_PART[part])
    return calibrate(c.store, c.golden_set, rv.name, c.judge, opts, workspace=c.workspace, labels_of=c.base.name)


def _summary(report: CalibrationReport) -> ReportSummary:
    """What a round records of a report (stored as JSON with the round)."""
    return ReportSummary(report.n_items, report.n_unscored,
                         {m: report.metrics[m] for m in SHOWN_METRICS if m in report.metrics}, report.calibrated,
                         tuple(CheckStatus(ch.id, ch.name, ch.status, ch.message) for ch in report.verdict.checks))


def _disagreements(c: _Ctx, rv: RubricVersion) -> list[opt.Disagreement]:
    """The parent's development disagreements, largest first; never a held-out item (checked, not assumed)."""
    judgments = _judgments(c.store, c.golden_set, rv, c.judge, "development")
    cons = consensus(c.store, c.golden_set, c.base.name)
    rationales = db.label_rationales(c.store, c.gs_id, c.base.name)
    out = []
    for item_id, j in judgments.items():
        truth = cons.resolved.get(item_id)
        if truth is None or j.score == truth:
            continue
        if c.parts.get(item_id) != "development":  # the parent was judged on this part only: a bug, never data
            raise RuntimeError(f"held-out item {item_id} reached the optimizer's input; nothing was sent")
        steps = c.items[item_id].trajectory or []
        cited = tuple((n, str(steps[n].get("content") or "")[:EXCERPT_PART]) for n in j.evidence_steps
                      if isinstance(n, int) and 0 <= n < len(steps))
        out.append(opt.Disagreement(
            item_id, example_excerpt(c.items[item_id]), truth,
            tuple((r, s, rationales.get((item_id, r))) for r, s in sorted(cons.human.get(item_id, {}).items())),
            j.score, j.rationale, cited))
    out.sort(key=lambda d: -abs((d.judge_score if d.judge_score is not None else d.consensus + 2) - d.consensus))
    return out[:MAX_DISAGREEMENTS]


def _findings(report: CalibrationReport) -> str:
    failing = [ch.message for ch in report.verdict.failed]
    return "\n".join(f"- {m}" for m in failing) or "- The gate passes on the development items."


def _few_shot_edit(c: _Ctx, parent: RubricVersion, k: int) -> opt.RubricEdit | None:
    """Up to k examples from labeled development items: the disagreements, then the boundary cases.

    Disagreements are taken largest first, alternating between consensus labels; boundary cases are
    development items whose reviewers split across the pass threshold. Items already shown are skipped.
    """
    used = {e.get("item_id") for e in parent.rubric.examples}
    cons = consensus(c.store, c.golden_set, c.base.name)
    rationales = db.label_rationales(c.store, c.gs_id, c.base.name)
    threshold = parent.rubric.pass_threshold
    by_label: dict[int, list[str]] = {}
    for d in _disagreements(c, parent):
        if d.item_id not in used:
            by_label.setdefault(d.consensus, []).append(d.item_id)
    chosen: list[str] = []
    while len(chosen) < k and any(by_label.values()):
        for label in sorted(by_label):
            if by_label[label] and len(chosen) < k:
                chosen.append(by_label[label].pop(0))
    for item_id in sorted(c.ids("development")):
        if len(chosen) >= k:
            break
        humans = cons.human.get(item_id, {}).values()
        split_votes = any(s >= threshold for s in humans) and any(s < threshold for s in humans)
        if split_votes and item_id not in used and item_id not in chosen and item_id in cons.resolved:
            chosen.append(item_id)
    if not chosen:
        return None

    def rationale(item_id: str) -> str:
        truth = cons.resolved[item_id]
        said = [rationales.get((item_id, r)) for r, s in sorted(cons.human.get(item_id, {}).items()) if s == truth]
        return next((s for s in said if s), f"The reviewers' consensus is {truth}.")

    return opt.RubricEdit(f"{len(chosen)} graded examples from development items (disagreements first, then "
                          "boundary cases)", examples=tuple(opt.ExampleRef(i, cons.resolved[i], rationale(i))
                                                            for i in chosen))


# --------------------------------------------------------------------------- a round

def _parent_of(c: _Ctx, rounds: list[RefineRound], r0: RubricVersion) -> RubricVersion:
    """The newest child a held-out check proposed (or a lead accepted), else round 0's copy of the base."""
    for r in reversed(rounds):
        if r.status in ("proposed", "accepted") and r.child_rubric_id:
            return get_rubric_by_id(c.store, r.child_rubric_id)
    return r0


def _propose(c: _Ctx, rnd: RefineRound, parent: RubricVersion) -> opt.RubricEdit | str | None:
    """The round's edit (asked once, then read back), or the reason it has none, or None when the budget stops."""
    s = c.session
    if rnd.edit is not None:
        return rnd.edit.problem or opt.RubricEdit.of(rnd.edit)
    if s.strategy == "few-shot":
        edit = _few_shot_edit(c, parent, s.max_examples)
        if edit is None:
            return "no development item is left to use as an example"
        db.save_edit(c.store, rnd.id, edit.to_dict(), cost_usd=0.0, tokens_in=0, tokens_out=0)
        return edit
    disagreements = _disagreements(c, parent)
    if not disagreements:
        return "the judge agrees with the consensus on every development item; there is nothing to learn from"
    if c.ids("held_out") & {d.item_id for d in disagreements}:  # checked again here, right before sending
        raise RuntimeError("a held-out item reached the optimizer's input; nothing was sent")
    request = opt.edit_request(parent.rubric.content(), _findings(_report(c, parent, "development")), disagreements,
                               max_examples=s.max_examples)
    c.progress(f"asking {s.optimizer} for an edit from {len(disagreements)} development disagreements")
    try:
        reply = asyncio.run(opt.propose_edit(
            s.optimizer, request, scale=list(parent.rubric.scale.values), max_examples=s.max_examples,
            allowed_items=[d.item_id for d in disagreements], budget_left_usd=c.left(),
            provider_options=c.optimizer_options))
    except BudgetExceeded:
        return None
    saved = reply.edit.to_dict() if reply.edit is not None else {"problem": reply.problem}
    db.save_edit(c.store, rnd.id, saved, cost_usd=reply.cost_usd, tokens_in=reply.usage.input_tokens,
                 tokens_out=reply.usage.output_tokens)
    return reply.edit if reply.edit is not None else reply.problem


def _changed(cons: dict[str, int], parent: dict[str, int | None], child: dict[str, int | None],
             index: dict[str, ItemIndexRow]) -> tuple[ChangedItem, ...]:
    return tuple(ChangedItem(i, index[i].category, cons.get(i), parent.get(i), child.get(i))
                 for i in sorted(set(parent) & set(child)) if parent[i] != child[i])


def _compare_checks(parent: ReportSummary, child: ReportSummary) -> tuple[CheckChange, ...]:
    """Each gate check on parent and child; worse when the child's status ranks lower (not-applicable never)."""
    return tuple(CheckChange(pc.id, pc.name, pc.status, cc.status,
                             NOT_APPLICABLE not in (pc.status, cc.status)
                             and STATUS_RANK[cc.status] < STATUS_RANK[pc.status], cc.message)
                 for pc, cc in zip(parent.checks, child.checks))


def _compare(c: _Ctx, parent: RubricVersion, child: RubricVersion, part: str, metric: str, cons: dict[str, int],
             index: dict[str, ItemIndexRow]) -> PartResult:
    """Parent against child on one part: the paired-bootstrap change of ``metric``, the gate checks, the items."""
    p_scores, c_scores = (_scores(c.store, c.golden_set, rv, c.judge, part) for rv in (parent, child))
    ids = [i for i in index if i in cons and p_scores.get(i) is not None and c_scores.get(i) is not None]
    delta = PairedDelta.of(paired_bootstrap_delta(
        [cons[i] for i in ids], [p_scores[i] for i in ids], [c_scores[i] for i in ids],
        [index[i].task_id for i in ids], scale=list(c.base.rubric.scale.values),
        pass_threshold=c.base.rubric.pass_threshold, resamples=c.options.resamples, seed=c.options.seed))
    gain, sentence = paired_gain(delta, metric)
    p_rep, c_rep = _summary(_report(c, parent, part)), _summary(_report(c, child, part))
    return PartResult(p_rep, c_rep, delta.metrics[metric], delta.n_items, gain, sentence,
                      _compare_checks(p_rep, c_rep), _changed(cons, p_scores, c_scores, index))


def _decide(c: _Ctx, parent: RubricVersion, child: RubricVersion) -> tuple[str, RoundResults, str]:
    """('proposed' | 'rejected', results, reason): the held-out part decides; development is shown beside it."""
    metric = policy_for(c.base, c.workspace).agreement_metric
    cons = consensus(c.store, c.golden_set, c.base.name).resolved
    index = {r.item_id: r for r in item_index(c.store, c.gs_id)}
    results = RoundResults(metric, *(_compare(c, parent, child, part, metric, cons, index) for part in PARTS))
    held = results.held_out
    worse = [ch.name for ch in held.checks if ch.worse]
    if held.gain and not worse:
        return "proposed", results, f"Held-out: {held.sentence}, and no gate check gets worse."
    why = [held.sentence] + ([f"these gate checks get worse: {', '.join(worse)}"] if worse else [])
    return "rejected", results, "Held-out: " + "; ".join(why) + "."


def _run_round(c: _Ctx, rnd: RefineRound) -> str | None:
    """Take a round as far as it goes; 'budget' when the budget stopped it (it resumes next time)."""
    store = c.store
    parent = get_rubric_by_id(store, rnd.parent_rubric_id)
    if rnd.child_rubric_id is None:
        edit = _propose(c, rnd, parent)
        if edit is None:
            return "budget"
        if isinstance(edit, str):
            db.finish_round(store, rnd.id, "failed", None, f"No edit: {edit}.")
            return None
        name = candidate_name(c.base.name, c.session.id, rnd.number)
        child_rubric = apply_edit(parent.rubric, edit, c.items, name)
        diff = rubric_diff(parent.rubric, child_rubric)
        if not diff:  # judging an unchanged rubric again would only pay for the same answers
            db.finish_round(store, rnd.id, "failed", None, "No edit: it leaves the rubric as it is.")
            return None
        child = register_rubric(store, child_rubric)
        db.set_child(store, rnd.id, child.id, parent.id, diff)
    child = get_rubric_by_id(store, db.round_(store, rnd.id).child_rubric_id)
    if _evaluate(c, child) == "budget":
        return "budget"
    status, results, reason = _decide(c, parent, child)
    db.finish_round(store, rnd.id, status, results.to_json(), reason)
    c.progress(f"round {rnd.number}: {status}. {reason}")
    return None


# --------------------------------------------------------------------------- the session

def _session(store: Store, golden_set: str, base: RubricVersion, judge: str, *, strategy: str,
             optimizer: str | None, max_examples: int, budget_usd: float | None, seed: int,
             held_out_fraction: float, new_session: bool) -> tuple[RefineSession, dict[str, str]]:
    gs = store.golden_set(golden_set)
    s = None if new_session else db.open_session(store, gs.id, base.name, judge)
    if s is not None and s.base_rubric_id != base.id:
        db.set_session_status(store, s.id, "closed")  # the rubric has moved on: refine its newest version
        s = None
    if s is not None:
        if (s.strategy, s.optimizer) != (strategy, optimizer):
            raise ConfigError(f"refinement session {s.id} of judge '{judge}' uses "
                              f"{s.optimizer or 'the few-shot strategy'}; run it with the same settings to resume "
                              "it, or pass --new-session to start another")
        if budget_usd is not None and budget_usd != s.budget_usd:
            db.set_session_budget(store, s.id, budget_usd)
            s = db.session(store, s.id)
        return s, db.parts(store, s.split_id)
    split, parts = _split_for(store, golden_set, base.name, seed=seed, held_out_fraction=held_out_fraction)
    s = db.insert_session(store, split_id=split.id, base_rubric_id=base.id, judge_id=judge, strategy=strategy,
                          optimizer=optimizer, max_examples=max_examples, budget_usd=budget_usd)
    return s, parts


def _check_options(strategy: str, optimizer: str | None, rounds: int, budget_usd: float | None, max_examples: int,
                   held_out_fraction: float) -> None:
    if strategy not in ("optimizer", "few-shot"):
        raise InputError(f"unknown strategy '{strategy}'", fix="use optimizer or few-shot")
    if strategy == "optimizer" and not optimizer:
        raise InputError("the optimizer strategy needs --optimizer MODEL", fix="e.g. --optimizer openai/gpt-4o, "
                         "or use --strategy few-shot, which needs no optimizer")
    if strategy == "few-shot" and optimizer:
        raise InputError("the few-shot strategy uses no optimizer", fix="drop --optimizer or use --strategy optimizer")
    if optimizer:
        opt.check_optimizer_name(optimizer)
    if rounds < 1 or max_examples < 0 or (strategy == "few-shot" and max_examples < 1):
        raise InputError("--rounds must be at least 1 and --examples at least 1 for few-shot",
                         fix="e.g. --rounds 3 --examples 4")
    if budget_usd is not None and not budget_usd > 0:
        raise InputError(f"--budget must be a positive amount in USD, got {budget_usd}", fix="e.g. --budget 2")
    if not 0 < held_out_fraction < 1:
        raise InputError(f"--held-out must be between 0 and 1, got {held_out_fraction}", fix="e.g. --held-out 0.5")


def refine(store: Store, golden_set: str, rubric: str, judge: str, *, strategy: str = "optimizer",
           optimizer: str | None = None, rounds: int = 3, budget_usd: float | None = None,
           held_out_fraction: float = 0.5, seed: int = 0, max_examples: int = 4, resamples: int = 2000,
           concurrency: int = 8, new_session: bool = False, workspace: Workspace | None = None,
           provider_options: dict[str, Any] | None = None, optimizer_options: dict[str, Any] | None = None,
           progress: Callable[[str], None] | None = None) -> SessionSummary:
    """Run (or resume) the rubric's refinement session for the judge until it has ``rounds`` finished rounds.

    ``budget_usd`` bounds all the session's spending (optimizer and judge), across resumes; when the next
    request could pass it the session stops, resumable with a larger budget. ``provider_options`` go to the
    judge's provider and ``optimizer_options`` to the optimizer's (env, http_client, ...).
    """
    _check_options(strategy, optimizer, rounds, budget_usd, max_examples, held_out_fraction)
    base = get_rubric(store, rubric)
    spec = base.rubric.judge(judge)
    if optimizer:
        opt.check_optimizer(optimizer, optimizer_options)
    judging.check_provider(spec, provider_options)
    session, parts = _session(store, golden_set, base, judge, strategy=strategy, optimizer=optimizer,
                              max_examples=max_examples, budget_usd=budget_usd, seed=seed,
                              held_out_fraction=held_out_fraction, new_session=new_session)
    holder, ours = leases.acquire(store, f"refine:{session.id}")
    if not ours:
        raise Conflict(f"refinement session {session.id} is already running ({holder.describe()}); wait for it, "
                       f"since a session whose heartbeat stops for {leases.LEASE_STALE_S:.0f} s is taken over")
    with leases.LeaseKeeper(store.path, holder):
        try:
            return _run_session(store, golden_set, base, judge, spec, session, parts, rounds=rounds,
                                resamples=resamples, seed=seed, workspace=workspace,
                                provider_options=provider_options, optimizer_options=optimizer_options,
                                concurrency=concurrency, progress=progress)
        finally:
            leases.release(store, holder)


def _run_session(store: Store, golden_set: str, base: RubricVersion, judge: str, spec: JudgeSpec,
                 session: RefineSession,
                 parts: dict[str, str], *, rounds: int, resamples: int, seed: int, workspace: Workspace | None,
                 provider_options: dict[str, Any] | None, optimizer_options: dict[str, Any] | None,
                 concurrency: int, progress: Callable[[str], None] | None) -> SessionSummary:
    messages: list[str] = []

    def say(msg: str) -> None:
        messages.append(msg)
        if progress is not None:
            progress(msg)

    c = _Ctx(store, golden_set, store.golden_set(golden_set).id, base, judge, session, parts,
             {i.id: i for i in load_items(store, golden_set)}, Options(resamples=resamples, seed=seed), workspace,
             provider_options, optimizer_options, concurrency, say)
    r0 = register_rubric(store, _renamed(base.rubric, candidate_name(base.name, session.id, 0), [spec]))
    db.record_lineage(store, r0.id, base.id, "")
    stopped = _evaluate(c, r0)
    while stopped is None:
        done = db.rounds(store, session.id)
        pending = next((r for r in done if r.status in ("proposing", "evaluating")), None)
        if pending is None:
            if len([r for r in done if r.status != "failed"]) >= rounds or len(done) >= 2 * rounds:
                break
            pending = db.insert_round(store, session.id, len(done) + 1, _parent_of(c, done, r0).id)
        stopped = _run_round(c, pending)
    if stopped:
        say(f"Stopped: the budget of ${session.budget_usd:.2f} would be passed by the next request; run again "
            "with a larger --budget to resume.")
    return SessionSummary(session.id, db.split(store, session.split_id), db.rounds(store, session.id),
                          c.spent(), session.budget_usd, stopped, messages)


def estimate(store: Store, golden_set: str, rubric: str, judge: str, *, strategy: str = "optimizer",
             optimizer: str | None = None, rounds: int = 3, held_out_fraction: float = 0.5, seed: int = 0,
             max_examples: int = 4) -> RefineEstimate:
    """The --dry-run: requests, tokens and cost of the rounds still to run. Writes nothing.

    Each round judges every split item with its child (the parent's copy once, at the start) and, with the
    optimizer strategy, sends one request of at most MAX_DISAGREEMENTS development items.
    """
    _check_options(strategy, optimizer, rounds, None, max_examples, held_out_fraction)
    base = get_rubric(store, rubric)
    spec = base.rubric.judge(judge)
    gs = store.golden_set(golden_set)
    s = db.open_session(store, gs.id, base.name, judge)
    if s is not None and s.base_rubric_id == base.id:
        parts = db.parts(store, s.split_id)
        finished = len([r for r in db.rounds(store, s.id) if r.status not in ("proposing", "evaluating",
                                                                                       "failed")])
    else:
        _, parts = _split_for(store, golden_set, base.name, seed=seed, held_out_fraction=held_out_fraction,
                              write=False)
        finished = 0
    items = [i for i in load_items(store, golden_set) if i.id in parts]
    todo = max(0, rounds - finished)
    judge_est = estimate_run(items, base.rubric, spec)
    runs = todo + (1 if s is None or s.base_rubric_id != base.id else 0)
    out = RefineEstimate(todo, *(sum(v == p for v in parts.values()) for p in PARTS), runs * judge_est.n_to_run,
                         _times(judge_est.cost_usd, runs), _times(judge_est.max_cost_usd, runs))
    if strategy == "optimizer" and todo:
        dev = [i for i in items if parts[i.id] == "development"][:MAX_DISAGREEMENTS]
        fake = [opt.Disagreement(i.id, example_excerpt(i), 0, (), 0, "") for i in dev]
        request = opt.edit_request(base.rubric.content(), "", fake, max_examples=max_examples)
        one = estimate_cost(parse_model(optimizer).model, estimate_input_tokens(request), request.max_tokens)
        out = replace(out, optimizer_requests=todo, optimizer_max_cost_usd=_times(one, todo))
    return out


def _times(cost: float | None, n: int) -> float | None:
    return None if cost is None else cost * n


# --------------------------------------------------------------------------- what leads see and decide

def rounds_of(store: Store, golden_set: str, rubric: str) -> list[SessionHistory]:
    """Every session of the rubric on the golden set with its split and rounds, newest first: for the page."""
    gs = store.golden_set(golden_set)
    out = []
    for s in reversed(db.sessions(store, gs.id, rubric)):
        rows = db.rounds(store, s.id)
        out.append(SessionHistory(s, db.split(store, s.split_id), rows, {r.id: _diff(store, r) for r in rows},
                                  get_rubric_by_id(store, s.base_rubric_id).version))
    return out


def _diff(store: Store, rnd: RefineRound) -> str | None:
    lin = db.lineage(store, rnd.child_rubric_id) if rnd.child_rubric_id else None
    return None if lin is None else lin.diff


def _lead(store: Store, lead: str) -> None:
    if db.rater_role(store, lead) not in ("lead", "admin"):
        raise ConfigError(f"'{lead}' is not a lead; only a lead accepts or discards a refined rubric "
                          f"(workbench rater set {lead} --role lead)")


def accept_round(store: Store, round_id: int, *, lead: str) -> RubricVersion:
    """Add the round's child as the base rubric's next version (all the base's judges kept); nothing is exported."""
    _lead(store, lead)
    rnd = db.round_(store, round_id)
    if rnd.status != "proposed":
        raise Conflict(f"round {round_id} is {rnd.status}; only a round its held-out check proposed can be "
                       "accepted")
    session = db.session(store, rnd.session_id)
    base = get_rubric_by_id(store, session.base_rubric_id)
    latest = get_rubric(store, base.name)
    child = get_rubric_by_id(store, rnd.child_rubric_id)
    accepted = _renamed(child.rubric, base.name, latest.rubric.judges)
    rv = register_rubric(store, accepted, actor=lead)
    with store.transaction():
        db.record_lineage(store, rv.id, base.id, rubric_diff(base.rubric, accepted), round_id=round_id)
        db.decide_round(store, round_id, "accepted", lead, accepted_rubric_id=rv.id)
        db.set_session_status(store, session.id, "accepted")
    return rv


def discard_round(store: Store, round_id: int, *, lead: str) -> None:
    _lead(store, lead)
    rnd = db.round_(store, round_id)
    if rnd.status not in ("proposed", "rejected", "failed"):
        raise Conflict(f"round {round_id} is {rnd.status}; only a finished round that is not accepted can be "
                       "discarded")
    db.decide_round(store, round_id, "discarded", lead)


def card_note(store: Store, rubric_name: str, version: int) -> str | None:
    """The calibration card's sentence on a rubric version a lead accepted from the refinement loop (else None)."""
    rv = get_rubric(store, rubric_name, version)
    lin = db.lineage(store, rv.id)
    if lin is None or lin.round_id is None or lin.split_id is None or rubric_name != _base_name(store, lin):
        return None
    s = db.split(store, lin.split_id)
    results = db.round_(store, lin.round_id).results
    return (f"This rubric version was refined (session {lin.session_id}, round {lin.round_number}) on "
            f"{len(s.items.development)} development items of a split of golden set version "
            f"{s.golden_set_version} (`{s.golden_set_version_hash[:16]}`, seed {s.seed}, stratified by "
            f"{s.strata}); {len(s.items.held_out)} held-out items decided its acceptance "
            f"({results.held_out.sentence if results else 'no numbers recorded'}). This calibration uses the whole golden set, "
            "including the development items the rubric was tuned on, so its agreement may be optimistic there.")


def _base_name(store: Store, lin: Lineage) -> str:
    return get_rubric_by_id(store, lin.parent_rubric_id).name


def jsonable_summary(summary: SessionSummary) -> dict[str, Any]:
    """The CLI's --json: the session, its split and rounds."""
    return json.loads(json.dumps({"session": summary.session_id, "split": summary.split.to_json(),
                                  "rounds": [r.to_json() for r in summary.rounds],
                                  "spent_usd": summary.spent_usd, "budget_usd": summary.budget_usd,
                                  "stopped": summary.stopped}, default=str))
