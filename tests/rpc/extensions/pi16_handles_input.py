"""An ``input`` handler that consumes messages starting with "swallow" (RPC disposition "handled")."""


def activate(pi):
    def on_input(event, ctx):
        if event.text.startswith("swallow"):
            return {"action": "handled"}
        return None

    pi.on("input", on_input)
