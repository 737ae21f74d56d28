"""The item viewer: task, trajectory step by step, output; the same viewer on the Label, Adjudicate and
Calibration pages.

Steps are numbered from 1 everywhere a person reads them (a judge's tools and its evidence_steps count from 0:
callers convert with :func:`display_step`). Steps carry their number and role; tool calls show pretty-printed arguments
(multi-line strings such as code or patches as their own highlighted blocks);
tool results are shown as code with a guessed language; long content is
folded behind an expander; a search box narrows the steps to those that match.

Each step is drawn as one markdown element (fenced code inside it is
highlighted by the browser) so that a 500-step trajectory stays cheap to send.
Everything in an item is untrusted: it reaches markdown only through
``components.prose``, ``plain``, ``code_span`` and ``fenced``, so it cannot load
an image or any other remote resource in the reviewer's browser.
"""

from __future__ import annotations

import json
import re

import streamlit as st

from typing import Collection, Protocol

from workbench.ui.components import code_span, fenced, plain, prose

STEPS_PER_PAGE = 50  # a 500-step trajectory costs the browser seconds to draw at once
FOLD_LINES = 30
FOLD_CHARS = 3000
PREVIEW_LINES = 10
ROLE_BADGE = {"system": ":gray-badge[system]", "user": ":blue-badge[user]", "assistant": ":green-badge[assistant]",
              "tool": ":orange-badge[tool]"}


class ItemContent(Protocol):
    """What the viewer shows: a reviewer's BlindItem, or a lead's full Item."""

    input: str
    output: str | None
    trajectory: list[dict] | None
    reference: str | None


def display_step(index_from_0: int) -> int:
    """The number a person sees for a step a judge cites (judges count from 0, the viewer from 1)."""
    return index_from_0 + 1


def render_item(item: ItemContent, *, key: str, cited: Collection[int] = ()) -> None:
    """Task, trajectory and output; ``cited`` are step numbers (from 1) to mark as cited by a judge."""
    st.markdown("##### Task")
    st.markdown(prose(item.input) or "_(no task text)_")
    if item.trajectory:
        st.markdown(f"##### Trajectory · {len(item.trajectory)} steps")
        render_trajectory(item.trajectory, key=key, cited=cited)
    st.markdown("##### Output")
    if item.output:
        _folded(prose(item.output), item.output, expanded=False)
    else:
        st.caption("No final output.")
    if item.reference:
        with st.expander("Reference"):
            st.markdown(prose(item.reference))


def render_trajectory(steps: list[dict], *, key: str, cited: Collection[int] = ()) -> None:
    query = st.text_input("Search the trajectory", key=f"search:{key}", placeholder="Search the steps",
                          label_visibility="collapsed", icon="🔎")
    numbers = matching_steps(steps, query)
    if query:
        st.caption(f"{len(numbers)} of {len(steps)} steps match “{plain(query)}”.")
    pager = _Pager(numbers, key=f"{key}:{query or ''}")
    pager.controls(bottom=False)
    for n in pager.chunk:
        _step(n, steps[n - 1], expanded=bool(query) or n in cited, cited=n in cited)
    pager.controls(bottom=True)  # a long page of steps ends with the same controls: no scrolling back up


