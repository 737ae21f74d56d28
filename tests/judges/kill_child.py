"""Child process for the SIGKILL test: run a judge against the loopback server into a JSONL sink.

    python kill_child.py BASE_URL SINK_PATH N_ITEMS CONCURRENCY
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from judge_fakes import JsonlSink, make_items  # noqa: E402

from workbench.judges import run_judge  # noqa: E402
from workbench.core.models import JudgeSpec, Rubric  # noqa: E402

SPEC = JudgeSpec(id="loop", model="openai-api/loopback/loopback-model")
RUBRIC = Rubric(name="kill-test", judges=(SPEC,))


def main() -> None:
    base_url, sink_path, n, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    env = {"LOOPBACK_BASE_URL": base_url, "LOOPBACK_API_KEY": "sk-loopback"}
    asyncio.run(run_judge(make_items(n), RUBRIC, SPEC, JsonlSink(Path(sink_path)), concurrency=concurrency,
                          provider_options={"env": env, "max_retries": 0}))


if __name__ == "__main__":
    main()
