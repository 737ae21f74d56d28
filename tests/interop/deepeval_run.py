"""Run by tests/interop/test_deepeval.py with DeepEval's own Python (.ci/venv-deepeval): DeepEval's evaluate() on
a few single-turn cases and one conversation, graded by an offline model class; it writes its test-run JSON to
DEEPEVAL_RESULTS_FOLDER.

With the argument ``default-names``: a team's first DeepEval run as the quickstart writes it, twice (the second
run of the same cases) — test cases without names (DeepEval calls them test_case_0, ...) and a GEval metric at its
default threshold."""

import sys

from deepeval import evaluate
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig, ErrorConfig
from deepeval.metrics import ConversationalGEval, GEval
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import ConversationalTestCase, LLMTestCase, MultiTurnParams, SingleTurnParams, Turn


class OfflineJudge(DeepEvalBaseLLM):
    """A judge without a network: high marks when the output carries the [correct] marker, an error on [broken]."""

    def __init__(self):
        super().__init__(model="offline-judge")

    def load_model(self):
        return self

    def get_model_name(self):
        return "offline-judge"

    def _answer(self, prompt, schema):
        if "[broken]" in prompt and "score" in schema.model_fields:
            raise RuntimeError("the judge could not grade this case")
        fields = {}
        for name in schema.model_fields:
            if name == "steps":
                fields[name] = ["Compare the output with the expected output."]
            elif name == "score":
                fields[name] = 9 if "[correct]" in prompt else 2
            elif name == "reason":
                fields[name] = "matches" if "[correct]" in prompt else "differs"
        return schema(**fields)

    def generate(self, prompt, schema=None):
        return self._answer(prompt, schema)

    async def a_generate(self, prompt, schema=None):
        return self._answer(prompt, schema)


judge = OfflineJudge()
if sys.argv[1:] == ["default-names"]:
    quickstart = GEval(name="Correctness", criteria="Is the actual output correct given the expected output?",
                       evaluation_params=[SingleTurnParams.ACTUAL_OUTPUT, SingleTurnParams.EXPECTED_OUTPUT],
                       model=judge)  # DeepEval's default threshold (0.5)
    unnamed = [LLMTestCase(input=f"What is {i}*{i}?", expected_output=str(i * i),
                           actual_output=f"{i * i} [correct]" if i % 2 else f"{i * i + 1}") for i in range(4)]
    for _ in range(2):
        evaluate(test_cases=unnamed, metrics=[quickstart], async_config=AsyncConfig(run_async=False),
                 display_config=DisplayConfig(print_results=False, show_indicator=False))
    sys.exit(0)
correctness = GEval(name="Correctness", criteria="Is the actual output correct given the expected output?",
                    evaluation_params=[SingleTurnParams.ACTUAL_OUTPUT, SingleTurnParams.EXPECTED_OUTPUT],
                    model=judge, threshold=0.5)
cases = [LLMTestCase(name=f"case-{i}", input=f"What is {i}+{i}?", expected_output=str(2 * i),
                     actual_output=f"{2 * i} [correct]" if i % 3 else ("[broken]" if i == 3 else f"{2 * i + 1}"))
         for i in range(6)]
evaluate(test_cases=cases, metrics=[correctness], async_config=AsyncConfig(run_async=False),
         display_config=DisplayConfig(print_results=False, show_indicator=False),
         error_config=ErrorConfig(ignore_errors=True))
helpful = ConversationalGEval(name="Helpfulness", criteria="Does the assistant help the user?", model=judge,
                              evaluation_params=[MultiTurnParams.ROLE, MultiTurnParams.CONTENT],
                              threshold=0.5)
conv = [ConversationalTestCase(name="chat-1", turns=[Turn(role="user", content="I need the sum of 2 and 2."),
                                                     Turn(role="assistant", content="It is 4. [correct]")])]
evaluate(test_cases=conv, metrics=[helpful], async_config=AsyncConfig(run_async=False),
         display_config=DisplayConfig(print_results=False, show_indicator=False))
