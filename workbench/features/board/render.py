"""The board as a file: JSON (the report as it is), Markdown, or one self-contained HTML page.

Rows are tasks grouped by category, columns are models; a cell shows each
tier (mechanical: passes of the repeats; judged: mean score and its +1s),
marked where a tier's outlier test flags it. Below: the corrected pass rate of
each model per category, where to look, and the judge's family. Everything a
run file brought (task ids, model names, categories) is escaped.
"""

from __future__ import annotations

import html
import json
from typing import Any

from workbench.core.scale import fmt
from workbench.features.board.records import (
    BoardComparison,
    BoardLead,
    BoardReport,
    Cell,
    FamilyCheck,
    RateRow,
    TierInfo,
)

ARROW = {"above": "▲", "below": "▼"}
FAMILY_MARK = "†"


def render(report: BoardReport, fmt_name: str) -> str:
    if fmt_name == "json":
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if fmt_name == "md":
        return render_md(report)
    if fmt_name == "html":
        return render_html(report)
    raise ValueError(f"unknown board format {fmt_name!r}; use html, md or json")


def _signed(x: Any, digits: int = 2) -> str:
    return "–" if x is None else f"{x:+.{digits}f}"


_MD_SPECIAL = set("\\`*_[]<>&|~#!")


def _md(text: Any) -> str:
    r"""Text a run file or bundle brought, as literal Markdown text: HTML and Markdown syntax are escaped.

    A backslash before ASCII punctuation is a literal character in CommonMark, so ``<img src=x>`` stays that text
    (no element), ``**x**`` stays stars, and a pipe or a line break cannot end a table cell.

    >>> _md("<b>x</b> | *y*")
    '\\<b\\>x\\</b\\> \\| \\*y\\*'
    """
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in str(text)).replace("\r", " ").replace("\n", " ")


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def cell_text(cell: Cell, tier: TierInfo) -> str:
    """One tier of a cell in words: '2/3 pass' (mechanical) or '+0.33 · 1×+1' (judged), with its outlier mark."""
    t = cell.tiers.get(tier.name)
    if t is None or not t.n:
        return "–" if t is None else f"{t.n_unscored} unscored"
    if tier.kind == "mechanical":
        text = f"{int(t.n_pass)}/{int(t.n)} pass"
    else:
        text = _signed(t.mean_score)
        if t.n_top:
            text += f" · {int(t.n_top)}×{tier.scale[-1]:+d}"
    if t.n_unscored:
        text += f" · {int(t.n_unscored)} unscored"
    if t.flagged:
        text = f"{ARROW[t.direction]} {text}"
    return text


def _marked(report: BoardReport) -> dict[str, bool]:
    return {m.model: bool(m.marked_by) for m in report.models}


def _grid_rows(report: BoardReport, category: str) -> list[tuple[str, dict[str, Cell]]]:
    by_task: dict[str, dict[str, Cell]] = {}
    for c in report.cells:
        if c.category == category:
            by_task.setdefault(c.task_id, {})[c.model] = c
    return sorted(by_task.items())


def category_flags(report: BoardReport, category: str) -> list[str]:
    """Sentences for the models a tier's test flags on the whole category."""
    return [f"{ARROW[r.test.direction]} {r.model} is {r.test.direction} the category's other models ({r.tier}, "
            f"{_signed(r.test.effect)}, {_signed(r.test.ci_low)} to {_signed(r.test.ci_high)}, adjusted p "
            f"{r.test.p_adjusted:.2g})" for r in report.category_outliers if r.category == category and r.test.flagged]


def column_rows(report: BoardReport) -> tuple[list[str], list[list[str]]]:
    """Per model, each tier's mean@k and pass^k over its tasks: what reading down a column gives."""
    head = ["model"] + [f"{t.name} {what}" for t in report.tiers for what in ("mean@k", "pass^k")]
    rows = []
    for m in report.models:
        row = [m.model]
        for t in report.tiers:
            c = next((c for c in report.columns if c.tier == t.name and c.model == m.model), None)
            row += ["–", "–"] if c is None or not c.k else [f"{_pct(c.mean_at_k)}", f"{_pct(c.pass_hat_k)} (k={c.k})"]
        rows.append(row)
    return head, rows


