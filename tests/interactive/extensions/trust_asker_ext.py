"""A user-level extension that decides project trust by asking the user (pi 1.6's example)."""


def activate(pi):
    async def decide(event, ctx):
        if not ctx.has_ui:
            return {"trusted": "undecided"}
        choice = await ctx.ui.select(
            f"Which way for this project? (mode {ctx.mode})", ["trust it", "leave it"]
        )
        if choice == "trust it" and await ctx.ui.confirm("Trust project?", event.cwd):
            return {"trusted": "yes"}
        return {"trusted": "no"}

    pi.on("project_trust", decide)
