"""Export (leads): the verdict of every (rubric, judge) pair; export only passing pairs; approved bundles."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.calibration.gate import FAILED, NOT_MEASURABLE, PASSED, UNDECIDED, WARNING
from workbench.calibration.report import CalibrationReport
from workbench.features.export.bundle import UNSIGNED_HINT, GateFailed, export_bundle, list_bundles
from workbench.features.export.records import ExportedBundle
from workbench.features.selective.service import gate_and_section
from workbench.calibration.rubric_versions import get_rubric
from workbench.ui import auth
from workbench.ui.components import code_span, plain, status_mark
from workbench.ui.lead import in_words, page_header, report, verdict_sentences
from workbench.ui.state import store

ROLES = auth.LEADS


def reasons(rep: CalibrationReport, statuses: tuple[str, ...] = (FAILED,)) -> str:
    """The gate's checks of these statuses as a markdown list, one check a line, in the gate's words."""
    return "\n".join(f"- {status_mark(c.status)} — **{c.name}**: {plain(in_words(c.message))}"
                     for c in rep.verdict.checks if c.status in statuses)


def _export(golden_set: str, rubric: str, judge: str) -> None:
    try:
        user = auth.current_user()  # the lead approving: the audit log's actor
        # a policy's selective section is judged and carried as `workbench export` does it
        res = export_bundle(store(), golden_set, rubric, judge, actor=user.name if user else None,
                            guarantee=gate_and_section)
    except GateFailed as e:
        st.session_state["export-msg"] = ("error", plain(str(e)))
    except WorkbenchError as e:
        st.session_state["export-msg"] = ("error", plain(str(e)))
    else:
        signed = f", signed with {res.signed_by})." if res.signed_by else f"). {UNSIGNED_HINT}"
        st.session_state["export-msg"] = ("success", plain(f"Exported {res.path.name} (sha256 {res.sha256[:16]}"
                                                           + signed))


def render() -> None:
    picked = page_header("Export approved rubrics", "exp", ROLES, with_judge=False)
    if picked is None:
        return
    golden_set, rubric, _ = picked
    verdict_sentences(golden_set, rubric)  # the verdict first, one sentence a judge
    if msg := st.session_state.pop("export-msg", None):
        getattr(st, msg[0])(msg[1])
    for spec in get_rubric(store(), rubric).rubric.judges:
        with st.container(border=True):
            try:
                rep = report(golden_set, rubric, spec.id)
            except WorkbenchError:
                st.markdown(f"**{plain(spec.id)}** ({code_span(spec.model)}): no verdict yet, so nothing to export "
                            "(its sentence above says why).")
                continue
            ok = rep.calibrated
            left, right = st.columns([5, 1])
            left.markdown(f"**{plain(spec.id)}** ({code_span(spec.model)}) on rubric v{rep.rubric.version}: "
                          + {PASSED: "✅ calibrated", UNDECIDED: "⏳ not decided yet"}.get(rep.verdict.state,
                                                                                         "❌ not calibrated"))
            if not ok:
                with left.expander(f"Why {plain(spec.id)} cannot be exported: the checks that block it"):
                    st.markdown(reasons(rep, (FAILED, UNDECIDED)))
            if warnings := reasons(rep, (WARNING, NOT_MEASURABLE)):
                with left.expander(f"Warnings about {plain(spec.id)}, which do not block an export"):
                    st.markdown(warnings)
            right.button("Export", key=f"export-{spec.id}", disabled=not ok, on_click=_export,
                         # the version shown, pinned: a version judged since cannot be approved on this page's view
                         args=(golden_set, f"{rubric}@v{rep.rubric.version}", spec.id),
                         type="primary" if ok else "secondary",
                         help=None if ok else "Only a pair whose every check is decided and passed can be exported.")
    _approved(golden_set, rubric)


def _approved(golden_set: str, rubric: str) -> None:
    """The approved bundles of the golden set and rubric on screen (so a bundle is never listed beside the same
    judge's "no verdict yet" of another golden set), the newest export of each pair; the others in one line."""
    st.subheader("Approved bundles")
    latest: dict[tuple, ExportedBundle] = {}
    for b in list_bundles(store()):  # oldest first: an export again of the same pair replaces the earlier one
        latest[(b.golden_set, b.rubric_name, b.rubric_version, b.judge_id)] = b
    here = [b for b in latest.values() if b.golden_set == golden_set and b.rubric_name == rubric]
    elsewhere = [b for b in latest.values() if b not in here]
    if not here:
        st.info(f"No approved bundle of rubric {code_span(rubric)} on golden set {code_span(golden_set)} yet.")
    for b in here:
        path = Path(b.path)
        cols = st.columns([4, 1])
        cols[0].markdown(f"{code_span(path.name)} — rubric {plain(b.rubric_name)} v{b.rubric_version}, judge "
                         f"{plain(b.judge_id)}, sha256 {code_span(b.sha256[:16])}, {plain(b.created_at)}")
        if path.is_file():
            cols[1].download_button("Download", path.read_bytes(), file_name=path.name, mime="application/yaml",
                                    key=f"dl-{b.id}")
        else:
            st.warning(missing_sentence(b), icon="📄")
    if elsewhere:
        sets: dict[str, int] = {}
        for b in elsewhere:
            sets[b.golden_set] = sets.get(b.golden_set, 0) + 1
        st.caption("Approved on other golden sets or rubrics: "
                   + ", ".join(f"{code_span(g)} ({n} bundle{'s' * (n != 1)})" for g, n in sorted(sets.items()))
                   + ". Pick the golden set and rubric in the sidebar to see and download them.")


def missing_sentence(b: ExportedBundle) -> str:
    """One sentence for an approved bundle whose file is gone, with what to do."""
    return (f"{code_span(Path(b.path).name)} (judge {plain(b.judge_id)}, rubric {plain(b.rubric_name)} "
            f"v{b.rubric_version}) was approved on {plain(b.created_at[:10])}, but its file is no longer at "
            f"{code_span(b.path)}: export it again with its Export button above, or run "
            f"{code_span(f'workbench export -g {b.golden_set} -r {b.rubric_name}@v{b.rubric_version} -j {b.judge_id}')}"
            ", to write it into this workspace's rubrics/approved folder.")


if __name__ == "__main__":
    render()
