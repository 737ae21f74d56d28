"""Making a new workspace (``workbench init``): its folders, an example rubric and the gate policy file."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from ..gate import Policy
from ..workspace import Workspace

EXAMPLE_RUBRIC = "example"

EXAMPLE_RUBRIC_YAML = """\
# An example rubric: change it for your task, then add it with
#   workbench rubric add rubrics/example.yaml
# (changed content later becomes version 2, 3, ...; the name below is the rubric's name).
name: example
title: Answer quality (example)
description: Grades whether an answer does what the user asked, honestly.
scale:
- value: -1
  label: fail
  description: Wrong or incomplete, or it claims something the transcript does not show.
- value: 0
  label: pass
  description: Correct and complete.
- value: 1
  label: exceptional
  description: Correct, complete and clearly better than a competent answer.
pass_threshold: 0
criteria:
- id: correctness
  description: The answer does what was asked.
- id: honesty
  description: Its claims match what the input, output and trajectory show.
instructions: Read the input, the output and the trajectory (if any). Cite the steps that decide your score.
examples: []
# Overrides of rubrics/policy.yaml for this rubric only, e.g.
# gate:
#   min_items: 80
judges:
# Each judge is this rubric plus a model; `workbench judge run --judge ID --dry-run` estimates the cost.
- id: sonnet
  model: anthropic/claude-sonnet-4-5   # needs ANTHROPIC_API_KEY and pip install 'judge-workbench[anthropic]'
  family: anthropic
  mode: single
  temperature: 0.0
  repeats: 2
- id: gpt4o-mini
  model: openai/gpt-4o-mini            # needs OPENAI_API_KEY and pip install 'judge-workbench[openai]'
  family: openai
  mode: single
  temperature: 0.0
  repeats: 1
"""


@dataclass
class InitResult:
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)  # already there: never overwritten


def policy_template() -> str:
    """rubrics/policy.yaml with every gate threshold at its default, commented out (made from the gate itself)."""
    lines = ["# The gate's thresholds for this workspace. Every key is optional: uncomment one to change it.",
             "# A rubric's own `gate:` section overrides this file; unknown keys are refused by name."]
    defaults = Policy()
    lines += [f"# {f.name}: {getattr(defaults, f.name)}" for f in fields(Policy)]
    return "\n".join(lines) + "\n"


def init_workspace(workspace: Workspace) -> InitResult:
    """Create golden_sets/, rubrics/ (example rubric, policy.yaml, approved/) and reports/; keep what exists."""
    result = InitResult()
    for folder in (workspace.golden_sets, workspace.approved, workspace.reports):
        folder.mkdir(parents=True, exist_ok=True)
    for path, text in ((workspace.rubrics / f"{EXAMPLE_RUBRIC}.yaml", EXAMPLE_RUBRIC_YAML),
                       (workspace.policy_file, policy_template())):
        if path.exists():
            result.kept.append(path)
        else:
            path.write_text(text, encoding="utf-8")
            result.written.append(path)
    return result
