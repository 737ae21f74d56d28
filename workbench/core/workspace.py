"""The workspace: the one folder that holds a team's database, golden sets, rubrics, gate policy and reports.

It is resolved once, at the edge: the command line's ``--project DIR``, else
``WORKBENCH_PROJECT``, else the working directory (the UI reads the same
variable, which ``workbench ui`` sets for it). Services receive it; no path is
ever found from where the package happens to be installed.

::

    <project>/
      workbench.db              the store (--db PATH or WORKBENCH_DB put it elsewhere)
      golden_sets/<name>/       items, labels, adjudications and judgments as files
      rubrics/<name>.yaml       rubrics
      rubrics/policy.yaml       the gate policy (optional)
      rubrics/approved/         bundles written by ``workbench export``
      reports/                  calibration cards and graded files
      keys/                     the signing key pair of ``workbench keys init``: workbench.key (owner-only,
                                ignored by git through keys/.gitignore) and workbench.pub (commit it)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Mapping

from workbench.core.policy import Policy

PROJECT_ENV = "WORKBENCH_PROJECT"
DB_ENV = "WORKBENCH_DB"
DB_FILE = "workbench.db"


@dataclass(frozen=True)
class Workspace:
    root: Path  # absolute
    db: Path | str  # an SQLite file as given (relative to the working directory), or root / workbench.db; a str: a URL

    @classmethod
    def resolve(cls, project: str | Path | None = None, db: str | Path | None = None, *,
                environ: Mapping[str, str] | None = None) -> "Workspace":
        """The workspace of explicit options, else of ``WORKBENCH_PROJECT`` / ``WORKBENCH_DB``, else of the cwd."""
        env = os.environ if environ is None else environ
        root = Path(project or env.get(PROJECT_ENV) or ".").expanduser().absolute()
        db_value = db or env.get(DB_ENV) or root / DB_FILE
        if isinstance(db_value, str) and is_url_like(db_value):
            return cls(root, db_value)  # a server's URL (or a mistyped one, which opening the store refuses)
        return cls(root, Path(db_value).expanduser())

    @property
    def db_is_file(self) -> bool:
        """True for an SQLite file (or ':memory:'), False for a database server's URL."""
        return isinstance(self.db, Path)

    def db_exists(self) -> bool:
        """Whether the database is there to open: a file that exists, ':memory:', or a server (asked when opened)."""
        return not isinstance(self.db, Path) or str(self.db) == ":memory:" or self.db.exists()

    @property
    def golden_sets(self) -> Path:
        return self.root / "golden_sets"

    @property
    def rubrics(self) -> Path:
        return self.root / "rubrics"

    @property
    def policy_file(self) -> Path:
        return self.rubrics / "policy.yaml"

    @property
    def approved(self) -> Path:
        return self.rubrics / "approved"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def keys(self) -> Path:
        """The signing key pair and the public keys the workspace trusts (every ``*.pub`` in it)."""
        return self.root / "keys"

    @property
    def signing_key_file(self) -> Path:
        return self.keys / "workbench.key"

    def environ(self) -> dict[str, str]:
        """The variables that make a child process (the Streamlit server) resolve this same workspace."""
        return {PROJECT_ENV: str(self.root), DB_ENV: str(self.db.absolute() if isinstance(self.db, Path) else self.db)}


def is_url_like(text: str) -> bool:
    """A scheme of two letters or more, then ':' (``postgresql://...``, ``mysql:``); a Windows drive (``C:/db``) is a path.

    >>> [is_url_like(t) for t in ("postgresql://h/db", "sqlite:///w.db", "postgresql:", "C:/w.db", "w.db")]
    [True, True, True, False, False]
    """
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]+:", text) is not None


def shown_path(path: str | Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it (a URL as it is)."""
    if isinstance(path, str) and is_url_like(path):
        return path
    path = Path(path)
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def current() -> Workspace:
    """The workspace of the environment: for library callers that were not handed one (the UI process, scripts)."""
    return Workspace.resolve()


# -- making a new workspace (`workbench init`): its folders, an example rubric and the gate policy file --

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
    lines += [f"# {f.name}: {getattr(defaults, f.name)}" for f in fields(Policy) if f.name != "selective"]
    lines.append("# selective: {target_agreement: 0.9, risk: 0.05}   # none by default; see docs/selective.md")
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
