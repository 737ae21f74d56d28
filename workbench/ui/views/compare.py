"""Compare (leads): every judge of a rubric side by side, cost against agreement, significant differences."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from workbench import charts
from workbench.errors import WorkbenchError
from workbench.ui import auth
from workbench.ui.components import prose
from workbench.ui.lead import comparison, page_header, show_chart

ROLES = auth.LEADS


def table(result: dict) -> pd.DataFrame:
    rows = []
    for r in result["judges"]:
        m = r["metrics"]
        a = m["krippendorff_alpha_ordinal"]
        fam = r["self_preference"]["same_family"]
        rows.append({
            "judge": r["judge"]["id"], "model": r["judge"]["model"], "mode": r["judge"]["mode"],
            "alpha": a["value"], "alpha 95%": f"{a['ci_low']:.2f} – {a['ci_high']:.2f}" if a["ci_low"] is not None else "n/a",
            "exact": m["exact_agreement"]["value"], "signed error": m["mean_signed_error"]["value"],
            "TPR": m["tpr"]["value"], "TNR": m["tnr"]["value"],
            "same-family effect": fam["value"], "flip rate": (r["noise"] or {}).get("flip_rate"),
            "cost per 100 items (USD)": r["cost"]["per_100_items_usd"],
            "median latency (s)": (r["cost"]["median_latency_ms"] or 0) / 1000 if r["cost"]["median_latency_ms"] else None,
            "verdict": "calibrated" if r["verdict"]["calibrated"] else "not calibrated",
            "fails": ", ".join(c["name"] for c in r["verdict"]["checks"] if c["status"] == "failed"),
        })
    return pd.DataFrame(rows)


def render() -> None:
    picked = page_header("Compare judges", "cmp", ROLES, with_judge=False)
    if picked is None:
        return
    golden_set, rubric, _ = picked
    try:
        result = comparison(golden_set, rubric)
    except WorkbenchError as e:
        st.warning(prose(str(e)))
        return
    df = table(result)
    st.dataframe(df, hide_index=True, column_config={
        "alpha": st.column_config.NumberColumn(format="%.3f"), "exact": st.column_config.NumberColumn(format="%.3f"),
        "signed error": st.column_config.NumberColumn(format="%+.2f"),
        "TPR": st.column_config.NumberColumn(format="%.2f"), "TNR": st.column_config.NumberColumn(format="%.2f"),
        "same-family effect": st.column_config.NumberColumn(format="%+.2f"),
        "flip rate": st.column_config.NumberColumn(format="%.2f"),
        "cost per 100 items (USD)": st.column_config.NumberColumn(format="$%.2f")})
    calibrated = df[df["verdict"] == "calibrated"]["judge"].tolist()
    if calibrated:
        st.success(f"Calibrated: {', '.join(calibrated)}.")
    else:
        st.error("No judge of this rubric passes the gate yet.")
    plot = df.dropna(subset=["cost per 100 items (USD)"])
    if not plot.empty:
        show_chart(charts.cost_vs_agreement(plot[["judge", "alpha", "cost per 100 items (USD)", "verdict"]]
                                                 .to_dict("records")))
    st.subheader("Which differences are real")
    st.caption(f"Paired bootstrap of each judge against the best ({result['best']}) on the same items: a difference "
               "is significant when its 95% interval excludes 0.")
    diffs = pd.DataFrame([{"judge": d["judge"], "vs": d["baseline"], "alpha difference": d["value"],
                           "95% low": d["ci_low"], "95% high": d["ci_high"],
                           "significant": "yes" if d["significant"] else "no"} for d in result["differences"]])
    st.dataframe(diffs, hide_index=True)


if __name__ == "__main__":
    render()