def _rate(r: RateRow) -> str:
    if r.refused or r.corrected is None:
        return f"raw {_pct(r.raw)} (not corrected)"
    return f"{_pct(r.corrected)} ({_pct(r.ci_low)}–{_pct(r.ci_high)})"


def _rates_by_model(report: BoardReport, tier: TierInfo, model: str) -> dict[str, RateRow]:
    return {r.category: r for r in report.rates if r.tier == tier.name and r.model == model}


def _notes(report: BoardReport) -> list[str]:
    """What both text formats say beside the grid, as plain strings."""
    s = report.settings
    method = "Benjamini-Hochberg" if s.adjustment == "fdr_bh" else "Holm"
    notes = [f"Outliers: a cell against the task's other models, net of each model's usual level, with the "
             f"within-cell variance pooled over the board; p-values adjusted ({method}) at {s.q}; ▲ above, "
             f"▼ below. Rates: Rogan-Gladen corrected with each bundle's TPR and TNR, {s.level:.0%} intervals; "
             f"repeats of a task count together."]
    for name, t in report.outlier_tests.items():
        if t.task.reason:
            notes.append(f"{name}: {t.task.reason}.")
    ungraded = {k: v for k, v in report.n_ungraded.items() if v}
    if ungraded:
        notes.append("Not graded yet: " + ", ".join(f"{v} items of {k}" for k, v in ungraded.items())
                     + "; run 'workbench board grade' again to finish.")
    return notes


def _tier_line(t: TierInfo, e: Any) -> str:
    """A tier's judge, rubric and calibration in words, its names passed through ``e`` (Markdown or HTML)."""
    return (f"judge {e(t.judge)} ({e(t.model)}{', family ' + e(t.family) if t.family else ''}), rubric {e(t.rubric)} "
            f"v{t.rubric_version}, TPR {fmt(t.tpr, 2)}, TNR {fmt(t.tnr, 2)}")


