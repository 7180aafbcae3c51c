"""A command that sends a custom message (no turn): RPC delivers it before the next prompt line."""


def activate(pi):
    def note(args, ctx):
        pi.send_message({"customType": "note", "content": "NOTE FROM COMMAND", "display": True})

    pi.register_command("note", {"description": "Send a note", "handler": note})
