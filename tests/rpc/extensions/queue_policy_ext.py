"""Records ``input`` (with its source) and ``before_agent_start``; rewrites ``steer me`` and adds a
system-prompt line for queued batches, as the reference's queued-policy rules allow."""

import json
import os


def activate(pi):
    def record(**data):
        with open(os.environ["PIKO_TEST_LOG"], "a") as fh:
            fh.write(json.dumps(data) + "\n")

    def on_input(event, ctx):
        record(input=event.text, source=event.source)
        if event.text == "steer me":
            return {"action": "transform", "text": "steered by input"}
        return None

    def before(event, ctx):
        record(before_agent_start=event.prompt)
        if "steered" in event.prompt:
            return {"systemPrompt": event.system_prompt + "\nQUEUED POLICY"}
        return None

    pi.on("input", on_input)
    pi.on("before_agent_start", before)
