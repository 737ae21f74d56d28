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
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

PROJECT_ENV = "WORKBENCH_PROJECT"
DB_ENV = "WORKBENCH_DB"
DB_FILE = "workbench.db"


@dataclass(frozen=True)
class Workspace:
    root: Path  # absolute
    db: Path    # as given (relative to the working directory), or root / workbench.db

    @classmethod
    def resolve(cls, project: str | Path | None = None, db: str | Path | None = None, *,
                environ: Mapping[str, str] | None = None) -> "Workspace":
        """The workspace of explicit options, else of ``WORKBENCH_PROJECT`` / ``WORKBENCH_DB``, else of the cwd."""
        env = os.environ if environ is None else environ
        root = Path(project or env.get(PROJECT_ENV) or ".").expanduser().absolute()
        db_path = Path(db or env.get(DB_ENV) or root / DB_FILE).expanduser()
        return cls(root, db_path)

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
        return {PROJECT_ENV: str(self.root), DB_ENV: str(self.db.absolute())}


def shown_path(path: str | Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    path = Path(path)
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def current() -> Workspace:
    """The workspace of the environment: for library callers that were not handed one (the UI process, scripts)."""
    return Workspace.resolve()
