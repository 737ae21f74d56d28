"""Monitoring at a team's scale (issue 44), on SQLite and on Postgres (the server WORKBENCH_BENCH_PG names, else a
throw-away one started with tests/pg.py: fsync off, defaults otherwise):

- ingest: `workbench monitor ingest` of one jsonl file of 1,000,000 traces (one day of traffic, Play Favorites rows
  cycled, ../shared/data; 5% sampled for labeling), as a whole process, then the same file again (adds nothing);
  and of OTLP JSON files of 100,000 chat spans each (a collector's file exporter: 1,000 spans a request line), one
  process a file. Peak memory of each process from ``os.wait4``'s rusage (ru_maxrss). Target: each < 60 s.
- report: `workbench monitor report --json` as a whole process over streams built by writing the rows and their
  day aggregates directly in bulk (what ingest would have written): 100,000 traces a day for 10 and for 100 days,
  5% sampled, 200 of the sampled labeled a day (items and labels through the import path). Target: < 2 s at
  10,000,000 traces over 100 days.

Usage: python benchmarks/monitor_scale.py [--engine sqlite|postgres|both] [--part ingest|report|both]
           [--traces 1000000] [--otlp-files 10] [--report-days 10,100] [--per-day 100000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tests.monitoring import realdata  # noqa: E402
from tests.monitoring.conftest import build_approved  # noqa: E402

START = datetime(2026, 12, 1, tzinfo=timezone.utc)
RATE = 0.05


def write_jsonl(path: Path, n: int) -> None:
    rows = realdata.load()
    step = 86_400 / n
    with path.open("w") as fh:
        for k in range(n):
            i = k % len(rows.key)
            fh.write(json.dumps({"id": f"t{k}", "timestamp": (START + timedelta(seconds=step * k)).isoformat(),
                                 "category": str(rows.category[i]), "input": "Q" * int(rows.length[i]) * 2,
                                 "output": "A" * int(rows.length[i]), "score": int(rows.judge[i]),
                                 "metadata": {"region": "eu"}}) + "\n")


def _attr(key: str, value) -> dict:
    v = {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}
    return {"key": key, "value": v}


def write_otlp(path: Path, n: int, offset: int, per_request: int = 1000) -> None:
    """A collector's file exporter: one ExportTraceServiceRequest a line, GenAI chat spans with messages and an
    evaluation event carrying the verdict."""
    rows = realdata.load()
    base = int((START + timedelta(days=1)).timestamp() * 1e9)
    with path.open("w") as fh:
        for first in range(0, n, per_request):
            spans = []
            for k in range(first, min(n, first + per_request)):
                i = (offset + k) % len(rows.key)
                start = base + (offset + k) * 86_400_000_000 // (n * 10)
                spans.append({
                    "traceId": f"{offset + k:032x}", "spanId": f"{offset + k + 1:016x}", "name": "chat gpt-4o",
                    "kind": 3, "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 900_000_000),
                    "attributes": [
                        _attr("gen_ai.operation.name", "chat"), _attr("gen_ai.request.model", "gpt-4o"),
                        _attr("workbench.category", str(rows.category[i])),
                        _attr("gen_ai.input.messages", json.dumps(
                            [{"role": "user", "parts": [{"type": "text", "content": "Q" * int(rows.length[i]) * 2}]}])),
                        _attr("gen_ai.output.messages", json.dumps(
                            [{"role": "assistant", "parts": [{"type": "text", "content": "A" * int(rows.length[i])}],
                              "finish_reason": "stop"}]))],
                    "events": [{"name": "gen_ai.evaluation.result", "timeUnixNano": str(start + 900_000_000),
                                "attributes": [_attr("gen_ai.evaluation.name", "logic"),
                                               _attr("gen_ai.evaluation.score.value", int(rows.judge[i]))]}]})
            fh.write(json.dumps({"resourceSpans": [{"resource": {"attributes": [
                _attr("service.name", "support-bot")]}, "scopeSpans": [{"scope": {"name": "app"},
                                                                        "spans": spans}]}]}) + "\n")


def run(db: str, root: Path, *args: str) -> tuple[float, float, str]:
    """(seconds, peak MB, stdout) of one whole CLI process."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", *args, "--db", str(db), "--project", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    out, err = proc.communicate()
    _, status, usage = os.wait4(proc.pid, 0) if proc.returncode is None else (0, proc.returncode, None)
    took = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"{' '.join(args)} failed: {err[-2000:]}")
    return took, (usage.ru_maxrss / 1024 if usage else float("nan")), out


