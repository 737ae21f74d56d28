"""`workbench import`: items, labels, adjudications and judgments from JSONL, or another eval tool's results."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.cli.common import Ctx, WorkbenchGroup, _with_progress, clean_errors, pass_ctx


class _ImportGroup(WorkbenchGroup):
    """`import items|labels|...` as subcommands, and `import --from SOURCE FILE_OR_URI ...` on the group itself."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        subcommand = bool(args) and not args[0].startswith("-") and args[0] in self.commands
        if not subcommand and any(a == "--from" or a.startswith("--from=") for a in args):
            # the hidden command named '--from' takes this form ('--' ends the group's own options)
            args = ["--", "--from", *args]
        return super().parse_args(ctx, args)


@click.group("import", cls=_ImportGroup)
def import_() -> None:
    """Import items, labels, adjudications and judgments (.jsonl or .csv), or another tool's results.

    \b
    From another eval tool (items, human labels and LLM-judge verdicts at once):
      workbench import --from inspect|promptfoo|deepeval|mlflow|langfuse|phoenix FILE_OR_URI \\
          --golden-set G --rubric R [--map MAP.yaml]
    See 'workbench import --from SOURCE --help' for the options.
    """


def _source_names() -> list[str]:
    from workbench.features.interop.registry import adapter_names  # stdlib only: cheap enough for --help
    return adapter_names()


def _sources_epilog() -> str:
    from workbench.features.interop.registry import adapter_entries
    return "\b\nSources:\n" + "\n".join(f"  {e.name:10s} {e.what}" for e in adapter_entries())


@import_.command("--from", hidden=True, creates_db=True, options_metavar="SOURCE [OPTIONS]",
                 epilog=_sources_epilog())
@click.option("--from", "source", required=True, metavar="SOURCE",
              help=f"The tool the results come from: {', '.join(_source_names())} (or an adapter registered with "
                   "workbench.features.interop.registry.source_adapter).")
@click.argument("uri", metavar="FILE_OR_URI")
@click.option("--golden-set", "-g", required=True, help="Golden set to import into (created if new).")
@click.option("--rubric", "-r", required=True, help="Rubric whose scale the values are mapped onto.")
@click.option("--map", "map_file", type=click.Path(dir_okay=False), default=None,
              help="Import map (YAML or JSON) from the tool's values to the scale (default: the rubric's "
                   "import_maps).")
@click.option("--scorer", default=None, metavar="NAME",
              help="Inspect: import only this scorer of the log (a log of two or more scorers needs it, or "
                   "--judge-per-scorer).")
@click.option("--judge-per-scorer", is_flag=True,
              help="Inspect: import each scorer of the log as its own judge, named after the scorer.")
@pass_ctx
@clean_errors
def import_from_source(ctx: Ctx, source: str, uri: str, golden_set: str, rubric: str, map_file: str | None,
                       scorer: str | None, judge_per_scorer: bool) -> None:
    """Import another eval tool's results: items, human labels and LLM-judge verdicts, all or nothing.

    \b
    Example:
      workbench import --from inspect logs/2026-11-20_qa.eval --golden-set qa --rubric qa-correctness
      workbench import --from deepeval .deepeval/test_run.json -g qa -r qa-correctness --map deepeval-map.yaml
      workbench import --from inspect logs/run2.eval -g qa -r qa-correctness --scorer model_graded_qa

    Importing the same results again changes nothing and says "nothing new"; a second run of the tool on the
    same items (an Inspect log of the task run again) becomes a second run of the judge.
    """
    from workbench.features.interop.service import import_from

    shown = False

    def progress(n: int) -> None:
        nonlocal shown
        shown = True
        click.echo(f"\rReading {source} records: {n}", err=True, nl=False)

    try:
        res = import_from(ctx.store, source, uri, golden_set, rubric, map_file=map_file, progress=progress,
                          scorer=scorer, judge_per_scorer=judge_per_scorer)
    finally:
        if shown:  # end the progress line, so an error starts a line of its own
            click.echo(err=True)
    for line in res.summary_lines():
        click.echo(line)


