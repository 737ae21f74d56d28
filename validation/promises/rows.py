"""One promise of the docs next to its measured figure: the row every measurement of ``validation/promises`` gives."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PromiseRow:
    """One promise next to its measured figure."""

    promise: str
    target: str
    measured: str
    n: int  # replays, runs, intervals or splits behind the figure
    holds: bool


def markdown(rows: list[PromiseRow]) -> str:
    lines = ["| promise | target | measured | n | holds |", "|---|---|---|---|---|"]
    lines += [f"| {r.promise} | {r.target} | {r.measured} | {r.n:,} | {'yes' if r.holds else 'NO'} |" for r in rows]
    return "\n".join(lines)
