"""Commands of the newer features, one module each, registered on the `workbench` group.

A module here defines ``register(main: click.Group) -> None`` and imports only
click and ``workbench.cli``'s helpers at the top; services are imported inside
the command so that `workbench --help` stays fast. Adding one is adding its
name to ``MODULES``.
"""

from __future__ import annotations

import importlib

import click

MODULES: list[str] = ["probe", "plan", "check", "refine", "board", "keys"]


def register_all(main: click.Group) -> None:
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}").register(main)
