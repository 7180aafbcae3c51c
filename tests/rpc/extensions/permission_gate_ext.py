"""A ``tool_call`` permission gate as the reference writes one: it asks ``ctx.ui.confirm`` and
waits as long as the user takes (its budget counts handler time, not dialog time)."""


def activate(pi):
    async def gate(event, ctx):
        if event.tool_name != "bash":
            return None
        allowed = await ctx.ui.confirm("Allow bash?", event.input.get("command", ""))
        if not allowed:
            return {"block": True, "reason": "Blocked by user"}
        return None

    pi.on("tool_call", gate)
