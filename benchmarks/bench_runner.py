"""The judge runner: 2,000 judgments against a loopback OpenAI-compatible server.

The server (tests/judges/loopback_server.py) runs in its own process and
answers every request after 100 ms; the runner drives it through the real
OpenAI SDK with concurrency 32, so the ideal wall time is 2000 / 32 x 0.1 s =
6.25 s (target: within 1.15x). CPU time is measured in this process only:

- client CPU per judgment: runner + OpenAI SDK + httpx2, the whole client stack;
- runner's own CPU per judgment: the same run against an in-process provider
  that answers at once, so only the runner (planning, prompt, gate, parsing,
  Judgment, sink, progress) is measured (target: under 2 ms).

    python benchmarks/bench_runner.py [--n 2000] [--concurrency 32] [--latency 0.1] [--runs 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.judges import InMemorySink, get_provider, run_judge  # noqa: E402
from workbench.judges.base import ChatProvider, ModelTurn, ToolCall, Usage  # noqa: E402
from workbench.core.models import Item, JudgeSpec, Rubric  # noqa: E402

SPEC = JudgeSpec(id="bench", model="openai-api/loopback/bench-model")
RUBRIC = Rubric(name="bench", title="Benchmark rubric", description="Grades a patch.", judges=(SPEC,))


def items(n: int, run: int) -> list[Item]:
    return [Item(id=f"r{run}-{i}", input=f"Task {i} of run {run}: fix the bug. ITEM-MARKER r{run}-{i} "
                 f"EXPECT-SCORE {i % 3 - 1}", output=f"Patched; tests pass ({i}).",
                 trajectory=[{"role": "user", "content": f"task {i}"},
                             {"role": "assistant", "content": "running tests",
                              "tool_calls": [{"name": "bash", "arguments": {"cmd": "pytest -q"}}]},
                             {"role": "tool", "name": "bash", "content": "16 passed in 0.4s"}])
            for i in range(n)]


class InstantProvider(ChatProvider):
    """Answers at once: isolates the runner's own CPU from SDK and HTTP."""

    provider = "instant"
    model = "bench-model"

    async def complete(self, request):
        return ModelTurn(text=None, tool_calls=[ToolCall("c", "submit_verdict",
                                                         {"rationale": "ok", "evidence_steps": [2], "score": 0})],
                         stop_reason="tool_use", usage=Usage(1000, 50), model_version="instant-1")


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "judges" / "loopback_server.py"), "--port", "0",
                             "--latency", str(latency)], stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def server_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url + "/_stats", timeout=10) as r:
        return json.loads(r.read())


async def loopback_run(base_url: str, n: int, concurrency: int, run: int) -> dict:
    provider = get_provider(SPEC, env={"LOOPBACK_BASE_URL": base_url, "LOOPBACK_API_KEY": "sk-bench"})
    batch = items(n, run)
    sink = InMemorySink()
    cpu, wall = time.process_time(), time.perf_counter()
    report = await run_judge(batch, RUBRIC, SPEC, sink, provider=provider, concurrency=concurrency)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await provider.aclose()
    latencies = [j.latency_ms for j in sink.judgments.values()]
    return {"wall": wall, "cpu": cpu, "scored": report.n_scored, "latency_mean": statistics.mean(latencies),
            "latency_p99": sorted(latencies)[int(0.99 * len(latencies))]}


async def instant_run(n: int, concurrency: int) -> float:
    cpu = time.process_time()
    report = await run_judge(items(n, 999), RUBRIC, SPEC, InMemorySink(), provider=InstantProvider(),
                             concurrency=concurrency, progress=lambda done, total, cost: None)
    assert report.n_scored == n
    return time.process_time() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=1, help="repeat and report the median wall time")
    parser.add_argument("--rows-only", action="store_true")
    args = parser.parse_args()
    import logging
    logging.getLogger("workbench.judges.pricing").setLevel(logging.ERROR)  # the loopback model has no price

    ideal = args.n / args.concurrency * args.latency
    proc, base_url = start_server(args.latency)
    try:
        runs = [asyncio.run(loopback_run(base_url, args.n, args.concurrency, r)) for r in range(args.runs)]
        stats = server_stats(base_url)
    finally:
        proc.kill()
        proc.wait()
    own = min(asyncio.run(instant_run(args.n, args.concurrency)) for _ in range(3)) / args.n
    best = sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]
    assert all(r["scored"] == args.n for r in runs), runs
    assert stats["max_per_item"] == 1 and stats["items"] == args.n * args.runs, stats

    rows = [
        (f"runner: {args.n} judgments, loopback {args.latency * 1000:.0f} ms, concurrency {args.concurrency}",
         f"{best['wall']:.2f} s = {best['wall'] / ideal:.3f}x ideal {ideal:.2f} s", f"<= {1.15 * ideal:.2f} s (1.15x)"),
        ("runner: mean / p99 judgment latency", f"{best['latency_mean']:.1f} / {best['latency_p99']:.1f} ms",
         f"{args.latency * 1000:.0f} ms server"),
        ("runner: client CPU per judgment (runner + SDK + httpx2)", f"{best['cpu'] / args.n * 1000:.2f} ms", ""),
        ("runner: runner's own CPU per judgment", f"{own * 1000:.3f} ms", "< 2 ms"),
        ("runner: requests per item seen by the server", f"{stats['max_per_item']} (max)", "1"),
    ]
    if not args.rows_only:
        print("| benchmark | result | target |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.runs > 1:
        print("\nwall times: " + ", ".join(f"{r['wall']:.2f} s" for r in runs), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
