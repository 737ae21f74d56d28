"""The Judges page: start a run, watch it, stop it, resume it (the run itself goes through the real runner)."""

from __future__ import annotations

import time

from tests.judges.loopback_server import LoopbackServer
from tests.ui.conftest import open_app
from workbench.features.judging.service import run_status
from workbench.store import Store


def judges_page(judge: str):
    at = open_app("lead")
    at.switch_page("views/judges.py").run(timeout=60)
    [box] = [s for s in at.selectbox if s.label == "Judge"]
    box.set_value(judge).run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    return at


def wait_for(db, judge: str, predicate, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with Store(db) as s:
            status = run_status(s, "demo", "demo-patch-quality", judge)
        if predicate(status):
            return status
        time.sleep(0.05)  # polling the database the run commits to
    raise AssertionError(f"run did not reach the state in {timeout} s: {status}")


def test_start_a_run_and_see_it_finish(demo_db):
    at = judges_page("test-results")
    assert "150 of 150 judgments to run" in at.info[0].value
    at.button(key="judges-start").click().run(timeout=60)
    wait_for(demo_db, "test-results", lambda s: s.get("done") == 150 and s["runs"][-1]["status"] == "done")
    at.run(timeout=60)
    assert any("150 judgments recorded" in s.value for s in at.success)
    assert any("**Nothing left to run**: the current run `run-1` (run here) holds all 150" in s.value
               for s in at.success)
    assert at.button(key="judges-start").disabled


def test_stop_then_resume_pays_for_nothing_twice(demo_db, monkeypatch):
    with LoopbackServer() as server:
        for k, v in server.env(service="local").items():
            monkeypatch.setenv(k, v)
        server.hold(after=20)
        at = judges_page("noisy-llama")
        at.checkbox(key="judges-new").check().run(timeout=60)  # a fresh run beside the recorded ones
        at.button(key="judges-start").click().run(timeout=60)  # a new run beside a recorded one: asks first
        at.button(key="judges-confirm").click().run(timeout=60)
        wait_for(demo_db, "noisy-llama", lambda s: s.get("done", 0) >= 20 and s.get("current") == "run-3")
        at.button(key="judges-stop").click().run(timeout=60)
        server.release()
        stopped = wait_for(demo_db, "noisy-llama", lambda s: s["runs"][-1]["status"] == "stopped")
        assert stopped["done"] < 450
        at.checkbox(key="judges-new").uncheck().run(timeout=60)
        assert f"{450 - stopped['done']} of 450 judgments to run ({stopped['done']} already done)" in at.info[0].value
        at.button(key="judges-start").click().run(timeout=60)  # labelled "Resume run": a paid model, it asks
        assert any("Confirm before it starts" in w.value and "Resume run sends" in w.value for w in at.warning)
        wait_for(demo_db, "noisy-llama", lambda s: s["runs"][-1]["status"] == "stopped")  # nothing started yet
        at.button(key="judges-confirm").click().run(timeout=60)
        wait_for(demo_db, "noisy-llama", lambda s: s.get("done") == 450 and s["runs"][-1]["status"] == "done")
        # 150 items x 3 repeats: every (item, repeat) answered once, none paid for twice
        assert len(server.answered) == 150 and set(server.answered.values()) == {3}
