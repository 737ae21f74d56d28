"""The judge engine: providers, prompting, the agentic loop, the runner, batch mode, prices.

Importing this package imports no SDK: `get_provider` loads the provider
module (and its SDK) for a `provider/model` name only when it is asked for.
This package never touches storage; the service layer hands the runner a
`RunSink` that commits each judgment.
"""

from .base import (BudgetExceeded, ChatProvider, ChatRequest, JudgeContext, JudgeOutcome, JudgeProvider, ModelTurn,
                   ProviderError, ToolCall, ToolDef, Usage, WorkKey, redact)
from .batch import BatchReport, collect_batches, custom_id_for, run_batch, submit_batches
from .pricing import PRICE_TABLE_VERSION, cost_usd, price_for
from .prompting import injection_signals, is_injection_probe, parse_verdict, system_prompt, verdict_schema
from .registry import get_provider, provider_names, register_provider
from .runner import RunAborted, RunEstimate, RunReport, estimate_run, plan_work, run_judge, run_judge_sync
from .sink import InMemorySink, PendingBatch, RunSink

__all__ = [
    "BatchReport", "BudgetExceeded", "ChatProvider", "ChatRequest", "InMemorySink", "JudgeContext", "JudgeOutcome",
    "JudgeProvider", "ModelTurn", "PRICE_TABLE_VERSION", "PendingBatch", "ProviderError", "RunAborted",
    "RunEstimate", "RunReport", "RunSink", "ToolCall", "ToolDef", "Usage", "WorkKey", "collect_batches",
    "cost_usd", "custom_id_for", "estimate_run", "get_provider", "injection_signals", "is_injection_probe",
    "parse_verdict", "plan_work", "price_for", "provider_names", "redact", "register_provider", "run_batch",
    "run_judge", "run_judge_sync", "submit_batches", "system_prompt", "verdict_schema",
]