class _Pager:
    """The steps of the current page; long trajectories are shown STEPS_PER_PAGE at a time (keys P and N)."""

    def __init__(self, numbers: list[int], *, key: str):
        self.key, self.pages = key, max(1, -(-len(numbers) // STEPS_PER_PAGE))
        self.state = f"steps-page:{key}"
        self.page = min(st.session_state.get(self.state, 0), self.pages - 1)
        self.chunk = numbers[self.page * STEPS_PER_PAGE:(self.page + 1) * STEPS_PER_PAGE]

    def controls(self, *, bottom: bool) -> None:
        if self.pages == 1:
            return
        where = "-bottom" if bottom else ""
        with st.container(horizontal=True, vertical_alignment="center"):
            # the keyboard shortcuts belong to the top pair only: one key, one button
            st.button("Earlier steps", key=f"steps-prev{where}:{self.key}", shortcut=None if bottom else "P",
                      disabled=self.page == 0, on_click=_turn, args=(self.state, self.page - 1))
            st.caption(f"Steps {self.chunk[0]}–{self.chunk[-1]} · page {self.page + 1} of {self.pages}")
            st.button("Later steps", key=f"steps-next{where}:{self.key}", shortcut=None if bottom else "N",
                      disabled=self.page == self.pages - 1, on_click=_turn, args=(self.state, self.page + 1))


def _turn(state: str, page: int) -> None:
    st.session_state[state] = page


def matching_steps(steps: list[dict], query: str | None) -> list[int]:
    """1-based numbers of the steps whose text, name or tool calls contain the query (case-insensitive)."""
    if not query or not query.strip():
        return list(range(1, len(steps) + 1))
    needle = query.strip().lower()
    return [n for n, s in enumerate(steps, 1) if needle in _searchable(s)]


def _searchable(step: dict) -> str:
    parts = [str(step.get("content") or ""), str(step.get("name") or ""), str(step.get("role") or "")]
    for call in step.get("tool_calls") or []:
        parts.append(str(call.get("name") or ""))
        parts.append(json.dumps(call.get("arguments"), ensure_ascii=False))
    return "\n".join(parts).lower()


def _step(n: int, step: dict, *, expanded: bool, cited: bool = False) -> None:
    role = str(step.get("role") or "?")
    head = f"**{n}** {ROLE_BADGE.get(role) or plain(role)}"
    if step.get("name"):
        head += f" {code_span(step['name'])}"
    if cited:
        head += " :orange-badge[cited by the judge]"
    content = step.get("content")
    text = content if isinstance(content, str) else ("" if content is None else json.dumps(content, indent=2))
    calls = "".join(tool_call_markdown(c) for c in step.get("tool_calls") or [])
    if not _is_long(text):
        body = (fenced(text, guess_language(text)) if role == "tool" else prose(text)) if text else ""
        st.markdown(f"{head}\n\n{body}{calls}")
        return
    lines = text.splitlines()
    preview = "\n".join(lines[:PREVIEW_LINES])
    render = (lambda t: fenced(t, guess_language(text))) if role == "tool" else prose
    st.markdown(f"{head} · {len(lines)} lines, folded\n\n{render(preview)}")
    with st.expander(f"Step {n}: show all {len(lines)} lines", expanded=expanded):
        st.markdown(render(text))
    if calls:
        st.markdown(calls)


def _is_long(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


def _folded(markdown: str, raw: str, *, expanded: bool) -> None:
    if not _is_long(raw):
        st.markdown(markdown)
        return
    lines = raw.splitlines()
    st.markdown(prose("\n".join(lines[:PREVIEW_LINES])))
    with st.expander(f"Show all {len(lines)} lines", expanded=expanded):
        st.markdown(markdown)


def tool_call_markdown(call: dict) -> str:
    """'🔧 `name`' and the arguments: short ones as one JSON block, multi-line strings as their own blocks."""
    name = call.get("name") or "tool"
    args = call.get("arguments")
    out = f"\n\n🔧 **call** {code_span(name)}\n\n"
    if not isinstance(args, dict):
        return out + fenced(json.dumps(args, indent=2, ensure_ascii=False), "json")
    simple = {k: v for k, v in args.items() if not (isinstance(v, str) and "\n" in v)}
    multi = {k: v for k, v in args.items() if k not in simple}
    compact = json.dumps(simple, ensure_ascii=False)
    if not multi and len(compact) <= 100:
        return out.rstrip() + f" {code_span(compact)}"
    if simple:
        out += fenced(json.dumps(simple, indent=2, ensure_ascii=False), "json")
    hint = next((v for v in args.values() if isinstance(v, str) and re.search(r"\.\w+$", v)), "")
    for k, v in multi.items():
        out += f"\n\n{code_span(k)}:\n\n" + fenced(v, guess_language(v, path=hint))
    return out


_EXT = {".py": "python", ".js": "javascript", ".ts": "typescript", ".json": "json", ".yaml": "yaml", ".yml": "yaml",
        ".sh": "bash", ".rs": "rust", ".go": "go", ".java": "java", ".c": "c", ".cpp": "cpp", ".sql": "sql",
        ".html": "html", ".css": "css", ".md": "markdown", ".toml": "toml"}


def guess_language(text: str, *, path: str = "") -> str:
    """A highlighting language for a block: from a file path if given, else from the text's shape.

    >>> guess_language("@@ -1 +1 @@\\n-a\\n+b")
    'diff'
    >>> guess_language("def f(x):\\n    return x")
    'python'
    >>> guess_language("16 passed in 0.2s")
    'text'
    """
    m = re.search(r"(\.\w+)$", path or "")
    if m and m.group(1) in _EXT:
        return _EXT[m.group(1)]
    head = text.lstrip()[:2000]
    if re.search(r"^(@@ |diff --git|--- a/|\+\+\+ b/)", head, re.M):
        return "diff"
    if re.search(r"^\s*(def |class |import |from \w[\w.]* import |async def |@\w+)", head, re.M):
        return "python"
    if head[:1] in "{[":
        try:
            json.loads(text)
            return "json"
        except ValueError:
            pass
    if re.search(r"^\s*(function |const |let |export |import .* from ['\"])", head, re.M):
        return "javascript"
    if head.startswith(("$ ", "#!/bin/")):
        return "bash"
    return "text"
