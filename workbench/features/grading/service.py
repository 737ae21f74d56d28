"""Grading new items with an approved bundle: raw, Rogan-Gladen corrected and prediction-powered pass rates."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from workbench import stats
from workbench.core.consensus import consensus_label
from workbench.core.errors import InputError
from workbench.core.formats import parse_item, parse_label, read_records, write_jsonl
from workbench.core.models import Item, Judgment, JudgeSpec, Rubric
from workbench.core.scale import Scale
from workbench.judges.rubrics import rubric_from_dict
from workbench.stats.correction import YOUDEN_MARGIN
from workbench.store import Store
from workbench.core.inputs import MAX_RESAMPLES, MAX_SEED
from workbench.core.workspace import Workspace
from workbench.features.export.bundle import load_bundle
from workbench.features.export.records import Bundle, BundleCalibration
from workbench.features.grading.records import GradedItem, PassRateCorrection
from workbench.features.importing.service import import_items, parse_judgment_with_confidence

# (items, rubric, judge spec) -> one judgment per item; the default runs the bundle's judge for real.
ItemJudge = Callable[[Sequence[Item], Any, JudgeSpec], list[Judgment]]


def read_items(path: str | Path) -> list[Item]:
    items, seen = [], {}
    for rec in read_records(path):
        it = parse_item(rec)
        if it.id in seen:
            raise rec.error(f"item id '{it.id}' appears twice (also line {seen[it.id]})", field="id",
                            fix="give each item its own id")
        seen[it.id] = rec.line
        items.append(it)
    return items


def read_judgments(path: str | Path, item_ids: set[str], scale: Scale) -> dict[str, Judgment]:
    """The judgments made elsewhere for the items being graded; every score on the bundle's scale."""
    out: dict[str, Judgment] = {}
    for rec in read_records(path):
        _, j = parse_judgment_with_confidence(rec, scale, scale_of="the bundle's rubric")  # confidence: optional
        if j.item_id not in item_ids:
            raise rec.error(f"judgment for item '{j.item_id}', which is not in the items file", field="item_id",
                            fix="grade the items the judgments are for")
        if j.repeat == 0:
            out[j.item_id] = j
    return out


def read_human_labels(path: str | Path, item_ids: set[str], scale) -> dict[str, int | None]:
    by_item: dict[str, list[int]] = defaultdict(list)
    for rec in read_records(path):
        lab = parse_label(rec, scale, scale_of="the bundle's rubric")
        if lab.item_id not in item_ids:
            raise rec.error(f"label for item '{lab.item_id}', which is not in the items file", field="item_id",
                            fix="label only items being graded")
        by_item[lab.item_id].append(lab.score)
    return {i: consensus_label(s) for i, s in by_item.items()}


