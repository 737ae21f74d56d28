"""The calibration report's ``steps`` section, from the marks the store read (``store.StepMarks``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from workbench.stats.steps.attribution import (LONG_AFTER, attribution, consensus_agent, consensus_step,
    human_vs_human)


@dataclass(frozen=True, slots=True)
class StepMark:
    """A reviewer's mark: the decisive error step of an item (and the agent, where named)."""

    item_id: str
    rater: str
    step: int
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class JudgedStep:
    """The step (and agent) a judge blamed for an item's failure."""

    item_id: str
    step: int
    agent: str | None = None


def step_section(labels: Sequence[StepMark], judged: dict[str, JudgedStep], step_agents: dict[str, list], *,
                 resolved: dict[str, int], pass_threshold: int, task_of: dict[str, Any], within: Sequence[int] = (),
                 resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The calibration report's ``steps`` section.

    ``labels``: people's marks; ``judged``: item id -> the judge's step; ``step_agents``: item id -> who took each step; ``resolved``: the consensus score of each item. An
    item counts where its consensus fails (below ``pass_threshold``) and a strict majority of the reviewers who
    marked a step marked the same one (the people's agent: the majority of theirs, else that step's agent); items
    without such a majority are unresolved, counted and listed."""
    marks: dict[str, list[StepMark]] = {}
    for r in labels:
        if r.item_id in resolved and resolved[r.item_id] < pass_threshold:
            marks.setdefault(r.item_id, []).append(r)
    human: dict[str, tuple[int, Any]] = {}
    unresolved = []
    for item_id, rows in marks.items():
        step = consensus_step([r.step for r in rows])
        if step is None:
            unresolved.append(item_id)
            continue
        human[item_id] = (step, consensus_agent([r.agent for r in rows if r.step == step]))
    both = [i for i in human if i in judged and step_agents.get(i)]
    section: dict[str, Any] = {"n_items": len(both), "n_human_steps": len(human), "n_unresolved_steps": len(unresolved),
                               "n_judge_steps": len(judged), "unresolved_items": unresolved, "long_after": LONG_AFTER,
                               "judge": None, "humans": None}
    if both:
        section["judge"] = attribution(
            [human[i][0] for i in both], [judged[i].step for i in both], [len(step_agents[i]) for i in both],
            [task_of.get(i, i) for i in both], human_agent=[human[i][1] for i in both],
            judge_agent=[judged[i].agent for i in both], step_agents=[step_agents[i] for i in both],
            within=within, resamples=resamples, seed=seed)
    multi = [i for i, rows in marks.items() if len(rows) >= 2 and step_agents.get(i)]
    if multi:
        def agent_of(i: str, r: StepMark) -> Any:
            steps = step_agents[i]
            return r.agent or (steps[r.step] if r.step < len(steps) else None)

        section["humans"] = human_vs_human(
            [[r.step for r in marks[i]] for i in multi], [task_of.get(i, i) for i in multi],
            agents_by_item=[[agent_of(i, r) for r in marks[i]] for i in multi],
            n_steps=[len(step_agents[i]) for i in multi], resamples=resamples, seed=seed)
    return section
