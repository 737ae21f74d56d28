"""The report as text for the terminal: alarms first, as sentences, then one line per window."""

from __future__ import annotations

from workbench.features.monitoring.records import MonitorReport


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def report_text(report: MonitorReport) -> str:
    lines = [f"Stream '{report.stream}' graded by {report.bundle}; {report.agreement_metric} bound "
             f"{report.agreement_bound:g}; windows of a {report.window}."]
    current = report.open_alarms
    lines.append("Open alarms:" if current else "No open alarm in the latest window.")
    lines += [f"  - {a.sentence}" for a in current]
    lines.append("")
    lines.append(f"{'window':<12}{'traces':>8}{'labeled':>9}{'raw pass':>10}  {'corrected pass (95% CI)':<26}"
                 f"{'agreement (95% CI)':<22}alarms")
    for w in report.windows:
        c, a = w.corrected_pass_rate, w.agreement
        corr = (f"{_pct(c.value)} ({_pct(c.ci_low)}-{_pct(c.ci_high)})" if c.value is not None else "n/a")
        agr = f"{a.value:.2f} ({a.ci_low:.2f}-{a.ci_high:.2f})" if a.value is not None else "n/a"
        lines.append(f"{w.start[:10]:<12}{w.n_items:>8}{w.n_labeled:>9}{_pct(w.raw_pass_rate):>10}  {corr:<26}"
                     f"{agr:<22}{', '.join(x.kind for x in w.alarms) or '-'}")
    return "\n".join(lines)
