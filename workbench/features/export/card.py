"""The calibration card: a shareable Markdown or HTML page of the verdict, measurements and charts.

Its words and tables are ``presentation.card_sections`` (the CLI's and the pages' rows), its images ``charts``.

HTML embeds its charts as PNG data so the one file can be attached to a pull
request or a review; Markdown writes the PNGs beside it.
"""

from __future__ import annotations

import base64
import html
import shutil
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

from workbench.features.export import charts
from workbench.calibration.presentation import card_sections
from workbench.core.names import safe_path
from workbench.calibration.report import CalibrationReport
from workbench.store import Store
from workbench.core.workspace import Workspace
from workbench.core.workspace import current as current_workspace
from workbench.calibration.calibrate import Options
from workbench.features.export.bundle import write_atomic
from workbench.features.refine.service import card_note
from workbench.calibration.versions import Context
from workbench.features.steps.presentation import card_sections as step_sections


def _png(chart) -> bytes:
    import vl_convert as vlc  # Altair's own exporter; imported here so the UI does not need it
    return vlc.vegalite_to_png(chart.to_json(), scale=2)


def card_charts(r: CalibrationReport) -> list[tuple[str, Any]]:
    w = 480  # images have no container to fill
    return [("agreement", charts.metric_intervals(r, threshold=r.policy.min_agreement_lower, width=w)),
            ("confusion", charts.confusion_heatmap(r, width=260)), ("categories", charts.per_category(r, width=w)),
            ("humans", charts.human_ceiling(r, width=w)),
            ("self_preference", charts.self_preference_forest(r, threshold=r.policy.max_self_preference, width=w))]


#: report -> (the report whose verdict holds the selective check, the guarantee's sentence or None when none is
#: asked for): ``features.selective``'s ``card_guarantee``, which this feature does not import.
CardGuarantee = Callable[[CalibrationReport], tuple[CalibrationReport, "str | None"]]


def write_card(store: Store, golden_set: str, rubric: str, judge: str, *, fmt: str = "html",
               out: str | Path | None = None, options: Options = Options(),
               workspace: Workspace | None = None, guarantee: CardGuarantee | None = None,
               context: Context | None = None) -> Path:
    """Write the card to ``out``, by default to the workspace's reports/ folder; returns the file. With
    ``guarantee``, the card's verdict holds the selective check and a section says the guarantee in one sentence.
    ``context`` is the command's (the one ``guarantee`` reads too); without it one is made, in a read snapshot."""
    if fmt not in ("md", "html"):
        raise ValueError(f"unknown format {fmt!r}")
    workspace = workspace or current_workspace()
    with (nullcontext(context) if context is not None
          else Context.reading(store, golden_set, rubric, options.run)) as ctx:
        r = ctx.report(judge, options, workspace=workspace)
        r, selective_sentence = guarantee(r) if guarantee else (r, None)
        # The default file name is made of names from the database: built only through safe_path.
        name = f"calibration-{r.rubric.name}-v{r.rubric.version}-{judge}.{fmt}"
        out = Path(out) if out else safe_path(workspace.reports, name)
        note = card_note(store, r.rubric.name, r.rubric.version)  # accepted from the refinement loop
    images = [(name, _png(chart)) for name, chart in card_charts(r)]
    title = f"Calibration card: {judge} on {r.rubric.name} v{r.rubric.version}"
    sections = card_sections(r) + step_sections(r)  # failure attribution, where labels mark steps
    if note:
        sections.insert(1, ("Refinement", [note]))
    if selective_sentence:
        sections.insert(1, ("Selective judging", [selective_sentence]))
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
