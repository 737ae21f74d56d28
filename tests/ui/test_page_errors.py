"""An unexpected error on any page shows one sentence with a reference; the traceback goes to the server log."""

from __future__ import annotations

import logging
import re

import streamlit as st

from tests.ui.conftest import open_app, rendered_text
from workbench.core.errors import WorkbenchError
from workbench.calibration import calibrate as calibration
from workbench.features.labeling import service as svc

SENTENCE = re.compile(r"Something went wrong on this page \(reference ([0-9a-f]{8})\); the details are in the server log\.")
SECRET = "boom at /srv/secret/path.py with api_key=sk-123"


def _explode(*args, **kwargs):
    raise RuntimeError(SECRET)


def _assert_one_sentence(at, caplog) -> None:
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and SENTENCE.fullmatch(errors[0]), errors
    shown = rendered_text(at)
    for leak in ("Traceback", "RuntimeError", SECRET, "_explode", ".py"):
        assert leak not in shown
    reference = SENTENCE.fullmatch(errors[0]).group(1)
    logged = [r for r in caplog.records if r.name == "workbench.ui" and reference in r.getMessage()]
    assert logged and logged[0].exc_info and SECRET in str(logged[0].exc_info[1])


def test_a_page_that_raises_shows_one_sentence_and_logs_the_traceback(fresh_db, monkeypatch, caplog):
    monkeypatch.setattr(calibration, "compare", _explode)
    caplog.set_level(logging.ERROR, logger="workbench.ui")
    at = open_app("lead")
    at.switch_page("views/compare.py").run()
    _assert_one_sentence(at, caplog)
    assert at.title[0].value == "Compare judges"  # what the page drew before the error stays


def test_an_action_that_raises_shows_the_same_sentence(fresh_db, monkeypatch, caplog):
    monkeypatch.setattr(svc, "submit_label", _explode)
    caplog.set_level(logging.ERROR, logger="workbench.ui")
    at = open_app("ana", "label", golden_set="g")
    item = next(m.value for m in at.markdown if m.value.startswith("Item "))
    at.button(key=next(b.key for b in at.button if b.key.startswith("score:new:"))).click().run()
    _assert_one_sentence(at, caplog)
    assert any(m.value == item for m in at.markdown)  # still on the same item


def test_a_workbench_error_a_page_did_not_catch_shows_its_own_sentence(fresh_db, monkeypatch):
    import workbench.ui.lead as lead

    def refuse(*args, **kwargs):
        raise WorkbenchError("golden set 'g' is locked by a migration; try again in a minute")

    monkeypatch.setattr(lead, "list_golden_sets", refuse)
    at = open_app("lead")
    at.switch_page("views/compare.py").run()
    assert not at.exception
    assert [e.value for e in at.error] == ["golden set 'g' is locked by a migration; try again in a minute"]


def test_streamlit_itself_shows_no_error_details(fresh_db):
    """Whatever folder the server starts in (config.toml is read only from there), the app sets it itself."""
    before = st.get_option("client.showErrorDetails")
    st.set_option("client.showErrorDetails", "full")
    try:
        open_app("ana")
        assert st.get_option("client.showErrorDetails") == "none"
    finally:
        st.set_option("client.showErrorDetails", before)
