"""Entry script of the UI: identifies the user and builds the st.navigation router of their role's pages.

A page is registered only for the roles listed on its line, so another role's
URL is "page not found" on the server; each page's ``render`` also checks the
role itself (``auth.require``) before it reads anything.

Adding a page is one line in ``PAGES``: a file under ``views/`` whose module
has ``ROLES`` and a ``render()`` that starts with ``auth.require(ROLES)``, and
ends with ``if __name__ == "__main__": render()``; then its title, icon, URL
path and roles.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.ui import auth, glossary
from workbench.ui.components import log_unexpected_error, prose, unexpected_error_sentence
from workbench.ui.views import home, monitoring, team

# Not named pages/: Streamlit would treat such a folder as a legacy multipage app and serve its files directly.
PAGES_DIR = Path(__file__).parent / "views"


@dataclass(frozen=True)
class PageSpec:
    page: str | Callable[[], None]  # a file under views/, or a render function
    title: str
    icon: str
    url_path: str
    roles: tuple[str, ...]
    section: str = "Workbench"
    default: bool = False

    def st_page(self) -> st.Page:
        target = PAGES_DIR / self.page if isinstance(self.page, str) else self.page
        return st.Page(target, title=self.title, icon=self.icon, url_path=self.url_path, default=self.default)


# Who sees what: one line per page.
PAGES: list[PageSpec] = [
    PageSpec(home.render, "Home", "🏠", "overview", auth.EVERYONE, default=True),
    PageSpec("label.py", "Label", "🏷️", "label", auth.REVIEWERS, section="Review"),
    PageSpec("adjudicate.py", "Adjudicate", "⚖️", "adjudicate", auth.LEADS, section="Lead"),
    PageSpec(team.render, "Reviewers", "🧑‍🤝‍🧑", "reviewers", auth.LEADS, section="Lead"),
    PageSpec("import_page.py", "Import", "📥", "import", auth.LEADS, section="Lead"),
    PageSpec("blind_review.py", "Blind review", "🙈", "blind-review", auth.LEADS, section="Lead"),
    PageSpec("judges.py", "Judges", "🤖", "judges", auth.LEADS, section="Lead"),
    PageSpec("calibration.py", "Calibration", "🎯", "calibration", auth.LEADS, section="Lead"),
    PageSpec("compare.py", "Compare", "📊", "compare", auth.LEADS, section="Lead"),
    PageSpec("drift.py", "Drift", "📈", "drift", auth.LEADS, section="Lead"),
    PageSpec("refine.py", "Refine", "🔧", "refine", auth.LEADS, section="Lead"),
    PageSpec("export_page.py", "Export", "📦", "export", auth.LEADS, section="Lead"),
    PageSpec("board.py", "Board", "🗂️", "board", auth.LEADS, section="Lead"),
    PageSpec(monitoring.render, "Monitoring", "📡", "monitoring", auth.LEADS, section="Lead"),
]


def glossary_page() -> None:
    auth.require(auth.LEADS)
    glossary.render()


PAGES.append(PageSpec(glossary_page, "Glossary", "📖", "glossary", auth.LEADS, section="Lead"))


ACCESS = PageSpec(auth.access_page, "Sign in", "🔑", "sign-in", auth.EVERYONE, default=True)


def pages_for(user: auth.User | None) -> list[PageSpec]:
    """The pages this user may open.

    Nobody identified: with login, only the sign-in page; locally, the reviewer
    pages, which ask for a rater name before they show anything (so a link to
    /label works for someone who has not picked a name yet).
    """
    if user is None:
        if auth.login_configured():
            return [ACCESS]
        return [p for p in PAGES if auth.REVIEWER in p.roles]
    return [p for p in PAGES if user.role in p.roles]


#: Users see the viewer's menu only: no Deploy button, no developer menu (rerun, clear cache). The server may start
#: in any folder, so .streamlit/config.toml is not always read: set here too (see :func:`viewer_toolbar`).
TOOLBAR_MODE = "minimal"


def viewer_toolbar() -> bool:
    """Set the toolbar mode; True when it was another (then this run's first message, which carries the mode, has
    gone out with the old one: the caller runs the page once more, once per server process)."""
    if st.get_option("client.toolbarMode") == TOOLBAR_MODE:
        return False
    st.set_option("client.toolbarMode", TOOLBAR_MODE)
    return True


def goes_home(path: str, mine: list[PageSpec]) -> bool:
    """Whether an address should open this user's home page without a word: one no page has (an old link, a
    typo) or the home page's own name (``/overview``: Streamlit serves the default page only at the root).

    Streamlit would show "Page not found" over the home page. A page of another role is not one of these: the
    home page says why the user landed there (:func:`page_of_another_role`); the home page's name for a user
    without a home page keeps Streamlit's answer."""
    path = path.strip("/")
    if not path:
        return False
    home = next((s for s in mine if s.default), None)
    return (home is not None and path == home.url_path) or path not in {s.url_path for s in [*PAGES, ACCESS]}


