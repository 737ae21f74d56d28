"""Agentic judging: the judge explores a long trajectory through read-only tools.

The trajectory is not pasted into the prompt. The judge gets four tools over
the item (`overview`, `read_steps`, `search_steps`, `read_output`), each result
capped in characters and wrapped in the request's tagged data block, and must
finish with `submit_verdict` within `max_turns` and a token budget; otherwise
the judgment is unscored with reason `budget_exhausted`. The full tool
transcript is returned in `JudgeOutcome.trace` to be stored with the judgment.

The loop is written once against the neutral `ChatRequest`/`ModelTurn`; each
provider maps it to its wire format (Anthropic tool_use/tool_result blocks,
OpenAI function tools and tool messages).

A judge's regex is refused up front when it could backtrack badly, and what
passes runs in a child process (`search_child.py`) that is killed at a
wall-clock limit, so a search returns in time even on a busy machine and
nothing keeps matching after it has returned.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from workbench.core.models import Item, JudgeSpec, Rubric
from workbench.judges.prompting import (DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS, VERDICT_TOOL, DelimiterCollision,
    choose_tag, data_block, parse_verdict, render_step, system_prompt, unscored_reason_for_stop, user_message,
    verdict_schema, verdict_tool)
from workbench.judges.types import ChatRequest, ChatSender, JudgeContext, JudgeOutcome, ToolDef, Usage

RESULT_CHARS = 4000
PREVIEW_CHARS = 80
MAX_PATTERN = 200
MAX_MATCHES = 20
SEARCH_TEXT_CHARS = 200_000  # characters scanned by one search, over all steps
SEARCH_WORK = 50_000_000  # worst-case regex steps for one search (about a second of C at worst)
SEARCH_SECONDS = 1.5  # wall-clock limit on one search, its process start included (the promise is 3 s)
MIN_SCAN = 10_000  # a pattern too costly to scan this many characters is refused
MAX_WINDOW, MIN_WINDOW = 2000, 24
READ_STEPS_MAX = 20


def _obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


TOOLS: tuple[ToolDef, ...] = (
    ToolDef("overview", "Number of steps, the role of each, and a short preview of each step.", _obj({})),
    ToolDef("read_steps", "Read steps start..end inclusive (numbered from 0, at most 20 at a time). "
            f"The result is capped at {RESULT_CHARS} characters.",
            _obj({"start": {"type": "integer"}, "end": {"type": "integer"}})),
    ToolDef("search_steps", "Search the steps' content and tool calls with a Python regular expression "
            f"(at most {MAX_PATTERN} characters, case-insensitive). Returns up to {MAX_MATCHES} matches with "
            f"their step numbers and surrounding text. A search is cut after {SEARCH_SECONDS:g} seconds.",
            _obj({"pattern": {"type": "string"}})),
    ToolDef("read_output", "Read the final output, from a character offset (0 for the start).",
            _obj({"offset": {"type": "integer"}})),
)


class UnsafePattern(ValueError):
    pass


def _repeat_profile(pattern: str) -> tuple[bool, list[tuple[int, int]]]:
    """(unsafe, repeats): unsafe for nested repetition, alternation under repetition or backreferences
    (exponential backtracking); repeats = the (min, max) bounds of every repeat that can match a varying
    number of times (each multiplies the worst-case work of a match attempt by the number of lengths it
    can try, whether its bound is `*` or `{0,50}`)."""
    from re import _parser as sre_parse  # the stdlib's own regex parser

    repeat_ops = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", None)}
    repeats: list[tuple[int, int]] = []

    def walk(items, inside_repeat: bool) -> bool:
        for op, av in items:
            if op in repeat_ops:
                lo, hi, sub = av
                if inside_repeat and hi != 1:
                    return True
                if hi > lo:
                    repeats.append((lo, hi))
                if walk(sub, inside_repeat or hi > 1):
                    return True
            elif op is sre_parse.SUBPATTERN:
                if walk(av[-1], inside_repeat):
                    return True
            elif op is sre_parse.BRANCH:
                if inside_repeat or any(walk(b, inside_repeat) for b in av[1]):
                    return True
            elif op in (sre_parse.GROUPREF, getattr(sre_parse, "GROUPREF_EXISTS", None)):
                return True
            elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
                if walk(av[1], inside_repeat):
                    return True
        return False

    unsafe = walk(sre_parse.parse(pattern), False)
    return unsafe, repeats


def _attempt_cost(repeats: list[tuple[int, int]], window: int) -> int:
    """Worst-case steps of one match attempt within `window` characters: the product of the lengths
    each repeat can try."""
    return math.prod(min(hi, window) - min(lo, window) + 1 for lo, hi in repeats)


def compile_search(pattern: str) -> tuple[regex.Pattern, int, int]:
    """Compile a judge-supplied regex, refusing long or backtracking-prone ones.

    Returns the pattern, the window (in characters) to match within and how many characters to scan:
    a match attempt costs up to the product of the repeats' ranges (capped by the window) at each
    scanned position, so the window (and if need be the scanned length) shrinks as that product grows,
    keeping one search under about SEARCH_WORK steps. This static estimate is only a first filter: the
    search itself runs in a child process killed at a wall-clock limit (`SEARCH_SECONDS`).
    """
    if not isinstance(pattern, str) or not pattern:
        raise UnsafePattern("pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN:
        raise UnsafePattern(f"pattern is {len(pattern)} characters; the limit is {MAX_PATTERN}")
    try:
        re.compile(pattern, re.IGNORECASE)  # the judge is told "a Python regular expression"
        compiled = regex.compile(pattern, regex.IGNORECASE | regex.VERSION0)
    except (re.error, regex.error) as exc:
        raise UnsafePattern(f"invalid regular expression: {exc}") from None
    unsafe, repeats = _repeat_profile(pattern)
    if unsafe:
        raise UnsafePattern("nested repetition, alternation under repetition and backreferences are not allowed; "
                            "use a simpler pattern or a plain word")
    per_position = SEARCH_WORK // (2 * SEARCH_TEXT_CHARS)  # windows overlap by half: each character twice
    # the widest window within the per-position budget (the cost only grows with the window)
    lo, hi = MIN_WINDOW, MAX_WINDOW
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _attempt_cost(repeats, mid) <= per_position else (lo, mid - 1)
    window = lo
    scan = min(SEARCH_TEXT_CHARS, SEARCH_WORK // (2 * _attempt_cost(repeats, window)))
    if scan < MIN_SCAN:
        raise UnsafePattern("too many repeats (at most two open-ended ones such as .*, \\w+ or a{0,50}); "
                            "search for a plain word or a shorter pattern")
    return compiled, window, scan


SEARCH_CHILD = Path(__file__).with_name("search_child.py")
REGEX_HOME = str(Path(regex.__file__).resolve().parents[1])  # the folder the child imports `regex` from
CHILD_ENV = frozenset({"PATH", "SYSTEMROOT", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"})  # what the child may see: no key


@dataclass
class SearchRun:
    """What the child process reported: the first matches, how far it got, and whether it was cut."""

    hits: list[tuple[int, int, int]] = field(default_factory=list)  # (step, start, end)
    total: int = 0  # matches counted so far
    steps_done: int = 0  # steps searched to their end
    finished: bool = False
    cut: bool = False  # killed at the time limit
    failed: bool = False  # ended without finishing, not killed by us (no interpreter, out of memory)


def run_search(rx: regex.Pattern, window: int, texts: list[str], seconds: float) -> SearchRun:
    """Match `rx` over `texts` in a child process killed `seconds` after the call (wall clock).

    A thread cannot be stopped and `regex`'s own timeout counts CPU time, which a busy machine stretches
    several-fold; a killed process stops at once and burns nothing afterwards. The child is always reaped
    before this returns.
    """
    deadline = time.monotonic() + seconds
    job = json.dumps({"pattern": rx.pattern, "flags": rx.flags, "window": window, "texts": texts,
                      "max_matches": MAX_MATCHES}).encode("ascii")
    cpu_limit = str(math.ceil(seconds) + 1)
    run = SearchRun()
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-S", str(SEARCH_CHILD), REGEX_HOME, cpu_limit],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={k: v for k, v in os.environ.items() if k in CHILD_ENV})
    except OSError:  # no interpreter to start (an embedded Python), or no processes left
        run.failed = True
        return run
    try:
        try:
            out, _ = proc.communicate(job, timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            run.cut = True
            proc.kill()
            out, _ = proc.communicate()  # what it printed before the kill
    finally:
        if proc.poll() is None:  # interrupted (Ctrl-C): the child must not outlive the call
            proc.kill()
            proc.wait()
    for line in out.decode("ascii", "replace").splitlines():
        kind, *numbers = line.split()
        if kind == "match" and len(numbers) == 3:
            run.hits.append((int(numbers[0]), int(numbers[1]), int(numbers[2])))
        elif kind == "step" and len(numbers) == 2:
            run.steps_done, run.total = int(numbers[0]) + 1, int(numbers[1])
        elif kind == "done" and len(numbers) == 1:
            run.finished, run.total = True, int(numbers[0])
    run.total = max(run.total, len(run.hits))
    run.failed = not run.finished and not run.cut
    return run


def _cap(text: str, limit: int, hint: str) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[truncated: {len(text) - limit} more characters; {hint}]"


class TrajectoryTools:
    """The read-only tools over one item. Every result is a string of at most ~`max_chars`."""

    def __init__(self, item: Item, *, max_chars: int = RESULT_CHARS):
        self.item = item
        self.steps = list(item.trajectory or ())
        self.max_chars = max_chars

    def _step_text(self, i: int) -> str:
        return render_step(i, self.steps[i])

    def overview(self) -> str:
        n = len(self.steps)
        roles: dict[str, int] = {}
        lines = []
        for i, s in enumerate(self.steps):
            role = str(s.get("role", "?"))
            roles[role] = roles.get(role, 0) + 1
            content = s.get("content")
            text = content if isinstance(content, str) else json.dumps(content) if content else ""
            preview = " ".join(text.split())[:PREVIEW_CHARS]
            calls = ", ".join(str(c.get("name")) for c in s.get("tool_calls") or ())
            lines.append(f"{i} {role}{' (' + str(s['name']) + ')' if s.get('name') else ''}: {preview}"
                         + (f" [calls: {calls}]" if calls else ""))
        head = (f"{n} steps; roles: " + ", ".join(f"{r} x{c}" for r, c in roles.items()) +
                f"; final output: {len(self.item.output or '')} characters.")
        return _cap(head + "\n" + "\n".join(lines), self.max_chars, "use read_steps for details")

    def read_steps(self, start: Any, end: Any) -> str:
        n = len(self.steps)
        if not isinstance(start, int) or not isinstance(end, int):
            return "error: start and end must be integers"
        if n == 0:
            return "error: this item has no trajectory steps"
        start, end = max(0, start), min(n - 1, end)
        if start > end:
            return f"error: empty range; steps are numbered 0..{n - 1}"
        end = min(end, start + READ_STEPS_MAX - 1)
        text = "\n\n".join(self._step_text(i) for i in range(start, end + 1))
        return _cap(text, self.max_chars, "read a narrower range")

    def search_steps(self, pattern: Any) -> str:
        try:
            rx, window, budget = compile_search(pattern)
        except UnsafePattern as exc:
            return f"error: {exc}"
        texts: list[str] = []
        for i in range(len(self.steps)):
            if budget <= 0:
                break
            texts.append(self._step_text(i)[:budget])
            budget -= len(texts[-1])
        if not texts:
            return "no matches"
        run = run_search(rx, window, texts, SEARCH_SECONDS)
        if run.failed:
            return "error: the search could not run; try a plain word"
        if run.cut and not run.hits:
            return (f"error: the search timed out at the {SEARCH_SECONDS:g}-second limit in step {run.steps_done} "
                    f"(of steps 0-{len(texts) - 1}), before any match; use a simpler pattern, such as a plain word or "
                    "fewer repeats")
        if not run.hits:
            return "no matches" + ("" if budget > 0 else " (search stopped at the size limit)")
        hits = []
        for i, start, end in run.hits:
            text = texts[i]
            a, b = max(0, start - 60), min(len(text), end + 60)
            hits.append(f"step {i}: …{' '.join(text[a:b].split())}…")
        more = f"\n[{run.total - len(hits)} more matches not shown]" if run.total > len(hits) else ""
        head = f"{run.total} match(es)"
        if run.cut:  # said first, so a capped result still says it
            head = (f"at least {run.total} match(es); the search was cut at the {SEARCH_SECONDS:g}-second time limit "
                    f"in step {run.steps_done} (of steps 0-{len(texts) - 1}), so later matches are missing: use a "
                    "simpler pattern to search every step")
        return _cap(head + "\n" + "\n".join(hits) + more, self.max_chars, "use a narrower pattern")

    def read_output(self, offset: Any = 0) -> str:
        output = self.item.output
        if output is None:
            return "this item has no final output"
        offset = offset if isinstance(offset, int) and offset > 0 else 0
        chunk = output[offset:offset + self.max_chars]
        rest = len(output) - offset - len(chunk)
        return chunk + (f"\n[{rest} more characters; call read_output with offset {offset + len(chunk)}]"
                        if rest > 0 else "")

    def call(self, name: str, arguments: dict | str) -> tuple[str, bool]:
        """Run a tool by name; returns (result, is_error). Bad calls give the model an error to correct."""
        if not isinstance(arguments, dict):
            return "error: arguments must be a JSON object", True
        try:
            if name == "overview":
                return self.overview(), False
            if name == "read_steps":
                out = self.read_steps(arguments.get("start"), arguments.get("end"))
            elif name == "search_steps":
                out = self.search_steps(arguments.get("pattern"))
            elif name == "read_output":
                out = self.read_output(arguments.get("offset", 0))
            else:
                return f"error: unknown tool '{name}'", True
        except Exception as exc:  # a tool must never crash the judgment
            return f"error: {type(exc).__name__}", True
        return out, out.startswith("error:")

    async def acall(self, name: str, arguments: dict | str) -> tuple[str, bool]:
        """`call` from the event loop: a search (a child process, waited on for up to SEARCH_SECONDS)
        is waited on in a worker thread so the run's other requests keep going."""
        if name == "search_steps":
            return await asyncio.to_thread(self.call, name, arguments)
        return self.call(name, arguments)


