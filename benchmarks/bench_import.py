"""Import 100,000 items of about 4 KB each: wall time and peak memory.

The import runs in a child process so its peak resident memory can be read
alone; running the same import on a quarter of the file shows whether memory
grows with the file size (it should not: records are streamed in batches).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import resource, sys, time
from workbench.store import Store
from workbench.features.importing.service import import_items
t = time.perf_counter()
with Store(sys.argv[1]) as s:
    r = import_items(s, sys.argv[2], "bench")
print(r.added, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def write_items(path: Path, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    words = ["patch", "test", "error", "refactor", "function", "module", "assert", "return", "value", "branch"]
    with path.open("w") as fh:
        for i in range(n):
            steps = [{"role": "assistant" if k % 2 else "tool", "content": " ".join(rng.choices(words, k=60))}
                     for k in range(8)]
            fh.write(json.dumps({"id": f"b{i}", "task_id": f"t{i // 3}", "category": rng.choice("abcd"),
                                 "input": " ".join(rng.choices(words, k=40)), "output": " ".join(rng.choices(words, k=30)),
                                 "trajectory": steps, "producer": {"model": "m", "family": "openai"}}) + "\n")


def run_import(items: Path, tmp: Path) -> tuple[int, float, float]:
    db = tmp / f"{items.stem}.db"
    out = subprocess.run([sys.executable, "-c", CHILD, str(db), str(items)], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), float(out[1]), float(out[2])


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        small, big = tmp / "small.jsonl", tmp / "big.jsonl"
        write_items(small, 25_000)
        write_items(big, 100_000)
        size_mb = big.stat().st_size / 2**20
        n_small, t_small, mem_small = run_import(small, tmp)
        n_big, t_big, mem_big = run_import(big, tmp)
    print("| benchmark | result | target |\n|---|---|---|")
    print(f"| import 100,000 items ({size_mb:.0f} MB, ~{size_mb * 1024 / 100_000:.1f} KB each) | "
          f"{t_big:.1f} s ({n_big / t_big:,.0f} items/s) | < 30 s |")
    print(f"| peak memory of that import (25,000 items: {mem_small:.0f} MB) | {mem_big:.0f} MB | "
          f"does not grow with file size |")


if __name__ == "__main__":
    main()
