"""The team's system under test, as promptfoo calls it: answers each test with its `output` variable (the output
the workbench's golden set holds for that task), so promptfoo's grader sees the item the workbench's judge saw."""


def call_api(prompt, options, context):
    return {"output": context["vars"]["output"]}