def grade(store: Store, bundle_file: str | Path, items_file: str | Path, *, labels_file: str | Path | None = None,
          judgments_file: str | Path | None = None, out: str | Path | None = None, judge_items: ItemJudge | None = None,
          resamples: int = 2000, seed: int = 0, workspace: Workspace | None = None,
          queue: str | None = None, cascade_judgments: dict[str, str | Path] | None = None) -> dict[str, Any]:
    """Grade the items with the bundle's judge (or take its judgments from a file) and correct the pass rate.

    The bundle is verified first (``load_bundle``: a signed one with ``workspace``'s public keys). A selective
    bundle (``export --selective``) grades only the items whose judgment carries a confidence at or above its
    threshold and abstains on the rest (no confidence: abstains); pass rates are over the kept items, and
    ``queue`` names a golden set (made if new) that receives exactly the abstained items for reviewers.

    A cascade bundle (``export --selective --cascade J1,J2``) sends the items each judge abstains on to the next,
    with that judge's threshold: its judgments come from ``cascade_judgments`` (judge -> file), or, when the
    bundle's judge is run here (no ``judgments_file``), from running it (its rubric is the bundle's); the items no
    judge keeps are the abstained ones. The pass rates are over every kept item, corrected with the sum of the
    judges' confusion matrices on the calibration items each kept (the cascade's errors on what it grades)."""
    if not 1 <= resamples <= MAX_RESAMPLES or not 0 <= seed <= MAX_SEED:
        raise InputError(f"resamples must be a whole number from 1 to {MAX_RESAMPLES:,} and the seed from 0 to "
                         f"2**63 - 1, got {resamples} and {seed}", fix="write e.g. --resamples 2000 --seed 0")
    bundle = Bundle.from_json(load_bundle(store, bundle_file, workspace))
    rubric = rubric_from_dict(bundle.rubric.content)
    spec = rubric.judge(bundle.judge.id)
    items = read_items(items_file)
    ids = {i.id for i in items}
    if judge_items is None and judgments_file is None:
        from workbench.features.judging.service import judge_items  # runs the real provider
    stages = _cascade(bundle.selective, cascade_judgments, judgments_file is None)
    if judgments_file is not None:
        judged = read_judgments(judgments_file, ids, rubric.scale)
    elif stages and bundle.selective.get("threshold") is None:
        judged = {}  # a cascade that skips its first judge (it keeps nothing): not run, not paid for
    else:
        judged = {j.item_id: j for j in judge_items(items, rubric, spec)}
    humans = read_human_labels(labels_file, ids, rubric.scale) if labels_file else {}
    abstained = _abstained(items, judged, bundle.selective)
    graded_by = {it.id: spec.id for it in items if it.id not in set(abstained)}
    for stage in stages[1:]:  # what one judge abstains on goes to the next
        left = [it for it in items if it.id in set(abstained)]
        if not left:
            break
        if stage.get("threshold") is None:
            continue  # a skipped judge keeps nothing: what reaches it goes on, and it is not run
        following = rubric.judge(stage["judge"])
        if stage["judge"] in (cascade_judgments or {}):
            theirs = read_judgments(cascade_judgments[stage["judge"]], ids, rubric.scale)
        else:
            theirs = {j.item_id: j for j in judge_items(left, rubric, following)}
        abstained = _abstained(left, theirs, stage)
        for it in left:
            if it.id not in set(abstained):
                judged[it.id], graded_by[it.id] = theirs.get(it.id), following.id
    graded_items = [it for it in items if it.id not in set(abstained)]
    rows = [_graded(it.id, judged.get(it.id), humans, rubric, graded_by.get(it.id) if stages else None)
            for it in graded_items]
    new_pass = [r.passed for r in rows if r.score is not None]

    cal = bundle.calibration
    # a selective bundle corrects with the judge's errors on the items it keeps, not on all items (a cascade's:
    # the sum of its judges' matrices on the items each kept)
    kept = _kept_confusion(bundle.selective, stages)
    golden_human, golden_judge = stats.golden_pass_arrays(kept.get("matrix") if kept else cal.confusion.matrix,
                                                          scale=list(rubric.scale.values),
                                                          pass_threshold=rubric.pass_threshold)
    if not new_pass and abstained:
        said = ("no judge of the bundle's cascade kept any" if stages else
                f"confidence below the bundle's threshold {bundle.selective.get('threshold')}")
        raise InputError(f"the judge abstained on every scored item ({said}), so there is no pass rate to report",
                         file=Path(items_file).name, fix="give the judgments their 'confidence', or have people "
                                                         "grade these items")
    if not new_pass:
        raise InputError("no item received a score, so there is no pass rate to report", file=Path(items_file).name,
                         fix="check the judgments or the judge's unscored reasons")
    corrected = PassRateCorrection.from_json(stats.corrected_pass_rate(
        golden_human, golden_judge, np.array(new_pass), design_effect=_design_effects(cal),
        resamples=resamples, seed=seed))
    ppi = None
    labeled = [r for r in rows if r.human_score is not None and r.score is not None]
    unlabeled = [r for r in rows if r.human_score is None and r.score is not None]
    if labeled:  # too few labels, or one-sided ones, give a refusal with its reason rather than nothing
        ppi = stats.ppi_mean([rubric.is_pass(r.human_score) for r in labeled], [r.passed for r in labeled],
                             [r.passed for r in unlabeled])
    if abstained and queue is not None:  # once everything is computed: a refusal above leaves nothing written
        _queue(store, set(abstained), queue, Path(items_file))
    if out is not None:
        write_jsonl(Path(out), [r.to_json() for r in rows])
    # A refused correction shows no number: its bare point estimate would be read as a result.
    corrected_rate = ({"value": None, "ci_low": None, "ci_high": None} if corrected.refused
                      else corrected.corrected)
    return stats.jsonable({
        "schema": "workbench.grade/1",
        "bundle": {"file": Path(bundle_file).name, "sha256": bundle.sha256, "rubric": bundle.rubric.name,
                   "rubric_version": bundle.rubric.version, "judge": bundle.judge.id},
        "n_items": len(items), "n_scored": len(new_pass), "n_unscored": len(graded_items) - len(new_pass),
        **({"selective": {"threshold": bundle.selective.get("threshold"), "target": bundle.selective.get("target"),
                          "risk": bundle.selective.get("risk"), "corrected_with": ("confusion on the cascade's kept "
                          "items" if stages else "confusion on kept items") if kept else "confusion on all items",
                          **({"cascade": [{"judge": st["judge"], "threshold": st.get("threshold"),
                                           "n_graded": sum(1 for j in graded_by.values() if j == st["judge"])}
                                          for st in stages]} if stages else {})},
            "n_abstained": len(abstained), "abstained_ids": abstained,
            "share_abstained": len(abstained) / len(items), "queue": queue} if bundle.selective else {}),
        "pass_threshold": rubric.pass_threshold,
        "raw_pass_rate": corrected.raw,
        "corrected_pass_rate": corrected_rate,
        "tpr": corrected.tpr, "tnr": corrected.tnr,
        "youden_index": corrected.youden,
        "correction_reason": corrected.reason,
        "correction": {
            "method": "Rogan-Gladen; interval from Jeffreys beta posteriors of TPR, TNR and the observed pass rate",
            "refused": corrected.refused, "reason": corrected.reason,
            "youden_margin": YOUDEN_MARGIN,
            "n_golden_pass": corrected.n_pos, "n_golden_fail": corrected.n_neg,
            "design_effect": corrected.design_effect,
            "undefined_resamples": corrected.undefined_resamples,
            "resamples": resamples, "seed": seed, "level": corrected.bootstrap.level,
        },
        "ppi": ppi,
        "results_file": None if out is None else str(out),
    })


