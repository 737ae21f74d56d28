"""Streamlit front end: thin pages over the services (no SQL, no SDK calls here)."""