def render_md(report: BoardReport) -> str:
    """The board as CommonMark (GitHub tables): every name a run file or bundle brought is escaped by ``_md``."""
    marked = _marked(report)
    models = [m.model for m in report.models]
    head = [f"# Board {_md(report.board)}", "",
            f"{report.n_items} runs of {len(models)} models on {len(report.tasks)} tasks in "
            f"{len(report.categories)} categories. No summed score: read down a column and across a category.", ""]
    head += [f"- **{_md(t.name)}**: {_tier_line(t, _md)}" for t in report.tiers]
    head += [""] + [_md(n) for n in _notes(report)] + [""]
    if any(marked.values()):
        head += [f"{FAMILY_MARK} the judged tier's judge shares this model's family.", ""]
    cols = [f"{_md(m)}{FAMILY_MARK if marked[m] else ''}" for m in models]
    for category in report.categories:
        head += [f"## {_md(category)}", ""] + [f"{_md(f)}  " for f in category_flags(report, category)]
        head += ["", "| task | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        for task, row in _grid_rows(report, category):
            cells = []
            for m in models:
                c = row.get(m)
                cells.append("–" if c is None else "<br>".join(_md(f"{t.name[0].upper()}: {cell_text(c, t)}")
                                                              for t in report.tiers))
            head.append(f"| {_md(task)} | " + " | ".join(cells) + " |")
        head.append("")
    cols_head, cols_rows = column_rows(report)
    head += ["## Down each column", "", "| " + " | ".join(map(_md, cols_head)) + " |", "|---" * len(cols_head) + "|"]
    head += ["| " + " | ".join(map(_md, r)) + " |" for r in cols_rows] + [""]
    head += ["## Corrected pass rate per model", ""]
    cats = report.categories + ["(all)"]
    for t in report.tiers:
        head += [f"**{_md(t.name)}**", "", "| model | " + " | ".join(map(_md, cats)) + " |",
                 "|---" * (len(cats) + 1) + "|"]
        for m in models:
            got = _rates_by_model(report, t, m)
            head.append(f"| {_md(m)} | " + " | ".join(_md(_rate(got[c])) if c in got else "–" for c in cats) + " |")
        head.append("")
    head += ["## Where to look", ""]
    for w in report.where_to_look:
        head.append(f"{w.rank}. **{_md(w.task_id)}** × **{_md(w.model)}** ({_md(w.category)}), item "
                    f"{_md(w.item_id)}: " + _md("; ".join(r.text for r in w.reasons)))
    head.append("")
    for f in report.family:
        head += _family_md(f)
    return "\n".join(head)


def _family(f: FamilyCheck) -> tuple[str, str, list[list[str]]]:
    """(heading, sentence, rows of model / vs / category / difference / adjusted) of a judged tier's family."""
    e = f.effect
    heading = f"The judge's family ({f.tier}: {f.judge}, family {f.judge_family or 'none'})"
    if not f.marked_models:
        return heading, "No model on the board shares the judge's family.", []
    sentence = (f"Marked: {', '.join(f.marked_models)}. Same-family effect measured at calibration: "
                + ("not measurable" if e.value is None else
                   f"{_signed(e.value)} ({_signed(e.ci_low)} to {_signed(e.ci_high)})") + ".")
    rows = []
    for r in f.comparison:
        adj = (r.reason or "–") if r.adjusted is None else \
            f"{_signed(r.adjusted)} ({_signed(r.adjusted_low)} to {_signed(r.adjusted_high)})"
        rows.append([r.model, r.other, r.category, f"{_signed(r.difference)} ({_signed(r.ci_low)} to "
                     f"{_signed(r.ci_high)})", adj])
    return heading, sentence, rows


FAMILY_COLUMNS = ("model", "vs", "category", "difference", "adjusted for the effect")


def _family_md(f: FamilyCheck) -> list[str]:
    heading, sentence, rows = _family(f)
    out = [f"## {_md(heading)}", "", _md(sentence)]
    if rows:
        out += ["", "| " + " | ".join(FAMILY_COLUMNS) + " |", "|---" * len(FAMILY_COLUMNS) + "|"]
        out += ["| " + " | ".join(map(_md, r)) + " |" for r in rows]
    return out + [""]


CSS = """
.board-wrap { font: 13px/1.35 system-ui, sans-serif; color: #1d2330; max-width: 100%; }
.board-wrap table { border-collapse: collapse; width: 100%; table-layout: fixed; margin: 6px 0 18px; }
.board-wrap th, .board-wrap td { border: 1px solid #d5d9e0; padding: 3px 5px; vertical-align: top;
  overflow-wrap: anywhere; }
.board-wrap th { background: #f2f4f7; text-align: left; }
.board-wrap .task { font-family: ui-monospace, monospace; width: 9em; }
.board-wrap .tier { display: block; white-space: normal; }
.board-wrap .above { background: #e3f4e4; } .board-wrap .below { background: #fbe4e1; }
.board-wrap .marked { color: #8a4b00; } .board-wrap .note { color: #555; max-width: 70em; }
.board-wrap h2 { margin-top: 24px; } .board-wrap ol li { margin-bottom: 3px; }
.board-wrap .heatmap td.heat { text-align: center; font-variant-numeric: tabular-nums; }
.board-wrap .heatmap .cat { color: #555; width: 8em; } .board-wrap .heatmap tr.all td { font-weight: 600; }
.board-wrap .legend { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin: -10px 0 14px; }
.board-wrap .swatch { padding: 1px 8px; border: 1px solid #d5d9e0; font-size: 12px; }
.board-wrap .legend-words { color: #555; margin-left: 6px; }
"""
PAGE_CSS = "body { margin: 16px; }"


def render_html(report: BoardReport) -> str:
    e = html.escape
    marked = _marked(report)
    models = [m.model for m in report.models]
    parts = [f"<h1>Board {e(report.board)}</h1>",
             f"<p class='note'>{report.n_items} runs of {len(models)} models on {len(report.tasks)} tasks in "
             f"{len(report.categories)} categories. No summed score: read down a column and across a "
             f"category.</p><ul>"]
    for t in report.tiers:
        parts.append(f"<li><b>{e(t.name)}</b>: judge <code>{e(t.judge)}</code> (<code>{e(t.model)}</code>"
                     f"{', family ' + e(t.family) if t.family else ''}), rubric <code>{e(t.rubric)}</code> "
                     f"v{t.rubric_version}, TPR {fmt(t.tpr, 2)}, TNR {fmt(t.tnr, 2)}</li>")
    parts.append("</ul>" + "".join(f"<p class='note'>{e(n)}</p>" for n in _notes(report)))
    if any(marked.values()):
        parts.append(f"<p class='note marked'>{FAMILY_MARK} the judged tier's judge shares this model's family.</p>")
    parts.append(board_grid_html(report))
    cols_head, cols_rows = column_rows(report)
    parts.append("<h2>Down each column</h2><table><tr>" + "".join(f"<th>{e(c)}</th>" for c in cols_head) + "</tr>"
                 + "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in cols_rows)
                 + "</table>")
    parts.append("<h2>Corrected pass rate per model</h2>")
    cats = report.categories + ["(all)"]
    for t in report.tiers:
        parts.append(f"<h3>{e(t.name)}</h3><table><tr><th>model</th>"
                     + "".join(f"<th>{e(c)}</th>" for c in cats) + "</tr>")
        for m in models:
            got = _rates_by_model(report, t, m)
            parts.append(f"<tr><td>{e(m)}</td>" + "".join(f"<td>{e(_rate(got[c])) if c in got else '–'}</td>"
                                                          for c in cats) + "</tr>")
        parts.append("</table>")
    parts.append("<h2>Where to look</h2><ol>")
    for w in report.where_to_look:
        parts.append(f"<li><b>{e(w.task_id)}</b> × <b>{e(w.model)}</b> ({e(w.category)}), item "
                     f"<code>{e(str(w.item_id))}</code>: {e('; '.join(r.text for r in w.reasons))}</li>")
    parts.append("</ol>")
    for f in report.family:
        heading, sentence, rows = _family(f)
        parts.append(f"<h2>{e(heading)}</h2><p class='note'>{e(sentence)}</p>")
        if rows:
            parts.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in FAMILY_COLUMNS) + "</tr>"
                         + "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows)
                         + "</table>")
    body = "\n".join(parts)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Board {e(report.board)}</title>"
            f"<style>{PAGE_CSS}{CSS}</style></head><body><div class='board-wrap'>{body}</div></body></html>\n")


