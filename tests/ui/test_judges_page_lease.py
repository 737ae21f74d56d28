"""The Judges page and the CLI share the run's lease: a run held by another process cannot be started here."""

from __future__ import annotations

import os
import socket
from datetime import datetime, timezone

from tests.ui.test_judges_page import judges_page
from workbench.features.judging import service as judging
from workbench.store import Store
from workbench.ui import jobs


def _held_by_another_process(db) -> None:
    with Store(db) as s:
        run_id = judging.prepare_run(s, "demo", "demo-patch-quality", "test-results").run_id
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        with s.transaction():  # a live process (this test's) on this host, heartbeat fresh: a CLI run, say
            s.conn.execute("INSERT INTO leases (key, token, pid, host, acquired_at, heartbeat_at) "
                           "VALUES (?, 'cli-run', ?, ?, ?, ?)", (f"run:{run_id}", os.getpid(), socket.gethostname(),
                                                                   at, at))


def test_a_run_held_elsewhere_is_named_and_start_is_disabled(demo_db):
    _held_by_another_process(demo_db)
    at = judges_page("test-results")
    [warning] = [w.value for w in at.warning if "is running in process" in w.value]
    assert f"process {os.getpid()} on host '{socket.gethostname()}' since " in warning
    assert at.button(key="judges-start").disabled


def test_start_refused_by_the_lease_says_who_holds_it(demo_db):
    """A click that reaches the job after another process took the run: the job ends with one sentence."""
    at = judges_page("test-results")
    assert not at.button(key="judges-start").disabled
    _held_by_another_process(demo_db)
    at.button(key="judges-start").click().run(timeout=60)  # the rerun sees the lease: Start is disabled again
    assert at.button(key="judges-start").disabled
    job = jobs.start(str(demo_db), "demo", "demo-patch-quality", "test-results")  # as if clicked just before
    job.thread.join(60)
    assert job.error and "judge 'test-results' is already running on golden set 'demo'" in job.error
    assert f"process {os.getpid()}" in job.error and job.result is None
    with Store(demo_db) as s:
        assert s.conn.execute("SELECT count(*) FROM judgments j JOIN runs r ON r.id = j.run_id "
                              "WHERE r.source = 'run'").fetchone()[0] == 0
