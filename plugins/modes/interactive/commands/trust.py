"""``/trust``: save a project trust decision for the next runs (pi 1.6's command)."""

from __future__ import annotations

from piko.app import trust
from piko.plugins.modes.interactive.command_api import InteractiveContext
from piko.plugins.modes.interactive.commands.common import error_text


async def trust_command(ctx: InteractiveContext, args: str) -> None:
    """Show the saved and current decisions, offer pi's choices, save the one picked."""
    app = ctx.app
    choices = trust.trust_choices(app.cwd, this_run=False)
    title = "\n".join(["Project trust", *trust.trust_status(app)])
    picked = await ctx.ui.select(title, [choice.label for choice in choices])
    choice = next((c for c in choices if c.label == picked), None)
    if choice is None:
        return
    try:
        trust.save_choice(app.trust, choice)
    except OSError as exc:
        ctx.show_info(f"Trust decision not saved: {error_text(exc)}")
        return
    state = "trusted" if choice.trusted else "untrusted"
    ctx.show_info(f"Saved trust decision: {state}. Restart pi for this to take effect.")
