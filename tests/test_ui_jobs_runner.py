"""The UI's background jobs: one per kind and scope while it runs, found again by a later visit, its result or its
error kept for the page."""

from __future__ import annotations

import threading

from workbench.core.errors import ConfigError
from workbench.store import Store
from workbench.ui import jobs


def test_a_running_job_is_not_started_twice_and_is_found_again(tmp_path):
    db = str(tmp_path / "w.db")
    Store(db).close()  # the workspace the UI serves exists: its jobs do not race to create it
    release, calls = threading.Event(), []

    def work(store, job):
        calls.append(store.path)
        job.progress(1, 2, 0.5)
        release.wait(10)
        job.progress(2, 2, 1.0)
        return "done"

    first = jobs.launch(jobs.PROBES, db, ("g", "r", "j"), work)
    again = jobs.launch(jobs.PROBES, db, ("g", "r", "j"), work)  # a second click, another tab
    assert again is first and first.running
    other = jobs.launch(jobs.REFINE, db, ("g", "r", "j"), lambda s, j: "other kind")  # another kind: its own job
    other.thread.join(10)
    assert other is not first and other.result == "other kind"
    assert jobs.find(jobs.PROBES, db, "g", "r", "j") is first  # what a page finds when the lead comes back
    release.set()
    first.thread.join(10)
    assert (first.result, first.done, first.total, first.cost, first.error) == ("done", 2, 2, 1.0, None)
    assert calls == [db]
    # finished: the next start is a new job
    assert jobs.launch(jobs.PROBES, db, ("g", "r", "j"), work) is not first


def test_a_failed_job_keeps_its_sentence(tmp_path):
    def work(store, job):
        raise ConfigError("the openai/ provider needs an API key; set the environment variable OPENAI_API_KEY")

    j = jobs.launch(jobs.JUDGE_RUN, str(tmp_path / "w.db"), ("g", "r", "fails"), work)
    j.thread.join(10)
    assert j.result is None and j.error.endswith("OPENAI_API_KEY")


def test_a_jobs_cost_in_the_words_the_estimate_and_the_confirmation_share():
    """One phrase for the estimate line and the confirmation: the estimate with its upper bound, 'free' for a job
    nothing bills (never $0.0000), and unknown (never $0) for a model without a price."""
    assert jobs.Cost("150 judgments", 0.0, 0.0).words() == "free"
    assert jobs.Cost("150 judgments", 0.0, 0.0).free
    paid = jobs.Cost("300 judgments", 22.8571, 184.6103)
    assert not paid.free and paid.sentence() == "300 judgments, about $22.86, at most $184.61"
    assert jobs.Cost("3 judgments", 0.00123, 0.0456).words() == "about $0.0012, at most $0.0456"
    assert jobs.Cost("1 request", None, 3.1).words() == "at most $3.10"
    assert jobs.Cost("9 judgments", None, None).words() == "unknown (no price for this model)"
    assert jobs.Cost("9 judgments", 1.5, 4.0, batch=True).words() == "about $1.50, at most $4.00 at batch prices"
    assert (jobs.usd(0.0), jobs.usd(None), jobs.usd(1234.5)) == ("free", "unknown (no price for this model)",
                                                                 "$1,234.50")