def peak_runner(db: str, root: Path, *args: str) -> tuple[float, float, str]:
    """run(), with the peak memory read through a wrapper that reports its child's rusage (Popen reaps the child
    itself, so os.wait4 must run in a parent of our own)."""
    code = ("import os, sys, time, json; t = time.perf_counter(); pid = os.fork()\n"
            "if pid == 0:\n    os.execv(sys.executable, [sys.executable, '-m', 'workbench.cli', *sys.argv[1:]])\n"
            "_, st, ru = os.wait4(pid, 0); print(json.dumps({'s': time.perf_counter() - t, 'mb': ru.ru_maxrss / 1024,"
            " 'rc': os.waitstatus_to_exitcode(st)}), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, *args, "--db", str(db), "--project", str(root)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    doc = json.loads(proc.stderr.strip().splitlines()[-1])
    if doc["rc"]:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr[-2000:]}")
    return doc["s"], doc["mb"], proc.stdout


def postgres_target() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    import pg

    return pg.benchmark_url()


def bench_ingest(engine: str, n: int, otlp_files: int, tmp: Path) -> list[str]:
    root = tmp / f"ingest-{engine}"
    root.mkdir()
    db, bundle = build_approved(root, postgres_target() if engine == "postgres" else None)
    traces = tmp / "traces.jsonl"
    if not traces.exists():
        write_jsonl(traces, n)
    size = traces.stat().st_size / 1e6
    args = ("monitor", "ingest", "--stream", "prod", "--bundle", str(bundle), "--from", "jsonl", str(traces),
            "--label-rate", str(RATE), "--seed", "1")
    first = peak_runner(db, root, *args)
    again = peak_runner(db, root, *args)
    lines = [f"{engine}: ingest {n:,} jsonl traces ({size:.0f} MB, {RATE:g} sampled): {first[0]:.1f} s "
             f"({n / first[0]:,.0f} traces/s), peak {first[1]:.0f} MB; again (adds nothing): {again[0]:.1f} s, "
             f"peak {again[1]:.0f} MB; load {os.getloadavg()[0]:.1f}", "   " + first[2].strip()]
    times, peaks = [], []
    for f in range(otlp_files):
        path = tmp / f"spans-{f}.otlp.jsonl"
        if not path.exists():
            write_otlp(path, 100_000, offset=f * 100_000)
        took, mb, _ = peak_runner(db, root, "monitor", "ingest", "--stream", "otel", "--bundle", str(bundle),
                                  "--from", "otel", str(path), "--label-rate", str(RATE), "--seed", str(f))
        times.append(took)
        peaks.append(mb)
    if otlp_files:
        mb_file = (tmp / "spans-0.otlp.jsonl").stat().st_size / 1e6
        lines.append(f"{engine}: ingest {otlp_files} OTLP files of 100,000 spans ({mb_file:.0f} MB each), one "
                     f"process a file: {min(times):.1f}-{max(times):.1f} s a file ({100_000 / np.mean(times):,.0f} "
                     f"spans/s), {sum(times):.0f} s for {otlp_files * 100_000:,}; peak {max(peaks):.0f} MB; load "
                     f"{os.getloadavg()[0]:.1f}")
    rep = peak_runner(db, root, "monitor", "report", "--stream", "prod", "--json")
    lines.append(f"{engine}: monitor report --json over the {n:,} ingested traces: {rep[0]:.2f} s, peak {rep[1]:.0f} MB")
    return lines


