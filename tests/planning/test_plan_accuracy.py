"""`plan` itself, on a golden set of 1,500 generated items with 100 labeled: its items for an alpha interval 0.1 wide
against the items a simulated random-order campaign needs with the report's own intervals."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from workbench.core.consensus import consensus_label
from workbench.features.demo.generator import generate, with_effects
from workbench.features.importing import service as importing
from workbench.features.planning.plan import plan
from workbench.calibration.rubric_versions import add_rubric
from workbench.stats import agreement_with_intervals
from workbench.store import Store

RUBRIC = "demo-patch-quality"


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow
def test_plan_predicts_the_items_for_a_target_width(tmp_path: Path) -> None:
    cfg = replace(with_effects(n_items=1500, seed=21, error=0.15), true_distribution=(0.3, 0.5, 0.2))
    data = generate(cfg)
    by_item: dict[str, list[int]] = {}
    for lab in data.labels:
        by_item.setdefault(lab["item_id"], []).append(lab["score"])
    cons = {i: consensus_label(s) for i, s in by_item.items()}
    cons = {i: c for i, c in cons.items() if c is not None}
    judged = {r["item_id"]: r["score"] for r in data.judgments["sim"] if r["repeat"] == 0}
    task = {it["id"]: it["task_id"] for it in data.items}
    pool = sorted(i for i in cons if i in judged)

    store = Store(tmp_path / "wb.db")
    rubric = json.loads(json.dumps(data.rubric))
    rubric["judges"] = [{"id": "sim", "model": "openai/gpt-4o", "family": "openai"}]
    import yaml

    (tmp_path / f"{RUBRIC}.yaml").write_text(yaml.safe_dump(rubric, sort_keys=False))
    add_rubric(store, tmp_path / f"{RUBRIC}.yaml")
    importing.import_items(store, _jsonl(tmp_path / "items.jsonl", data.items), "big")
    importing.import_judgments(store, _jsonl(tmp_path / "j.jsonl", [
        {"item_id": i, "score": s} for i, s in judged.items()]), "big", RUBRIC, "sim")
    rng = np.random.default_rng(3)
    labeled = set(rng.choice(pool, size=100, replace=False).tolist())
    importing.import_labels(store, _jsonl(tmp_path / "l.jsonl", [
        {k: lab[k] for k in ("item_id", "rater", "score")} for lab in data.labels if lab["item_id"] in labeled]),
        "big", RUBRIC)
    p = plan(store, "big", RUBRIC, "sim", target_width=0.1)
    predicted = p.widths["krippendorff_alpha_ordinal"]["items_needed"]

    needed = []
    for seed in range(6):
        order = np.random.default_rng(100 + seed).permutation(pool)
        for n in range(100, len(order), 20):
            ids = order[:n]
            a = agreement_with_intervals([cons[i] for i in ids], [judged[i] for i in ids], [task[i] for i in ids],
                                         scale=(-1, 0, 1), pass_threshold=0, resamples=1000, seed=seed)
            m = a["metrics"]["krippendorff_alpha_ordinal"]
            if m["ci_high"] - m["ci_low"] <= 0.1:
                needed.append(n)
                break
    ratio = predicted / np.median(needed)
    assert 0.75 <= ratio <= 1.25, (predicted, needed)
