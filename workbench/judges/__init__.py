"""The judge engine: providers, prompting, the agentic loop, the runner, batch mode, prices.

Importing this package imports no SDK and none of its modules: each name below
is imported on first use, so the rubric loader can ask the provider registry
which prefixes exist without loading the engine. `get_provider` loads the
provider module (and its SDK) for a `provider/model` name only when it is
asked for. This package never touches storage; the service layer hands the
runner a `RunSink` that commits each judgment.

Modules, lowest first: `types` (the neutral types), `prompting` (prompts,
verdicts, token estimates), `agentic` (the tool loop), `base` (the provider
interface), the `*_provider` modules, `registry`, `runner`, `batch`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "BatchReport": "batch", "collect_batches": "batch", "custom_id_for": "batch", "run_batch": "batch",
    "submit_batches": "batch",
    "ChatProvider": "base", "JudgeProvider": "base", "ProviderError": "base", "redact": "base",
    "PRICE_TABLE_VERSION": "pricing", "cost_usd": "pricing", "price_for": "pricing",
    "injection_signals": "prompting", "is_injection_probe": "prompting", "parse_verdict": "prompting",
    "system_prompt": "prompting", "verdict_schema": "prompting",
    "get_provider": "registry", "model_provider": "registry", "provider_names": "registry",
    "register_provider": "registry",
    "RunAborted": "runner", "RunEstimate": "runner", "RunReport": "runner", "estimate_run": "runner",
    "plan_work": "runner", "run_judge": "runner", "run_judge_sync": "runner",
    "InMemorySink": "sink", "PendingBatch": "sink", "RunSink": "sink",
    "BudgetExceeded": "types", "ChatRequest": "types", "JudgeContext": "types", "JudgeOutcome": "types",
    "ModelTurn": "types", "ToolCall": "types", "ToolDef": "types", "Usage": "types", "WorkKey": "types",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:  # for type checkers and editors; at run time the names above load on first use
    from workbench.judges.base import ChatProvider, JudgeProvider, ProviderError, redact
    from workbench.judges.batch import BatchReport, collect_batches, custom_id_for, run_batch, submit_batches
    from workbench.judges.pricing import PRICE_TABLE_VERSION, cost_usd, price_for
    from workbench.judges.prompting import (injection_signals, is_injection_probe, parse_verdict, system_prompt,
        verdict_schema)
    from workbench.judges.registry import get_provider, model_provider, provider_names, register_provider
    from workbench.judges.runner import (RunAborted, RunEstimate, RunReport, estimate_run, plan_work, run_judge,
        run_judge_sync)
    from workbench.judges.sink import InMemorySink, PendingBatch, RunSink
    from workbench.judges.types import (BudgetExceeded, ChatRequest, JudgeContext, JudgeOutcome, ModelTurn, ToolCall,
        ToolDef, Usage, WorkKey)