async def run_agentic(provider: ChatSender, item: Item, rubric: Rubric, spec: JudgeSpec, *,
                      ctx: JudgeContext | None = None, tools: TrajectoryTools | None = None) -> JudgeOutcome:
    """Drive the tool loop until `submit_verdict`, the turn limit or the token budget."""
    ctx = ctx or JudgeContext()
    max_turns = spec.max_turns or DEFAULT_MAX_TURNS
    try:
        tag = choose_tag(item, spec, ctx.tag_factory)
    except DelimiterCollision as exc:
        return JudgeOutcome(score=None, unscored_reason=f"refused: {exc}", usage=Usage(), n_requests=0)
    tools = tools or TrajectoryTools(item)
    system = ctx.system_prompt or system_prompt(rubric, spec)
    messages: list[dict[str, Any]] = [{"role": "user", "content": user_message(item, spec, tag, agentic=True)}]
    offered = TOOLS + (verdict_tool(rubric),)
    schema = verdict_schema(rubric)
    usage = Usage()
    trace: list[dict] = []
    model_version = None
    n_steps = len(tools.steps)
    pushed = False  # the pushback probe objects to the first verdict once, and one more turn is allowed for it

    def finish(reason: str | None, verdict=None, turns: int = 0) -> JudgeOutcome:
        trace.append({"role": "end", "turns": turns, "tokens": usage.total, "reason": reason or "verdict"})
        return JudgeOutcome(score=None if reason else verdict.score, unscored_reason=reason,
                            rationale=verdict.rationale if verdict else None,
                            evidence_steps=verdict.evidence_steps if verdict and not reason else (),
                            step=verdict.step if verdict and not reason else None,
                            agent=verdict.agent if verdict and not reason else None,
                            trace=trace, usage=usage, model_version=model_version, n_requests=turns)

    turn_no = 0
    while turn_no < max_turns + pushed:
        turn_no += 1
        request = ChatRequest(system=system, messages=tuple(messages), verdict_schema=schema,
                              max_tokens=spec.max_tokens or DEFAULT_MAX_TOKENS, temperature=spec.temperature,
                              tools=offered, verdict_only=False)
        turn = await provider.send(request, ctx)
        usage = usage + turn.usage
        model_version = turn.model_version or model_version
        trace.append({"role": "assistant", "turn": turn_no, "text": turn.text, "stop_reason": turn.stop_reason,
                      "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                     for c in turn.tool_calls]})
        stop_reason = unscored_reason_for_stop(turn)
        if stop_reason:
            return finish(stop_reason, turns=turn_no)
        verdict_call = next((c for c in turn.tool_calls if c.name == VERDICT_TOOL), None)
        if verdict_call is not None:
            verdict = parse_verdict(verdict_call.arguments, rubric, n_steps=n_steps)
            objection = (ctx.followup(verdict.score) if ctx.followup is not None and not pushed
                         and verdict.unscored_reason is None else None)
            if objection is None:
                return finish(verdict.unscored_reason, verdict, turns=turn_no)
            pushed = True
            trace.append({"role": "first_verdict", "score": verdict.score, "rationale": verdict.rationale})
            messages.append({"role": "assistant", "content": turn.text, "tool_calls": list(turn.tool_calls)})
            messages += [{"role": "tool", "tool_call_id": c.id, "name": c.name, "is_error": False,
                          "content": "verdict recorded" if c is verdict_call else "not run"} for c in turn.tool_calls]
            messages.append({"role": "user", "content": objection})
            trace.append({"role": "user", "content": objection})
            continue
        if usage.total >= ctx.agentic_token_budget:
            return finish("budget_exhausted", turns=turn_no)
        messages.append({"role": "assistant", "content": turn.text, "tool_calls": list(turn.tool_calls)})
        left = max_turns + pushed - turn_no
        if not turn.tool_calls:
            messages.append({"role": "user", "content": f"Use the tools, and finish by calling {VERDICT_TOOL} "
                                                        f"({left} turns left)."})
            continue
        for call in turn.tool_calls:
            result, is_error = await tools.acall(call.name, call.arguments)
            trace.append({"role": "tool", "turn": turn_no, "id": call.id, "name": call.name,
                          "arguments": call.arguments, "result": result, "is_error": is_error})
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "is_error": is_error,
                             "content": data_block(result, tag) + f"\n({left} turns left)"})
    return finish("budget_exhausted", turns=turn_no)