def board_grid_html(report: BoardReport) -> str:
    """The grid: one table per category, tasks as rows, models as columns, each tier on its own line."""
    e = html.escape
    marked = _marked(report)
    models = [m.model for m in report.models]
    out = []
    for category in report.categories:
        out.append(f"<h2>{e(category)}</h2>" + "".join(f"<p class='note'>{e(f)}</p>"
                                                        for f in category_flags(report, category))
                   + "<table class='grid'><tr><th class='task'>task</th>"
                   + "".join(f"<th{' class=marked' if marked[m] else ''}>{e(m)}{FAMILY_MARK if marked[m] else ''}</th>"
                             for m in models) + "</tr>")
        for task, row in _grid_rows(report, category):
            tds = []
            for m in models:
                c = row.get(m)
                if c is None:
                    tds.append("<td>–</td>")
                    continue
                flags = {t.direction for t in c.tiers.values()} - {"", None}
                cls = f" class='{' '.join(sorted(flags))}'" if flags else ""
                tds.append(f"<td{cls}>" + "".join(f"<span class='tier'>{e(t.name[0].upper())}: "
                                                  f"{e(cell_text(c, t))}</span>" for t in report.tiers) + "</td>")
            out.append(f"<tr><td class='task'>{e(task)}</td>{''.join(tds)}</tr>")
        out.append("</table>")
    return "\n".join(out)


# -- the plain sentence and the heat map the Board page opens on ------------------------------------

