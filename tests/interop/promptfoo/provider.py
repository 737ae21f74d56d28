"""The promptfoo test's provider: sums the question's two numbers, one too many when the first is 3."""


def call_api(prompt, options, context):
    a, b = (int(x) for x in context["vars"]["question"].split("+"))
    return {"output": str(a + b + (1 if a == 3 else 0))}