SENT_AWAY_KEY = "_sent_away_from"  # session key: the page of another role an address asked for


def page_of_another_role(path: str, mine: list[PageSpec]) -> PageSpec | None:
    """The page an address names when it is a page this user may not open (a lead page for a reviewer)."""
    path = path.strip("/")
    home = next((s for s in mine if s.default), None)
    if home is None or path in {s.url_path for s in mine}:
        return None
    return next((s for s in PAGES if s.url_path == path), None)


def sent_away_sentence(spec: PageSpec, user: auth.User | None, signed_in: bool = False) -> str:
    """What a user sent home from another role's page reads there: which page, whose it is, who can change that."""
    names = [f"{r}s" for r in spec.roles]
    roles = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    if user is None:
        if signed_in:  # an email without a role: the page below says to ask an admin for one
            return f"The {spec.title} page is for {roles}, and your email has no role in this workbench yet."
        return (f"The {spec.title} page is for {roles}: sign in first; it is in the menu once you are signed in "
                "with that role.")
    return (f"The {spec.title} page is for {roles}, and you are signed in as {user.role} '{user.name}', so you are "
            f"on your home page instead. If you need it, ask an admin for the lead role ('workbench rater set "
            f"{user.name} --role lead').")


def land_unknown_paths_on_home(mine: list[PageSpec]) -> bool:
    """Before ``st.navigation``: forget an address :func:`goes_home` sends home, or one of a page of another role
    (remembered, so that the home page says why), so that Streamlit resolves the run to the default page as for
    the root address, with no "Page not found"; True when it did (the caller then moves the browser to the root
    address). The other role's page is not run: an address is no way around the roles."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    manager = getattr(ctx, "pages_manager", None)
    wanted = getattr(manager, "intended_page_name", None)
    if not wanted or getattr(manager, "intended_page_script_hash", None):
        return False
    other = page_of_another_role(wanted, mine)
    if other is not None or goes_home(wanted, mine):
        if other is not None:
            st.session_state[SENT_AWAY_KEY] = other.url_path
        manager.set_script_intent("", "")
        return True
    return False


def main() -> None:
    toolbar_was_stale = viewer_toolbar()
    # Streamlit's own report of an uncaught error (say, in a callback) names no file, line or value, whichever
    # folder the server was started from (.streamlit/config.toml is read only from the working directory).
    st.set_option("client.showErrorDetails", "none")
    st.set_page_config(page_title="Judge Workbench", page_icon="⚖️", layout="wide")
    auth.insecure_banner()  # a server others reach without sign-in says so at the top of every page
    user = auth.identity_sidebar()
    sections: dict[str, list[st.Page]] = {}
    mine = pages_for(user)
    for spec in mine:
        sections.setdefault(spec.section, []).append(spec.st_page())
    sent_home = land_unknown_paths_on_home(mine)
    page = st.navigation(sections, expanded=True)  # a lead's pages are more than ten: none hidden behind "View more"
    # Once more, on the same page: so that the browser gets the new toolbar mode (st.rerun would forget the page the
    # address asked for), or shows the home page's address instead of one that names no page.
    if toolbar_was_stale or sent_home:
        st.switch_page(page, query_params=st.query_params.to_dict())
    st.session_state[auth.ROUTER_KEY] = True
    away = st.session_state.pop(SENT_AWAY_KEY, None)
    spec = next((s for s in PAGES if s.url_path == away), None)
    if spec is not None:
        st.info(sent_away_sentence(spec, user, signed_in=auth.login_configured() and st.user.is_logged_in),
                icon="🔒")
    try:
        page.run()
    except WorkbenchError as e:  # a user's error a page did not expect: its one sentence says what to fix
        st.error(prose(str(e)), icon="⚠️")
    except Exception:  # st.stop, st.rerun and st.switch_page are BaseExceptions and pass through
        reference = log_unexpected_error(f"page '{page.title}'")
        st.error(unexpected_error_sentence(reference), icon="⚠️")
    finally:
        st.session_state.pop(auth.ROUTER_KEY, None)


if __name__ == "__main__":  # Streamlit runs this file as __main__; importing it (tests) only defines PAGES
    main()
