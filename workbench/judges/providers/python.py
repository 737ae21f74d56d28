"""`python/<module>:<function>`: a deterministic grader written in Python.

The function is called as `function(item, rubric)` and returns a score, or
`(score, rationale)`; it may be a coroutine function. A score off the scale, or
a grader that raises, gives an unscored judgment with the reason; it costs
nothing and uses no tokens.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from workbench.core.errors import ConfigError
from workbench.core.models import Item, JudgeSpec, Rubric
from workbench.judges.base import JudgeProvider
from workbench.judges.prompting import parse_verdict
from workbench.judges.types import JudgeContext, JudgeOutcome


# Modules of the workbench's own graders that moved (issue 28's new layout), under the names rubrics, stored judges
# and signed bundles written before still carry: the judge keeps its name, the code is found where it now lives.
MOVED_MODULES = {"workbench.demo.graders": "workbench.features.demo.graders"}


class PythonProvider(JudgeProvider):
    provider = "python"

    def __init__(self, target: str, **_: Any):
        module_name, sep, func_name = target.partition(":")
        if not sep or not module_name or not func_name:
            raise ConfigError(f"'python/{target}' must be python/<module>:<function>, e.g. python/my_graders:tests_pass")
        try:
            module = importlib.import_module(MOVED_MODULES.get(module_name, module_name))
        except ImportError as exc:
            raise ConfigError(f"cannot import module '{module_name}' for judge python/{target} ({exc}); "
                              "make sure it is installed or on PYTHONPATH") from None
        func = getattr(module, func_name, None)
        if not callable(func):
            raise ConfigError(f"module '{module_name}' has no function '{func_name}' for judge python/{target}")
        self.model = target
        self.func: Callable[..., Any] = func
        version = getattr(module, "__version__", None)
        self.version = f"python/{target}" + (f"@{version}" if version else "")

    async def judge(self, item: Item, rubric: Rubric, spec: JudgeSpec, *,
                    ctx: JudgeContext | None = None) -> JudgeOutcome:
        try:
            result = self.func(item, rubric)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # the grader's own bug: record it on the item, keep the run going
            return JudgeOutcome(score=None, unscored_reason=f"grader_error: {type(exc).__name__}: {exc}"[:300],
                                model_version=self.version, n_requests=0)
        rationale = None
        if isinstance(result, tuple) and len(result) == 2:
            result, rationale = result
        n_steps = len(item.trajectory or ())
        verdict = parse_verdict({"score": result, "rationale": rationale}, rubric, n_steps=n_steps)
        return JudgeOutcome(score=verdict.score, unscored_reason=verdict.unscored_reason,
                            rationale=None if rationale is None else str(rationale),
                            model_version=self.version, n_requests=0)
