"""Judge runs started from the UI: a background thread per run, with progress and a stop flag.

The thread opens its own store connection and calls the same service as the
CLI; every judgment is committed as it completes, so stopping (or closing the
browser) loses nothing and starting again resumes.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from workbench.features.judging import service as judging
from workbench.store import open_store

SECRET_SUFFIXES = ("_API_KEY", "_BASE_URL")


@dataclass
class Job:
    key: tuple[str, str, str, str]
    thread: threading.Thread | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    done: int = 0
    total: int = 0
    cost: float = 0.0
    result: dict | None = None
    error: str | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()


@st.cache_resource
def _jobs() -> dict[tuple[str, str, str, str], Job]:
    """Shared by every session of this server, so a run survives a page refresh."""
    return {}


def provider_env() -> dict[str, str]:
    """Keys from the environment, plus Streamlit secrets named like <PROVIDER>_API_KEY / _BASE_URL."""
    env = dict(os.environ)
    try:
        for k, v in st.secrets.items():
            if isinstance(v, str) and k.upper().endswith(SECRET_SUFFIXES):
                env[k.upper()] = v
    except Exception:  # noqa: BLE001 - no secrets file is the local default
        pass
    return env


def job(db: str, golden_set: str, rubric: str, judge: str) -> Job | None:
    return _jobs().get((db, golden_set, rubric, judge))


def start(db: str, golden_set: str, rubric: str, judge: str, **options: Any) -> Job:
    key = (db, golden_set, rubric, judge)
    current = _jobs().get(key)
    if current and current.running:
        return current
    j = Job(key)

    def progress(done: int, total: int, cost: float) -> None:
        j.done, j.total, j.cost = done, total, cost

    def work() -> None:
        try:
            with open_store(db) as s:
                j.result = judging.run(s, golden_set, rubric, judge, progress=progress, should_stop=j.stop.is_set,
                                       provider_options={"env": provider_env()}, **options)
        except Exception as e:  # noqa: BLE001 - shown on the page as one sentence
            j.error = str(e)

    j.thread = threading.Thread(target=work, name=f"judge-{judge}", daemon=True)
    _jobs()[key] = j
    j.thread.start()
    return j
