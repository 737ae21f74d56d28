"""Who is using the UI and what they may open.

Local default (no ``[auth]`` section in ``.streamlit/secrets.toml``): no login,
the server is bound to 127.0.0.1 and the user picks or types a rater name; the
``raters`` table gives the role (a new name is a reviewer). ``workbench ui
--host`` beyond loopback refuses to start without ``[auth]`` unless told
``--insecure-no-login``; then every page says so (:func:`insecure_banner`). With an ``[auth]``
section, ``st.login`` (OIDC) identifies the user and the ``raters`` table
(matched by email, or by a name equal to the email) decides the role; a
signed-in user without a row gets no pages.

Roles are enforced on the server: ``app.py`` registers only the pages of the
user's role (another page's URL is "not found"), and every page's ``render``
calls :func:`require` again before it reads anything.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Iterable

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from workbench.core.models import Role
from workbench.features.people.raters import (local_role, rater_for_email, rater_names, removed_for_email,
    resolve_rater)
from workbench.ui.components import plain
from workbench.ui.state import store

REVIEWER, LEAD, ADMIN = Role.REVIEWER, Role.LEAD, Role.ADMIN
EVERYONE = tuple(Role)
REVIEWERS = EVERYONE  # leads and admins may label too
LEADS = (LEAD, ADMIN)

ROUTER_KEY = "_routed"  # set by app.py while it runs the page it chose for this user
RATER_KEY = "_rater"  # the local-mode identity of this session (kept apart from the widget's own state)
PICKER_KEY = "rater_picker"
RATER_PARAM = "rater"  # the query parameter that keeps the local-mode choice over a refresh


@dataclass(frozen=True)
class User:
    name: str
    role: str
    email: str | None = None


def login_configured() -> bool:
    """True when .streamlit/secrets.toml has an [auth] section (OIDC login)."""
    try:
        return "auth" in st.secrets
    except (StreamlitSecretNotFoundError, FileNotFoundError):  # no secrets file at all: the local default
        return False


def served_beyond_loopback() -> bool:
    """True when the server listens on an address other machines can reach (``workbench ui --host 0.0.0.0``)."""
    host = str(st.get_option("server.address") or "").strip("[]")
    if not host:  # Streamlit's default with no address: every interface
        return True
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.lower() != "localhost"


def insecure_banner() -> None:
    """On every page of a server others can reach that signs nobody in (``--insecure-no-login``): say so."""
    if served_beyond_loopback() and not login_configured():
        st.error("**No sign-in on this server** (started with --insecure-no-login): anyone who can reach it can pick "
                 "any rater name, a lead's included. Configure [auth] in .streamlit/secrets.toml to require sign-in.",
                 icon="🔓")


def current_user() -> User | None:
    """The signed-in (or, locally, the picked) user with their role; None when nobody is identified."""
    s = store()
    if login_configured():
        if not st.user.is_logged_in:
            return None
        email = str(st.user.get("email") or "")
        row = rater_for_email(s, email)
        return User(row["name"], row["role"], email) if row else None
    name = str(st.session_state.get(RATER_KEY) or "").strip()
    role = local_role(s, name) if name else None
    if role is None:
        return None  # a removed rater is nobody here either
    known = resolve_rater(s, name)  # a typed email (any case) is the rater who has it
    return User(known.name, role, known.email) if known else User(name, role)


def require(roles: Iterable[str]) -> User:
    """The current user if their role may open this page; otherwise say so and stop the run here."""
    roles = tuple(roles)
    _through_router()
    user = current_user()
    if user is None:
        picked = str(st.session_state.get(RATER_KEY) or "").strip() if not login_configured() else ""
        if picked:
            st.warning(f"'{plain(picked)}' has no access to this workbench any more; ask an admin to add them again.")
        else:
            st.info("Pick or type your rater name in the sidebar to start." if not login_configured()
                    else "Sign in to use the workbench.")
        st.stop()
    if user.role not in roles:
        who = [r + "s" for r in roles]
        st.error(f"This page is for {', '.join(who[:-1]) + ' and ' if who[:-1] else ''}{who[-1]}; you are signed in as "
                 f"'{plain(user.name)}' ({user.role}).")
        st.stop()
    return user


def access_page() -> None:
    """The only page of a login deployment for someone signed out, or signed in without a role."""
    st.title("Judge Workbench")
    if not st.user.is_logged_in:
        st.info("Sign in to use the workbench.")
        st.button("Sign in", on_click=st.login, type="primary", key="sign_in_main")
        return
    who = st.user.get("email") or st.user.get("name") or "your account"
    gone = removed_for_email(store(), str(st.user.get("email") or ""))
    if gone is not None:  # a person an admin removed is told so, not asked to join as if new
        st.warning(f"{plain(who)} (rater '{plain(gone.name)}') was removed from this workbench on "
                   f"{gone.removed_at[:10]}; ask an admin to add you again to sign in.")
        return
    st.warning(f"{plain(who)} has no role in this workbench yet; ask an admin to add your email to the raters table.")


def _through_router() -> None:
    """Pages run only when app.py chose them for this user (it sets ROUTER_KEY around the page it runs)."""
    if st.session_state.get(ROUTER_KEY):
        return
    st.error("This page opens only through the workbench's main address.")
    st.stop()


def identity_sidebar() -> User | None:
    """The sidebar block that identifies the user: a rater picker locally, sign in/out with login."""
    with st.sidebar:
        if login_configured():
            return _login_block()
        return _picker_block()


def _picker_block() -> User | None:
    if RATER_KEY not in st.session_state:  # a new session: take the name kept in the URL, if any
        st.session_state[RATER_KEY] = str(st.query_params.get(RATER_PARAM) or "").strip() or None
    chosen = st.session_state[RATER_KEY]
    names = rater_names(store())
    options = names + ([chosen] if chosen and chosen not in names else [])
    st.selectbox("Rater", options, index=options.index(chosen) if chosen else None, key=PICKER_KEY,
                 accept_new_options=True, placeholder="Pick or type your name", on_change=_picked,
                 help="No login on this local workbench: pick your name, or type a new one to join as a reviewer.")
    user = current_user()
    if user:
        st.query_params[RATER_PARAM] = user.name
        st.caption(f"Labeling as **{plain(user.name)}** · {user.role}")
    elif RATER_PARAM in st.query_params:
        del st.query_params[RATER_PARAM]
    return user


def _picked() -> None:
    st.session_state[RATER_KEY] = str(st.session_state.get(PICKER_KEY) or "").strip() or None


def _login_block() -> User | None:
    if not st.user.is_logged_in:
        return None  # the sign-in page has the button
    user = current_user()
    if user:
        st.caption(f"Signed in as **{plain(user.name)}** · {user.role}")
    st.button("Sign out", on_click=st.logout, width="stretch")
    return user
