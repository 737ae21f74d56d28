"""`workbench db copy|backup|restore`: move a workspace between SQLite and Postgres, and keep it safe."""

from __future__ import annotations

import click

from workbench.cli.common import Ctx, WorkbenchGroup, _shown, clean_errors, pass_ctx


@click.group(cls=WorkbenchGroup)
def db() -> None:
    """Copy a workspace between SQLite and Postgres, back it up, restore it."""


def _summary(verb: str, result, where: str) -> str:  # noqa: ANN001 - a CopyResult
    tables = sum(1 for n in result.rows.values() if n)
    return f"{verb} {result.total} rows of {tables} tables {where}."


@db.command("copy")
@click.argument("source", metavar="FROM")
@click.argument("destination", metavar="TO")
@click.option("--yes", is_flag=True, help="Replace what TO holds (refused without it when TO is not empty).")
@clean_errors
def db_copy(source: str, destination: str, yes: bool) -> None:
    """Copy a whole workspace FROM one database TO another (SQLite file or postgresql:// URL), all or nothing.

    \b
    Example:
      workbench db copy workbench.db postgresql://ana@db.internal:5432/evals
      workbench db copy postgresql://ana@db.internal:5432/evals copy.db
    """
    from workbench.store.transfer import copy_workspace, open_existing
    from workbench.store.engines.urls import parse_target

    parse_target(destination)  # a URL the workbench cannot use is refused before anything is opened
    with open_existing(source) as src:
        created = not parse_target(destination).is_postgres and not _exists(destination)
        try:
            with _open(destination) as dest:
                result = copy_workspace(src, dest, replace=yes)
        except BaseException:
            if created:
                _remove_sqlite(destination)
            raise
    click.echo(_summary("Copied", result, f"from {_shown(source)} to {_shown(destination)}"))


@db.command("backup")
@click.argument("path", type=click.Path(dir_okay=False))
@pass_ctx
@clean_errors
def db_backup(ctx: Ctx, path: str) -> None:
    """Write a consistent snapshot of the workspace (--db) to a new SQLite file, while others keep working.

    \b
    Example:
      workbench db backup backups/workbench-2026-12-05.db
    """
    from workbench.store.transfer import backup

    result = backup(ctx.store, path)
    click.echo(_summary("Backed up", result, f"to {_shown(path)}"))


@db.command("restore", creates_db=True)
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--yes", is_flag=True, help="Replace the workspace's current content (refused without it).")
@pass_ctx
@clean_errors
def db_restore(ctx: Ctx, path: str, yes: bool) -> None:
    """Put a backup (or any workbench SQLite file) back into the workspace (--db), all or nothing.

    \b
    Example:
      workbench db restore backups/workbench-2026-12-05.db --yes
    """
    from workbench.store.transfer import copy_workspace, open_existing

    with open_existing(path) as src:
        result = copy_workspace(src, ctx.store, replace=yes)
    click.echo(_summary("Restored", result, f"from {_shown(path)}"))


def _exists(text: str) -> bool:
    from pathlib import Path

    return text == ":memory:" or Path(text).exists()


def _open(text: str):  # noqa: ANN202 - a Store
    from workbench.store import open_store

    return open_store(text)


def _remove_sqlite(text: str) -> None:
    from pathlib import Path

    for suffix in ("", "-wal", "-shm"):
        Path(f"{text}{suffix}").unlink(missing_ok=True)
