"""Label: the reviewer's queue, one blind item at a time, one key per scale value.

Every save, skip or flag happens in an ``on_click`` callback through one
service call, with the item's id bound into the button's key and arguments: a
double click or a repeated key press reaches the same (item, rater, rubric)
upsert, so it can never label another item or give two labels.

Streamlit runs this file as the page script (``st.Page`` by file, so AppTest
can switch to it); importing it only defines ``render``.
"""

from __future__ import annotations

import streamlit as st

from workbench.core.scale import Scale
from workbench.features.labeling import service as svc
from workbench.calibration.rubric_versions import RubricVersion, get_rubric
from workbench.ui import auth
from workbench.ui.components import (code_span, flash, golden_set_and_rubric, plain, prose, run_action, score_text,
    show_flash)
from workbench.ui.state import store
from workbench.ui.views.parts.trajectory import render_item

ROLES = auth.REVIEWERS
# One key per scale value, lowest first ('c' and 'r' are Streamlit's own; 's' skips, 'b' goes back,
# 'p' and 'n' page through a long trajectory).
SCORE_KEYS = "123456789qwetyuio"
EDIT_KEY = "_editing"  # (golden set, rubric, item id) while the reviewer changes an earlier label
RECENT = 8
# Reviewers label on phones (390 px wide): code blocks and tables wrap instead of scrolling sideways, long words
# and paths break, and the score buttons' labels wrap inside their buttons. Streamlit stacks st.columns below
# 640 px by itself: the item first, then the score buttons, Skip and Flag, all reachable by scrolling down.
PHONE_CSS = """<style>
[data-testid="stMain"] pre, [data-testid="stMain"] pre code { white-space: pre-wrap !important;
  overflow-wrap: anywhere; word-break: break-word; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] { overflow-wrap: anywhere; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] table { display: block; max-width: 100%;
  overflow-x: auto; }
[data-testid="stMain"] button p { white-space: normal; overflow-wrap: anywhere; }
.jump-to-score { display: none; }
@media (max-width: 640px) {
  [data-testid="stMainBlockContainer"] { padding-left: 0.75rem; padding-right: 0.75rem; }
  .jump-to-score { display: inline-block; padding: 6px 0; font-weight: 600; }
}
</style>"""
# on a phone the score buttons come after the whole trajectory: a link at the top goes straight to them
JUMP = "<a class='jump-to-score' href='#score-this-item'>Score this item ↓</a>"


def render() -> None:
    user = auth.require(ROLES)
    golden_set, rubric = golden_set_and_rubric()
    st.title("Label")
    st.html(PHONE_CSS)  # a style-only block: page CSS, gone with the page
    if golden_set is None or rubric is None:
        st.info("Nothing to label yet: a lead imports a golden set and a rubric first (Import page, or "
                "`workbench import items FILE --golden-set NAME` and `workbench rubric add FILE`).")
        return
    s = store()
    rv = get_rubric(s, rubric)
    show_flash()
    editing = st.session_state.get(EDIT_KEY)
    editing_id = editing[2] if editing and editing[:2] == (golden_set, rubric) else None
    if editing_id:
        item, current = svc.open_item(s, golden_set, editing_id), svc.my_label(s, golden_set, rubric, editing_id,
                                                                              user.name)
    else:
        item, current = svc.next_item(s, golden_set, rubric, user.name), None
    progress = svc.labeling_progress(s, golden_set, rubric, user.name)
    _progress(progress, golden_set)
    if item is None and progress.assigned == 0:
        st.info(f"'{plain(golden_set)}' is assigned to named reviewers, and not to you: a lead can add you "
                f"(`workbench golden-set assign {golden_set} -r {rubric} --to YOUR-EMAIL`).")
        return
    if item is None:
        st.success(f"Your queue is empty: every item of '{plain(golden_set)}' has its labels, or you have labeled, skipped "
                   f"or flagged it. Items other reviewers hold come back if they are not labeled within "
                   f"{int(svc.RESERVATION_TTL.total_seconds() // 60)} minutes.", icon="🎉")
        _recent_labels(golden_set, rubric, user, rv.rubric.scale, None)
        return
    # the service has already masked self-identifying phrases as the golden set's lead decided: nothing here can
    # turn that off
    st.html(JUMP)
    left, right = st.columns([3, 2], gap="large")
    with right:
        _scoring(golden_set, rubric, user, rv, item.item_id, current)
        _rubric(rv)
        _recent_labels(golden_set, rubric, user, rv.rubric.scale, editing_id)
    with left:
        render_item(item, key=item.item_id)


def _progress(p: svc.LabelingProgress, golden_set: str) -> None:
    yours = f" · {p.assigned} assigned to you" if p.assigned else ""
    st.progress(p.fraction, text=f"**{p.n_complete} of {p.n_items}** items of '{plain(golden_set)}' have {p.overlap} "
                                 f"labels · you labeled {p.mine}{yours} · {p.waiting} waiting for you")


