"""Long jobs started from the UI (judge runs, stress probes, refinement rounds): a background thread each, with
progress and a stop flag.

The thread opens its own store connection and calls the same service as the
CLI; every judgment is committed as it completes, so stopping (or closing the
browser) loses nothing and starting again resumes. Jobs live in the server
process (``st.cache_resource``), keyed by what they work on, so a lead who
leaves the page and comes back, or opens it in another tab, sees the same job's
progress and result.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import streamlit as st

from workbench.features.judging import service as judging
from workbench.store import Store, open_store
from workbench.ui.keys import provider_env

JUDGE_RUN, PROBES, REFINE = "judge run", "probes", "refinement"

Work = Callable[[Store, "Job"], Any]  # runs in the job's thread; returns the result kept on the job


@dataclass
class Job:
    key: tuple[str, ...]
    thread: threading.Thread | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    done: int = 0
    total: int = 0
    cost: float = 0.0
    part: str = ""  # which probe, or the refinement loop's last message
    result: Any = None
    error: str | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def progress(self, done: int, total: int, cost: float) -> None:
        self.done, self.total, self.cost = done, total, cost


@st.cache_resource
def _jobs() -> dict[tuple[str, ...], Job]:
    """Shared by every session of this server, so a job survives a page refresh and a visit to another page."""
    return {}


def find(kind: str, db: str, *scope: str) -> Job | None:
    return _jobs().get((kind, db, *scope))


def launch(kind: str, db: str, scope: tuple[str, ...], work: Work) -> Job:
    """Start ``work`` in a thread unless a job of the same kind and scope is running (then that job is returned)."""
    key = (kind, db, *scope)
    current = _jobs().get(key)
    if current and current.running:
        return current
    j = Job(key)

    def body() -> None:
        try:
            with open_store(db) as s:
                j.result = work(s, j)
        except Exception as e:  # noqa: BLE001 - shown on the page as one sentence
            j.error = str(e)

    j.thread = threading.Thread(target=body, name=f"{kind}-{'-'.join(scope)}", daemon=True)
    _jobs()[key] = j
    j.thread.start()
    return j


# --------------------------------------------------------------------------- judge runs (the Judges page)

def job(db: str, golden_set: str, rubric: str, judge: str) -> Job | None:
    return find(JUDGE_RUN, db, golden_set, rubric, judge)


def start(db: str, golden_set: str, rubric: str, judge: str, *, env: dict[str, str] | None = None,
          **options: Any) -> Job:
    """A judge run through ``judging.run``, as ``workbench judge run`` makes it. ``env``: the keys the provider
    reads (by default this session's, see ``ui.keys``); built here, in the page's thread."""
    env = provider_env() if env is None else env

    def work(s: Store, j: Job) -> dict:
        return judging.run(s, golden_set, rubric, judge, progress=j.progress, should_stop=j.stop.is_set,
                           provider_options={"env": env}, **options)

    return launch(JUDGE_RUN, db, (golden_set, rubric, judge), work)
