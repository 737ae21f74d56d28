"""Child process for the refinement kill test: one session on a copy of the demo, killed at a chosen request.

    python refine_kill_child.py DB LOG KILL_AFTER

The scripted endpoints append each answered request to LOG and SIGKILL this process when a request arrives
after KILL_AFTER answered ones (counted across processes through LOG).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripted import ScriptedJudge, ScriptedOptimizer, fix_leniency  # noqa: E402

from workbench.features.refine import service as refine  # noqa: E402
from workbench.calibration.golden_sets import consensus, load_items  # noqa: E402
from workbench.store import Store  # noqa: E402

GS, RUBRIC, JUDGE = "demo", "demo-patch-quality", "lenient-mini"


def session(store: Store, log: Path, kill_after: int | None) -> refine.SessionSummary:
    """The session both processes run: one round, one request at a time (so each answer is committed before the
    next request is sent)."""
    judge = ScriptedJudge(load_items(store, GS), consensus(store, GS, RUBRIC).resolved, log=log, kill_after=kill_after)
    optimizer = ScriptedOptimizer(fix_leniency, log=log, kill_after=kill_after)
    return refine.refine(store, GS, RUBRIC, JUDGE, optimizer="openai/gpt-4o", rounds=1, concurrency=1,
                         resamples=200, budget_usd=1.0, provider_options=judge.options(),
                         optimizer_options=optimizer.options())


if __name__ == "__main__":
    with Store(sys.argv[1]) as s:
        session(s, Path(sys.argv[2]), int(sys.argv[3]))
