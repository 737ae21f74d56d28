"""Commands of an approved judge in production: `workbench monitor ingest|report|promote`."""

from __future__ import annotations

import click


def register(main: click.Group) -> None:
    from workbench.cli.production.monitor import monitor

    main.add_command(monitor)
