"""The promptfoo test's llm-rubric grader (a local Python provider, no model)."""

import json
import re


def call_api(prompt, options, context):
    """The rubric names the expected sum; the output passes when it equals it (for 10: no JSON, a grader error)."""
    messages = json.loads(prompt)
    user = messages[-1]["content"]
    output = re.search(r"<Output>\s*(.*?)\s*</Output>", user, re.S).group(1).strip()
    want = re.search(r"equals (\d+)", user).group(1)
    if want == "10":
        return {"output": "I cannot grade this."}  # not the JSON promptfoo asks for: a grader error
    ok = output == want
    return {"output": json.dumps({"reason": "matches" if ok else f"{output} is not {want}", "pass": ok,
                                  "score": 1.0 if ok else 0.0})}
