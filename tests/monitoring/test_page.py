"""The Monitoring page (AppTest): a lead sees the open alarm as a sentence first, then the two charts."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.monitoring import streams
from tests.monitoring.conftest import approval_indices
from tests.monitoring.helpers import label_sampled
from workbench.features.monitoring.ingest import ingest


def test_a_lead_sees_the_validity_alarm_first(approved, tmp_path, monkeypatch):
    traces, humans, _ = streams.stream_rows(days=6, per_day=300, seed=4, exclude=approval_indices(), drift_day=3,
                                            drift_share=0.5)
    ingest(approved.store, "prod", approved.bundle_json(), approved.bundle.name, "jsonl",
           streams.write_jsonl(tmp_path / "p.jsonl", traces), label_rate=0.15, seed=9)
    label_sampled(approved, "prod", humans, tmp_path)
    approved.store.set_rater_role("maria", "lead")
    monkeypatch.setenv("WORKBENCH_DB", str(approved.db))
    monkeypatch.setenv("WORKBENCH_PROJECT", str(approved.root))
    at = AppTest.from_function(_page, default_timeout=60)
    at.query_params["rater"] = "maria"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Monitoring"
    assert at.error and at.error[0].value.startswith("Validity: the judge 'gpt4o' no longer agrees")
    assert not at.success
    assert len(at.get("vega_lite_chart")) == 2  # pass rate with its band, agreement with the bound
    assert at.dataframe[0].value.shape[0] == 6


def _page() -> None:
    """The page as app.py's router runs it (ROUTER_KEY set around it), for the rater of the URL."""
    import streamlit as st

    from workbench.ui import auth
    from workbench.ui.views import monitoring

    st.session_state[auth.ROUTER_KEY] = True
    st.session_state[auth.RATER_KEY] = st.query_params.get("rater")
    monitoring.render()