def _cascade(selective: dict | None, files: dict[str, str | Path] | None, runs_judges: bool) -> list[dict]:
    """A cascade bundle's stages (none for other bundles), after checking that every judge after the first has its
    judgments: a file of ``files``, or the judge is run here. Refused before anything is read or written."""
    stages = list((selective or {}).get("cascade") or ())
    if files and not stages:
        raise InputError("--cascade-judgments given, but the bundle has no cascade",
                         fix="export the judges with --selective --cascade J1,J2 first, or leave it out")
    names = [st.get("judge") for st in stages]
    for name in files or {}:
        if name not in names[1:]:
            raise InputError(f"--cascade-judgments names judge '{name}', which is not a later judge of the bundle's "
                             f"cascade ({', '.join(names) or 'none'})", fix="name the judges after the first")
    missing = [st.get("judge") for st in stages[1:]  # a skipped judge (no threshold) needs no judgments
               if st.get("judge") not in (files or {}) and st.get("threshold") is not None]
    if missing and not runs_judges:
        raise InputError(f"the bundle's cascade sends what '{names[0]}' abstains on to {', '.join(map(repr, missing))}, "
                         "whose judgments are not given", fix="add --cascade-judgments " +
                         " ".join(f"{n}=FILE" for n in missing) + " (each with its confidence), or leave out "
                         "--judgments to run the judges")
    return stages


def _kept_confusion(selective: dict | None, stages: list[dict]) -> dict | None:
    """The confusion grade corrects a selective bundle with: the judge's on its kept items, a cascade's summed."""
    kept = (selective or {}).get("confusion")
    parts = [st.get("confusion") for st in stages]
    if not stages or not kept or any(p is None or p.get("labels") != kept.get("labels") for p in parts):
        return kept
    size = len(kept["labels"])
    return {"labels": kept["labels"], "matrix": [[sum(p["matrix"][r][c] for p in parts) for c in range(size)]
                                                 for r in range(size)]}


def _abstained(items: list[Item], judged: dict[str, Judgment], selective: dict | None) -> list[str]:
    """Ids of the items a selective bundle's judge abstains on: no judgment, no confidence, or one below the
    threshold (no threshold: every item). Unscored judgments are not abstentions: they stay unscored, as without a
    threshold."""
    if not selective:
        return []
    threshold = selective.get("threshold")
    if threshold is None:
        return [it.id for it in items]
    out = []
    for it in items:
        j = judged.get(it.id)
        if j is not None and j.score is None:
            continue
        if j is None or j.confidence is None or j.confidence < threshold:
            out.append(it.id)
    return out


def _queue(store: Store, abstained: set[str], golden_set: str, items_file: Path) -> None:
    """The abstained items into golden set ``golden_set`` (made if new) for reviewers: the items file's own records
    for them, imported as ``workbench import items`` would (re-grading adds nothing twice)."""
    import json
    import tempfile

    records = [rec.data for rec in read_records(items_file) if parse_item(rec).id in abstained]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{items_file.stem}.abstained.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        import_items(store, path, golden_set)


def _graded(item_id: str, j: Judgment | None, humans: dict[str, int | None], rubric: Rubric,
            judge: str | None = None) -> GradedItem:
    score = j.score if j else None
    return GradedItem(item_id, score, None if score is None else rubric.is_pass(score),
                      unscored_reason=(j.unscored_reason if j else "no judgment for this item") if score is None
                      else None,
                      rationale=j.rationale if j else None, human_score=humans.get(item_id),
                      labeled=item_id in humans, judge=judge)


def _design_effects(calibration: BundleCalibration) -> tuple[float, float] | None:
    """TPR's and TNR's design effects if the bundle records them; without them the golden items count as independent."""
    found = tuple(m.design_effect if (m := calibration.metrics.get(name)) else None for name in ("tpr", "tnr"))
    return None if None in found else found


def _bundle_design_effect(calibration: dict) -> tuple[float, float] | None:
    """:func:`_design_effects` of a bundle's calibration section as JSON (the board reads stored bundles so)."""
    return _design_effects(BundleCalibration.from_json(calibration))
