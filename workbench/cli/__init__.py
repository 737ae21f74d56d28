"""The `workbench` command line: the root group, and the commands of every feature registered on it.

Each module of this package holds the commands of one feature and imports only click and ``common`` at the top;
features are imported inside the commands, so that `workbench --help` stays fast. A command parses its options,
calls one feature function and prints (DESIGN section 8).
"""

from __future__ import annotations

import click

from workbench.cli import (
    board,
    calibration,
    export,
    golden_sets,
    importing,
    judging,
    probe,
    production,
    refine,
    rubrics,
    workspace,
)
from workbench.cli.common import AS_HELP, EXIT_BROKEN_PIPE, EXIT_ERROR, EXIT_GATE_FAILED, Ctx, WorkbenchGroup
from workbench.cli.team import data, people

__all__ = ["main", "Ctx", "EXIT_ERROR", "EXIT_GATE_FAILED", "EXIT_BROKEN_PIPE"]


@click.group(cls=WorkbenchGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", metavar="PATH", default=None,
              help="SQLite database file (or set WORKBENCH_DB; default: workbench.db in the project).")
@click.option("--project", metavar="DIR", default=None,
              help="Workspace folder with golden_sets/, rubrics/ and reports/ (or set WORKBENCH_PROJECT; "
                   "default: the working directory).")
@click.option("--as", "acting_as", metavar="EMAIL", default=None, help=AS_HELP)
@click.version_option(package_name="judge-workbench")
@click.pass_context
def main(ctx: click.Context, db: str | None, project: str | None, acting_as: str | None) -> None:
    """Judge Workbench: decide which LLM judges you may trust.

    \b
    Label a golden set, run or import judges, score each judge against the
    humans, and export only calibrated rubrics. --db, --project and --as may
    also follow the subcommand.

    \b
    Start here:  workbench demo        (the synthetic demo, in this folder)
                 workbench init        (an empty workspace of your own)
    """
    ctx.obj = Ctx(db, project, acting_as)
    ctx.call_on_close(_forget_acting_as)


def _forget_acting_as() -> None:
    """An invocation's --as ends with it (tests and scripts run several invocations in one process)."""
    import sys

    audit = sys.modules.get("workbench.store.audit")  # loaded only by a command that opened the store
    if audit is not None:
        audit.act_as(None)


for command in (workspace.init, workspace.demo, workspace.ui, rubrics.rubric, importing.import_, golden_sets.golden_set,
                people.rater, people.raters, people.audit, data.db, judging.judge, calibration.calibrate,
                calibration.compare, calibration.plan_command):
    main.add_command(command)
for module in (probe, refine, board, export, production):
    module.register(main)