@import_.command("items", creates_db=True)
@click.argument("file", type=click.Path())
@click.option("--golden-set", "-g", required=True, help="Golden set to import into (created if new).")
@click.option("--from", "source", type=click.Choice(["who-and-when"]), default=None,
              help="FILE is a folder of public runs in that format: who-and-when (Who&When's failed multi-agent "
                   "runs: each a trajectory item, each human annotation a failing label with its step and agent).")
@click.option("--rubric", "-r", default=None, help="With --from: the rubric the labels go under (default: the "
              "built-in who-and-when-attribution).")
@pass_ctx
@clean_errors
def import_items(ctx: Ctx, file: str, golden_set: str, source: str | None, rubric: str | None) -> None:
    """Import items into a golden set; the whole file lands or nothing does.

    \b
    Example:
      workbench import items golden_sets/demo/items.jsonl --golden-set demo
      workbench import items --from who-and-when ../Who\\&When --golden-set ww
    """
    if source == "who-and-when":
        from workbench.features.steps.who_and_when import import_who_and_when

        for line in import_who_and_when(ctx.store, file, golden_set, rubric=rubric).summary_lines():
            click.echo(line)
        return
    if rubric is not None:
        raise click.UsageError("--rubric goes with --from: items of a .jsonl or .csv file carry no labels")
    if Path(file).is_dir():
        raise click.UsageError(f"{file} is a folder: name a .jsonl or .csv file (or a folder of public runs with "
                               "--from who-and-when)")
    from workbench.features.importing import service as svc

    res = _with_progress(file, "Importing items",
                         lambda tick: svc.import_items(ctx.store, file, golden_set, progress=tick))
    click.echo(res.summary("items"))


@import_.command("labels", creates_db=True)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--golden-set", "-g", required=True, help="Golden set the items belong to.")
@click.option("--rubric", "-r", required=True, help="Rubric whose scale the scores are on.")
@click.option("--new-raters", is_flag=True, help="Add the raters the file names who are not raters yet as "
              "reviewers (without it such a file is refused, naming the value).")
@pass_ctx
@clean_errors
def import_labels(ctx: Ctx, file: str, golden_set: str, rubric: str, new_raters: bool) -> None:
    """Import human labels; one label per item, rater and rubric. Each rater is a known rater's email or name.

    \b
    Example:
      workbench import labels golden_sets/demo/demo-patch-quality/labels.jsonl \\
          --golden-set demo --rubric demo-patch-quality --new-raters
    """
    from workbench.features.importing import service as svc

    res = _with_progress(file, "Importing labels",
                         lambda tick: svc.import_labels(ctx.store, file, golden_set, rubric, progress=tick,
                                                        new_raters=new_raters))
    click.echo(res.summary("labels"))


@import_.command("adjudications", creates_db=True)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--golden-set", "-g", required=True, help="Golden set the items belong to.")
@click.option("--rubric", "-r", required=True, help="Rubric whose scale the scores are on.")
@pass_ctx
@clean_errors
def import_adjudications(ctx: Ctx, file: str, golden_set: str, rubric: str) -> None:
    """Import leads' final labels (item_id, score, note, lead).

    \b
    Example:
      workbench import adjudications golden_sets/demo/demo-patch-quality/adjudications.jsonl \\
          --golden-set demo --rubric demo-patch-quality
    """
    from workbench.features.importing import service as svc

    click.echo(svc.import_adjudications(ctx.store, file, golden_set, rubric).summary("adjudications"))


@import_.command("judgments", creates_db=True)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--golden-set", "-g", required=True, help="Golden set the items belong to.")
@click.option("--rubric", "-r", required=True, help="Rubric that declares the judge.")
@click.option("--judge", "-j", required=True, help="Judge id declared in the rubric.")
@pass_ctx
@clean_errors
def import_judgments(ctx: Ctx, file: str, golden_set: str, rubric: str, judge: str) -> None:
    """Import judgments made elsewhere for a declared judge.

    \b
    Example:
      workbench import judgments golden_sets/demo/demo-patch-quality/judgments/lenient-mini.jsonl \\
          --golden-set demo --rubric demo-patch-quality --judge lenient-mini

    The judgments land in the rubric's current version, or in version N with --rubric NAME@vN.
    """
    from workbench.features.importing import service as svc

    res = _with_progress(file, "Importing judgments",
                         lambda tick: svc.import_judgments(ctx.store, file, golden_set, rubric, judge, progress=tick))
    click.echo(res.summary("judgments"))