def build_stream(db: str, root: Path, days: int, per_day: int, labels_per_day: int = 200) -> tuple[int, int]:
    """The stream 'big': per_day traces a day for ``days`` days written straight into monitor_traces (COPY on
    Postgres) with their day aggregates, 5% sampled; 200 sampled a day land as items with a label. (traces,
    labels)."""
    import yaml

    from workbench.features.importing.service import import_items, import_labels
    from workbench.features.monitoring import queries
    from workbench.features.monitoring.records import StoredTrace, StreamBundle
    from workbench.features.monitoring.report import aggregate_days
    from workbench.store import Store

    rows = realdata.load()
    bundle_file = next((root / "rubrics" / "approved").glob("*.yaml"))
    bundle = yaml.safe_load(bundle_file.read_text())
    sb = StreamBundle.from_bundle(bundle, bundle_file.name)
    rng = np.random.default_rng(44)
    n_rows = len(rows.key)
    items, labels = root / "items.jsonl", root / "labels.jsonl"
    with Store(db) as s, items.open("w") as fi, labels.open("w") as fl:
        with s.transaction():
            sid = queries.ensure_stream(s, "big")
            epoch = queries.ensure_epoch(s, sid, bundle, bundle_file.name)
            ingest = queries.insert_ingest(s, stream=sid, epoch=epoch, source="jsonl", file="bulk", label_rate=RATE,
                                           seed=44, counts=(days * per_day,) * 2 + (0, 0))
        for day in range(days):
            idx = rng.integers(0, n_rows, per_day)
            sampled = rng.random(per_day) < RATE
            offs = np.sort(rng.integers(0, 86_400_000_000, per_day))
            stamps = np.datetime_as_string(np.datetime64(f"{(START + timedelta(days=day)).date()}T00:00:00", "us")
                                           + offs.astype("timedelta64[us]"), unit="us")
            cats, lens, verdicts = rows.category[idx], rows.length[idx], rows.judge[idx]
            out, stored = [], []
            n_labeled = 0
            for k in range(per_day):
                tid = f"b{day}-{k}"
                ts, cat, length, score, d = f"{stamps[k]}Z", str(cats[k]), int(lens[k]), int(verdicts[k]), \
                    bool(sampled[k])
                out.append((tid, ts, cat, length, score, None, int(d), RATE, hashlib.sha256(tid.encode()).hexdigest()))
                stored.append(StoredTrace(tid, ts, cat, length, score, d, RATE))
                if d and n_labeled < labels_per_day:
                    n_labeled += 1
                    fi.write(json.dumps({"id": tid, "category": cat, "input": "Q" * length, "output": "A"}) + "\n")
                    fl.write(json.dumps({"item_id": tid, "rater": "ana", "score": int(rows.human[idx[k]])}) + "\n")
            with s.transaction():
                queries.insert_traces(s, stream=sid, epoch=epoch, ingest=ingest, rows=out)
                queries.add_days(s, sid, epoch, aggregate_days(stored, sb))
    with Store(db) as s:
        import_items(s, items, "big")
        import_labels(s, labels, "big", "logic")
        if s.dialect == "postgres":
            s.conn.execute("ANALYZE")
    return days * per_day, days * labels_per_day


def bench_report(engine: str, days_list: list[int], per_day: int, tmp: Path) -> list[str]:
    lines = []
    for days in days_list:
        root = tmp / f"report-{engine}-{days}"
        root.mkdir()
        db, _ = build_approved(root, postgres_target() if engine == "postgres" else None)
        t = time.perf_counter()
        n, n_labels = build_stream(str(db), root, days, per_day)
        built = time.perf_counter() - t
        runs = [peak_runner(db, root, "monitor", "report", "--stream", "big", "--json") for _ in range(3)]
        doc = json.loads(runs[-1][2])
        assert len(doc["windows"]) == days and sum(w["n_items"] for w in doc["windows"]) == n
        week = peak_runner(db, root, "monitor", "report", "--stream", "big", "--window", "week", "--json")
        # the report computation alone, in this process (no interpreter start, no imports)
        from workbench.features.monitoring.report import monitor_report
        from workbench.store import Store

        with Store(db) as s:
            monitor_report(s, "big")
            t = time.perf_counter()
            monitor_report(s, "big")
            inproc = time.perf_counter() - t
        size = f"{os.path.getsize(db) / 1e9:.1f} GB" if engine == "sqlite" else ""
        lines.append(f"{engine}: monitor report --json, {n:,} traces over {days} days ({n_labels:,} labels; built in "
                     f"{built:.0f} s {size}): {', '.join(f'{r[0]:.2f}' for r in runs)} s (whole process, 3 runs; "
                     f"peak {max(r[1] for r in runs):.0f} MB); --window week {week[0]:.2f} s; the computation "
                     f"in-process {inproc:.2f} s; load {os.getloadavg()[0]:.1f}")
        print(lines[-1], flush=True)
        if engine == "sqlite":
            os.remove(db)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--part", choices=["ingest", "report", "both"], default="both")
    ap.add_argument("--traces", type=int, default=1_000_000)
    ap.add_argument("--otlp-files", type=int, default=10)
    ap.add_argument("--report-days", default="10,100")
    ap.add_argument("--per-day", type=int, default=100_000)
    a = ap.parse_args()
    engines = ["sqlite", "postgres"] if a.engine == "both" else [a.engine]
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}", flush=True)
    with tempfile.TemporaryDirectory(dir=os.environ.get("WORKBENCH_BENCH_TMP")) as tmp:
        for engine in engines:
            if a.part in ("ingest", "both"):
                for line in bench_ingest(engine, a.traces, a.otlp_files, Path(tmp)):
                    print(line, flush=True)
            if a.part in ("report", "both"):
                bench_report(engine, [int(d) for d in a.report_days.split(",")], a.per_day, Path(tmp))


if __name__ == "__main__":
    main()
