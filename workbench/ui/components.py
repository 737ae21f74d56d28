"""Small pieces the pages share: golden-set and rubric pickers, messages left by callbacks, score labels, and
the one way untrusted text (item content, rationales, notes, ids, names) becomes markdown.

Streamlit renders markdown in ``st.markdown``, ``st.caption``, alerts, expander labels and more, and a
markdown image there is fetched by the viewer's browser: a beacon, or an exfiltration channel when a judge
writes item text into the URL. So every piece of untrusted text goes through :func:`plain` (shown exactly as
written), :func:`code_span` (ids and names in monospace) or :func:`prose` (long agent text, keeping its
harmless formatting and code blocks); what they return can load nothing and link nowhere.
"""

from __future__ import annotations

import logging
import re
import secrets
from typing import Any

import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.core.scale import Scale
from workbench.features.labeling.service import default_rubric, golden_set_names, rubric_names
from workbench.calibration.verdict import STATUS_ICON
from workbench.ui import glossary
from workbench.ui.state import store

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
    """Call one service from a callback; a WorkbenchError becomes the page's error message, any other error
    the one sentence of :func:`unexpected_error` (callbacks run outside the page's own error boundary).

    ``ok`` is the success message (markdown: build it with :func:`code_span` and :func:`plain`), or a
    function of the service's result that returns it.
    """
    try:
        result = fn(*args, **kwargs)
    except WorkbenchError as e:
        flash("error", prose(str(e)))
        return False
    except Exception:
        flash("error", unexpected_error_sentence(log_unexpected_error("an action")))
        return False
    message = ok(result) if callable(ok) else ok
    if message:
        flash("success", message)
    return True


def metric(label: str, value: Any, *, term: str | None = None, help: str | None = None,
           container: Any = st, **kwargs: Any) -> None:
    """``st.metric`` that always carries a tooltip: the glossary entry ``term`` (see ``ui/glossary.py``), or
    ``help``; one of the two is required, so no number reaches a lead without its meaning."""
    if term is None and not help:
        raise ValueError(f"metric {label!r} needs term= (a glossary key) or help=")
    text = glossary.help(term) if term else help
    if term and help:
        text = f"{help} {text}"
    container.metric(label, value, help=text, **kwargs)


#: A check's or verdict's state in words, shown beside its mark (a mark is never shown alone).
STATUS_WORDS = {"passed": "passed", "failed": "failed", "undecided": "not decided yet", "warning": "warning",
                "not_measurable": "not measurable", "not_applicable": "not applicable"}


def status_mark(status: str) -> str:
    """'✅ passed', '❌ failed', '⏳ not decided yet': the gate's mark with its word."""
    return f"{STATUS_ICON[status]} {STATUS_WORDS[status]}"


def score_text(scale: Scale, value: int) -> str:
    """'+1 exceptional', '0 competent pass', '-1 fail'."""
    return f"{value:+d} {scale.label_of(value)}" if value else f"0 {scale.label_of(value)}"



# -- errors nobody planned for -----------------------------------------------------------------------------

log = logging.getLogger("workbench.ui")


def log_unexpected_error(where: str) -> str:
    """Log the exception being handled, with its traceback, under a short reference; return the reference."""
    reference = secrets.token_hex(4)
    log.error("unexpected error in %s (reference %s)", where, reference, exc_info=True)
    return reference


def unexpected_error_sentence(reference: str) -> str:
    return f"Something went wrong on this page (reference {reference}); the details are in the server log."


# -- untrusted text as markdown ------------------------------------------------------------------------------

