"""Stress probes on a judge: run it on perturbed golden items and measure what moves it.

Each probe (``workbench.calibration.probes``) gets its own run, tagged with the probe, on
the items the judge has already scored in its current calibration run (the
unperturbed verdicts to compare with): perturbed copies keep the item's id, so
the human labels stand for them. Runs go through the judge engine like any run
(``services.judging``): resumable, costed, leased, under a budget. They never
count as calibration runs.

The report compares each probe run with the current run's verdicts (repeat 0)
through :func:`workbench.stats.probes.probe_effect`; it is also a section of
the calibration report, which the gate, the card, the bundle and the
Robustness tab read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from workbench.core.errors import ConfigError, NotFound
from workbench.core.models import Item
from workbench.calibration.probes import Probe, ProbeTarget, get_probes, probe_frame, probe_section
from workbench.store import Store
from workbench.calibration.calibrate import Options, judge_data
from workbench.calibration.golden_sets import RunRow, consensus, load_items
from workbench.calibration.rubric_versions import JudgeRow
from workbench.features.probes.records import ProbeEstimate, ProbeOutcome, ProbeRun, ProbesEstimate


def target_of(data: Any) -> ProbeTarget:
    spec, rubric = data.spec, data.rubric.rubric
    return ProbeTarget(model=spec.model_name, family=spec.family, scale=tuple(rubric.scale.values),
                       pass_threshold=rubric.pass_threshold)


def _baseline(data: Any) -> pd.Series:
    """The current calibration run's scores (repeat 0), by item id: the verdicts each probe is compared with."""
    j = data.judgments
    sel = j[(j["run_id"] == _run(data).id) & (j["repeat"] == 0)]
    return sel.set_index("item_id")["score"].dropna().astype(int)


def _run(data: Any) -> RunRow:
    """The judge's current calibration run, the one the probes are compared with."""
    return RunRow(**data.run)


def _transform(probe: Probe, target: ProbeTarget, scored: set[str], limit: int | None
               ) -> Callable[[list[Item]], list[Item]]:
    """Golden items -> the probe's perturbed copies of the first ``limit`` items the judge has scored."""
    def transform(items: list[Item]) -> list[Item]:
        chosen = [it for it in items if it.id in scored]
        return [p for p in (probe.apply(it, target) for it in chosen[:limit]) if p is not None]
    return transform


def _applicable(store: Store, golden_set: str, data: Any, chosen: Sequence[Probe], target: ProbeTarget,
                scored: set[str], limit: int | None) -> list[Probe]:
    """The probes that apply to at least one of the items (``order`` needs outputs that list candidates) and
    to the judge (``pushback`` needs a chat model to talk back to): a probe with nothing to do gets no run."""
    from workbench.judges.runner import provider_traits  # the judge engine: imported to run probes, not to report them

    items = load_items(store, golden_set)
    chat, _ = provider_traits(data.spec)
    return [p for p in chosen if (chat or p.followup is None) and _transform(p, target, scored, limit)(items)]


def _prepare(store: Store, golden_set: str, rubric: str, judge: str, probes: Sequence[str] | None):
    data = judge_data(store, golden_set, rubric, judge)  # NotFound with the command to run when never judged
    baseline = _baseline(data)
    if baseline.empty:
        raise NotFound(f"judge '{judge}' has no scored verdict in its current run '{_run(data).name}' to compare "
                       "the probes with; run it on the unperturbed items first with 'workbench judge run'")
    return data, baseline, get_probes(probes)


def estimate(store: Store, golden_set: str, rubric: str, judge: str, *, probes: Sequence[str] | None = None,
             limit: int | None = None) -> ProbesEstimate:
    """The dry run: per probe, the judgments still to send and their estimated cost. Writes nothing."""
    data, baseline, chosen = _prepare(store, golden_set, rubric, judge, probes)
    target, scored = target_of(data), set(baseline.index)
    applicable = _applicable(store, golden_set, data, chosen, target, scored, limit)
    from workbench.features.judging import service as judging

    rows = []
    for probe in applicable:
        e = judging.estimate(store, golden_set, rubric, judge, repeats=1, probe=probe.name,
                             transform=_transform(probe, target, scored, limit))
        if probe.followup is not None:  # a second request carrying the first: about twice the tokens
            e = replace(e, input_tokens=_twice(e.input_tokens), output_tokens=_twice(e.output_tokens),
                        cost_usd=_twice(e.cost_usd), max_cost_usd=_twice(e.max_cost_usd))
        rows.append(ProbeEstimate(probe.name, probe.kind, e))
    return ProbesEstimate(judge, data.spec.model, _run(data).name, rows,
                          [p.name for p in chosen if p not in applicable])


def _twice(x: float | None) -> float | None:
    return None if x is None else 2 * x


def run(store: Store, golden_set: str, rubric: str, judge: str, *, probes: Sequence[str] | None = None,
        limit: int | None = None, budget_usd: float | None = None, concurrency: int = 8,
        progress: Callable[[str, int, int, float], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        provider_options: dict[str, Any] | None = None) -> ProbeOutcome:
    """Run each probe in turn (each its own resumable run); ``budget_usd`` bounds the spend of all of them."""
    if budget_usd is not None and budget_usd <= 0:
        raise ConfigError(f"the budget must be a positive amount in USD, got {budget_usd}")
    data, baseline, chosen = _prepare(store, golden_set, rubric, judge, probes)
    target, scored = target_of(data), set(baseline.index)
    runs, spent, stopped = [], 0.0, None
    applicable = _applicable(store, golden_set, data, chosen, target, scored, limit)
    from workbench.features.judging import service as judging

    for probe in applicable:
        left = None if budget_usd is None else budget_usd - spent
        if left is not None and left <= 0:
            stopped = "budget"
            break
        summary = judging.run_summary(
            store, golden_set, rubric, judge, repeats=1, concurrency=concurrency, budget_usd=left,
            progress=None if progress is None else (lambda d, t, c, name=probe.name: progress(name, d, t, c)),
            should_stop=should_stop, provider_options=provider_options, probe=probe.name,
            transform=_transform(probe, target, scored, limit), followup=probe.objection(target))
        spent += summary.report.spent_usd
        runs.append(ProbeRun(probe.name, summary))
        if summary.report.stopped:
            stopped = summary.report.stopped
            break
    return ProbeOutcome(judge, data.spec.model, _run(data).name, runs,
                        [p.name for p in chosen if p not in applicable], spent, stopped,
                        report(store, golden_set, rubric, judge, data=data))


def report(store: Store, golden_set: str, rubric: str, judge: str, *, options: Options = Options(),
           data: Any = None) -> dict[str, Any] | None:
    """Every probe run of the judge against its current run's verdicts; None when no probe has been run."""
    data = data or judge_data(store, golden_set, rubric, judge)
    gs = store.golden_set(golden_set)
    index = pd.DataFrame(store.item_index(gs.id)).set_index("item_id")
    resolved = consensus(store, golden_set, data.rubric.name).resolved
    return probe_section(probe_frame(store, gs.id, JudgeRow(**data.judge_row).pk), _baseline(data), resolved, index,
                         scale=list(data.rubric.rubric.scale.values), baseline_run=_run(data).name,
                         resamples=options.resamples, seed=options.seed)
