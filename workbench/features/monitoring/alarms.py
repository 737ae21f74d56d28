"""The three alarms, each a sentence that says what moved, by how much, since when, and what to do."""

from __future__ import annotations

from datetime import datetime

from workbench.features.monitoring.records import Alarm, StreamBundle
from workbench.stats.monitoring import ShiftTest


def _day(text: str | datetime) -> str:
    return (text.isoformat() if isinstance(text, datetime) else str(text))[:10]


def validity(sb: StreamBundle, *, stream: str, since: str, n_labels: int, recent: float | None, n_recent: int,
             approved: float | None, e_value: float, alpha: float) -> Alarm:
    recent_text = f"{recent:.2f} on the last {n_recent} labels" if recent is not None else "unknown"
    approved_text = f" against {approved:.2f} at approval" if approved is not None else ""
    return Alarm("validity", (
        f"Validity: the judge '{sb.judge_id}' no longer agrees with the reviewers as the gate requires: "
        f"{sb.agreement_metric} is {recent_text}{approved_text}, below the bound {sb.min_agreement_lower:g} with "
        f"{1 - alpha:.0%} confidence (anytime-valid test by betting, e-value {e_value:.3g} >= {1 / alpha:g} after "
        f"{n_labels} labels since approval), since the window of {_day(since)}. Stop trusting its pass rates: "
        f"promote the labeled traces (workbench monitor promote --stream {stream} --golden-set G), re-calibrate "
        "and export a new bundle, or fix the judge."), since)


def shift(sb: StreamBundle, test: ShiftTest, *, stream: str, since: str, alpha: float) -> Alarm:
    if not test.on_lengths:
        moved = (f"category '{test.moved}' is {test.window_value:.0%} of the traces against "
                 f"{test.golden_value:.0%} of approval golden set '{sb.golden_set}'")
        todo = (f"label more '{test.moved}' traces and check the judge's agreement on them; promote them (workbench "
                f"monitor promote --stream {stream} --golden-set {sb.golden_set}) and re-calibrate")
        how = "exact test of the category mix" + (f" by Monte Carlo over {test.draws:,} tables"
                                                  if test.test == "monte-carlo" else ", bounded without draws")
    else:
        moved = (f"the median input length is {test.window_value:.0f} characters against {test.golden_value:.0f} "
                 f"in approval golden set '{sb.golden_set}' (KS distance {test.statistic:.2f})")
        todo = (f"label traces of the new kind and re-calibrate on them (workbench monitor promote --stream "
                f"{stream} --golden-set {sb.golden_set})")
        how = f"Kolmogorov-Smirnov test, {test.test.removeprefix('ks ')}"
    return Alarm("shift", (
        f"Shift: the traffic moved since the window of {_day(since)}: {moved} ({how}: p = {test.p_value:.2g}, "
        f"below this window's share {test.level:.2g} of alpha = {alpha:g} spent over windows). The approval may not "
        f"hold for it: {todo}."), since)


def expiry(sb: StreamBundle, *, stream: str | None = None) -> Alarm:
    where = f" of stream '{stream}'" if stream else ""
    return Alarm("expiry", (
        f"Expiry: the approval of {sb.file}{where} (judge '{sb.judge_id}', approved {_day(sb.approved_at)}) expired "
        f"on {_day(sb.expires_at)}, {sb.revalidate_after} days after approval (revalidate_after in the policy). "
        f"Re-calibrate on recent labels (workbench calibrate -g {sb.golden_set} after monitor promote) and export a "
        "new bundle."), _day(sb.expires_at))
