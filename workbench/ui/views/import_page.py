"""Import (leads and admins): items or labels files through the same import services as the CLI.

The upload is written to a temporary folder under its original file name, so
the service's errors name the file the user chose ("items.jsonl line 14: ...").
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from workbench.features.importing.service import import_items, import_labels
from workbench.features.labeling.service import golden_set_names, rubric_names
from workbench.ui import auth
from workbench.ui.components import flash, plain, run_action, show_flash
from workbench.ui.state import store

ROLES = auth.LEADS
KINDS = {"Items": "items", "Labels": "labels"}


def render() -> None:
    auth.require(ROLES)
    st.title("Import")
    st.caption("The same imports as `workbench import items|labels`: the whole file lands or nothing does, and "
               "importing the same file again changes nothing.")
    show_flash()
    s = store()
    kind = KINDS[st.radio("What to import", list(KINDS), horizontal=True, key="import_kind")]
    sets = golden_set_names(s)
    if kind == "items":
        st.selectbox("Golden set", sets, key="import_golden_set", index=None, accept_new_options=True,
                     placeholder="Pick one, or type a new name to create it")
    else:
        st.selectbox("Golden set", sets, key="import_golden_set", index=None, placeholder="Pick a golden set")
        st.selectbox("Rubric", rubric_names(s), key="import_rubric", index=None, placeholder="Pick a rubric",
                     help="Add rubrics with `workbench rubric add rubrics/NAME.yaml`.")
        st.checkbox("Add new raters", key="import_new_raters",
                    help="Add the raters the file names who are not raters yet as reviewers; without it a file naming "
                         "someone who is neither a rater's email nor their name is refused.")
    st.file_uploader(f"{kind.capitalize()} file (.jsonl or .csv)", type=["jsonl", "ndjson", "json", "csv"],
                     key=f"import_file_{kind}")
    st.button("Import", type="primary", on_click=_import, args=(kind,))


def _import(kind: str) -> None:
    upload = st.session_state.get(f"import_file_{kind}")
    golden_set = (st.session_state.get("import_golden_set") or "").strip()
    rubric = st.session_state.get("import_rubric")
    if upload is None:
        flash("error", "Choose a file to import first.")
        return
    if not golden_set:
        flash("error", "Pick a golden set (or, for items, type a new name).")
        return
    if kind == "labels" and not rubric:
        flash("error", "Pick the rubric these labels were given under.")
        return
    with tempfile.TemporaryDirectory(prefix="workbench-upload-") as tmp:
        path = Path(tmp) / (Path(upload.name).name or "upload.jsonl")
        path.write_bytes(upload.getvalue())
        if kind == "items":
            run_action(import_items, store(), path, golden_set,
                       ok=lambda r: plain(r.summary("items") + f" into golden set '{golden_set}'."))
        else:
            user = auth.current_user()  # the lead importing: the audit log's actor
            run_action(import_labels, store(), path, golden_set, rubric, actor=user.name if user else None,
                       new_raters=bool(st.session_state.get("import_new_raters")), ok=lambda r: plain(r.summary("labels") + f" under rubric '{rubric}'."))


if __name__ == "__main__":  # run by Streamlit as the page script
    render()
