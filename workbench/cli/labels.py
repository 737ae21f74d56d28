"""`workbench export-labels`: the golden set's human labels, back in the team's own tool."""

from __future__ import annotations

import click

from workbench.cli.common import Ctx, WorkbenchCommand, clean_errors, pass_ctx


@click.command("export-labels", cls=WorkbenchCommand)
@click.option("--golden-set", "-g", required=True, help="Golden set whose human labels go out.")
@click.option("--to", "target", required=True, type=click.Choice(["jsonl", "mlflow", "langfuse"]),
              help="jsonl: a file, one line per label; mlflow: HUMAN feedback on traces of a tracking store; "
                   "langfuse: a file of score-create events for Langfuse's ingestion API.")
@click.argument("dest", metavar="DEST")
@click.option("--rubric", "-r", default=None, help="Only the labels of this rubric (default: every rubric's).")
@click.option("--data-type", type=click.Choice(["numeric", "categorical"]), default="numeric", show_default=True,
              help="langfuse: the score as a NUMERIC value, or its level's label as a CATEGORICAL one.")
@pass_ctx
@clean_errors
def export_labels(ctx: Ctx, golden_set: str, target: str, dest: str, rubric: str | None, data_type: str) -> None:
    """Write every human label of a golden set to DEST, once each (the latest value of a changed label).

    DEST is a file for jsonl and langfuse, a tracking URI for mlflow (with
    #experiment=NAME, else an experiment named after the golden set). Exporting
    again writes the same file, or adds no MLflow assessment.

    \b
    Example:
      workbench export-labels --golden-set qa --to jsonl labels-out.jsonl
      workbench export-labels --golden-set qa --to mlflow 'sqlite:///mlflow.db#experiment=qa'
      workbench export-labels -g qa --to langfuse scores.json --rubric qa --data-type categorical
    """
    from workbench.features.interop.writeback import export_labels as write_back

    result = write_back(ctx.store, golden_set, target, dest, rubric=rubric, data_type=data_type)
    click.echo(result.summary())