# What GitHub-flavoured markdown turns into a web link even when its punctuation is escaped (it links the
# decoded text): scheme URLs and www. names. Shown as code spans, which are never linked. (An e-mail address
# still becomes a mailto: link, which loads nothing.)
_LINKABLE = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.-]*:/{1,3}|\bwww\.)[^\s`]*")
# Characters that could start raw HTML, an autolink, a code span or LaTeX, or escape the character after
# them; a bracket that could make a link or an image ("](", "][", and "]:" for a reference definition,
# without which "[x]" is only text); a colon that could start a Streamlit directive (:red[..],
# :material/..:, :smile:); an ampersand that starts a character reference.
_PROSE_SPECIAL = re.compile(r"([\\`<$]|\](?=[(\[:])|:(?=\S)|&(?=#?\w+;))")
# plain() also escapes emphasis, strikethrough, tables and quotes, and block markers at the start of a line.
_PLAIN_SPECIAL = re.compile(r"([\\`\[\]<>$*_|~]|:(?=\S)|&(?=#?\w+;))")
_BLOCK_START = re.compile(r"^(?:([#+=-])|(\d+)([.)]))")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,20}")


def plain(text: Any) -> str:
    """Untrusted text as markdown that shows exactly this text and nothing else (no formatting, links,
    images, HTML, LaTeX or code). Line breaks are kept; indentation is not."""
    if text is None:
        return ""
    return "  \n".join(_linkable_as_code(line.strip(), _escape_plain) for line in str(text).splitlines())


def code_span(text: Any) -> str:
    """Untrusted text (an item id, a file or tool name) as an inline code span that no backtick inside it
    can close early: `` a`b `` shows a`b."""
    value = " ".join(str(text).splitlines())
    if not value:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value[0] in "` " or value[-1] in "` " else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def fenced(text: str, language: str = "text") -> str:
    """A fenced code block that cannot be closed early by backticks inside the text."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    language = language if _LANGUAGE.fullmatch(language or "") else "text"
    return f"{fence}{language}\n{text}\n{fence}"


def prose(text: Any) -> str:
    """Untrusted agent or user text as markdown: fenced and inline code stay code, emphasis, headings and
    lists stay, and everything that could link, load or run (images, links, raw HTML, autolinks, LaTeX,
    Streamlit directives) is shown as the characters it is made of.

    Safety does not depend on guessing how markdown would have read the original: every code block and
    code span in the result is rebuilt here, and every other backtick and backslash, and every bracket
    that could close a link or image, is escaped.
    """
    if text is None:
        return ""
    lines = str(text).replace("\r\n", "\n").split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        opening = _FENCE_OPEN.match(lines[i])
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            mark = opening.group(1)
            closing = re.compile(rf"^ {{0,3}}{re.escape(mark[0])}{{{len(mark)},}}\s*$")
            end = next((j for j in range(i + 1, len(lines)) if closing.match(lines[j])), len(lines))
            info = opening.group(2).strip().split(" ")[0]
            out.append("\n" + fenced("\n".join(lines[i + 1:end]), info or "text") + "\n")
            i = end + 1
            continue
        if re.match(r"^( {4}|\t)", lines[i]) and (i == 0 or not lines[i - 1].strip()):
            end = i
            while end < len(lines) and (re.match(r"^( {4}|\t)", lines[end]) or not lines[end].strip()):
                end += 1
            while end > i and not lines[end - 1].strip():
                end -= 1
            block = [line[4:] if line.startswith("    ") else line[1:] if line.startswith("\t") else line
                     for line in lines[i:end]]
            out.append("\n" + fenced("\n".join(block), "text") + "\n")
            i = end
            continue
        out.append(_inline(lines[i]))
        i += 1
    return "\n".join(out)


def _inline(line: str) -> str:
    parts, last = [], 0
    for m in _INLINE_CODE.finditer(line):
        parts.append(_linkable_as_code(line[last:m.start()], _escape_prose))
        parts.append(code_span(m.group(2)))
        last = m.end()
    parts.append(_linkable_as_code(line[last:], _escape_prose))
    return "".join(parts)


def _escape_plain(text: str) -> str:
    return _BLOCK_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3),
                            _PLAIN_SPECIAL.sub(r"\\\1", text))


def _escape_prose(text: str) -> str:
    return _PROSE_SPECIAL.sub(r"\\\1", text)


def _linkable_as_code(text: str, escape) -> str:
    parts, last = [], 0
    for m in _LINKABLE.finditer(text):
        link = m.group(0).rstrip(".,:;!?'\")]}*_~")  # the sentence's punctuation, not the address's
        parts.append(escape(text[last:m.start()]))
        parts.append(code_span(link))
        last = m.start() + len(link)
    parts.append(escape(text[last:]))
    return "".join(parts)
