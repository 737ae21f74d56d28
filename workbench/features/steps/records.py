"""The step a label or judgment blames, checked against the item it is about."""

from __future__ import annotations

from typing import Callable

from workbench.core.formats import Record


class StepCounter:
    """The number of steps of each item, read once per item and only for records that name a step."""

    def __init__(self, read_steps: Callable[[str], list | None]):
        self._read = read_steps
        self._n: dict[str, int] = {}

    def __call__(self, item_id: str) -> int:
        if item_id not in self._n:
            self._n[item_id] = len(self._read(item_id) or ())
        return self._n[item_id]


def check_step(rec: Record, item_id: str, step: int | None, n_steps: Callable[[str], int]) -> None:
    """A named step must be one of the item's steps (0 to n - 1); refused in one sentence otherwise."""
    if step is None:
        return
    n = n_steps(item_id)
    if step >= n:
        have = f"steps 0 to {n - 1}" if n else "no trajectory steps"
        raise rec.error(f"step {step} is not a step of item '{item_id}', which has {have}", field="step",
                        fix="write the number of the decisive step in the item's trajectory (from 0), "
                            "or leave 'step' out")
