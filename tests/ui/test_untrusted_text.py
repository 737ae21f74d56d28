"""The helpers every untrusted text goes through on its way to markdown (the browser test checks the result)."""

from __future__ import annotations

import re

import pytest

from workbench.ui.components import code_span, fenced, plain, prose

IMAGE = "![x](http://127.0.0.1:9/beacon.png)"


def _code_span_content(span: str) -> str:
    """What CommonMark shows for a code span: inside the fences, one padding space stripped from each side."""
    fence = re.match(r"`+", span).group(0)
    assert span.endswith(fence) and not span.endswith("`" + fence)
    inner = span[len(fence):-len(fence)]
    return inner[1:-1] if inner.startswith(" ") and inner.endswith(" ") and inner.strip() else inner


@pytest.mark.parametrize("item_id", ["it-1", "a`b", "`x", "x`", "a``b`c", "`", " a ", "e2e`![i](http://h/x.png)`"])
def test_an_id_in_a_code_span_is_shown_intact(item_id):
    assert _code_span_content(code_span(item_id)) == item_id


def test_plain_text_is_escaped_but_reads_the_same():
    assert plain("batch-7.jsonl: 3 items read") == "batch-7.jsonl: 3 items read"
    assert plain(IMAGE) == r"!\[x\](`http://127.0.0.1:9/beacon.png`)"
    assert plain("# a\n- b\n1. c\n*d* <e> $f$ :red[g] &amp;") == (
        r"\# a  " "\n" r"\- b  " "\n" r"1\. c  " "\n" r"\*d\* \<e\> \$f\$ \:red\[g\] \&amp;")


def test_prose_keeps_code_and_formatting_and_defuses_the_rest():
    text = "**Done.** See `x[0](y)` and\n\n```python\nprint('![a](b)')\n```\n\n- item [masked], ok"
    out = prose(text)
    assert "**Done.**" in out and "`x[0](y)`" in out and "- item [masked], ok" in out
    assert "```python\nprint('![a](b)')\n```" in out
    assert prose(IMAGE) == r"![x\](`http://127.0.0.1:9/beacon.png`)"
    assert prose("<img src=x>") == r"\<img src=x>"
    assert prose("[r]: http://h/x.png") == r"[r\]: `http://h/x.png`"


def _outside_code(md: str) -> str:
    """The text markdown reads as markup: without fenced blocks, code spans and backslash escapes, scanned
    left to right as CommonMark does. Every backtick run must open a code span that closes."""
    md = re.sub(r"(?ms)^(`{3,})[\w+#.-]*\n.*?^\1$", "", md)
    out, i = [], 0
    while i < len(md):
        if md[i] == "\\" and i + 1 < len(md):
            i += 2
            continue
        if md[i] == "`":
            run = re.match(r"`+", md[i:]).group(0)
            close = re.compile(rf"(?<!`){run}(?!`)").search(md, i + len(run))
            assert close, f"a backtick run that closes nothing in {md!r}"
            i = close.end()
            continue
        out.append(md[i])
        i += 1
    return "".join(out)


@pytest.mark.parametrize("trick", [
    "foo ```\n\n![a](http://h/x.png)\n\n```",  # a fence that does not open a block (not at a line start)
    "\\`![a](http://h/x.png)`",  # an escaped backtick that a naive split would take for a code span
    "a`b\n`![a](http://h/x.png)`",  # a lone backtick that would pair with the next line's
    "x\\",  # a trailing backslash that would escape what follows
    "[a](http://h/x.png) <img src=x> [r]: y ![b][r] :red[c]",
])
def test_prose_does_not_trust_its_guess_of_the_original_markdown(trick):
    markup = _outside_code(prose(trick))
    assert "](" not in markup and "][" not in markup and "]:" not in markup and "<" not in markup
    assert ":red" not in markup


def test_a_fence_cannot_be_closed_from_inside():
    block = fenced("a\n````\n![x](y)", "python")
    assert block.startswith("`````python\n") and block.endswith("\n`````")
    assert fenced("x", "py{onload}") == "```text\nx\n```"
