"""The calibration card: a shareable Markdown or HTML page of the verdict, measurements and charts.

HTML embeds its charts as PNG data so the one file can be attached to a pull
request or a review; Markdown writes the PNGs beside it.
"""

from __future__ import annotations

import base64
import html
import shutil
from pathlib import Path
from typing import Any

from .. import charts
from ..gate import STATUS_MARK
from ..presentation import category_rows, drift_sentence, interval_sentence, metric_rows, self_preference_rows
from ..names import safe_path
from ..scale import fmt as _f
from ..store import Store
from ..workspace import Workspace
from ..workspace import current as current_workspace
from .calibration import Options, calibrate, noise_floor_sentence
from .export import write_atomic
from .refine import card_note



def _png(chart) -> bytes:
    import vl_convert as vlc  # Altair's own exporter; imported here so the UI does not need it
    return vlc.vegalite_to_png(chart.to_json(), scale=2)


def card_sections(r: dict) -> list[tuple[str, list[str]]]:
    """(heading, markdown lines) of the card; shared by both formats."""
    v = r["verdict"]
    out = [("Verdict", [f"**{'CALIBRATED' if v['calibrated'] else 'NOT CALIBRATED'}**: judge `{r['judge']['id']}` "
                        f"(`{r['judge']['model']}`, {r['judge']['mode']}) on golden set `{r['golden_set']['name']}` "
                        f"version {r['golden_set']['version']} (`{r['golden_set']['version_hash'][:16]}`), rubric "
                        f"`{r['rubric']['name']}` v{r['rubric']['version']}, run `{r['run']['name']}`.", "",
                        "| check | status | reason |", "|---|---|---|"]
            + [f"| {c['name']} | {STATUS_MARK[c['status']].strip() or 'n/a'} | {c['message']} |" for c in v["checks"]])]
    lines = [f"{r['n_items']} items with a consensus label and a judge score ({r['n_unresolved']} unresolved, "
             f"{r['n_unscored']} unscored). {interval_sentence(r)}", "",
             "| metric | value | 95% interval | n |", "|---|---|---|---|"]
    lines += [f"| {m['metric']} | {_f(m['value'])} | {_f(m['ci_low'])} to {_f(m['ci_high'])} | {m['n'] or ''} |"
              for m in metric_rows(r)]
    out.append(("Agreement with the consensus", lines))
    lines = ["| category | n | exact agreement | 95% interval | alpha | mean signed error | weaker than the rest |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {c['category']} | {c['n']} | {_f(c['exact_agreement'])} | {_f(c['ci_low'])} to {_f(c['ci_high'])} "
              f"| {_f(c['alpha'])} | {_f(c['mean_signed_error'])} | {'yes' if c['weaker'] else 'no'} |"
              for c in category_rows(r)]
    out.append(("Per category", lines))
    hc = r["human_ceiling"]
    lines = [f"Humans among themselves: Krippendorff's alpha {_f(hc['krippendorff_alpha_ordinal'])}, pairwise exact "
             f"agreement {_f(hc['human_pairwise_agreement'])}; judge with each human "
             f"{_f(hc['judge_human_pairwise_agreement'])} on the same items."]
    a = r.get("alt_test")
    lines.append(f"Alternative-annotator test: winning rate {_f(a['winning_rate'])}, advantage probability "
                 f"{_f(a['advantage_probability'])} (epsilon {a['epsilon']}, {a['metric']}, {len(a['raters'])} raters)"
                 if a else f"Alternative-annotator test: not run ({r.get('alt_test_reason')}).")
    out.append(("Against the humans", lines))
    lines = [f"- {e['effect'].replace('_', ' ')}: " + (f"{_f(e['value'])} ({_f(e['ci_low'])} to {_f(e['ci_high'])}), "
                                                       f"n = {e['n']}, OLS p = {e['ols_p'] or 'n/a'}"
                                                       if e["value"] is not None else f"not measurable ({e['note']})")
             for e in self_preference_rows(r)]
    out.append(("Self-preference", lines))
    lines = [noise_floor_sentence(r) or "The noise floor is undefined: the alpha interval could not be computed."]
    if r.get("noise"):
        lines.append(f"Repeats: {r['noise']['flip_rate']:.0%} of items change score; pass^k "
                     f"{_f(r['noise'].get('pass_hat_k'))}.")
    if sentence := drift_sentence(r.get("drift")):
        lines.append(sentence)
    out.append(("Noise, drift and the noise floor", lines))
    if r.get("probes"):
        out.append(("Stress probes", probe_card_lines(r["probes"])))
    return out


