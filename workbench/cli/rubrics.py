"""`workbench rubric add|list|show`: register and read versioned rubrics."""

from __future__ import annotations

import click

from workbench.cli.common import MAX_SEED, Ctx, WorkbenchGroup, _require, clean_errors, pass_ctx


@click.group(cls=WorkbenchGroup)
def rubric() -> None:
    """Add, list and show rubric versions."""


@rubric.command("add", creates_db=True)
@click.argument("path", type=click.Path(dir_okay=False))
@pass_ctx
@clean_errors
def rubric_add(ctx: Ctx, path: str) -> None:
    """Add a rubric YAML; changed content becomes a new version.

    \b
    Example:
      workbench rubric add rubrics/demo-patch-quality.yaml
    """
    from workbench.calibration.rubric_versions import add_rubric

    rv = add_rubric(ctx.store, path)
    state = "added as" if rv.created else "unchanged:"
    click.echo(f"Rubric '{rv.name}' {state} version {rv.version} ({rv.hash[:12]}), "
               f"{len(rv.rubric.judges)} judge(s): {', '.join(j.id for j in rv.rubric.judges) or 'none'}.")


@rubric.command("list")
@pass_ctx
@clean_errors
def rubric_list(ctx: Ctx) -> None:
    """List rubrics and their latest versions.

    \b
    Example:
      workbench rubric list
    """
    from workbench.calibration.rubric_versions import is_refine_candidate, rubric_summaries

    rows = rubric_summaries(ctx.store)
    if not rows:
        click.echo("No rubrics yet; add one with 'workbench rubric add rubrics/NAME.yaml'.")
    for r in rows:
        mark = "\t(refinement candidate: accept or reject it with 'workbench refine-decide')" \
            if is_refine_candidate(r.name) else ""
        click.echo(f"{r.name}\tv{r.latest_version}\t({r.n_versions} version(s)){mark}")


@rubric.command("show")
@click.argument("name")
@click.option("--version", type=int, default=None, help="Version number (default: latest).")
@pass_ctx
@clean_errors
def rubric_show(ctx: Ctx, name: str, version: int | None) -> None:
    """Print a rubric version as YAML.

    \b
    Example:
      workbench rubric show demo-patch-quality --version 1
    """
    from workbench.calibration.rubric_versions import get_rubric
    from workbench.judges.rubrics import dump_rubric

    _require(version is None or 1 <= version <= MAX_SEED, "--version", version, "a version number from 1", "1")
    rv = get_rubric(ctx.store, name, version)
    click.echo(f"# {rv.name} version {rv.version}, hash {rv.hash}")
    click.echo(dump_rubric(rv.rubric))
