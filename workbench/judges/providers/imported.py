"""`imported/<tool>/<model>`: a judge whose verdicts were made in another tool and imported (workbench.features.interop).

It is calibrated like any judge, but it cannot be run here: its prompt and
settings live in the tool that ran it, so creating the provider says how to
bring in new results instead.
"""

from __future__ import annotations

from typing import Any

from workbench.core.errors import ConfigError


class ImportedProvider:
    def __init__(self, target: str, **_options: Any):
        tool = target.partition("/")[0]
        raise ConfigError(f"judge model 'imported/{target}' stands for judgments made in {tool} and imported; it "
                          f"cannot run here: run it in {tool} and bring its results in with "
                          f"'workbench import --from {tool}'")
