"""Small pieces the pages share: golden-set and rubric pickers, messages left by callbacks, score labels."""

from __future__ import annotations

import streamlit as st

from ..errors import WorkbenchError
from ..scale import Scale
from ..services.labeling import default_rubric, golden_set_names, rubric_names
from .state import store

FLASH_KEY = "_flash"


def golden_set_and_rubric() -> tuple[str | None, str | None]:
    """Sidebar pickers; the choice is kept in the URL (?golden_set=&rubric=) so a refresh or a link keeps it."""
    s = store()
    sets = golden_set_names(s)
    rubrics = rubric_names(s)
    with st.sidebar:
        if not sets or not rubrics:
            return None, None
        golden_set = _picker("Golden set", sets, "golden_set", default=sets[0])
        rubric = _picker("Rubric", rubrics, "rubric", default=default_rubric(s, golden_set) or rubrics[0])
    return golden_set, rubric


def _picker(label: str, options: list[str], param: str, *, default: str) -> str:
    # The choice lives in a plain session key (widget state is dropped when the user changes page), seeded
    # from the URL on a new session, and is written back to the URL so a refresh or a shared link keeps it.
    chosen_key, widget_key = f"_chosen_{param}", f"pick_{param}"
    chosen = st.session_state.get(chosen_key)
    if chosen not in options:
        wanted = st.query_params.get(param)
        chosen = wanted if wanted in options else default
        st.session_state[chosen_key] = chosen
    st.selectbox(label, options, index=options.index(chosen), key=widget_key, on_change=_chose,
                 args=(chosen_key, widget_key))
    st.query_params[param] = chosen
    return chosen


def _chose(chosen_key: str, widget_key: str) -> None:
    st.session_state[chosen_key] = st.session_state.get(widget_key)


def flash(kind: str, message: str) -> None:
    """Leave a message for the next run (callbacks run before the page is drawn)."""
    st.session_state[FLASH_KEY] = (kind, message)


def show_flash() -> None:
    kind, message = st.session_state.pop(FLASH_KEY, (None, None))
    if kind == "error":
        st.error(message, icon="⚠️")
    elif kind == "success":
        st.success(message, icon="✅")
    elif kind:
        st.info(message)


def run_action(fn, *args, ok=None, **kwargs) -> bool:
    """Call one service from a callback; a WorkbenchError becomes the page's error message.

    ``ok`` is the success message, or a function of the service's result that returns it.
    """
    try:
        result = fn(*args, **kwargs)
    except WorkbenchError as e:
        flash("error", str(e))
        return False
    message = ok(result) if callable(ok) else ok
    if message:
        flash("success", message)
    return True


def score_text(scale: Scale, value: int) -> str:
    """'+1 exceptional', '0 competent pass', '-1 fail'."""
    return f"{value:+d} {scale.label_of(value)}" if value else f"0 {scale.label_of(value)}"