def lead_sentence(lead: BoardLead) -> str:
    """Which model leads a tier and whether its lead over the next best is real, in words.

    >>> lead_sentence(BoardLead("mechanical", "test-results", 3, "model-a", 0.875, "model-c", 0.625, 8, 0.25,
    ...                         -0.14, 0.64, 0.31, "no clear change"))
    'model-a leads on the mechanical tier (test-results): 88% of its runs pass, against 62% for model-c, the next \
best. The lead of 25 points is not clear: over 8 tasks it lies between -14 and +64 points (95% interval), so the \
order may be chance.'
    >>> lead_sentence(BoardLead("judged", "sonnet", 2, "m1", 0.9, "m2", 0.5, 30, 0.4, 0.25, 0.55, 0.0001, "gained"))
    'm1 leads on the judged tier (sonnet): 90% of its runs pass, against 50% for m2, the next best. The lead of 40 \
points is real: over 30 tasks it lies between +25 and +55 points (95% interval), sign-flip p = 0.0001.'
    >>> lead_sentence(BoardLead("judged", "sonnet", 2, "m1", 0.5, "m2", 0.5, 4, 0.0, -0.3, 0.3, 1.0, "no clear change"))
    'm1 and m2 share the lead on the judged tier (sonnet): 50% of their runs pass. The difference is +0 points: over \
4 tasks it lies between -30 and +30 points (95% interval).'
    """
    tier = f"the {lead.tier} tier ({lead.judge})"
    if lead.runner_up is None:
        return f"{lead.leader} is the only model on the board: {_pct(lead.leader_share)} of its runs pass on {tier}."
    gap = 100 * (lead.difference or 0.0)
    if round(gap) == 0 and _pct(lead.leader_share) == _pct(lead.runner_up_share):
        head = (f"{lead.leader} and {lead.runner_up} share the lead on {tier}: {_pct(lead.leader_share)} of their "
                "runs pass.")
    else:
        head = (f"{lead.leader} leads on {tier}: {_pct(lead.leader_share)} of its runs pass, against "
                f"{_pct(lead.runner_up_share)} for {lead.runner_up}, the next best.")
    if lead.verdict == "too few tasks" or lead.ci_low is None or lead.ci_high is None:
        return head + f" Too few shared tasks ({lead.n_tasks}) to tell whether the difference is real."
    span = (f"over {lead.n_tasks} tasks it lies between {100 * lead.ci_low:+.0f} and {100 * lead.ci_high:+.0f} "
            f"points ({lead.level:.0%} interval)")
    if lead.verdict == "gained":
        return head + f" The lead of {gap:.0f} points is real: {span}, sign-flip p = {lead.p_value:.2g}."
    if round(gap) == 0:
        return head + f" The difference is {gap:+.0f} points: {span}."
    return head + f" The lead of {gap:.0f} points is not clear: {span}, so the order may be chance."


HEAT = ((0.0, (232, 129, 122)), (0.5, (246, 224, 138)), (1.0, (124, 198, 138)))  # red, amber, green; dark text reads
LEGEND_STOPS = (0.0, 0.25, 0.5, 0.75, 1.0)


def heat_colour(x: float | None) -> str:
    """The cell colour of a share in [0, 1] (clipped), linear between red (0), amber (0.5) and green (1).

    >>> heat_colour(0.0), heat_colour(0.5), heat_colour(1.0), heat_colour(None)
    ('#e8817a', '#f6e08a', '#7cc68a', '#eeeeee')
    """
    if x is None or x != x:
        return "#eeeeee"
    x = min(1.0, max(0.0, float(x)))
    for (a, ca), (b, cb) in zip(HEAT, HEAT[1:]):
        if x <= b:
            w = (x - a) / (b - a)
            return "#" + "".join(f"{round(u + w * (v - u)):02x}" for u, v in zip(ca, cb))
    return "#" + "".join(f"{v:02x}" for v in HEAT[-1][1])


def _heat_value(report: BoardReport, tier: TierInfo, mean_at_k: float | None, mean_score: float | None) -> float | None:
    """What a heat cell's colour reads: the share of runs that pass (mechanical), the mean score placed on the
    rubric's scale from its lowest (0) to its highest value (1) (judged)."""
    if tier.kind == "mechanical":
        return mean_at_k
    lo, hi = tier.scale[0], tier.scale[-1]
    return None if mean_score is None or hi == lo else (mean_score - lo) / (hi - lo)


def heat_legend(tier: TierInfo) -> str:
    """The legend in words, under the colour swatches."""
    if tier.kind == "mechanical":
        return ("Colour: the share of the model's runs of the task that pass, from red (none) through amber (half) "
                "to green (all).")
    return (f"Colour: the judge's mean score, from red ({tier.scale[0]:+d}, the lowest) through amber to green "
            f"({tier.scale[-1]:+d}, the highest).")


