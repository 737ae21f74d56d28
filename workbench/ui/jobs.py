"""Long jobs started from the UI (judge runs, stress probes, refinement rounds, board grading): a background thread
each, with progress and a stop flag, and the one way every page starts a job that can cost money
(:func:`paid_start`: the estimate with its upper bound, the key fields, and a confirmation before it starts).

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

from workbench.core.scale import fmt_usd
from workbench.features.judging import service as judging
from workbench.store import Store, open_store
from workbench.ui import keys
from workbench.ui.components import plain
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


# --------------------------------------------------------------------------- what a paid job costs, and its start

UNPRICED = "unknown (no price for this model)"


def usd(x: float | None, unknown: str = UNPRICED) -> str:
    """'free' for nothing to pay, cents from a dollar, a tenth of a cent below (a cheap judge is not rounded to
    nothing); ``unknown`` when a model has no price (never $0)."""
    if x is None:
        return unknown
    if x == 0:
        return "free"
    return fmt_usd(x, 4 if abs(x) < 1 else 2)


@dataclass(frozen=True)
class Cost:
    """What a job would send and pay, in the words the estimate line and the confirmation both show.

    ``expected_usd``: the estimate; ``max_usd``: its upper bound (every reply at its token cap); None where a model
    has no price. A job whose bound is 0 (a Python grader, nothing billed) is free.
    """

    sends: str  # "150 judgments", "300 judge requests and 1 optimizer request"
    expected_usd: float | None
    max_usd: float | None
    batch: bool = False

    @property
    def free(self) -> bool:
        return self.max_usd == 0 and self.expected_usd in (0, None)

    def words(self) -> str:
        """'free', 'about $22.86, at most $184.61', 'at most $3.10', or unknown."""
        if self.free:
            return "free"
        if self.max_usd is None:
            return UNPRICED if self.expected_usd is None else f"about {usd(self.expected_usd)} (no upper bound known)"
        prices = " at batch prices" if self.batch else ""
        if self.expected_usd is None:
            return f"at most {usd(self.max_usd)}{prices}"
        return f"about {usd(self.expected_usd)}, at most {usd(self.max_usd)}{prices}"

    def sentence(self) -> str:
        return f"{self.sends}, {self.words()}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def run_cost(e: Any) -> Cost:
    """A judge run's (or the probes') estimate (``judging.RunEstimate``, ``probes.ProbesEstimate``) as a Cost."""
    return Cost(_plural(e.n_to_run, "judgment"), e.cost_usd, e.max_cost_usd, bool(getattr(e, "batch", False)))


def paid_start(where: str, label: str, cost: Cost, models: list[str], start: Callable[[dict[str, str]], None], *,
               ask: str | None = None, disabled: bool = False, help: str | None = None) -> None:
    """The start of a job that can cost money, the same on every page.

    Shows the estimate (``cost``, with its upper bound) and one key field per provider ``models`` need
    (``keys.key_fields``); while a key is missing the button is off and says which. A click starts a free job
    at once (unless ``ask``: a reason to confirm anyway, such as a second run beside a recorded one); otherwise
    it only asks, with the same figures, and **Confirm** calls ``start(env)`` with the keys the page holds
    (``keys.provider_env``, built here in the page's thread). ``where`` keys the widgets: ``<where>-start``,
    ``<where>-confirm``, ``<where>-cancel``.
    """
    missing = keys.key_fields(models, where)
    st.markdown(f"**Estimate**: {plain(cost.sentence())}.")
    asked_key = f"_confirm-{where}"
    asked = st.session_state.get(asked_key)
    if asked is not None and asked != cost:  # the estimate changed since the click: ask again from the start
        st.session_state.pop(asked_key, None)
        asked = None
    needs = " and ".join(missing)
    shown = f"{label}: enter {needs} first" if missing else label
    why = (f"The job needs {needs}: enter it in the field above and press “Use this key”." if missing else help)
    if st.button(shown, type="primary", key=f"{where}-start", disabled=disabled or bool(missing) or asked is not None,
                 help=why):
        if cost.free and not ask:
            start(provider_env())
            st.rerun()
        st.session_state[asked_key] = cost
        st.rerun()
    if asked is None or disabled or missing:
        return
    reason = f"{ask} " if ask else ""
    st.warning(f"**Confirm before it starts**: {plain(reason)}{plain(label)} sends {plain(cost.sentence())}.",
               icon="💰")
    yes, no = st.columns(2)
    if yes.button(f"Confirm: {label[0].lower()}{label[1:]}", type="primary", key=f"{where}-confirm"):
        st.session_state.pop(asked_key, None)
        start(provider_env())
        st.rerun()
    if no.button("Cancel", key=f"{where}-cancel"):
        st.session_state.pop(asked_key, None)
        st.rerun()


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
