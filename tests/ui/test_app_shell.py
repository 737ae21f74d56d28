"""The app shell: identity (local picker or login), pages chosen by role, roles enforced on the server."""

from __future__ import annotations

import importlib

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui.conftest import APP, PAGE_FILES, open_app
from workbench.store import Store


LEAD_PAGES = {"Home", "Label", "Adjudicate", "Reviewers", "Import", "Blind review", "Judges", "Calibration", "Compare", "Drift",
              "Export", "Refine", "Board", "Monitoring", "Glossary"}


def registered(at) -> set[str]:
    return {info["page_name"] for info in at._registered_pages.values()}


def titles(at) -> list[str]:
    return [t.value for t in at.title]


def test_nobody_identified_locally_sees_the_reviewer_pages_asking_for_a_name(fresh_db):
    at = open_app()
    assert registered(at) == {"Home", "Label"}
    assert at.sidebar.selectbox[0].label == "Rater" and at.sidebar.selectbox[0].value is None
    at.switch_page(PAGE_FILES["label"]).run()
    assert "Pick or type your rater name" in at.info[0].value and not at.button
    with pytest.raises(ValueError):
        at.switch_page(PAGE_FILES["adjudicate"])


def test_picking_a_name_opens_that_roles_pages_and_keeps_it_in_the_url(fresh_db):
    at = open_app()
    at.sidebar.selectbox[0].set_value("lead").run()  # (typing a new name is covered in the browser test)
    assert registered(at) == LEAD_PAGES
    assert at.query_params["rater"] == "lead"
    assert "Labeling as **lead** · lead" in at.sidebar.caption[0].value


@pytest.mark.parametrize("rater, pages", [
    ("ana", {"Home", "Label"}),
    ("lead", LEAD_PAGES),
    ("root", LEAD_PAGES),
])
def test_pages_follow_the_role(fresh_db, rater, pages):
    assert registered(open_app(rater)) == pages


def test_a_reviewer_cannot_reach_lead_pages(fresh_db):
    at = open_app("ana")
    for page in ("adjudicate.py", "import_page.py", "judges.py", "calibration.py", "compare.py", "drift.py",
                 "export_page.py"):
        with pytest.raises(ValueError, match="Could not find a navigation page"):
            at.switch_page(f"views/{page}")


def test_a_lead_url_opened_by_a_reviewer_session_is_not_served(fresh_db):
    at = open_app("lead", "adjudicate")
    assert "Adjudicate" in titles(at)
    at.session_state["_rater"] = "ana"  # the same browser tab, now a reviewer, still on /adjudicate
    at.run()
    assert "Adjudicate" not in titles(at) and not at.button and "Judge Workbench" in titles(at)


def test_each_page_checks_the_role_itself(fresh_db):
    def page():
        import streamlit as st

        from workbench.ui.auth import ROUTER_KEY
        from workbench.ui.views import adjudicate

        st.session_state["_rater"] = "ana"
        st.session_state[ROUTER_KEY] = True
        adjudicate.render()
        st.write("rendered past the role check")

    at = AppTest.from_function(page, default_timeout=30).run()
    assert "This page is for leads and admins" in at.error[0].value
    assert not [m for m in at.markdown if "rendered past" in m.value]


def test_page_roles_match_their_registration():
    from workbench.ui.app import PAGES

    for spec in PAGES:
        if isinstance(spec.page, str):
            module = importlib.import_module(f"workbench.ui.views.{spec.page.removesuffix('.py')}")
            assert module.ROLES == spec.roles, spec.page


AUTH = {"auth": {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32,
                 "client_id": "id", "client_secret": "secret",
                 "server_metadata_url": "https://idp.example.org/.well-known/openid-configuration"}}


def _login_app(user: dict) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.secrets.update(AUTH)
    at.user = user
    return at.run()


def test_with_login_a_signed_out_user_sees_only_sign_in(fresh_db):
    at = _login_app({"is_logged_in": False})
    assert registered(at) == {"Sign in"}
    assert [b.label for b in at.button] == ["Sign in"] and "Sign in to use the workbench." in at.info[0].value
    assert not at.sidebar.selectbox and not at.dataframe  # no rater picker and no data of the workbench


def test_with_login_the_roles_table_decides(fresh_db):
    with Store(fresh_db) as s:
        s.set_rater_role("maria", "lead", email="maria@example.org")
    at = _login_app({"is_logged_in": True, "email": "maria@example.org", "name": "Maria"})
    assert registered(at) == LEAD_PAGES
    assert "Signed in as **maria** · lead" in at.sidebar.caption[0].value
    stranger = _login_app({"is_logged_in": True, "email": "who@example.org"})
    assert registered(stranger) == {"Sign in"}
    assert "who@example.org has no role" in stranger.warning[0].value
    # a stranger who sets the local-mode identity gets nothing from it
    stranger.session_state["_rater"] = "lead"
    stranger.run()
    assert registered(stranger) == {"Sign in"}
