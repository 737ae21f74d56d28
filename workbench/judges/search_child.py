"""The child process that runs one `search_steps` regex for the agentic judge, so the search can be killed.

The judge's pattern runs in C (the `regex` module), which no Python thread can
interrupt, and `regex`'s own timeout counts CPU time, not wall time: beside a
CPU-bound neighbour on the same core it ran three times past its limit. So
`agentic.TrajectoryTools` starts this script in a fresh interpreter
(``python -I -S search_child.py <dir holding regex> <cpu seconds>``), sends it
the job as JSON on stdin and kills it at the wall-clock deadline; what it
printed before the kill is kept.

It imports only the standard library and `regex` (no site, no workbench), so
it starts in a few tens of milliseconds. Output, one line each, flushed at once
so a kill loses nothing already found:

    match <step> <start> <end>     the first `max_matches` distinct matches
    step <step> <matches so far>   a step searched to its end
    done <matches>                 the whole search finished

A CPU-time limit (RLIMIT_CPU) ends it even if its parent dies before killing it.
"""

import json
import sys


def _windows(text, size):
    """Overlapping windows (offset, chunk) so a match shorter than size/2 is never split."""
    if len(text) <= size:
        yield 0, text
        return
    step = max(1, size // 2)
    for start in range(0, len(text) - size // 2, step):
        yield start, text[start:start + size]


def main():
    sys.path.append(sys.argv[1])
    cpu_seconds = int(sys.argv[2])
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    except (ImportError, ValueError, OSError):  # not POSIX, or a lower hard limit: the parent's kill still holds
        pass
    import regex

    _search(regex, **json.load(sys.stdin))


def _search(regex, pattern, flags, window, texts, max_matches):
    """The job the parent sent: the pattern's matches in each text, written as they are found."""
    rx = regex.compile(pattern, flags)
    out = sys.stdout
    total = 0
    for i, text in enumerate(texts):
        seen = set()
        for offset, chunk in _windows(text, window):
            for m in rx.finditer(chunk):
                start = offset + m.start()
                if m.end() == m.start() or start in seen:
                    continue
                seen.add(start)
                total += 1
                if total <= max_matches:
                    out.write(f"match {i} {start} {offset + m.end()}\n")
                    out.flush()
        out.write(f"step {i} {total}\n")
        out.flush()
    out.write(f"done {total}\n")
    out.flush()


if __name__ == "__main__":
    main()