def _scoring(golden_set: str, rubric: str, user: auth.User, rv: RubricVersion, item_id: str,
             current: dict | None) -> None:
    scale = rv.rubric.scale
    mode = "change" if current else "new"
    st.html("<div id='score-this-item'></div>")  # where the phone's "Score this item" link goes
    st.markdown(f"Item {code_span(item_id)}")
    if current:
        st.info(f"Changing your label, now **{score_text(scale, current['score'])}**. The change is kept in the "
                f"label history.", icon="✏️")
    rationale_key = f"rationale:{mode}:{item_id}"
    extremes = " and ".join(f"“{score_text(scale, v)}”" for v in (scale.values[0], scale.values[-1]))
    st.text_area("Rationale", key=rationale_key, value=(current or {}).get("rationale") or "", height=90,
                 placeholder=f"Why this score? Required for {extremes}.",
                 help="Type, press Tab to leave the box, then press the score's key.")
    for i, lv in enumerate(scale.levels):
        st.button(score_text(scale, lv.value), key=f"score:{mode}:{item_id}:{lv.value}", shortcut=SCORE_KEYS[i],
                  help=lv.description or None, width="stretch",
                  type="primary" if current and current["score"] == lv.value else "secondary",
                  on_click=_save, args=(golden_set, rubric, item_id, user.name, lv.value, rationale_key, bool(current)))
    st.caption("The keys work while no text box has the cursor: type a rationale, press Tab, then the key.")
    if current:
        st.button("Back to my queue", key=f"back:{item_id}", shortcut="B", on_click=_stop_editing)
        return
    st.button("Skip", key=f"skip:{item_id}", shortcut="S", on_click=_set_aside,
              args=(golden_set, rubric, item_id, user.name, "skip", None))
    with st.expander("Flag this item"):
        st.radio("What is wrong?", svc.FLAG_KINDS, key=f"flag-kind:{item_id}", horizontal=True)
        st.text_input("Note", key=f"flag-note:{item_id}", placeholder="What is broken or unclear?")
        st.button("Flag and move on", key=f"flag:{item_id}", on_click=_flag,
                  args=(golden_set, rubric, item_id, user.name))


def _rubric(rv: RubricVersion) -> None:
    r = rv.rubric
    with st.container(border=True):
        st.markdown(f"**{plain(r.title or r.name)}** · rubric v{rv.version}")
        if r.description:
            st.caption(prose(r.description))
        st.markdown("\n".join(f"- **{plain(score_text(r.scale, lv.value))}** (key `{SCORE_KEYS[i]}`): "
                              f"{prose(lv.description)}" for i, lv in enumerate(r.scale.levels)))
        if r.criteria:
            st.markdown("**Criteria**\n\n" + "\n".join(f"- **{plain(c.id)}**: {prose(c.description)}"
                                                          for c in r.criteria))


def _recent_labels(golden_set: str, rubric: str, user: auth.User, scale: Scale, editing_id: str | None) -> None:
    rows = svc.recent_labels(store(), golden_set, rubric, user.name, limit=RECENT)
    st.markdown("**My recent labels**")
    if not rows:
        st.caption("None yet.")
        return
    for r in rows:
        changed = f" · changed {r['n_changes']}×" if r["n_changes"] else ""
        why = f"  \n{_snippet(r['rationale'])}" if r["rationale"] else ""
        # the text takes what the button leaves: "Change" is never cut to "Ch…" in a narrow column
        with st.container(horizontal=True, vertical_alignment="center", wrap=False):
            st.markdown(f"{code_span(r['item_id'])} **{score_text(scale, r['score'])}**{changed}{why}",
                        width="stretch")
            st.button("Change", key=f"change:{r['item_id']}", disabled=r["item_id"] == editing_id, width="content",
                      on_click=_start_editing, args=(golden_set, rubric, r["item_id"]))


def _snippet(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return plain(text[:n] + "…" if len(text) > n else text)


# -- callbacks: each is one service call ------------------------------------------

def _save(golden_set: str, rubric: str, item_id: str, rater: str, score: int, rationale_key: str,
          changing: bool) -> None:
    scale = get_rubric(store(), rubric).rubric.scale
    verb = "Changed your label of" if changing else "Saved"

    def message(changed: bool) -> str:
        return (f"{verb} {code_span(item_id)}: {score_text(scale, score)}." if changed
                else f"{code_span(item_id)} already had this label; nothing changed.")

    if run_action(svc.submit_label, store(), golden_set, rubric, item_id, rater, score,
                  st.session_state.get(rationale_key), ok=message) and changing:
        st.session_state.pop(EDIT_KEY, None)


def _set_aside(golden_set: str, rubric: str, item_id: str, rater: str, kind: str, note: str | None) -> None:
    run_action(svc.set_aside, store(), golden_set, rubric, item_id, rater, kind, note,
               ok=f"Skipped {code_span(item_id)}." if kind == "skip"
               else f"Flagged {code_span(item_id)} as {plain(kind)}.")


def _flag(golden_set: str, rubric: str, item_id: str, rater: str) -> None:
    kind = st.session_state.get(f"flag-kind:{item_id}") or svc.FLAG_KINDS[0]
    _set_aside(golden_set, rubric, item_id, rater, kind, st.session_state.get(f"flag-note:{item_id}"))


def _start_editing(golden_set: str, rubric: str, item_id: str) -> None:
    st.session_state[EDIT_KEY] = (golden_set, rubric, item_id)


def _stop_editing() -> None:
    st.session_state.pop(EDIT_KEY, None)
    flash("info", "Back to your queue.")


if __name__ == "__main__":  # run by Streamlit as the page script
    render()
