"""A team's server without a browser: which secrets count as sign-in configured, which hosts are loopback, and the
--insecure-no-login banner of every page (AppTest with the server address Streamlit would have)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from tests.ui.conftest import APP
from tests.ui.test_app_shell import AUTH
from workbench.cli.workspace import is_loopback, sign_in_problem

FULL = ('[auth]\nredirect_uri = "https://wb.example.org/oauth2callback"\ncookie_secret = "c-SECRET-c"\n'
        'client_id = "wb"\nclient_secret = "s-SECRET-s"\n'
        'server_metadata_url = "https://idp.example.org/.well-known/openid-configuration"\n')


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # Streamlit's global secrets file, kept empty
    (tmp_path / "home" / ".streamlit").mkdir(parents=True)
    (tmp_path / "p" / ".streamlit").mkdir(parents=True)
    return tmp_path / "p"


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.0.1.1", True), ("::1", True), ("[::1]", True),
                                            ("localhost", True), ("0.0.0.0", False), ("::", False),
                                            ("10.0.0.5", False), ("wb.example.org", False)])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_a_complete_auth_section_is_sign_in(project):
    (project / ".streamlit" / "secrets.toml").write_text(FULL)
    assert sign_in_problem(project) is None


def test_the_provider_keys_may_sit_in_auth_default(project):
    text = FULL.replace('client_id = "wb"\n', '[auth.default]\nclient_id = "wb"\n')
    (project / ".streamlit" / "secrets.toml").write_text(text)
    assert sign_in_problem(project) is None


def test_missing_auth_or_keys_are_named_without_values(project):
    secrets = project / ".streamlit" / "secrets.toml"
    problem, fix = sign_in_problem(project)
    assert problem == f"{secrets} has no [auth] section" and fix.startswith("add one and give it redirect_uri")
    secrets.write_text(FULL.replace('client_id = "wb"\n', "").replace("cookie_secret", "cookie_secrets"))
    problem, fix = sign_in_problem(project)
    assert problem.endswith("lacks cookie_secret, client_id") and "SECRET" not in problem + fix
    secrets.write_text("[auth\n")
    problem, fix = sign_in_problem(project)
    assert "is not valid TOML" in problem and "line 1" in problem and fix == "correct it"


def test_sign_in_needs_authlib(project, monkeypatch):
    import importlib.util

    (project / ".streamlit" / "secrets.toml").write_text(FULL)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "authlib" else real(name, *a))
    assert sign_in_problem(project) == ("Authlib, which st.login needs, is not installed",
                                        "pip install 'judge-workbench[auth]'")


def test_the_home_folder_secrets_count_unless_the_project_replaces_auth(project):
    home = Path.home() / ".streamlit" / "secrets.toml"
    home.write_text(FULL)
    assert sign_in_problem(project) is None  # Streamlit reads ~/.streamlit/secrets.toml too
    (project / ".streamlit" / "secrets.toml").write_text('[auth]\nclient_id = "other"\n')
    assert "lacks" in sign_in_problem(project)[0]  # a later file's [auth] replaces the whole section, as Streamlit does


@pytest.fixture
def served_on():
    before = config.get_option("server.address")

    def serve(address: str | None) -> None:
        config.set_option("server.address", address)

    yield serve
    config.set_option("server.address", before)


BANNER = "No sign-in on this server"


@pytest.mark.parametrize("page", [None, "label", "adjudicate"])
def test_every_page_of_a_server_beyond_loopback_without_sign_in_says_so(fresh_db, served_on, page):
    served_on("0.0.0.0")
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params["rater"] = "lead"
    at.run()
    if page:
        at.switch_page(f"views/{page}.py").run()
    assert not at.exception
    assert BANNER in at.error[0].value  # the first error element, above the page's own content
    assert at.main.children[0].value == at.error[0].value  # the top of the page


def test_no_banner_on_loopback_or_with_sign_in(fresh_db, served_on):
    served_on("127.0.0.1")
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    assert not [e for e in at.error if BANNER in e.value]
    served_on("0.0.0.0")
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.secrets.update(AUTH)
    at.user = {"is_logged_in": False}
    at.run()
    assert not [e for e in at.error if BANNER in e.value]
    assert [b.label for b in at.button] == ["Sign in"]
