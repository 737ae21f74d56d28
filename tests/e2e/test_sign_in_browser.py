"""A team's server: real sign-in through an OIDC provider (oidc-provider-mock) in headless Chromium, the refusal of a
non-loopback --host without [auth], and --insecure-no-login's warnings, each against a real `workbench ui` process.

The provider runs in a thread of the test process on a loopback port; its authorize form takes a subject, and a
subject it has not seen gets the claims {"email": subject}, so typing an address signs in as that address.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import free_port, stop_ui, wait_until_up

pytestmark = pytest.mark.browser

LEAD, REVIEWER, STRANGER = "maria.lead@example.org", "rita.reviewer@example.org", "nobody@example.org"
LEAD_ONLY = ("Adjudicate", "Import", "Judges", "Calibration", "Export", "Board")
CLIENT_SECRET = "client-secret-" + secrets.token_hex(8)  # values that must never show up in a log or a page
COOKIE_SECRET = "cookie-secret-" + secrets.token_hex(16)


def workbench(project: Path, *args: str, env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", "from workbench.cli import main; main()", "--project", str(project), *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, **kw)


def project_env(project: Path) -> dict[str, str]:
    """The user's own ~/.streamlit/secrets.toml must not decide a test: HOME is a folder of the test."""
    home = project / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", "STREAMLIT_"))}
    return {**env, "HOME": str(home)}


def make_project(tmp: Path, demo_db: Path) -> tuple[Path, dict[str, str]]:
    """A workspace with the demo database (data a stranger must not see) and one lead and one reviewer by email."""
    tmp.mkdir(parents=True, exist_ok=True)
    env = project_env(tmp)
    shutil.copy(demo_db, tmp / "workbench.db")
    for email, role in ((LEAD, "lead"), (REVIEWER, "reviewer")):
        res = workbench(tmp, "rater", "add", email, "--role", role, env=env)
        assert res.returncode == 0, res.stderr
    return tmp, env


def start(project: Path, env: dict[str, str], *args: str, port: int) -> tuple[str, subprocess.Popen, Path]:
    log = project / "ui.log"
    cmd = [sys.executable, "-c", "from workbench.cli import main; main()", "--project", str(project), "ui",
           "--port", str(port), *args]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, proc, log)
    except BaseException:
        stop_ui(proc)
        raise
    return url, proc, log


