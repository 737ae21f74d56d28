"""Entry script of the UI: builds the st.navigation router and nothing else."""

from __future__ import annotations

import streamlit as st

from workbench.ui.pages import home

st.set_page_config(page_title="Judge Workbench", page_icon="⚖️", layout="wide")
nav = st.navigation([st.Page(home.render, title="Home", icon="🏠", url_path="home", default=True)])
nav.run()