def heatmap_html(report: BoardReport, tier: TierInfo) -> str:
    """One tier as a heat map: a row per task (with its category), a column per model, each cell coloured by its
    value and labelled with it; the last row is each model over all tasks; a legend of swatches and words below."""
    e = html.escape
    models = [m.model for m in report.models]
    by = {(c.task_id, c.model): c.tiers.get(tier.name) for c in report.cells}
    columns = {c.model: c for c in report.columns if c.tier == tier.name}

    def td(value: float | None, label: str, model: str) -> str:
        v = "" if value is None else f" data-value='{value:.4f}'"
        return (f"<td class='heat' data-model='{e(model)}'{v} style='background:{heat_colour(value)}'>"
                f"{e(label)}</td>")

    rows = []
    for t in report.tasks:
        cells = []
        for m in models:
            ct = by.get((t.task_id, m))
            if ct is None or not ct.n:
                cells.append(td(None, "–" if ct is None else "unscored", m))
                continue
            label = (f"{int(ct.n_pass)}/{int(ct.n)} pass" if tier.kind == "mechanical" else _signed(ct.mean_score))
            cells.append(td(_heat_value(report, tier, ct.mean_at_k, ct.mean_score), label, m))
        rows.append(f"<tr><td class='task'>{e(t.task_id)}</td><td class='cat'>{e(t.category)}</td>{''.join(cells)}</tr>")
    total = []
    for m in models:
        c = columns.get(m)
        if c is None or c.mean_at_k is None:
            total.append(td(None, "–", m))
            continue
        label = _pct(c.mean_at_k) + " pass" if tier.kind == "mechanical" else _signed(c.mean_score)
        total.append(td(_heat_value(report, tier, c.mean_at_k, c.mean_score), label, m))
    rows.append(f"<tr class='all'><td class='task'>all tasks</td><td class='cat'></td>{''.join(total)}</tr>")
    swatches = "".join(
        f"<span class='swatch' style='background:{heat_colour(x)}'>"
        f"{_pct(x) if tier.kind == 'mechanical' else _signed(tier.scale[0] + x * (tier.scale[-1] - tier.scale[0]), 1)}"
        "</span>" for x in LEGEND_STOPS)
    return (f"<table class='heatmap' data-tier='{e(tier.name)}'><tr><th class='task'>task</th><th class='cat'>category"
            "</th>" + "".join(f"<th class='model'>{e(m)}</th>" for m in models) + "</tr>" + "".join(rows)
            + f"</table><div class='legend' data-tier='{e(tier.name)}'>{swatches}"
            f"<span class='legend-words'>{e(heat_legend(tier))}</span></div>")


def render_compare_md(result: BoardComparison) -> str:
    lines = [f"# {_md(result.before)} → {_md(result.after)}", "",
             "Per model and category, the change task by task: a t-interval over tasks, and a sign-flip test that "
             "needs no spread (three tasks that all moved one way give p = 0.25). Gained or dropped: the interval "
             "excludes 0 and p is below 0.05.", ""]
    for t in result.tiers:
        what = "pass rate" if t.value == "pass" else "mean score"
        lines += [f"## {_md(t.tier)}: {what}", "", "| model | category | tasks | before | after | change | interval | "
                  "sign-flip p | verdict |", "|---|---|---|---|---|---|---|---|---|"]
        for r in t.rows:
            lines.append(f"| {_md(r.model)}{' → ' + _md(r.after_model) if r.after_model != r.model else ''} | "
                         f"{_md(r.category)} | {r.n_tasks} | {fmt(r.before, 2)} | {fmt(r.after, 2)} | "
                         f"{_signed(r.change)} | {_signed(r.ci_low)} to {_signed(r.ci_high)} | "
                         f"{fmt(r.p_value, 2)} | {r.verdict} |")
        if t.moved:
            lines += ["", "Tasks that moved most: " + "; ".join(
                f"{_md(m.task_id)} ({_md(m.model)}) {_signed(m.change)}" for m in t.moved)]
        if t.unpaired:
            lines += ["", "Without a partner on the other board: " + ", ".join(map(_md, t.unpaired))]
        lines.append("")
    return "\n".join(lines)