def probe_card_lines(probes: dict) -> list[str]:
    """Each probe against the calibrated run's verdicts: shift, flip rate, robustness, change against the humans."""
    lines = [f"Verdicts on perturbed items compared with run `{probes['baseline_run']}` (paired cluster-bootstrap "
             "95% intervals); every probe should leave the human label unchanged.", "",
             "| probe | n | mean shift | flip rate | robustness | shift vs consensus | moves the judge |",
             "|---|---|---|---|---|---|---|"]
    for e in probes["probes"]:
        ms, fr, rr, cs = e["mean_shift"], e["flip_rate"], e["robustness_rate"], e["consensus_shift"]
        lines.append(f"| {e['probe']} | {e['n_items']} | {_f(ms['value'])} ({_f(ms['ci_low'])} to {_f(ms['ci_high'])}) "
                     f"| {_f(fr['value'])} ({_f(fr['ci_low'])} to {_f(fr['ci_high'])}) "
                     f"| {_f(rr['value'])} ({_f(rr['ci_low'])} to {_f(rr['ci_high'])}) "
                     f"| {_f(cs['value'])} ({_f(cs['ci_low'])} to {_f(cs['ci_high'])}) | {e['moves'] or 'no'} |")
    return lines


def card_charts(r: dict) -> list[tuple[str, Any]]:
    w = 480  # images have no container to fill
    return [("agreement", charts.metric_intervals(r, threshold=r["policy"]["min_agreement_lower"], width=w)),
            ("confusion", charts.confusion_heatmap(r, width=260)), ("categories", charts.per_category(r, width=w)),
            ("humans", charts.human_ceiling(r, width=w)),
            ("self_preference", charts.self_preference_forest(r, threshold=r["policy"]["max_self_preference"],
                                                              width=w))]


def write_card(store: Store, golden_set: str, rubric: str, judge: str, *, fmt: str = "html",
               out: str | Path | None = None, options: Options = Options(),
               workspace: Workspace | None = None) -> Path:
    """Write the card to ``out``, by default to the workspace's reports/ folder; returns the file."""
    if fmt not in ("md", "html"):
        raise ValueError(f"unknown format {fmt!r}")
    workspace = workspace or current_workspace()
    r = calibrate(store, golden_set, rubric, judge, options, workspace=workspace)
    # The default file name is made of names from the database: built only through safe_path.
    name = f"calibration-{r['rubric']['name']}-v{r['rubric']['version']}-{judge}.{fmt}"
    out = Path(out) if out else safe_path(workspace.reports, name)
    images = [(name, _png(chart)) for name, chart in card_charts(r)]
    title = f"Calibration card: {judge} on {r['rubric']['name']} v{r['rubric']['version']}"
    sections = card_sections(r)
    if note := card_note(store, r["rubric"]["name"], r["rubric"]["version"]):  # accepted from the refinement loop
        sections.insert(1, ("Refinement", [note]))
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "md":
        folder = out.with_name(out.stem + "_files")
        parts = [f"# {title}", ""]
        for heading, lines in sections:
            parts += [f"## {heading}", "", *lines, ""]
        parts.append("## Charts")
        created = not folder.exists()
        try:
            folder.mkdir(exist_ok=True)
            for name, png in images:
                (folder / f"{name}.png").write_bytes(png)
                parts.append(f"![{name}]({folder.name}/{name}.png)")
            write_atomic(out, "\n".join(parts) + "\n")
        except BaseException:
            if created:  # a failed write (full or read-only disk) leaves no half-written folder behind
                shutil.rmtree(folder, ignore_errors=True)
            raise
    else:
        body = [f"<h1>{html.escape(title)}</h1>"]
        for heading, lines in sections:
            body.append(f"<h2>{html.escape(heading)}</h2>" + _md_to_html(lines))
        body.append("<h2>Charts</h2>")
        for name, png in images:
            body.append(f'<img alt="{name}" style="max-width:100%" src="data:image/png;base64,'
                        f'{base64.b64encode(png).decode()}">')
        write_atomic(out, f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
                     "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto}"
                     "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem}</style>"
                     + "\n".join(body))
    return out


def _md_to_html(lines: list[str]) -> str:
    """Just enough Markdown (tables, bullets, bold, code) for the card's own lines."""
    import re

    def inline(t: str) -> str:
        t = html.escape(t)
        t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
        return re.sub(r"`(.+?)`", r"<code>\1</code>", t)

    out, table = [], []
    for line in lines + [""]:
        if line.startswith("|"):
            if not set(line) <= set("|-: "):
                table.append([c.strip() for c in line.strip("|").split("|")])
            continue
        if table:
            head, *rows = table
            out.append("<table><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in rows)
                       + "</table>")
            table = []
        if line.startswith("- "):
            out.append(f"<li>{inline(line[2:])}</li>")
        elif line:
            out.append(f"<p>{inline(line)}</p>")
    return "\n".join(out)
