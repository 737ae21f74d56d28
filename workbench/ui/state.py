"""Per-session access to the store for the pages.

Each browser session gets its own connection (SQLite connections are not
shared across Streamlit's script threads); WAL lets them read concurrently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from workbench.store import open_store
from workbench.core.workspace import Workspace

if TYPE_CHECKING:
    from workbench.store import Store


def workspace() -> Workspace:
    """The workspace `workbench ui` serves (WORKBENCH_PROJECT and WORKBENCH_DB, else the working directory)."""
    return Workspace.resolve()


def db_path() -> str:
    return str(workspace().db)


def store() -> Store:
    path = db_path()
    s = st.session_state.get("_store")
    if s is None or s.path != path:
        s = open_store(path)
        st.session_state["_store"] = s
    return s
