"""The system under test: answers every task the same way, so the grader's reply alone decides the grade."""


def call_api(prompt, options, context):
    return {"output": f"patched ({context['vars']['task']})"}
