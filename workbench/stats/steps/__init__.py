"""Failure attribution: where did a failing trajectory go wrong, and does a judge find it as people do?
``attribution`` (the measures, the baselines, their intervals: see its module's docstring), ``human_vs_human`` and
``step_section`` (the report's section)."""

from workbench.stats.steps.attribution import (GROUPS, HITS, LONG_AFTER, WITHIN, agent_key, attribution,  # noqa: F401
    consensus_agent, consensus_step, human_vs_human, random_hits)
from workbench.stats.steps.section import JudgedStep, StepMark, step_section  # noqa: F401