def child_command_lines(parent: int) -> list[str]:
    """The command lines of the processes this one started (the streamlit server), from /proc."""
    out = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            if int(fields.get("PPid", "0").strip()) == parent:
                out.append((status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError):  # a process that ended while we looked
            continue
    return out


@pytest.fixture(scope="module")
def oidc_provider() -> Iterator[str]:
    from oidc_provider_mock import run_server_in_thread

    with run_server_in_thread(port=free_port()) as server:
        host, port = server.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        yield f"http://{host}:{port}"


@pytest.fixture(scope="module")
def signed_in_server(oidc_provider, demo_db_template, tmp_path_factory, chromium_path):
    project, env = make_project(tmp_path_factory.mktemp("team") / "project", demo_db_template)
    port = free_port()
    (project / ".streamlit").mkdir()
    (project / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{COOKIE_SECRET}"\n'
        'client_id = "judge-workbench"\n'
        f'client_secret = "{CLIENT_SECRET}"\n'
        f'server_metadata_url = "{oidc_provider}/.well-known/openid-configuration"\n')
    url, proc, log = start(project, env, "--host", "0.0.0.0", port=port)  # beyond loopback: accepted with [auth]
    try:
        yield url, proc, log
    finally:
        stop_ui(proc)


def sign_in(page: Page, url: str, email: str) -> None:
    page.goto(url)
    page.get_by_role("button", name="Sign in").first.click()
    page.locator("input[name='sub']").fill(email)  # the provider's authorize form
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{url}/**", timeout=60_000)


def nav_titles(page: Page) -> set[str]:
    expect(page.locator("[data-testid='stSidebarNav']")).to_be_visible(timeout=60_000)
    texts = page.locator("[data-testid='stSidebarNav'] a span").all_inner_texts()
    return {t.strip() for t in texts if any(c.isalpha() for c in t)}  # the titles, not the icons' spans


def test_a_lead_signs_in_sees_the_lead_pages_and_signs_out(signed_in_server, browser):
    url, proc, log = signed_in_server
    context = browser.new_context()
    try:
        page = context.new_page()
        sign_in(page, url, LEAD)
        expect(page.get_by_text("Signed in as maria.lead · lead")).to_be_visible(timeout=60_000)
        assert set(LEAD_ONLY) <= nav_titles(page)
        expect(page.get_by_text("No sign-in on this server")).to_have_count(0)
        page.goto(f"{url}/adjudicate")
        expect(page.get_by_role("heading", name="Adjudicate").first).to_be_visible(timeout=60_000)
        expect(page.locator("[data-testid='stException']")).to_have_count(0)

        page.get_by_role("button", name="Sign out").click()
        # Streamlit forgets the session and sends the browser to the provider's end_session_endpoint, whose form
        # ends the provider's session too and redirects back to the workbench
        page.get_by_role("button", name="End session").click(timeout=60_000)
        page.wait_for_url(f"{url}/**", timeout=60_000)
        expect(page.get_by_role("button", name="Sign in").first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Signed in as")).to_have_count(0)
        page.goto(f"{url}/adjudicate")  # signed out, a lead page is not served: the sign-in page says why
        expect(page.get_by_text("The Adjudicate page is for leads and admins: sign in first")).to_be_visible(
            timeout=60_000)
        expect(page.get_by_role("button", name="Sign in").first).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Adjudicate")).to_have_count(0)
    finally:
        context.close()
    text = log.read_text()
    assert "WARNING: serving" not in text
    assert CLIENT_SECRET not in text and COOKIE_SECRET not in text
    assert all(CLIENT_SECRET not in c and COOKIE_SECRET not in c for c in child_command_lines(proc.pid))


def test_a_reviewer_gets_only_the_reviewer_pages(signed_in_server, browser):
    url, _, _ = signed_in_server
    context = browser.new_context()
    try:
        page = context.new_page()
        sign_in(page, url, REVIEWER)
        expect(page.get_by_text("Signed in as rita.reviewer · reviewer")).to_be_visible(timeout=60_000)
        assert nav_titles(page) == {"Home", "Label"}
        page.goto(f"{url}/adjudicate")  # a lead page's address: not registered for a reviewer
        expect(page.get_by_text("The Adjudicate page is for leads and admins, and you are signed in as reviewer "
                                "'rita.reviewer'")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Page not found")).to_have_count(0)  # the reviewer's home page, told why
        expect(page.get_by_text("Signed in as rita.reviewer · reviewer")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Adjudicate")).to_have_count(0)
    finally:
        context.close()


def test_an_unknown_email_is_told_to_ask_an_admin_and_sees_no_data(signed_in_server, browser):
    url, _, _ = signed_in_server
    context = browser.new_context()
    try:
        page = context.new_page()
        sign_in(page, url, STRANGER)
        expect(page.get_by_text(f"{STRANGER} has no role in this workbench yet; ask an admin")).to_be_visible(
            timeout=60_000)
        expect(page.locator("[data-testid='stSidebarNav']")).to_have_count(0)  # one page: no navigation at all
        for path in ("label", "adjudicate", "overview"):
            page.goto(f"{url}/{path}")
            expect(page.get_by_text("and your email has no role in this workbench yet")).to_be_visible(
                timeout=60_000)
            expect(page.get_by_text("ask an admin")).to_be_visible(timeout=60_000)
            expect(page.locator("[data-testid='stDataFrame'], [data-testid='stTable']")).to_have_count(0)
            expect(page.get_by_text("synthetic demo")).to_have_count(0)
    finally:
        context.close()


def test_a_non_loopback_host_without_auth_refuses_to_start(demo_db_template, tmp_path):
    project, env = make_project(tmp_path / "project", demo_db_template)
    port = free_port()
    res = workbench(project, "ui", "--host", "0.0.0.0", "--port", str(port), env=env)
    assert res.returncode == 1
    err = " ".join(res.stderr.split())
    assert "has no [auth] section: add one and give it" in err and "--insecure-no-login" in err
    for key in ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url"):
        assert key in err
    assert "Judge Workbench UI on" not in res.stdout  # it said so before starting anything
    # an [auth] that lacks keys is refused by name, and its values are not repeated
    (project / ".streamlit").mkdir()
    (project / ".streamlit" / "secrets.toml").write_text(f'[auth]\nclient_secret = "{CLIENT_SECRET}"\n')
    res = workbench(project, "ui", "--host", "0.0.0.0", "--port", str(port), env=env)
    assert res.returncode == 1
    assert "lacks redirect_uri, cookie_secret, client_id, server_metadata_url" in res.stderr
    assert CLIENT_SECRET not in res.stderr + res.stdout


def test_insecure_no_login_warns_in_the_log_and_on_every_page(demo_db_template, tmp_path, browser):
    project, env = make_project(tmp_path / "project", demo_db_template)
    url, proc, log = start(project, env, "--host", "0.0.0.0", "--insecure-no-login", port=free_port())
    context = browser.new_context()
    try:
        page = context.new_page()
        for path in ("", "label", "adjudicate", "overview"):
            page.goto(f"{url}/{path}?rater=maria.lead")
            expect(page.get_by_text("No sign-in on this server").first).to_be_visible(timeout=60_000)
    finally:
        context.close()
        stop_ui(proc)
    lines = log.read_text().splitlines()
    assert any(line.startswith("WARNING: serving on 0.0.0.0 WITHOUT sign-in") for line in lines), lines
